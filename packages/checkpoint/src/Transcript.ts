/**
 * The provider-neutral transcript a checkpoint is built from: user messages, assistant messages
 * with tool calls, and tool results answering a call by its id. Every message has a stable `id`.
 *
 * Codecs convert from and to the Anthropic Messages, OpenAI Chat Completions and OpenAI Responses
 * shapes. Provider shapes carry no message ids, so the codecs assign them by position, which is
 * stable for an append-only transcript: provider message (or Responses item) `i` becomes `m{i}`;
 * when one provider message becomes several neutral messages (an Anthropic user message holding
 * tool results and text), they are `m{i}.0`, `m{i}.1`, ... in order.
 *
 * @since 0.1.0
 */
import { isUtf8 } from "node:buffer"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Anthropic from "./Anthropic.js"
import type { CheckpointInvalid } from "./CheckpointError.js"
import * as Neutral from "./internal/neutral.js"
import * as OpenAIChat from "./OpenAIChat.js"
import * as OpenAIResponses from "./OpenAIResponses.js"

/**
 * The neutral model: `ToolCall`, `UserMessage`, `AssistantMessage`, `ToolResultMessage`,
 * `Message`, `Transcript` (schemas and their types), `roles`, and `reservedIdPrefix` (ids
 * starting with it belong to messages the checkpoint itself adds, the summary).
 *
 * @since 0.1.0
 * @category models
 */
export {
  AssistantMessage,
  Message,
  reservedIdPrefix,
  roles,
  ToolCall,
  ToolResultMessage,
  Transcript,
  UserMessage
} from "./internal/neutral.js"

type Transcript = Neutral.Transcript
type Message = Neutral.Message
type ToolCall = Neutral.ToolCall

const invalid = Neutral.invalid
const decodeMessage = Schema.decodeUnknownEither(Neutral.Message)

/**
 * Whether a value is a transcript this module (or a codec) decoded and validated, and froze.
 *
 * @since 0.1.0
 * @category models
 */
export const isValidated = Neutral.isValidated

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Messages decoded before, by the object they were decoded from. A host's transcript grows at the
 * end, so a save after appending one message decodes one message, not all of them. A cached
 * message is reused only while every field of its source is still the same value (`===`).
 */
const decodedBefore = new WeakMap<object, Message>()

const sameCalls = (raw: unknown, calls: ReadonlyArray<ToolCall>): boolean =>
  Array.isArray(raw) &&
  raw.length === calls.length &&
  calls.every((call, k) => {
    const other: unknown = raw[k]
    return (
      isRecord(other) &&
      other.id === call.id &&
      other.name === call.name &&
      other.arguments === call.arguments
    )
  })

const unchanged = (raw: Record<string, unknown>, message: Message): boolean =>
  raw.role === message.role &&
  raw.id === message.id &&
  raw.text === message.text &&
  (message.role === "user" ||
    (message.role === "tool"
      ? raw.callId === message.callId && raw.isError === message.isError
      : sameCalls(raw.toolCalls, message.toolCalls)))

/**
 * Decodes and validates a neutral transcript (`{ messages: [...] }`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (input: unknown): Effect.Effect<Transcript, CheckpointInvalid> =>
  Effect.suspend(() => {
    if (isValidated(input)) return Effect.succeed(input)
    if (!isRecord(input) || !Array.isArray(input.messages)) {
      return Effect.fail(
        invalid(
          "schema",
          "expected a transcript { messages: [...] }; convert provider shapes with fromAnthropic, fromOpenAIChat or fromOpenAIResponses"
        )
      )
    }
    // name an unknown role plainly before the schema's union error would
    const messages: ReadonlyArray<unknown> = input.messages
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index]
      const role = isRecord(message) ? message.role : undefined
      if (typeof role !== "string" || !(Neutral.roles as ReadonlyArray<string>).includes(role)) {
        const id = isRecord(message) && typeof message.id === "string" ? message.id : `#${index}`
        return Effect.fail(
          invalid(
            "unknown-role",
            `role ${JSON.stringify(role)} is not one of ${Neutral.roles.join(", ")}`,
            id
          )
        )
      }
    }
    const decoded: Array<Message> = []
    for (let index = 0; index < messages.length; index++) {
      const raw = messages[index] as Record<string, unknown>
      const before = decodedBefore.get(raw)
      if (before !== undefined && unchanged(raw, before)) {
        decoded.push(before)
        continue
      }
      const message = decodeMessage(raw)
      if (Either.isLeft(message)) {
        return Effect.fail(
          invalid(
            "schema",
            `messages[${index}]: ${ParseResult.TreeFormatter.formatErrorSync(message.left)}`,
            typeof raw.id === "string" ? raw.id : `#${index}`
          )
        )
      }
      decodedBefore.set(raw, message.right)
      decoded.push(message.right)
    }
    const transcript: Transcript = { messages: decoded }
    const broken = Neutral.brokenRule(transcript)
    return broken === undefined ? Effect.succeed(Neutral.seal(transcript)) : Effect.fail(broken)
  })

/**
 * Checks the rules the schema's shape cannot: unique message ids, unique tool call ids, every tool
 * result answering an earlier call, no call answered twice, no reserved id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const validate = (transcript: Transcript): Effect.Effect<void, CheckpointInvalid> =>
  Effect.suspend(() => {
    const broken = Neutral.brokenRule(transcript)
    return broken === undefined ? Effect.void : Effect.fail(broken)
  })

/**
 * Parses transcript JSON from bytes (or text). Bytes that are not valid UTF-8 are refused rather
 * than silently replaced. The bytes are validated natively (`isUtf8`: milliseconds for 50 MB), then
 * decoded as `readFileSync(file, "utf8")` decodes; a byte order mark is dropped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseJson = (input: Uint8Array | string): Effect.Effect<unknown, CheckpointInvalid> =>
  Effect.suspend(() => {
    let text: string
    if (typeof input === "string") text = input
    else {
      if (!isUtf8(input)) {
        return Effect.fail(
          invalid("invalid-utf8", "the transcript bytes are not valid UTF-8; re-encode the file as UTF-8")
        )
      }
      text = Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString("utf8")
      if (text.charCodeAt(0) === byteOrderMark) text = text.slice(1)
    }
    try {
      return Effect.succeed(JSON.parse(text) as unknown)
    } catch (cause) {
      return Effect.fail(
        invalid("schema", `not JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
      )
    }
  })

const byteOrderMark = 0xfeff

// ---------------------------------------------------------------------------------------------
// provider codecs (each in its own module, an effect Schema from the provider shape to this model)

/**
 * From Anthropic Messages (see the `Anthropic` module).
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromAnthropic: (input: unknown) => Effect.Effect<Transcript, CheckpointInvalid> =
  Anthropic.decode

/**
 * To Anthropic Messages (see the `Anthropic` module).
 *
 * @since 0.1.0
 * @category codecs
 */
