/**
 * The checkpoint builder (rules C1–C6, C9). From an immutable transcript it
 * reconstructs the next model context:
 *
 * 1. user messages only, newest first, until the retention budget; the one message that crosses
 *    the budget keeps a head/tail share (75/25) of what is left, minus the marker's own tokens,
 *    with the checkpoint marker between; older ones are dropped; kept ones stay in order;
 * 2. the host's summary, when given, as one message of its own after them, not charged to the
 *    user-message budget;
 * 3. mid-turn, the open assistant turn and its parallel batch, every call with exactly one result;
 *    results over the batch budget are water-filled to a common cap (75/25 with the marker inside
 *    each), and everything cut is re-estimated and cut again until it fits.
 *
 * The input is never modified; the checkpoint is a new value describing only the new context.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import { Budgets } from "@toolcap/limits"
import { CheckpointInvalid } from "./CheckpointError.js"
import { type CutText, cutToBudget, markerBlock, repairSurrogates } from "./internal/cut.js"
import * as TokenEstimator from "./TokenEstimator.js"
import * as Transcript from "./Transcript.js"

const Count = Schema.Int.pipe(Schema.nonNegative())

/**
 * Where a context message comes from.
 *
 * - `retained`: a user message kept whole;
 * - `cut`: the user message that crossed the retention budget, head and tail around the marker;
 * - `summary`: the host's summary;
 * - `turn`: the open assistant turn of a mid-turn checkpoint;
 * - `result` / `result-cut`: a result of its parallel batch, whole / cut to the cap.
 *
 * @since 0.1.0
 * @category models
 */
export const Origin = Schema.Literal("retained", "cut", "summary", "turn", "result", "result-cut")

/**
 * @since 0.1.0
 * @category models
 */
export type Origin = typeof Origin.Type

/**
 * One message of the reconstructed context. `message.id` is the id of the transcript message it
 * comes from (`checkpoint:summary` for the summary).
 *
 * @since 0.1.0
 * @category models
 */
export const ContextEntry = Schema.Struct({
  origin: Origin,
  message: Transcript.Message,
  /** Tokens of the message's text as it stands in the context (a turn: text, call names and arguments). */
  tokens: Count
})

/**
 * @since 0.1.0
 * @category models
 */
export type ContextEntry = typeof ContextEntry.Type

/**
 * How one message was cut.
 *
 * @since 0.1.0
 * @category models
 */
export const CutFigures = Schema.Struct({
  messageId: Schema.String,
  /** Tokens of the whole original text. */
  originalTokens: Count,
  /** The budget it was cut to (what was left of the retention budget, or the batch cap). */
  budgetTokens: Count,
  markerTokens: Count,
  headTokens: Count,
  tailTokens: Count,
  /** The cut text re-estimated as a whole; never above `budgetTokens`. */
  tokens: Count,
  /** UTF-16 units of the original kept at the start and at the end. */
  headLength: Count,
  tailLength: Count
})

/**
 * @since 0.1.0
 * @category models
 */
export type CutFigures = typeof CutFigures.Type

/**
 * One call of the open batch and its result.
 *
 * @since 0.1.0
 * @category models
 */
export const BatchResult = Schema.Struct({
  callId: Schema.String,
  messageId: Schema.String,
  originalTokens: Count,
  tokens: Count,
  /** Present when the result was cut to the cap. */
  cut: Schema.NullOr(CutFigures)
})

/**
 * @since 0.1.0
 * @category models
 */
export type BatchResult = typeof BatchResult.Type

/**
 * The open assistant turn of a mid-turn checkpoint and its parallel batch.
 *
 * @since 0.1.0
 * @category models
 */
