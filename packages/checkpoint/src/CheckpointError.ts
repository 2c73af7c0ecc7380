/**
 * The typed failures of the checkpoint package, each with a stable wire `code` and a message that
 * says what was wrong and what to do next. Bad input is always one of these, never a crash.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Why an input was refused.
 *
 * - `schema`: the transcript (or a provider shape) does not have the expected structure.
 * - `unknown-role`: a message role (or Responses item type) the model does not know.
 * - `duplicate-message-id`: two messages share an id.
 * - `reserved-id`: a message id starts with `checkpoint:`, which the checkpoint uses for its own messages.
 * - `duplicate-call-id`: two tool calls share an id.
 * - `orphan-result`: a tool result answers no earlier tool call.
 * - `duplicate-result`: a tool call is answered twice.
 * - `invalid-utf8`: transcript bytes are not valid UTF-8.
 * - `budget`: the batch budget is too small for what must be kept (the `Budgets` layer refuses a 0).
 * - `session-id`: a session id outside `[A-Za-z0-9._-]{1,128}` (or `.` / `..`).
 * - `mismatch`: a checkpoint does not belong to the transcript it is saved with.
 * - `empty`: the transcript has no user message (`[]`, `{ "messages": [] }`, or only assistant and
 *   tool messages): its checkpoint would be a context without a request, so nothing is built or saved.
 *
 * @since 0.1.0
 * @category models
 */
export const InvalidReason = Schema.Literal(
  "schema",
  "unknown-role",
  "duplicate-message-id",
  "reserved-id",
  "duplicate-call-id",
  "orphan-result",
  "duplicate-result",
  "invalid-utf8",
  "budget",
  "session-id",
  "mismatch",
  "empty"
)

/**
 * @since 0.1.0
 * @category models
 */
export type InvalidReason = typeof InvalidReason.Type

/**
 * A transcript, option or budget was refused before anything was built or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointInvalid extends Schema.TaggedError<CheckpointInvalid>()("CheckpointInvalid", {
  reason: InvalidReason,
  /** The message (or provider item, as `#index`) at fault, when there is one. */
  messageId: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  readonly code = "CHECKPOINT_INVALID" as const
  override get message(): string {
    const at = this.messageId === undefined ? "" : ` (message ${this.messageId})`
    return `Checkpoint input refused, ${this.reason}${at}: ${this.detail}`
  }
}

/**
 * Why a save lost against what the store holds.
 *
 * - `rewrite`: the transcript changes a message the store already holds (another writer appended a
 *   different message there first, or the host edited history);
 * - `behind`: the store already holds a longer transcript of the session (another writer saved a
 *   newer checkpoint first); the session's latest checkpoint never goes back to an older transcript.
 *
 * @since 0.1.0
 * @category models
 */
export const ConflictKind = Schema.Literal("rewrite", "behind")

/**
 * @since 0.1.0
 * @category models
 */
export type ConflictKind = typeof ConflictKind.Type

/**
 * A save lost against the stored transcript: transcripts are append-only and a session's latest
 * checkpoint never moves back to a shorter transcript. Nothing of the save was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointConflict extends Schema.TaggedError<CheckpointConflict>()("CheckpointConflict", {
  sessionId: Schema.String,
  kind: ConflictKind,
  /** 0-based position in the transcript. */
  position: Schema.Number,
  messageId: Schema.String,
  detail: Schema.String
}) {
  readonly code = "CHECKPOINT_TRANSCRIPT_CONFLICT" as const
  override get message(): string {
    return this.kind === "behind"
      ? `Session ${this.sessionId}: the store already holds a longer transcript (${this.detail}); this checkpoint was not saved. Another writer saved a newer checkpoint first: read the session's transcript and latest checkpoint from the store, append to that, and checkpoint again.`
      : `Session ${this.sessionId}: message ${this.messageId} at position ${this.position} differs from the stored transcript (${this.detail}); this checkpoint was not saved. Stored transcript messages are never rewritten: append new messages only, or use a new session id.`
  }
}

/**
 * The store could not be opened, read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointStoreFailed extends Schema.TaggedError<CheckpointStoreFailed>()(
  "CheckpointStoreFailed",
  {
    operation: Schema.String,
    detail: Schema.String
  }
) {
  readonly code = "CHECKPOINT_STORE_FAILED" as const
  override get message(): string {
    return `Checkpoint store ${this.operation} failed: ${this.detail}. Check that the store is reachable and writable (the data directory and its file, or the PostgreSQL URL and its role) and holds toolcap checkpoints; nothing was half-written (each checkpoint is one transaction).`
  }
}
