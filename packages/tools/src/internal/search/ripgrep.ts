/**
 * ripgrep, from the `@vscode/ripgrep` package (the binary ships inside it), run with an argv array
 * and never through a shell. Every run is tied to the calling fiber: interrupting the fiber kills
 * the process and waits until it has exited, so no search outlives its call.
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { ToolError } from "@toolcap/limits"
import * as Confinement from "../../Confinement.js"
import { spawnChild } from "../supervisor/process.js"

/**
 * Flags of every run, so that ripgrep decides exactly what DECISIONS §4 says: no config file, hidden
 * files included, git rules whether or not a repository exists, no ignore file above the search
 * root, no user-global excludes, no noise about unreadable files (they are not errors of the call).
 */
export const commonFlags: ReadonlyArray<string> = [
  "--no-config",
  "--hidden",
  "--no-require-git",
  "--no-ignore-parent",
  "--no-ignore-global",
  "--no-messages"
]

/** `.git` is never walked into nor listed; given last, it wins over any other glob. */
export const excludeGitFlags: ReadonlyArray<string> = ["--glob", "!.git"]

/**
 * Linux refuses a single argument longer than 32 pages (MAX_ARG_STRLEN, 128 KiB). A longer
 * pattern is handed over on stdin instead.
 */
export const MAX_ARGUMENT_BYTES = 128 * 1024 - 1

/** The most stderr kept from one run: enough for any ripgrep error message. */
const MAX_STDERR_BYTES = 64 * 1024

let resolvedPath: Promise<string> | undefined

/** The ripgrep binary, resolved on first use (the package throws at import time without it). */
export const binary: Effect.Effect<string, ToolError.ToolSpawnFailed> = Effect.tryPromise({
  try: () => (resolvedPath ??= import("@vscode/ripgrep").then((module) => module.rgPath)),
  catch: (cause) => {
    resolvedPath = undefined
    return new ToolError.ToolSpawnFailed({
      command: "rg",
      reason: `the ripgrep binary of @vscode/ripgrep is missing (${cause instanceof Error ? cause.message : String(cause)}); reinstall the package with its optional platform dependency`
    })
  }
})

/** How a run ended. */
export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
  /** True when the run was stopped by `stop()` from `onData`. */
  readonly stopped: boolean
}

export interface RunOptions {
  readonly cwd: string
  /** Written to stdin, which is then closed; stdin is /dev/null otherwise. */
  readonly stdin?: string | undefined
  /** Receives stdout as it arrives; `stop()` kills the run early (its exit then says `stopped`). */
  readonly onData: (chunk: Buffer, stop: () => void) => void
}

/**
 * Runs ripgrep to completion (or until `stop()`), streaming stdout to `onData`. Interrupting the
 * effect kills the process with SIGKILL and resumes only once it has exited.
 */
export const run = (
  rg: string,
  args: ReadonlyArray<string>,
  options: RunOptions
): Effect.Effect<Exit, ToolError.ToolSpawnFailed> =>
  Effect.flatMap(FiberRef.get(Confinement.readBeneath), (directories) => {
    // confined by the kernel to reading beneath the roots, where it can be (Confinement)
    const launch = Confinement.command(rg, args, directories)
    return Effect.flatMap(spawnRun(rg, launch.file, launch.args, options), (exit) =>
      // ripgrep itself exits 0, 1 or 2; 125 to 127 are the confinement launcher's (it could not set
      // up, found no file to exec, could not exec it): ripgrep never ran, which must not read as
      // "no match"
      LAUNCH_FAILED.has(exit.code ?? 0)
        ? Effect.fail(
            new ToolError.ToolSpawnFailed({
              command: rg,
              reason: `ripgrep could not be started (exit ${exit.code}${exit.stderr.trim() === "" ? "" : `: ${describeError(exit.stderr)}`}); reinstall @vscode/ripgrep with its optional platform dependency`
            })
          )
        : Effect.succeed(exit)
    )
  })

/** native/confine.c's statuses: 125 not confined (a rule or the ruleset failed), 126 not executable, 127 not found. */
const LAUNCH_FAILED: ReadonlySet<number> = new Set([125, 126, 127])

const spawnRun = (
  rg: string,
  file: string,
  args: ReadonlyArray<string>,
  options: RunOptions
): Effect.Effect<Exit, ToolError.ToolSpawnFailed> =>
  Effect.async<Exit, ToolError.ToolSpawnFailed>((resume) => {
    // the one spawn path: the child is on the host's lifeline until it exits
    const child = spawnChild(file, args, {
      cwd: options.cwd,
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    let stderr = ""
    let stopped = false
    let closed = false
    const stop = () => {
      if (!stopped && !closed) {
        stopped = true
        child.kill("SIGKILL")
      }
    }
    child.stdout!.on("data", (chunk: Buffer) => {
      if (!stopped) options.onData(chunk, stop)
    })
    child.stderr!.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString("utf8")
    })
    if (options.stdin !== undefined) {
      // a run that ends before reading its stdin closes the pipe: that is not an error
      child.stdin!.on("error", () => {})
      child.stdin!.end(options.stdin)
    }
    child.once("error", (error) => {
      if (closed) return
      closed = true
      resume(Effect.fail(new ToolError.ToolSpawnFailed({ command: rg, reason: error.message })))
    })
    child.once("close", (code, signal) => {
      if (closed) return
      closed = true
      resume(Effect.succeed({ code, signal, stderr, stopped }))
    })
    return Effect.async<void>((done) => {
      if (closed || child.exitCode !== null || child.signalCode !== null) {
        done(Effect.void)
        return
      }
      child.once("close", () => done(Effect.void))
      child.once("error", () => done(Effect.void))
      child.kill("SIGKILL")
    })
  })

/** ripgrep's error text, without its `rg: ` prefixes, each line and the whole bounded. */
export const describeError = (stderr: string): string => {
  const lines = stderr
    .replace(/\r\n/g, "\n")
    .trim()
    .split("\n")
    .map((line) => line.replace(/^rg: /, ""))
    .map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line))
  const kept = lines.slice(0, 12)
  return (kept.length < lines.length ? [...kept, "…"] : kept).join("\n") || "ripgrep failed without a message"
}