export const Batch = Schema.Struct({
  assistantId: Schema.String,
  /** Tokens of the assistant turn itself (text, call names and arguments), kept verbatim. */
  turnTokens: Count,
  /** The batch budget the results were bounded by. */
  budgetTokens: Count,
  /** Results before cutting. */
  originalTokens: Count,
  /** Results after cutting, re-estimated; never above `budgetTokens`. */
  tokens: Count,
  /** The water-filling cap, when results were cut. */
  cap: Schema.NullOr(Count),
  /** Results in transcript order, each answering one call. */
  results: Schema.Array(BatchResult),
  /** Calls of the turn with no result yet; the host appends their results before the next request. */
  pending: Schema.Array(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Batch = typeof Batch.Type

/**
 * A repair made to text that entered the context (the transcript itself is untouched).
 *
 * @since 0.1.0
 * @category models
 */
export const Repair = Schema.Struct({
  messageId: Schema.String,
  /** Lone UTF-16 surrogates (not encodable as UTF-8) were replaced by U+FFFD. */
  kind: Schema.Literal("lone-surrogate")
})

/**
 * @since 0.1.0
 * @category models
 */
export type Repair = typeof Repair.Type

/**
 * A checkpoint: the reconstructed context and the figures that explain it.
 *
 * @since 0.1.0
 * @category models
 */
export const Checkpoint = Schema.Struct({
  /** The reconstructed context, in order: retained user messages, summary, open turn, its results. */
  context: Schema.Array(ContextEntry),
  /** Messages in the transcript it was built from. */
  transcriptLength: Count,
  /** The retention budget in force. */
  retentionBudget: Count,
  /** Tokens of the retained user messages, the cut one included, re-estimated; never above the budget. */
  retainedTokens: Count,
  /** Tokens of the summary (0 without one); not charged to the retention budget. */
  summaryTokens: Count,
  /** The user message that crossed the budget and was cut, if one was. */
  cut: Schema.NullOr(CutFigures),
  dropped: Schema.Struct({
    /** User messages left out, oldest first (the crossing one too when nothing of it fit). */
    userMessageIds: Schema.Array(Schema.String),
    /** Assistant and tool messages left out: no tool result crosses a checkpoint outside the open batch. */
    otherMessages: Count
  }),
  /** The open turn, for a mid-turn checkpoint. */
  batch: Schema.NullOr(Batch),
  repairs: Schema.Array(Repair)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Checkpoint = typeof Checkpoint.Type

/**
 * @since 0.1.0
 * @category models
 */
export interface BuildOptions {
  /** The host's summary of what the dropped history did; placed after the retained user messages. */
  readonly summary?: string | undefined
}

/**
 * The id of the summary message in the context.
 *
 * @since 0.1.0
 * @category models
 */
export const summaryId = `${Transcript.reservedIdPrefix}summary`

/** The index where the open assistant turn starts, or -1: the last non-result message is an assistant
 * message with tool calls, and every message after it answers one of its calls. */
const openTurnIndex = (messages: ReadonlyArray<Transcript.Message>): number => {
  let at = messages.length - 1
  while (at >= 0 && messages[at]!.role === "tool") at--
  const turn = messages[at]
  if (turn === undefined || turn.role !== "assistant" || turn.toolCalls.length === 0) return -1
  const callIds = new Set(turn.toolCalls.map((call) => call.id))
  for (let k = at + 1; k < messages.length; k++) {
    const result = messages[k] as Transcript.ToolResultMessage
    if (!callIds.has(result.callId)) return -1
  }
  return at
}

/** The largest cap with sum(min(size, cap)) <= budget, for sizes that together exceed it. */
const waterLevel = (sizes: ReadonlyArray<number>, budget: number): number => {
  const sorted = Arr.sort(sizes, Order.number)
  let below = 0
  for (let k = 0; k < sorted.length; k++) {
    const cap = Math.floor((budget - below) / (sorted.length - k))
    if (cap < sorted[k]!) return cap
    below += sorted[k]!
  }
  return sorted[sorted.length - 1] ?? budget
}

const turnTokens = (estimate: (text: string) => number, turn: Transcript.AssistantMessage): number =>
  turn.toolCalls.reduce(
    (sum, call) => sum + estimate(call.name) + estimate(call.arguments),
    estimate(turn.text)
  )

/**
 * Builds the checkpoint of a neutral transcript (see `Transcript` for provider shapes). Fails with
 * `CheckpointInvalid` on a malformed transcript or a budget that cannot hold what must be kept.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (
  transcript: unknown,
  options: BuildOptions = {}
): Effect.Effect<Checkpoint, CheckpointInvalid, Budgets.Budgets | TokenEstimator.TokenEstimator> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    const { estimate } = yield* TokenEstimator.TokenEstimator
    const decoded = yield* Transcript.decode(transcript)
    return yield* fromTranscript(decoded, options, budgets, estimate)
  })

/**
 * Refuses a transcript with no user message (`[]`, `{ "messages": [] }`, or only assistant and
 * tool messages): its checkpoint would be a context without a request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requireUserMessage = (
  transcript: Transcript.Transcript
): Effect.Effect<void, CheckpointInvalid> =>
  transcript.messages.some((message) => message.role === "user")
    ? Effect.void
    : Effect.fail(
        new CheckpointInvalid({
          reason: "empty",
          detail:
            transcript.messages.length === 0
              ? "the transcript has no messages; checkpoint a conversation that holds at least one user message"
              : `the transcript's ${transcript.messages.length} messages hold no user message; checkpoint a conversation that holds at least one`
        })
      )

/** The figures of one cut, from the cut text and what it was cut from. */
const cutFigures = (
  messageId: string,
  originalTokens: number,
  budgetTokens: number,
  cut: CutText
): CutFigures => ({
  messageId,
  originalTokens,
  budgetTokens,
  markerTokens: cut.markerTokens,
  headTokens: cut.headTokens,
  tailTokens: cut.tailTokens,
  tokens: cut.tokens,
  headLength: cut.headLength,
  tailLength: cut.tailLength
})

type Estimate = (text: string) => number

/** Records lone-surrogate repairs of the texts that enter the context. */
const makeRepairs = () => {
  const repairs: Array<Repair> = []
  const repaired = (id: string, text: string): string => {
    const fixed = repairSurrogates(text)
    if (fixed === undefined) return text
    repairs.push({ messageId: id, kind: "lone-surrogate" })
    return fixed
  }
  return { repairs, repaired }
}

type Repairs = ReturnType<typeof makeRepairs>

interface Retained {
  readonly entries: Array<ContextEntry>
  readonly tokens: number
  readonly cut: CutFigures | null
  readonly dropped: { readonly userMessageIds: Array<string>; readonly otherMessages: number }
}

/** Step 1: user messages of the history, newest first, until the retention budget; the crossing one cut. */
const retainUserMessages = (
  messages: ReadonlyArray<Transcript.Message>,
  historyEnd: number,
  budgets: Budgets.BudgetsValue,
  estimate: Estimate,
  { repaired }: Repairs
): Retained => {
  const retentionBudget = budgets.checkpointRetentionTokens
  const entries: Array<ContextEntry> = []
  let used = 0
  let cut: CutFigures | null = null
  let crossing = -1
  for (let at = historyEnd - 1; at >= 0; at--) {
    const message = messages[at]!
    if (message.role !== "user") continue
    const text = repaired(message.id, message.text)
    const tokens = estimate(text)
    if (used + tokens <= retentionBudget) {
      entries.push({
        origin: "retained",
        message: text === message.text ? message : { ...message, text },
        tokens
      })
      used += tokens
      continue
    }
    crossing = at
    const left = retentionBudget - used
    const shortened = cutToBudget(estimate, text, left, budgets.checkpointHeadShare, 1)
    if (shortened !== undefined) {
      entries.push({ origin: "cut", message: { ...message, text: shortened.text }, tokens: shortened.tokens })
      used += shortened.tokens
      cut = cutFigures(message.id, tokens, left, shortened)
    }
    break
  }
  entries.reverse()

  const userMessageIds: Array<string> = []
  let otherMessages = 0
  const lastDropped = cut === null ? crossing : crossing - 1
  for (let at = 0; at < historyEnd; at++) {
    const message = messages[at]!
    if (message.role === "user") {
      if (at <= lastDropped) userMessageIds.push(message.id)
    } else otherMessages++
  }
  return { entries, tokens: used, cut, dropped: { userMessageIds, otherMessages } }
}

/** Step 2: the host's summary as one user message of its own, not charged to the retention budget. */
const summaryEntry = (summary: string, estimate: Estimate, { repaired }: Repairs): ContextEntry => {
  const text = repaired(summaryId, summary)
  return { origin: "summary", message: { role: "user", id: summaryId, text }, tokens: estimate(text) }
}

type RenderedResult = { readonly text: string; readonly tokens: number; readonly cut: CutFigures | null }

/**
 * The results of the open batch cut to a common cap, lowered until the re-estimated total fits;
 * `undefined` when not even a marker per cut result fits.
 */
const waterFill = (
  results: ReadonlyArray<Transcript.ToolResultMessage>,
  texts: ReadonlyArray<string>,
  sizes: ReadonlyArray<number>,
  budgets: Budgets.BudgetsValue,
  estimate: Estimate
): { readonly rendered: Array<RenderedResult>; readonly cap: number } | undefined => {
  const batchBudget = budgets.checkpointBatchTokens
  let level = waterLevel(sizes, batchBudget)
  // re-estimate after cutting; lower the cap and cut again while the batch still exceeds its budget
  for (;;) {
    const attempt: Array<RenderedResult> = []
    for (let k = 0; k < texts.length; k++) {
      const size = sizes[k]!
      if (size <= level) {
        attempt.push({ text: texts[k]!, tokens: size, cut: null })
        continue
      }
      const shortened = cutToBudget(estimate, texts[k]!, level, budgets.checkpointHeadShare, 0)
      if (shortened === undefined) return undefined
      attempt.push({
        text: shortened.text,
        tokens: shortened.tokens,
        cut: cutFigures(results[k]!.id, size, level, shortened)
      })
    }
    const total = attempt.reduce((sum, entry) => sum + entry.tokens, 0)
    if (total <= batchBudget) return { rendered: attempt, cap: level }
    const cutCount = attempt.filter((entry) => entry.cut !== null).length
    level -= Math.max(1, Math.ceil((total - batchBudget) / Math.max(1, cutCount)))
  }
}

/** The open turn with lone surrogates of its text, call names and arguments repaired. */
const repairedTurn = (turn: Transcript.AssistantMessage, repairs: Repairs): Transcript.AssistantMessage => {
  const fixedText = repairSurrogates(turn.text)
  const fixedCalls = turn.toolCalls.map((call) => {
    const name = repairSurrogates(call.name)
    const args = repairSurrogates(call.arguments)
    return name === undefined && args === undefined
      ? call
      : { ...call, name: name ?? call.name, arguments: args ?? call.arguments }
  })
  const changed = fixedText !== undefined || fixedCalls.some((call, k) => call !== turn.toolCalls[k])
  if (!changed) return turn
  repairs.repairs.push({ messageId: turn.id, kind: "lone-surrogate" })
  return { ...turn, text: fixedText ?? turn.text, toolCalls: fixedCalls }
}

/** Step 3: the open turn, verbatim, then its results water-filled to the batch budget. */
const openBatch = (
  messages: ReadonlyArray<Transcript.Message>,
  turnAt: number,
  budgets: Budgets.BudgetsValue,
  estimate: Estimate,
  repairs: Repairs
): Effect.Effect<{ readonly entries: Array<ContextEntry>; readonly batch: Batch }, CheckpointInvalid> => {
  const turn = messages[turnAt] as Transcript.AssistantMessage
  const turnMessage = repairedTurn(turn, repairs)
  const turnCost = turnTokens(estimate, turnMessage)
  const results = messages.slice(turnAt + 1) as Array<Transcript.ToolResultMessage>
  const texts = results.map((result) => repairs.repaired(result.id, result.text))
  const sizes = texts.map(estimate)
  const batchBudget = budgets.checkpointBatchTokens
  const originalTokens = sizes.reduce((sum, size) => sum + size, 0)
  let cap: number | null = null
  let rendered: Array<RenderedResult> = texts.map((text, k) => ({ text, tokens: sizes[k]!, cut: null }))
  if (originalTokens > batchBudget) {
    const filled = waterFill(results, texts, sizes, budgets, estimate)
    if (filled === undefined) {
      const markerTokens = estimate(markerBlock)
      const needed = sizes.reduce((sum, size) => sum + Math.min(size, markerTokens), 0)
      return Effect.fail(
        new CheckpointInvalid({
          reason: "budget",
          messageId: turn.id,
          detail: `checkpointBatchTokens (${batchBudget}) cannot hold the ${results.length} results of the open batch even with each cut down to its marker; set ${Budgets.envName("checkpointBatchTokens")} to at least ${needed}`
        })
      )
    }
    rendered = filled.rendered
    cap = filled.cap
  }
  const entries: Array<ContextEntry> = [{ origin: "turn", message: turnMessage, tokens: turnCost }]
  results.forEach((result, k) => {
    const entry = rendered[k]!
    entries.push({
      origin: entry.cut === null ? "result" : "result-cut",
      message: entry.text === result.text ? result : { ...result, text: entry.text },
      tokens: entry.tokens
    })
  })
  const answered = new Set(results.map((result) => result.callId))
  return Effect.succeed({
    entries,
    batch: {
      assistantId: turn.id,
      turnTokens: turnCost,
      budgetTokens: batchBudget,
      originalTokens,
      tokens: rendered.reduce((sum, entry) => sum + entry.tokens, 0),
      cap,
      results: results.map((result, k) => ({
        callId: result.callId,
        messageId: result.id,
        originalTokens: sizes[k]!,
        tokens: rendered[k]!.tokens,
        cut: rendered[k]!.cut
      })),
      pending: turn.toolCalls.filter((call) => !answered.has(call.id)).map((call) => call.id)
    }
  })
}

/**
 * Builds the checkpoint of an already decoded and validated transcript: the retained user
 * messages, the summary, the open batch (the three steps above), in that order. A transcript
 * without a user message is refused (`CheckpointInvalid`, reason `empty`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTranscript = (
  transcript: Transcript.Transcript,
  options: BuildOptions,
  budgets: Budgets.BudgetsValue,
  estimate: (text: string) => number
): Effect.Effect<Checkpoint, CheckpointInvalid> =>
  Effect.gen(function* () {
    yield* requireUserMessage(transcript)
    const messages = transcript.messages
    const repairs = makeRepairs()
    const turnAt = openTurnIndex(messages)
    const retained = retainUserMessages(
      messages,
      turnAt === -1 ? messages.length : turnAt,
      budgets,
      estimate,
      repairs
    )
    const context: Array<ContextEntry> = retained.entries
    let summaryTokens = 0
    if (options.summary !== undefined) {
      const summary = summaryEntry(options.summary, estimate, repairs)
      summaryTokens = summary.tokens
      context.push(summary)
    }
    let batch: Batch | null = null
    if (turnAt !== -1) {
      const open = yield* openBatch(messages, turnAt, budgets, estimate, repairs)
      context.push(...open.entries)
      batch = open.batch
    }
    return {
      context,
      transcriptLength: messages.length,
      retentionBudget: budgets.checkpointRetentionTokens,
      retainedTokens: retained.tokens,
      summaryTokens,
      cut: retained.cut,
      dropped: retained.dropped,
      batch,
      repairs: repairs.repairs
    }
  })

/**
 * The reconstructed context as a neutral transcript, ready for `Transcript.toAnthropic` and friends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toTranscript = (checkpoint: Checkpoint): Transcript.Transcript => ({
  messages: checkpoint.context.map((entry) => entry.message)
})
