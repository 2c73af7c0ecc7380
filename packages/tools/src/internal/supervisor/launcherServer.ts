/**
 * The launcher server of the cgroup tier's launcher entry. Started by the host's own spawn, each
 * call's launcher is a fork of the whole host process, which copies its page tables with the
 * event loop blocked: milliseconds per call for a host of 100 MB, growing with it, and most of a
 * short call's cost. A supervisor layer therefore keeps one small `toolcap-confine --server`
 * (`native/confine.c`) from its second launch on, and hands it each call: the server makes the
 * call's pipes, forks the call's launcher (microseconds for a process that small) and tells the
 * host the launcher's pid and where the read ends of the pipes are; the host opens them through
 * `/proc/<server>/fd` and is told the launcher's exit status. From there the call is what the
 * launcher entry always was: the launcher outside the cgroup, the shell inside it, stopping and
 * the report from the cgroup.
 *
 * The server runs nothing itself, holds no cgroup and carries no cookie. It keeps the host's event
 * loop alive only while a call it started has not ended, and it exits when its stdin closes (the
 * host exited or died, or the layer was closed).
 */
import type { ChildProcess } from "node:child_process"
import { EventEmitter } from "node:events"
import * as fs from "node:fs"
import { Procfs } from "@toolcap/spill"
import * as net from "node:net"
import * as os from "node:os"
import type { Readable } from "node:stream"
import * as Proc from "./process.js"

/** A call's launcher started by the server: what the supervisor reads of a spawned child. */
export interface Served {
  readonly pid: number
  readonly stdout: Readable
  readonly stderr: Readable
  /** The launcher's exit, as a ChildProcess reports it (a code, or the name of the signal). */
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown
}

/**
 * A call waiting for the server's answer: its launcher; `"not started"` when the server started
 * nothing (the call may be spawned another way); or a failure, when the call may have started
 * but cannot be followed (the server went away meanwhile).
 */
type Answer = (served: Served | "not started" | Error) => void

interface ServedCall extends Served {
  readonly events: EventEmitter
}

/** A running server. */
export interface Server {
  readonly child: ChildProcess
  failed: boolean
  /** Calls sent, in order, waiting for their "S" answer. */
  readonly answers: Array<Answer>
  /** Started calls by pid, until their "X". */
  readonly running: Map<number, ServedCall>
}

const signalNames: ReadonlyMap<number, NodeJS.Signals> = new Map(
  Object.entries(os.constants.signals).map(([name, number]) => [number, name as NodeJS.Signals])
)

/** The server's answers keep the host alive while a call waits for one, and not otherwise. */
const refOut = (server: Server): void => {
  const socket = server.child.stdout as unknown as { ref?: () => void; unref?: () => void } | null
  if (server.running.size > 0 || server.answers.length > 0) socket?.ref?.()
  else socket?.unref?.()
}

/**
 * Gives up a server that went away or cannot be followed: every call still waiting for its answer
 * fails, and its stdin is closed, so one that still runs exits (the layer starts another).
 */
const lost = (server: Server): void => {
  server.failed = true
  server.child.stdin?.destroy()
  for (const answer of server.answers.splice(0)) answer(new Error("the launcher server ended"))
  for (const [pid, call] of server.running) {
    server.running.delete(pid)
    // its launcher runs on with nobody to report its status: reported as killed, and the
    // supervisor's stop (from the cgroup) ends whatever of the call is left
    call.events.emit("exit", null, "SIGKILL")
  }
  refOut(server)
}

/** Opens our own descriptor for a pipe's read end the server holds. */
const openPipe = (serverPid: number, fd: number): net.Socket => {
  const own = fs.openSync(
    Procfs.descriptorPath(fd, serverPid),
    fs.constants.O_RDONLY | fs.constants.O_NONBLOCK
  )
  return new net.Socket({ fd: own, readable: true, writable: false })
}

const onLine = (server: Server, line: string): void => {
  answerLine(server, line)
  refOut(server)
}

