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
 * - `budget`: a budget is 0, not an integer, or too small for what must be kept.
 * - `session-id`: a session id outside `[A-Za-z0-9._-]{1,128}` (or `.` / `..`).
 * - `mismatch`: a checkpoint does not belong to the transcript it is saved with.
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
  "mismatch"
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
 * A save would rewrite a transcript message the store already holds: transcripts are append-only.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointConflict extends Schema.TaggedError<CheckpointConflict>()("CheckpointConflict", {
  sessionId: Schema.String,
  /** 0-based position in the transcript. */
  position: Schema.Number,
  messageId: Schema.String,
  detail: Schema.String
}) {
  readonly code = "CHECKPOINT_TRANSCRIPT_CONFLICT" as const
  override get message(): string {
    return `Session ${this.sessionId}: message ${this.messageId} at position ${this.position} differs from the stored transcript (${this.detail}). Stored transcript messages are never rewritten: append new messages only, or use a new session id.`
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
    return `Checkpoint store ${this.operation} failed: ${this.detail}. Check that the data directory is writable and the file is a toolcap checkpoint database; nothing was half-written (each checkpoint is one transaction).`
  }
}
