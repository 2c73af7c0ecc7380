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
 * The server is a scoped process of the layer: started on demand in a scope of its own below the
 * layer's, its answers a `Stream` of lines decoded with a Schema, each call waiting on a `Deferred`
 * under the id its request carries. A server that goes away (killed, crashed, a line it should
 * not have written) loses every call it had in hand, answered or not, with `TOOL_LAUNCHER_LOST`:
 * their exit is unknown and none is made up, and their cgroups are stopped with their scopes. The
 * next call starts a replacement. One that ends before it answered anything is not replaced: the
 * layer's calls then start their launchers from the host.
 *
 * The server runs nothing itself, holds no cgroup and carries no cookie. It keeps the host's event
 * loop alive only while a call it started has not ended, and it exits when its stdin closes (the
 * host exited or died, or the layer was closed).
 */
import type { ChildProcess } from "node:child_process"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import { Readable } from "node:stream"
import { ToolError } from "@toolcap/limits"
import { Procfs } from "@toolcap/spill"
import * as Launch from "./launch.js"
import * as Pipe from "./pipe.js"
import * as Proc from "./process.js"

/** How long closing a server waits for it to exit (it exits at once when its stdin closes). */
const SERVER_EXIT_WAIT_MS = 1000

/** A decimal integer field of an answer line. */
const Int = Schema.NumberFromString.pipe(Schema.int())

/**
 * The server's answer lines: `S ID PID OUT ERR`, the call `ID` started as launcher `PID` whose
 * pipes' read ends are the server's descriptors `OUT` and `ERR` (`PID` -1: nothing started), and
 * `X PID CODE SIGNAL`, launcher `PID` ended (`CODE` -1: killed by `SIGNAL`).
 */
const AnswerLine = Schema.Union(
  Schema.TemplateLiteralParser("S ", Int, " ", Int, " ", Int, " ", Int),
  Schema.TemplateLiteralParser("X ", Int, " ", Int, " ", Int)
)
const decodeLine = Schema.decodeUnknown(AnswerLine)

const signalNames: ReadonlyMap<number, NodeJS.Signals> = new Map(
  Object.entries(os.constants.signals).map(([name, number]) => [number, name as NodeJS.Signals])
)

/**
 * What a call handed to the server gets: its launcher, or `"not started"` (the caller spawns it
 * itself). A call the server went away with before it answered may have started all the same:
 * it gets a launcher already lost (pid 0, no pipes), so waiting for its exit fails and the stop
 * of its scope empties its cgroup.
 */
export type Answer = Launch.Launched | "not started"

/** The launcher of a call lost before its answer: nothing to read, its exit never known. */
const lostBeforeAnswer = (lost: ToolError.ToolLauncherLost): Launch.Launched => {
  const exit = Launch.exitLatch()
  exit.lose(lost)
  return { pid: 0, stdout: Readable.from([]), stderr: Readable.from([]), exit }
}

/** The layer's launcher server. */
export interface LauncherServer {
  /**
   * Hands the call `fields` (see `request`) of `command` to the server, started first when none
   * runs: its launcher, or `"not started"` when the server started nothing or none can run here.
   */
  readonly call: (fields: ReadonlyArray<string>, command: string) => Effect.Effect<Answer>
}

/** One server process and the calls it has in hand. */
interface Running {
  readonly child: ChildProcess
  readonly pid: number
  readonly scope: Scope.CloseableScope
  /** Calls waiting for their `S` answer, by the id their request carries. */
  readonly waiting: Map<number, { readonly answer: Deferred.Deferred<Answer>; readonly command: string }>
  /** Started calls by their launcher's pid, until their `X`. */
  readonly started: Map<number, { readonly exit: Launch.ExitLatch; readonly command: string }>
  nextId: number
  /** Whether it answered a call (a server that ends before it did is not replaced). */
  answered: boolean
  gone: boolean
}

