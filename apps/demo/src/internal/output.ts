/**
 * The CLI's stdout contract: one JSON document per line, and exit codes 0 (ok), 2 (tool error),
 * 1 (usage error).
 *
 * The answer line is written synchronously to fd 1, retrying while the pipe is full, so it is
 * whole before the process exits — `process.stdout.write` turns asynchronous once a pipe is full
 * and `process.exit` would then cut the line at the pipe's capacity. Streamed chunk lines go
 * through `process.stdout` and wait for it to drain, so a slow reader pauses the command instead
 * of growing a buffer; the answer waits for those to be flushed first, keeping the order.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Exit from "effect/Exit"
import type { Writable } from "node:stream"
import { OptionalPeer } from "@toolcap/adapters"
import { writeAllSync } from "./writeSync.js"

/** Exit codes of the CLI. @internal */
export const ExitCode = {
  ok: 0,
  toolError: 2,
  usage: 1,
  interrupted: 130
} as const

/**
 * Resolves once everything queued on `stream` was handed to the OS (or the stream is gone).
 * Waiting for `drain` is not enough: it is emitted only after a write that returned false, and
 * a short line queued behind a full pipe returns true — the answer line would then wait for a
 * `drain` that never comes. An empty write's callback runs after every write before it.
 *
 * @internal
 */
export const flushed = (stream: Writable): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (stream.writableLength === 0 || stream.destroyed || stream.writableEnded) return resume(Effect.void)
    // called with an error instead when the stream is destroyed first: nothing is left to wait for
    stream.write("", () => resume(Effect.void))
  })

/**
 * Whether a line went through `process.stdout`. Until then nothing can be queued there, and the
 * answer does not touch it: Node builds the stdout stream (for a pipe, a socket) on first access,
 * which a call that answers with one line never needs.
 */
let streamed = false

const stdoutFlushed: Effect.Effect<void> = Effect.suspend(() =>
  streamed ? flushed(process.stdout) : Effect.void
)

/** Writes one JSON line to stdout synchronously (after any queued stream lines). @internal */
export const writeLine = (value: unknown): void => writeAllSync(1, `${JSON.stringify(value)}\n`)

/** Prints one answer line: whole, and after every streamed line before it. @internal */
export const printLine = (value: unknown): Effect.Effect<void> =>
  Effect.zipRight(
    stdoutFlushed,
    Effect.sync(() => writeLine(value))
  )

/** Prints a text as it is (a line break added when it has none at its end), after any streamed line. @internal */
export const printText = (text: string): Effect.Effect<void> =>
  Effect.zipRight(
    stdoutFlushed,
    Effect.sync(() => writeAllSync(1, text.endsWith("\n") ? text : `${text}\n`))
  )

/**
 * Writes one streamed line; completes once stdout can take more, so the producer (Bash's pipe
 * reader) waits for a slow reader instead of queueing without bound. @internal
 */
export const streamLine = (value: unknown): Effect.Effect<void> =>
  Effect.suspend(() => {
    streamed = true
    return process.stdout.write(`${JSON.stringify(value)}\n`) ? Effect.void : stdoutFlushed
  })

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

/** A missing optional peer is the user's to install: one line naming it, exit code 1, no stack. */
const reportMissingPeer = (defect: unknown): Effect.Effect<void> =>
  OptionalPeer.isOptionalPeerMissing(defect)
    ? Effect.zipRight(
        Effect.sync(() => process.stderr.write(`${defect.message}\n`)),
        setExitCode(ExitCode.usage)
      )
    : Effect.die(defect)

/**
 * Runs a command as the process's main program: SIGINT/SIGTERM interrupt it (a call then still
 * answers), and the process exits with the code the command settled on.
 *
 * @internal
 */
export const runMain = (program: Effect.Effect<void>): void =>
  NodeRuntime.runMain(Effect.catchAllDefect(program, reportMissingPeer), {
    // reported below on stderr: the runtime's own report goes through a logger writing to stdout,
    // which belongs to the JSON contract
    disableErrorReporting: true,
    // Effect's logs go to stderr (`stderrLogger`, provided by each command); the platform's pretty
    // logger would add a second logger writing to stdout, and building it costs every call
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) reportDefect(exit.cause)
      if (settledExitCode !== undefined) return onExit(settledExitCode)
      onExit(Exit.isSuccess(exit) ? ExitCode.ok : Exit.isInterrupted(exit) ? ExitCode.interrupted : 1)
    }
  })

/** A command that died of a defect (a bug): the cause on stderr, nothing on stdout. */
const reportDefect = (cause: Cause.Cause<unknown>): void =>
  writeAllSync(2, `toolcap: unexpected failure (a bug; please report it):\n${Cause.pretty(cause)}\n`)
