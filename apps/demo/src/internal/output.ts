/**
 * The CLI's stdout contract: one JSON document per line, written synchronously so a line is
 * complete before the process exits, and exit codes 0 (ok), 2 (tool error), 1 (usage error).
 */
import * as Effect from "effect/Effect"

/** Exit codes of the CLI. @internal */
export const ExitCode = {
  ok: 0,
  toolError: 2,
  usage: 1,
  interrupted: 130
} as const

/** Writes one JSON line to stdout. @internal */
export const writeLine = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

/** @internal */
export const printLine = (value: unknown): Effect.Effect<void> => Effect.sync(() => writeLine(value))

/**
 * The exit code a command settled on; `bin.ts` exits with it. A module-level cell because the
 * runtime's teardown only sees the main fiber's exit, and a call interrupted by a signal still
 * answers (TOOL_ABORTED, code 2) from its finalizer.
 */
let settledExitCode: number | undefined

/** @internal */
export const setExitCode = (code: number): Effect.Effect<void> =>
  Effect.sync(() => {
    settledExitCode = code
  })

/** @internal */
export const exitCode = (): number | undefined => settledExitCode
