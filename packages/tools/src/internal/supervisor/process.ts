/**
 * The Node-specific primitives of process supervision: the one spawn call, the shell, signals and
 * the host's identity. /proc reads live in spill's Procfs; the service surface is ProcessRunner.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import * as Lifeline from "./lifeline.js"

/** @internal */
export type StreamName = "stdout" | "stderr"

/** @internal */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
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
 * The one place toolcap starts a process (Bash's shell through ProcessRunner, Grep's ripgrep).
 * Unless the caller registers the process with the lifeline itself (a contained tree registers
 * its cgroup or group instead), the child's pid is registered until it exits, so a host that
 * dies does not leave it running.
 *
 * @internal
 */
export const spawnChild = (
  file: string,
  args: ReadonlyArray<string>,
  options: SpawnOptions & { readonly lifeline?: "pid" | "none" | undefined }
): ChildProcess => {
  const { lifeline, ...spawnOptions } = options
  const child = spawn(file, args as Array<string>, { windowsHide: true, ...spawnOptions })
  if (lifeline !== "none" && child.pid !== undefined) {
    const unregister = Lifeline.register({ kind: "pid", pid: child.pid })
    child.once("exit", unregister)
  }
  return child
}

/**
 * The host's environment with one variable set, as a plain object. Every read of `process.env`
 * calls into the runtime, and a spread of it asks twice per variable: listing the names once and
 * reading each value costs about a fifth of `{ ...process.env }` (18 µs against 86 µs for 35
 * variables, measured here), paid by every Bash call.
 *
 * @internal
 */
export const hostEnvWith = (name: string, value: string): Record<string, string | undefined> => {
  const env = process.env
  const out: Record<string, string | undefined> = {}
  for (const key of Object.keys(env)) out[key] = env[key]
  out[name] = value
  return out
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
 * This process's pid and start time, part of every run id so ids of concurrent hosts never collide
 * and a later host can tell whether the owner of a leftover is gone.
 *
 * @internal
 */
export const host = (): { readonly pid: number; readonly startTime: string | undefined } =>
  (hostIdentity ??= { pid: process.pid, startTime: Procfs.startTimeOf(process.pid) })

let hostIdentity: { readonly pid: number; readonly startTime: string | undefined } | undefined

/**
 * The start of every run id this host makes, `<pid36>-<start36>-` (base 36): the lifeline names
 * all of this host's call cgroups and cookies by it with one registration instead of one per call.
 *
 * @internal
 */
export const hostRunPrefix = (): string =>
  (runPrefix ??= `${host().pid.toString(36)}-${Number(host().startTime ?? 0).toString(36)}-`)

let runPrefix: string | undefined