/** The server's answers keep the host alive while a call waits for one or runs, and not otherwise. */
const refOut = (server: Running): void => {
  const socket = server.child.stdout as unknown as { ref?: () => void; unref?: () => void } | null
  if (server.waiting.size > 0 || server.started.size > 0) socket?.ref?.()
  else socket?.unref?.()
}

/**
 * Gives up a server that went away or cannot be followed: every call it had in hand, answered or
 * not, loses its exit (`TOOL_LAUNCHER_LOST`); its stdin is closed, so one that still runs exits.
 */
const lose = (server: Running, reason: string): void => {
  if (server.gone) return
  server.gone = true
  server.child.stdin?.destroy()
  for (const [id, call] of server.waiting) {
    server.waiting.delete(id)
    Deferred.unsafeDone(
      call.answer,
      Exit.succeed(
        lostBeforeAnswer(
          new ToolError.ToolLauncherLost({
            command: call.command,
            reason: `the launcher server ${reason} before it said whether the command started`
          })
        )
      )
    )
  }
  for (const [pid, call] of server.started) {
    server.started.delete(pid)
    call.exit.lose(
      new ToolError.ToolLauncherLost({
        command: call.command,
        reason: `the launcher server ${reason} while the command ran (launcher pid ${pid})`
      })
    )
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

const send = (server: Running, fields: ReadonlyArray<string>): void => {
  const body = Buffer.from(`${fields.join("\0")}\0`)
  server.child.stdin!.write(Buffer.concat([Buffer.from(`${body.length}\n`), body]))
}

/** Acts on one answer line. */
const onAnswer = (server: Running, line: typeof AnswerLine.Type): void => {
  if (line[0] === "S ") {
    const [, id, , pid, , out, , err] = line
    const call = server.waiting.get(id)
    if (call === undefined) return
    server.waiting.delete(id)
    server.answered = true
    if (!(pid > 0)) {
      Deferred.unsafeDone(call.answer, Exit.succeed("not started"))
      return
    }
    let stdout: net.Socket | undefined
    let stderr: net.Socket
    try {
      stdout = openPipe(server.pid, out)
      stderr = openPipe(server.pid, err)
    } catch {
      // only a server that went away has no descriptors to open: the call is lost with it
      stdout?.destroy()
      server.waiting.set(id, call)
      lose(server, "went away")
      return
    }
    send(server, ["ack", String(pid)])
    // registered before the call gets it: its exit may be on the next line of this read
    const exit = Launch.exitLatch()
    server.started.set(pid, { exit, command: call.command })
    Deferred.unsafeDone(call.answer, Exit.succeed({ pid, stdout, stderr, exit }))
  } else {
    const [, pid, , code, , signal] = line
    const call = server.started.get(pid)
    if (call === undefined) return
    server.started.delete(pid)
    call.exit.settle(
      code >= 0 ? { code, signal: null } : { code: null, signal: signalNames.get(signal) ?? null }
    )
  }
}

/**
 * Starts a server of `launcher` in a scope of its own below `parent`: its answers are read by a
 * fiber of that scope until its stdout ends (it exited), which loses what it still had in hand.
 * Undefined when it could not be started.
 */
const start = (launcher: string, parent: Scope.Scope): Effect.Effect<Running | undefined> =>
  Effect.gen(function* () {
    let child: ChildProcess
    try {
      child = Proc.spawnChild(launcher, ["--server"], {
        cwd: "/",
        env: {},
        stdio: ["pipe", "pipe", "ignore"]
      })
    } catch {
      return undefined
    }
    if (child.pid === undefined || child.stdout === null || child.stdin === null) {
      // not started (the error event says why, asynchronously): nothing to read or close
      child.on("error", () => {})
      return undefined
    }
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    const server: Running = {
      child,
      pid: child.pid,
      scope,
      waiting: new Map(),
      started: new Map(),
      nextId: 0,
      answered: false,
      gone: false
    }
    // a server that failed or stopped reading is lost; its calls fail, later calls get another
    child.on("error", () => lose(server, "failed"))
    child.stdin.on("error", () => lose(server, "stopped reading"))
    child.unref()
    ;(child.stdin as unknown as { unref?: () => void }).unref?.()
    const answers = Pipe.make(child.stdout, () => {}).stream.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.mapEffect(decodeLine),
      Stream.runForEach((line) =>
        Effect.sync(() => {
          onAnswer(server, line)
          refOut(server)
        })
      )
    )
    yield* Effect.forkIn(
      answers.pipe(
        Effect.matchCause({
          onSuccess: () => lose(server, "ended"),
          onFailure: (cause) =>
            lose(server, Cause.isInterruptedOnly(cause) ? "was closed" : "wrote an answer it should not have")
        })
      ),
      scope
    )
    // closing: its stdin closes and it exits; calls it started run on as their own
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        child.stdin?.destroy()
        if (child.exitCode !== null || child.signalCode !== null) return Effect.void
        return Effect.async<void>((resume) => void child.once("exit", () => resume(Effect.void))).pipe(
          Effect.interruptible,
          Effect.timeoutOption(Duration.millis(SERVER_EXIT_WAIT_MS))
        )
      })
    )
    refOut(server)
    return server
  })

