/**
 * A read-only view of a host's tool calls, for renderers such as the live viewer: the host emits
 * one `started` event per call (with its input), Bash's ordered `chunk`s while it runs, and one
 * `ended` event with the call's wire outcome (result, `truncation`, timeout/abort with the pids
 * stopped). An observer is called synchronously and must return quickly; it can neither slow nor
 * fail a call (what it throws is ignored).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Stream from "effect/Stream"
import type { Bash } from "@toolcap/tools"
import * as Outcome from "./Outcome.js"

/**
 * @since 0.1.0
 * @category models
 */
export type CallEvent =
  | {
      readonly type: "started"
      readonly callId: string
      readonly tool: string
      readonly input: unknown
      /** ms since the epoch */
      readonly at: number
    }
  | ({ readonly type: "chunk" } & Bash.BashChunk)
  | {
      readonly type: "ended"
      readonly callId: string
      readonly tool: string
      readonly outcome: Outcome.Outcome
      readonly at: number
    }

/**
 * @since 0.1.0
 * @category models
 */
export interface CallObserver {
  readonly onEvent: (event: CallEvent) => void
}

/** The outcome code of a call that died of a defect (a bug, not a tool error). */
const defectCode = "TOOL_DEFECT"

const emit = (observer: CallObserver, event: CallEvent): void => {
  try {
    observer.onEvent(event)
  } catch {
    // an observer is a bystander: its failure is not the call's
  }
}

/**
 * Wraps one call so `observer` sees it: the call gets a `callId` if it had none, its chunk
 * consumer also feeds the observer, and its exit becomes an `ended` event.
 *
 * @since 0.1.0
 * @category constructors
 */
export const observe = <O extends { readonly callId?: string | undefined; readonly onChunk?: unknown }, A, E>(
  observer: CallObserver,
  tool: string,
  input: unknown,
  options: O,
  run: (options: O) => Effect.Effect<A, E>
): Effect.Effect<A, E> =>
  Effect.gen(function* () {
    // the global crypto: an import of node:crypto would load it for every call, observed or not
    const callId = options.callId ?? globalThis.crypto.randomUUID()
    const own = options.onChunk as ((chunk: Bash.BashChunk) => Effect.Effect<void> | void) | undefined
    const onChunk = (chunk: Bash.BashChunk) => {
      emit(observer, { type: "chunk", ...chunk })
      return own?.(chunk)
    }
    emit(observer, { type: "started", callId, tool, input, at: yield* Clock.currentTimeMillis })
    return yield* run({ ...options, callId, onChunk }).pipe(
      Effect.onExit((exit) => ended(observer, tool, callId, exit))
    )
  })

/** Emits the `ended` event of a call that exited with `exit`. */
const ended = (observer: CallObserver, tool: string, callId: string, exit: Exit.Exit<unknown, unknown>) =>
  Effect.map(Clock.currentTimeMillis, (at) => {
    const settled = Outcome.fromExit(tool, exit)
    const outcome = Either.isRight(settled)
      ? settled.right
      : Outcome.fail({ code: defectCode, message: `${tool} failed with a defect; see the host's log.` })
    emit(observer, { type: "ended", callId, tool, outcome, at })
  })

/**
 * Wraps one Bash call's event stream so `observer` sees it: `started` when the stream starts,
 * each chunk as it passes, `ended` with the outcome (the last element), the failure, or the
 * interruption when the consumer stops early.
 *
 * @since 0.1.0
 * @category constructors
 */
export const observeStream = <A, E, R>(
  observer: CallObserver,
  tool: string,
  input: unknown,
  callId: string,
  events: Stream.Stream<
    | { readonly _tag: "Chunk"; readonly chunk: Bash.BashChunk }
    | { readonly _tag: "Result"; readonly result: A },
    E,
    R
  >
): Stream.Stream<
  | { readonly _tag: "Chunk"; readonly chunk: Bash.BashChunk }
  | { readonly _tag: "Result"; readonly result: A },
  E,
  R
> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      emit(observer, { type: "started", callId, tool, input, at: yield* Clock.currentTimeMillis })
      let done = false
      const end = (exit: Exit.Exit<unknown, unknown>) =>
        Effect.suspend(() => {
          if (done) return Effect.void
          done = true
          return ended(observer, tool, callId, exit)
        })
      // the consumer stopped before the outcome: the call was interrupted
      yield* Effect.addFinalizer(() => end(Exit.interrupt(FiberId.none)))
      return events.pipe(
        Stream.tap((event) =>
          "chunk" in event
            ? Effect.sync(() => emit(observer, { type: "chunk", ...event.chunk }))
            : end(Exit.succeed(event.result))
        ),
        Stream.tapErrorCause((cause) => end(Exit.failCause(cause)))
      )
    })
  )
