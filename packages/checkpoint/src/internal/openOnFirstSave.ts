// A store whose file does not exist yet: nothing is created before the first save that passes
// every check (a refused transcript, session id or checkpoint leaves no file behind), and reads
// answer as an empty store for as long as the file does not exist. Once the file exists (made by
// this store or by another process) it is opened, once, in the layer's scope.
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type { CheckpointInvalid, CheckpointStoreFailed } from "../CheckpointError.js"
import * as Transcript from "../Transcript.js"
import * as Record from "./record.js"
import * as Save from "./save.js"
import type { CheckpointStoreValue, StoredCheckpoint } from "./storeValue.js"

export interface Options {
  /** Opens (creating when missing) the store; its resources live in the scope it is given. */
  readonly open: Effect.Effect<CheckpointStoreValue, CheckpointStoreFailed, Scope.Scope>
  /** Whether the store's file exists by now. */
  readonly exists: () => boolean
}

export const make = (options: Options): Effect.Effect<CheckpointStoreValue, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const opened = yield* SynchronizedRef.make(Option.none<CheckpointStoreValue>())

    // a failed open keeps nothing open and leaves the next save to try again
    const open = SynchronizedRef.modifyEffect(opened, (current) =>
      Option.isSome(current)
        ? Effect.succeed([current.value, current] as const)
        : Effect.gen(function* () {
            // a scope of the store's own, closed with the caller's (or at once when opening fails)
            const child = yield* Scope.make(ExecutionStrategy.sequential)
            yield* Scope.addFinalizerExit(scope, (end) => Scope.close(child, end))
            const exit = yield* Effect.exit(Scope.extend(options.open, child))
            if (Exit.isFailure(exit)) yield* Scope.close(child, exit)
            const store = yield* exit
            return [store, Option.some(store)] as const
          })
    )

    /** The store when its file exists by now; none while it does not. */
    const existing = Effect.flatMap(SynchronizedRef.get(opened), (current) =>
      Option.isSome(current) || !options.exists() ? Effect.succeed(current) : Effect.asSome(open)
    )

    /** A read of the session: what the store answers, or `empty` while there is no file. */
    const read = <A, E>(
      sessionId: string,
      empty: Effect.Effect<A, E>,
      body: (store: CheckpointStoreValue) => Effect.Effect<A, E>
    ): Effect.Effect<A, E | CheckpointInvalid | CheckpointStoreFailed> =>
      Effect.zipRight(
        Record.checkSessionId(sessionId),
        Effect.flatMap(existing, (store): Effect.Effect<A, E> =>
          Option.isSome(store) ? body(store.value) : empty
        )
      )

    return {
      save: (sessionId, transcript, checkpoint) =>
        Effect.flatMap(Save.prepare(sessionId, transcript, checkpoint), ({ decoded }) =>
          Effect.flatMap(open, (store) => store.save(sessionId, decoded, checkpoint))
        ),
      latest: (sessionId) =>
        read(sessionId, Effect.succeed(Option.none<StoredCheckpoint>()), (store) => store.latest(sessionId)),
      get: (checkpointId) =>
        Effect.flatMap(existing, (store) =>
          Option.isSome(store) ? store.value.get(checkpointId) : Effect.succeed(Option.none())
        ),
      list: (sessionId) =>
        read(sessionId, Effect.succeed<ReadonlyArray<number>>([]), (store) => store.list(sessionId)),
      transcript: (sessionId) =>
        read(sessionId, Transcript.decode({ messages: [] }), (store) => store.transcript(sessionId))
    } satisfies CheckpointStoreValue
  })
