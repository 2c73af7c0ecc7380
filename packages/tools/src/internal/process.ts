/**
 * Everything Node- and Linux-specific about running a shell command and finding its process tree:
 * spawning, the output pipes, signals and the /proc scan. The supervision logic (ProcessTree) and
 * the Bash tool use only this module's small surface, so a move to another runtime (Effect 4's
 * process module, Bun) touches this file alone.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

/** @internal */
export type StreamName = "stdout" | "stderr"

/** @internal */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

/** @internal */
export interface SpawnHandlers {
  /** Bytes read from a pipe, in order; the buffer is not reused by the caller afterwards. */
  readonly onData: (stream: StreamName, bytes: Uint8Array) => void
  /** The pipe reached end of file: every writer closed it. */
  readonly onEnd: (stream: StreamName) => void
  /** The main process exited (its pipes may still be held open by descendants). */
  readonly onExit: (status: ExitStatus) => void
  /** The process is running. */
  readonly onSpawn: (process: Spawned) => void
  /** The process could not be started. */
  readonly onSpawnError: (reason: string) => void
}

/** @internal */
export interface Spawned {
  readonly pid: number
  /** Start time of the process from /proc, read before it can be reaped (tells a reused pid apart). */
  readonly startTime: string | undefined
  /** Stop reading the pipes for now (backpressure); the writer blocks once the pipe is full. */
  readonly pause: () => void
  readonly resume: () => void
  /** Stop reading for good: no `onData` or `onEnd` after this. Idempotent. */
  readonly close: () => void
}

/** @internal */
export interface Shell {
  readonly file: string
  readonly name: "bash" | "sh"
}

const executable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

let resolvedShell: Shell | undefined

/**
 * `bash` from PATH (or /bin/bash), else `sh`: the command runs under `bash -c`, with `sh -c` as
 * the fallback on systems without bash (DECISIONS §5). Resolved once per process.
 *
 * @internal
 */
export const shell = (): Shell => {
  if (resolvedShell !== undefined) return resolvedShell
  const dirs = (process.env["PATH"] ?? "").split(path.delimiter).filter((d) => d.length > 0)
  const find = (name: string) =>
    [...dirs.map((d) => path.join(d, name)), `/bin/${name}`, `/usr/bin/${name}`].find(executable)
  const bash = find("bash")
  resolvedShell =
    bash !== undefined ? { file: bash, name: "bash" } : { file: find("sh") ?? "/bin/sh", name: "sh" }
  return resolvedShell
}

/**
 * Spawns `<shell> -c <command>` in `cwd`, stdin on /dev/null, stdout and stderr as pipes, in a new
 * session and process group of its own (so the group id is its pid), with `cookie` added to the
 * inherited environment.
 *
 * @internal
 */
export const spawnShell = (
  options: {
    readonly command: string
    readonly cwd: string
    readonly cookie: { readonly name: string; readonly value: string }
  },
  handlers: SpawnHandlers
): void => {
  const { file } = shell()
  let child: ReturnType<typeof spawn>
  try {
    child = spawn(file, ["-c", options.command], {
      cwd: options.cwd,
      env: { ...process.env, [options.cookie.name]: options.cookie.value },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      windowsHide: true
    })
  } catch (error) {
    handlers.onSpawnError(error instanceof Error ? error.message : String(error))
    return
  }
  const stdout = child.stdout!
  const stderr = child.stderr!
  let closed = false
  let started = false
  const onStdout = (bytes: Buffer) => handlers.onData("stdout", bytes)
  const onStderr = (bytes: Buffer) => handlers.onData("stderr", bytes)
  const onStdoutEnd = () => handlers.onEnd("stdout")
  const onStderrEnd = () => handlers.onEnd("stderr")
  // a read error on a pipe ends that stream; the supervisor still stops the tree
  const onStdoutError = () => handlers.onEnd("stdout")
  const onStderrError = () => handlers.onEnd("stderr")
  stdout.on("data", onStdout).on("end", onStdoutEnd).on("error", onStdoutError)
  stderr.on("data", onStderr).on("end", onStderrEnd).on("error", onStderrError)
  const close = () => {
    if (closed) return
    closed = true
    stdout.off("data", onStdout).off("end", onStdoutEnd)
    stderr.off("data", onStderr).off("end", onStderrEnd)
    // keep swallowing errors of the destroyed pipes
    stdout.destroy()
    stderr.destroy()
  }
  child.once("error", (error) => {
    if (started) return
    close()
    handlers.onSpawnError(error.message)
  })
  child.once("spawn", () => {
    started = true
    const pid = child.pid!
    handlers.onSpawn({
      pid,
      // still readable here: the exit of the child (if any) is reaped only after this event
      startTime: readProcess(pid)?.startTime,
      pause: () => {
        if (closed) return
        stdout.pause()
        stderr.pause()
      },
      resume: () => {
        if (closed) return
        stdout.resume()
        stderr.resume()
      },
      close
    })
  })
  child.once("exit", (code, signal) => handlers.onExit({ code, signal }))
}

/** @internal */
export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  /** Single-letter state from /proc/<pid>/stat: R S D Z T X ... */
  readonly state: string
  /** Start time in clock ticks since boot: a pid with another start time is another process. */
  readonly startTime: string
}