/**
 * The launcher server of a layer whose launcher is `launcher`, in the current scope (the layer's):
 * nothing runs until the first call; closing the scope ends the server.
 *
 * @internal
 */
export const make = (launcher: string): Effect.Effect<LauncherServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const layerScope = yield* Effect.scope
    let current: Running | undefined
    // a server that ended before it answered anything is not started again
    let broken = false
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => (closed = true)))
    // one start at a time: concurrent calls that find no server wait for the same new one
    const starting = yield* Effect.makeSemaphore(1)

    /** Whether the server can take a call now: not given up, and not exited (its end may be unread yet). */
    const usable = (server: Running | undefined): boolean =>
      server !== undefined &&
      !server.gone &&
      server.child.exitCode === null &&
      server.child.signalCode === null
    /** A new server, the one before it closed first; undefined when none can run. */
    const replace: Effect.Effect<Running | undefined> = Effect.suspend(() => {
      if (usable(current)) return Effect.succeed(current!)
      const before = current
      current = undefined
      // one that exited before its end was read: what it had in hand is lost now
      if (before !== undefined) lose(before, "ended")
      if (before !== undefined && !before.answered) broken = true
      const closeBefore = before === undefined ? Effect.void : Scope.close(before.scope, Exit.void)
      if (broken || closed) return Effect.as(closeBefore, undefined)
      return Effect.zipRight(
        closeBefore,
        Effect.tap(start(launcher, layerScope), (started) => {
          if (started === undefined) broken = true
          current = started
        })
      )
    })
    /** The running server, or a new one. */
    const server: Effect.Effect<Running | undefined> = Effect.suspend(() =>
      usable(current) ? Effect.succeed(current!) : starting.withPermits(1)(replace)
    )

    return {
      call: (fields, command) =>
        Effect.flatMap(server, (running) => {
          if (running === undefined) return Effect.succeed<Answer>("not started")
          const id = running.nextId++
          const answer = Deferred.unsafeMake<Answer>(FiberId.none)
          running.waiting.set(id, { answer, command })
          refOut(running)
          const [kind, ...rest] = fields
          send(running, [kind!, String(id), ...rest])
          return Deferred.await(answer)
        })
    }
  })

/**
 * The fields of the call `file args` in the cgroup `dir` (a `run-with` request when the launcher
 * applies `options` to it, e.g. `scope,memory=N`), or undefined when a field cannot be sent (a NUL
 * byte, which the spawn call refuses too) or the working directory is not one (the spawn call
 * reports that as a spawn failure, which the caller then gets from it). `call` adds the id.
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
