/**
 * A persisted checkpoint (context compaction) as plain types: the reconstructed context (retained
 * user messages, the one cut with its marker, the summary, an open tool batch) with the figures
 * that prove each cut. `internal/conformance.ts` proves them equal to the checkpoint Schemas.
 *
 * @since 0.1.0
 */

/**
 * A transcript message in toolcap's neutral shape.
 *
 * @since 0.1.0
 * @category models
 */
export type Message =
  | { readonly role: "user"; readonly id: string; readonly text: string }
  | {
      readonly role: "assistant"
      readonly id: string
      readonly text: string
      readonly toolCalls: ReadonlyArray<{
        readonly id: string
        readonly name: string
        readonly arguments: string
      }>
    }
  | {
      readonly role: "tool"
      readonly id: string
      readonly callId: string
      readonly text: string
      readonly isError?: boolean | undefined
    }

/**
 * The figures of one cut (75% head, 25% tail, the checkpoint marker between).
 *
 * @since 0.1.0
 * @category models
 */
export interface CutFigures {
  readonly messageId: string
  readonly originalTokens: number
  /** What the message was cut to. */
  readonly budgetTokens: number
  readonly markerTokens: number
  readonly headTokens: number
  readonly tailTokens: number
  /** The cut text re-estimated; never above `budgetTokens`. */
  readonly tokens: number
  /** UTF-16 units of the original kept at each end. */
  readonly headLength: number
  readonly tailLength: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ContextEntry {
  readonly message: Message
  readonly tokens: number
  readonly origin: "retained" | "cut" | "summary" | "turn" | "result" | "result-cut"
}

/**
 * The open tool batch of a mid-turn checkpoint: every call keeps exactly one result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Batch {
  readonly assistantId: string
  readonly turnTokens: number
  readonly budgetTokens: number
  readonly originalTokens: number
  readonly tokens: number
  /** The water-filling cap, when results were cut. */
  readonly cap: number | null
  readonly results: ReadonlyArray<{
    readonly callId: string
    readonly messageId: string
    readonly originalTokens: number
    readonly tokens: number
    readonly cut: CutFigures | null
  }>
  /** Calls with no result yet. */
  readonly pending: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Checkpoint {
  readonly context: ReadonlyArray<ContextEntry>
  readonly transcriptLength: number
  readonly retentionBudget: number
  readonly retainedTokens: number
  readonly summaryTokens: number
  /** The user message that crossed the budget, when one was cut. */
  readonly cut: CutFigures | null
  readonly dropped: { readonly userMessageIds: ReadonlyArray<string>; readonly otherMessages: number }
  readonly batch: Batch | null
  /** Lone UTF-16 surrogates replaced by U+FFFD. */
  readonly repairs: ReadonlyArray<{ readonly messageId: string; readonly kind: "lone-surrogate" }>
}

/**
 * What `host.checkpoint(...)` and `host.latestCheckpoint()` answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredCheckpoint {
  readonly checkpointId: number
  readonly sessionId: string
  /** Milliseconds since the epoch. */
  readonly createdAt: number
  readonly checkpoint: Checkpoint
}

/**
 * The transcript shapes `host.checkpoint` reads.
 *
 * @since 0.1.0
 * @category models
 */
export type TranscriptFormat = "toolcap" | "anthropic" | "openai-chat" | "openai-responses"
