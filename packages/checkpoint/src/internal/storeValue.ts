// What a checkpoint store is, apart from the stores: the shape every store layer (memory, the SQL
// stores) provides, published by `CheckpointStore`.
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Checkpoint from "../Checkpoint.js"
import type { CheckpointConflict, CheckpointInvalid, CheckpointStoreFailed } from "../CheckpointError.js"
import type * as Transcript from "../Transcript.js"

/**
 * A checkpoint as the store holds it.
 *
 * @since 0.1.0
 * @category models
 */
export const StoredCheckpoint = Schema.Struct({
  /** Increases with every checkpoint saved to the store. */
  checkpointId: Schema.Int,
  sessionId: Schema.String,
  /** When it was saved, in ms since the epoch (effect `Clock`). */
  createdAt: Schema.Int,
  checkpoint: Checkpoint.Checkpoint
})

/**
 * @since 0.1.0
 * @category models
 */
export type StoredCheckpoint = typeof StoredCheckpoint.Type

/**
 * @since 0.1.0
 * @category models
 */
export interface CheckpointStoreValue {
  /**
   * Saves a checkpoint with the transcript it was built from, in one transaction. Messages the
   * store already holds for the session must be unchanged (`CheckpointConflict` otherwise); new
   * ones are appended.
   */
  readonly save: (
    sessionId: string,
    transcript: unknown,
    checkpoint: Checkpoint.Checkpoint
  ) => Effect.Effect<StoredCheckpoint, CheckpointInvalid | CheckpointConflict | CheckpointStoreFailed>
  /** The session's most recent checkpoint. */
  readonly latest: (
    sessionId: string
  ) => Effect.Effect<Option.Option<StoredCheckpoint>, CheckpointInvalid | CheckpointStoreFailed>
  /** A checkpoint by id. */
  readonly get: (
    checkpointId: number
  ) => Effect.Effect<Option.Option<StoredCheckpoint>, CheckpointStoreFailed>
  /** The ids of the session's checkpoints, oldest first. */
  readonly list: (
    sessionId: string
  ) => Effect.Effect<ReadonlyArray<number>, CheckpointInvalid | CheckpointStoreFailed>
  /** The session's transcript as stored (empty when nothing was saved). */
  readonly transcript: (
    sessionId: string
  ) => Effect.Effect<Transcript.Transcript, CheckpointInvalid | CheckpointStoreFailed>
}
