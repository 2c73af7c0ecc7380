/**
 * ripgrep, from the `@vscode/ripgrep` package (the binary ships inside it), run with an argv array
 * and never through a shell, by the `Supervisor` in a scope of the calling fiber: interrupting the
 * fiber (or `stop()`) kills the process and waits until it has exited, so no search outlives its call.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import { ToolError } from "@toolcap/limits"
import * as Confinement from "../../Confinement.js"
import * as Supervisor from "../../Supervisor.js"

/**
 * Flags of every run, so that ripgrep decides exactly what rules S2 and S3 say: no config file, hidden
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

/**
 * The ripgrep binary, resolved on first use (the package throws at import time without it; the
 * module loader keeps the loaded module).
 */
export const binary: Effect.Effect<string, ToolError.ToolSpawnFailed> = Effect.tryPromise({
  try: () => import("@vscode/ripgrep").then((module) => module.rgPath),
  catch: (cause) => {
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
  /** True when an allocation failed at the run's memory ceiling and ended it. */
  readonly memoryExhausted: boolean
  /** The run's memory ceiling in bytes (0: none). */
  readonly memoryBytes: number
}

/**
 * What Rust's allocator prints before it aborts the process when an allocation fails (at the
 * ceiling, the kernel refuses the memory).
 */
const ALLOCATION_FAILED = /memory allocation of \d+ bytes failed/

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
): Effect.Effect<Exit, ToolError.ToolSpawnFailed, Supervisor.Supervisor> =>
  Effect.gen(function* () {
    // confined by the kernel to reading beneath the roots, where it can be, under the memory
    // ceiling (Confinement)
    const memoryBytes = yield* FiberRef.get(Confinement.engineMemory)
    const launch = yield* Confinement.command(
      rg,
      args,
      yield* FiberRef.get(Confinement.readBeneath),
      memoryBytes
    )
    const ran = yield* runProcess(rg, launch.file, launch.args, options)
    const exit: Exit = {
      ...ran,
      memoryBytes,
      memoryExhausted: memoryBytes > 0 && ran.signal === "SIGABRT" && ALLOCATION_FAILED.test(ran.stderr)
    }
    // ripgrep itself exits 0, 1 or 2; 125 to 127 are the confinement launcher's (it could not set
    // up, found no file to exec, could not exec it): ripgrep never ran, which must not read as
    // "no match"
    if (!LAUNCH_FAILED.has(exit.code ?? 0)) return exit
    return yield* new ToolError.ToolSpawnFailed({
      command: rg,
      reason: `ripgrep could not be started (exit ${exit.code}${exit.stderr.trim() === "" ? "" : `: ${describeError(exit.stderr)}`}); reinstall @vscode/ripgrep with its optional platform dependency`
    })
  })

/** native/confine.c's statuses: 125 not confined (a rule or the ruleset failed), 126 not executable, 127 not found. */
const LAUNCH_FAILED: ReadonlySet<number> = new Set([125, 126, 127])

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const runProcess = (
  rg: string,
  file: string,
  args: ReadonlyArray<string>,
  options: RunOptions
): Effect.Effect<
  Omit<Exit, "memoryExhausted" | "memoryBytes">,
  ToolError.ToolSpawnFailed,
  Supervisor.Supervisor
> =>
  // a plain chain, not a generator: a Grep runs ripgrep two or three times
  Effect.flatMap(Supervisor.Supervisor, (supervisor) =>
    Effect.scoped(
      Effect.flatMap(
        Effect.mapError(
          supervisor.start({ file, args, cwd: options.cwd, stdin: options.stdin }),
          (error) => new ToolError.ToolSpawnFailed({ command: rg, reason: error.reason })
        ),
        (proc) => {
          let stderr = ""
          proc.tap("stderr", (chunk) => {
            if (stderr.length < MAX_STDERR_BYTES) stderr += asBuffer(chunk).toString("utf8")
          })
          // stdout read through the tap (the parsing is synchronous); its end or a stop ends the wait
          let stopped = false
          const ended = Deferred.unsafeMake<void>(FiberId.none)
          const stop = () => {
            stopped = true
            Deferred.unsafeDone(ended, Effect.void)
          }
          proc.tap(
            "stdout",
            (chunk) => {
              if (!stopped) options.onData(asBuffer(chunk), stop)
            },
            () => Deferred.unsafeDone(ended, Effect.void)
          )
          return Effect.flatMap(
            Deferred.await(ended),
            (): Effect.Effect<Omit<Exit, "memoryExhausted" | "memoryBytes">> => {
              // stopped early: closing the scope kills it
              if (stopped) return Effect.succeed({ code: null, signal: "SIGKILL", stderr, stopped })
              // ripgrep runs as a plain process, which no launcher server starts: its exit is never lost
              return Effect.flatMap(Effect.orDie(proc.exit), (status) =>
                Effect.as(proc.drained, {
                  code: status.code,
                  signal: status.signal as NodeJS.Signals | null,
                  stderr,
                  stopped
                })
              )
            }
          )
        }
      )
    )
  )

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