export const toAnthropic: (transcript: Transcript) => Array<Record<string, unknown>> = Anthropic.encode

/**
 * From OpenAI Chat Completions messages (see the `OpenAIChat` module).
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromOpenAIChat: (input: unknown) => Effect.Effect<Transcript, CheckpointInvalid> =
  OpenAIChat.decode

/**
 * To OpenAI Chat Completions messages (see the `OpenAIChat` module).
 *
 * @since 0.1.0
 * @category codecs
 */
export const toOpenAIChat: (transcript: Transcript) => Array<Record<string, unknown>> = OpenAIChat.encode

/**
 * From OpenAI Responses input items (see the `OpenAIResponses` module).
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromOpenAIResponses: (input: unknown) => Effect.Effect<Transcript, CheckpointInvalid> =
  OpenAIResponses.decode

/**
 * To OpenAI Responses input items (see the `OpenAIResponses` module).
 *
 * @since 0.1.0
 * @category codecs
 */
export const toOpenAIResponses: (transcript: Transcript) => Array<Record<string, unknown>> =
  OpenAIResponses.encode

// ---------------------------------------------------------------------------------------------
// any shape

/**
 * The shapes a transcript may come in.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "toolcap" | "anthropic" | "openai-chat" | "openai-responses"

/**
 * Guesses the shape of a transcript: neutral messages carry `id` and `text`/`toolCalls`/`callId`;
 * Responses items carry `type`; Chat has `tool` roles or `tool_calls`; Anthropic has
 * `tool_use` / `tool_result` blocks. Plain text conversations read the same in Anthropic and Chat.
 *
 * @since 0.1.0
 * @category constructors
 */
export const detect = (input: unknown): Format => {
  const list: ReadonlyArray<unknown> = Array.isArray(input)
    ? input
    : isRecord(input) && Array.isArray(input.messages)
      ? input.messages
      : isRecord(input) && Array.isArray(input.input)
        ? input.input
        : []
  if (isRecord(input) && Array.isArray(input.input)) return "openai-responses"
  const records = list.filter(isRecord)
  if (
    records.length > 0 &&
    records.every((m) => typeof m.id === "string" && ("text" in m || "callId" in m))
  ) {
    return "toolcap"
  }
  if (records.some((m) => typeof m.type === "string")) return "openai-responses"
  if (
    records.some(
      (m) => m.role === "tool" || m.role === "system" || m.role === "developer" || "tool_calls" in m
    )
  ) {
    return "openai-chat"
  }
  return "anthropic"
}

/**
 * Decodes a transcript of any supported shape (`format` guessed with `detect` when omitted).
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromAny = (
  input: unknown,
  format: Format = isValidated(input) ? "toolcap" : detect(input)
): Effect.Effect<Transcript, CheckpointInvalid> => {
  switch (format) {
    case "toolcap":
      return decode(input)
    case "anthropic":
      return fromAnthropic(input)
    case "openai-chat":
      return fromOpenAIChat(input)
    case "openai-responses":
      return fromOpenAIResponses(input)
  }
}