/** Parses /proc/<pid>/stat; the `(comm)` field may contain spaces and parentheses. */
const parseStat = (pid: number, stat: string): ProcessInfo | undefined => {
  const close = stat.lastIndexOf(")")
  if (close === -1) return undefined
  const fields = stat.slice(close + 2).split(" ")
  // fields[0] is field 3 (state): ppid is field 4, pgrp field 5, starttime field 22
  const state = fields[0]
  const ppid = Number(fields[1])
  const pgid = Number(fields[2])
  const startTime = fields[19]
  if (state === undefined || startTime === undefined || !Number.isInteger(ppid) || !Number.isInteger(pgid)) {
    return undefined
  }
  return { pid, ppid, pgid, state, startTime }
}

/**
 * One buffer for every /proc/<pid>/stat read (a stat line is well under 1 KB): open, read, close
 * is about six times faster than readFileSync on /proc, which is most of a tree scan.
 */
const statBuffer = Buffer.alloc(4096)

/** @internal */
export const readProcess = (pid: number): ProcessInfo | undefined => {
  let fd: number
  try {
    fd = fs.openSync(`/proc/${pid}/stat`, "r")
  } catch {
    return undefined
  }
  try {
    const length = fs.readSync(fd, statBuffer, 0, statBuffer.length, null)
    return parseStat(pid, statBuffer.toString("latin1", 0, length))
  } catch {
    return undefined
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Every process visible in /proc except this one. Processes that vanish mid-scan are skipped.
 *
 * @internal
 */
export const listProcesses = (): Array<ProcessInfo> => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const self = process.pid
  const out: Array<ProcessInfo> = []
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid <= 0 || pid === self) continue
    const info = readProcess(pid)
    if (info !== undefined) out.push(info)
  }
  return out
}

/** The value of `name=` in a NUL-separated environment block, or null when absent. */
const entryValue = (environ: Buffer, name: string): string | null => {
  const key = Buffer.from(`${name}=`)
  for (let at = environ.indexOf(key); at !== -1; at = environ.indexOf(key, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue
    const start = at + key.length
    const end = environ.indexOf(0, start)
    return environ.toString("latin1", start, end === -1 ? environ.length : end)
  }
  return null
}

/**
 * What the environment of a process held for a variable, per (pid, start time). A process's
 * /proc/<pid>/environ is fixed at exec; cached so each process is read once per host, not once per
 * scan (reading every environment is most of a scan's cost).
 */
const environCache = new Map<string, string | null>()

/**
 * The value of `name` in the initial environment of a process (/proc/<pid>/environ), or null
 * when it has none or it cannot be read (another user's, gone).
 *
 * @internal
 */
export const environValue = (info: ProcessInfo, name: string): string | null => {
  const key = `${name}\0${info.pid}:${info.startTime}`
  const cached = environCache.get(key)
  if (cached !== undefined) return cached
  let environ: Buffer
  try {
    environ = fs.readFileSync(`/proc/${info.pid}/environ`)
  } catch {
    return null
  }
  // while a process execs, its environ reads empty until the new image's is set up: not cached, or
  // a cookie carrier caught mid-exec would never be seen as one again
  if (environ.length === 0) return null
  const value = entryValue(environ, name)
  environCache.set(key, value)
  return value
}

/**
 * Drops cache entries of processes that no longer exist, so the cache stays as large as the
 * process table.
 *
 * @internal
 */
export const forgetGoneProcesses = (present: ReadonlyArray<ProcessInfo>): void => {
  if (environCache.size <= present.length * 2) return
  const alive = new Set(present.map((info) => `${info.pid}:${info.startTime}`))
  for (const key of environCache.keys()) {
    if (!alive.has(key.slice(key.indexOf("\0") + 1))) environCache.delete(key)
  }
}

/** @internal */
export type SignalName = "SIGTERM" | "SIGKILL"

/** @internal */
export type SignalOutcome = "sent" | "gone" | "denied"

/**
 * Sends a signal to one process: "gone" when it no longer exists, "denied" when it is not ours to
 * signal (another user's, e.g. a command run through sudo).
 *
 * @internal
 */
export const sendSignal = (pid: number, signal: SignalName | 0): SignalOutcome => {
  try {
    process.kill(pid, signal)
    return "sent"
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM" ? "denied" : "gone"
  }
}

/**
 * Whether this host may signal a process, without sending anything (signal 0).
 *
 * @internal
 */
export const probe = (pid: number): SignalOutcome => sendSignal(pid, 0)

/**
 * Sends a signal to one process; false when it is gone or not ours to signal.
 *
 * @internal
 */
export const signalProcess = (pid: number, signal: SignalName): boolean => sendSignal(pid, signal) === "sent"

/**
 * Sends a signal to every process of a process group.
 *
 * @internal
 */
export const signalGroup = (pgid: number, signal: SignalName): boolean => signalProcess(-pgid, signal)

/**
 * This process's pid, part of every run id so ids of concurrent hosts never collide.
 *
 * @internal
 */
export const hostPid = (): number => process.pid