const answerLine = (server: Server, line: string): void => {
  const [kind, a = "", b = "", c = ""] = line.split(" ")
  if (kind === "S") {
    const answer = server.answers.shift()
    const pid = Number(a)
    if (answer === undefined) return
    if (!(pid > 0)) {
      answer("not started")
      return
    }
    let stdout: net.Socket | undefined
    let stderr: net.Socket
    try {
      stdout = openPipe(server.child.pid!, Number(b))
      stderr = openPipe(server.child.pid!, Number(c))
    } catch (error) {
      // only a server that went away has no descriptors to open
      stdout?.destroy()
      lost(server)
      answer(error instanceof Error ? error : new Error(String(error)))
      return
    }
    send(server, ["ack", String(pid)])
    const events = new EventEmitter()
    const call: ServedCall = {
      pid,
      stdout,
      stderr,
      events,
      once: (event, listener) => events.once(event, listener)
    }
    server.running.set(pid, call)
    answer(call)
  } else if (kind === "X") {
    const pid = Number(a)
    const call = server.running.get(pid)
    if (call === undefined) return
    server.running.delete(pid)
    const code = Number(b)
    call.events.emit(
      "exit",
      code >= 0 ? code : null,
      code >= 0 ? null : (signalNames.get(Number(c)) ?? "SIGKILL")
    )
  }
}

/** Starts a server of the launcher at `launcher`; it waits for calls without keeping the host alive. */
export const start = (launcher: string): Server => {
  const child = Proc.spawnChild(launcher, ["--server"], {
    cwd: "/",
    env: {},
    stdio: ["pipe", "pipe", "ignore"]
  })
  const server: Server = { child, failed: false, answers: [], running: new Map() }
  // a server that could not start, or stopped reading, is not an error of a call: calls fall back
  child.on("error", () => lost(server))
  child.stdin?.on("error", () => lost(server))
  child.once("exit", () => lost(server))
  let rest = ""
  child.stdout?.setEncoding("latin1")
  child.stdout?.on("data", (text: string) => {
    rest += text
    let at: number
    while ((at = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, at)
      rest = rest.slice(at + 1)
      onLine(server, line)
    }
  })
  child.stdout?.once("end", () => lost(server))
  child.unref()
  const stdin = child.stdin as unknown as { unref?: () => void } | null
  stdin?.unref?.()
  refOut(server)
  return server
}

/** Whether a server can take a call now (it started and has not ended). */
export const usable = (server: Server): boolean =>
  !server.failed &&
  server.child.pid !== undefined &&
  server.child.exitCode === null &&
  server.child.signalCode === null &&
  server.child.stdin?.writable === true

/** Ends a server: its stdin closes and it exits; calls it started run on as their own. */
export const dismiss = (server: Server): void => {
  server.child.stdin?.destroy()
}

const send = (server: Server, fields: ReadonlyArray<string>): void => {
  const body = Buffer.from(`${fields.join("\0")}\0`)
  server.child.stdin!.write(Buffer.concat([Buffer.from(`${body.length}\n`), body]))
}

/**
 * The fields of the call `file args` in the cgroup `dir` (a `run-with` request when the launcher
 * applies `options` to it, e.g. `scope,memory=N`), or undefined when a field cannot be sent (a NUL
 * byte, which the spawn call refuses too) or the working directory is not one (the spawn call
 * reports that as a spawn failure, which the caller then gets from it).
 */
export const request = (
  dir: string,
  cwd: string,
  file: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  options: string | undefined
): Array<string> | undefined => {
  const fields = [
    ...(options === undefined ? ["run"] : ["run-with", options]),
    dir,
    cwd,
    String(args.length + 1),
    file,
    ...args
  ]
  for (const name in env) {
    const value = env[name]
    if (value !== undefined) fields.push(`${name}=${value}`)
  }
  for (const field of fields) if (field.includes("\0")) return undefined
  if (fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory() !== true) return undefined
  return fields
}

/** Hands the server a call; `answer` gets its launcher (see Answer). */
export const call = (server: Server, fields: ReadonlyArray<string>, answer: Answer): void => {
  server.answers.push(answer)
  refOut(server)
  send(server, fields)
}
