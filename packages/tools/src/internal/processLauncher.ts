/**
 * A launcher started ahead of its call. In the cgroup tier's launcher entry the host's own fork and
 * exec of the launcher (a fork of the whole host process, which blocks its event loop until the
 * exec is done) is most of a short call's cost. A runner therefore keeps one launcher waiting in
 * `--serve` mode (`native/confine.c`): the next call hands it its cgroup, working directory,
 * command and environment over the launcher's stdin, and the launcher creates the shell in the
 * cgroup at once, exactly as `--cgroup` does. The waiting launcher runs nothing, holds no cgroup
 * and carries no cookie; it is not counted by the host's event loop, and it exits when its stdin
 * closes (the host exited or died, or the runner was closed).
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { launcherPath } from "./launcher.js"
import * as Proc from "./process.js"

/** A launcher waiting for its request. */
export interface Waiting {
  readonly child: ChildProcess
  failed: boolean
}

const refStdio = (child: ChildProcess, on: boolean): void => {
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    const socket = stream as unknown as { ref?: () => void; unref?: () => void } | null
    if (on) socket?.ref?.()
    else socket?.unref?.()
  }
}

/** Starts a launcher in `--serve` mode; it waits for a request without keeping the host alive. */
export const start = (): Waiting => {
  const child = Proc.spawnChild(launcherPath, ["--serve"], {
    cwd: "/",
    env: {},
    stdio: ["pipe", "pipe", "pipe"],
    lifeline: "none"
  })
  const waiting: Waiting = { child, failed: false }
  // a launcher that could not start, or a request it stopped reading, is not an error of a call
  child.on("error", () => {
    waiting.failed = true
  })
  child.stdin?.on("error", () => {
    waiting.failed = true
  })
  child.unref()
  refStdio(child, false)
  return waiting
}

/** Whether a waiting launcher can take a request now (it started and has not ended). */
export const usable = (waiting: Waiting): boolean =>
  !waiting.failed &&
  waiting.child.pid !== undefined &&
  waiting.child.exitCode === null &&
  waiting.child.signalCode === null &&
  waiting.child.stdin?.writable === true

/** Ends a waiting launcher that will not be used: its stdin closes, it exits without running anything. */
export const dismiss = (waiting: Waiting): void => {
  waiting.child.stdin?.destroy()
}

/**
 * The request for `file` with `args` in the cgroup `dir`, or undefined when a field cannot be sent
 * (a NUL byte, which the spawn call refuses too) or the working directory is not one (the spawn
 * call reports that as a spawn failure, which the caller then gets from it).
 */
export const request = (
  dir: string,
  cwd: string,
  file: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): Buffer | undefined => {
  const fields = [dir, cwd, String(args.length + 1), file, ...args]
  for (const name in env) {
    const value = env[name]
    if (value !== undefined) fields.push(`${name}=${value}`)
  }
  for (const field of fields) if (field.includes("\0")) return undefined
  if (fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory() !== true) return undefined
  const body = Buffer.from(`${fields.join("\0")}\0`)
  return Buffer.concat([Buffer.from(`${body.length}\n`), body])
}

/** Hands a waiting launcher its request; from here it is an ordinary child of the host. */
export const send = (waiting: Waiting, requestBytes: Buffer): ChildProcess => {
  const child = waiting.child
  child.ref()
  refStdio(child, true)
  child.stdin!.end(requestBytes)
  return child
}
