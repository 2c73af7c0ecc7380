/**
 * The Anthropic Messages codec: an effect `Schema` from the `messages` of a request (or the
 * request itself) to the neutral `Transcript`, and back.
 *
 * Decoding: each block of a user message becomes a message of its own, in block order
 * (`tool_result` blocks tool results, text blocks user messages); `thinking` /
 * `redacted_thinking` blocks are dropped; other non-text blocks (image, document, server tools)
 * become the text `[type omitted]`; `tool_use.input` becomes the call's `arguments` as JSON text.
 * Ids are assigned by position (see `Transcript`).
 *
 * Encoding: consecutive user-side messages (user text and tool results) share one user message, so
 * roles alternate; a user message of plain text only has string content; arguments that are not a
 * JSON object come back as `{ "arguments": "<text>" }`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { CheckpointInvalid } from "./CheckpointError.js"
import * as Neutral from "./internal/neutral.js"

const textContent = Neutral.Content(["text"])

/**
 * @since 0.1.0
 * @category schemas
 */
export const TextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.optional(Schema.Unknown)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: textContent,
  is_error: Schema.optional(Schema.Unknown)
})

/** Any other block of a message: it needs a type, and becomes a placeholder (thinking: nothing). */
const otherBlock = (...handled: ReadonlyArray<string>) =>
  Schema.Struct({ type: Schema.String.pipe(Schema.filter((type) => !handled.includes(type))) })

/**
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.optional(
    Schema.Union(
      Schema.String,
      Schema.Null,
      Schema.Array(Schema.Union(TextBlock, ToolResultBlock, otherBlock("text", "tool_result")))
    )
  )
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.optional(
    Schema.Union(
      Schema.String,
      Schema.Null,
      Schema.Array(Schema.Union(TextBlock, ToolUseBlock, otherBlock("text", "tool_use")))
    )
  )
})

const roles: ReadonlyArray<unknown> = ["user", "assistant"]

/**
 * One message: user or assistant (any other role is refused with `unknown-role`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union(
  UserMessage,
  AssistantMessage,
  Schema.Struct({ role: Schema.Unknown }).pipe(
    Neutral.unknownRole(
      (message) => roles.includes(message.role),
      (message) => `Anthropic role ${JSON.stringify(message.role)} is not user or assistant`
    )
  )
)

type Decoded = typeof Message.Type

const toNeutral = (list: ReadonlyArray<Decoded>): Array<Neutral.Message> => {
  const messages: Array<Neutral.Message> = []
  list.forEach((message, index) => {
    if (message.role === "user") {
      const { content } = message as typeof UserMessage.Type
      if (!Array.isArray(content)) {
        messages.push(...Neutral.named(index, [{ role: "user", text: Neutral.textOf(content) }]))
        return
      }
      messages.push(
        ...Neutral.named(
          index,
          content.map((block) =>
            block.type === "tool_result"
              ? (block as typeof ToolResultBlock.Type).is_error === true
                ? {
                    role: "tool" as const,
                    callId: (block as typeof ToolResultBlock.Type).tool_use_id,
                    text: Neutral.textOf((block as typeof ToolResultBlock.Type).content),
                    isError: true
                  }
                : {
                    role: "tool" as const,
                    callId: (block as typeof ToolResultBlock.Type).tool_use_id,
                    text: Neutral.textOf((block as typeof ToolResultBlock.Type).content)
                  }
              : {
                  role: "user" as const,
                  text:
                    block.type === "text"
                      ? (block as typeof TextBlock.Type).text
                      : Neutral.placeholder(block.type)
                }
          )
        )
      )
      return
    }
    const { content } = message as typeof AssistantMessage.Type
    const toolCalls: Array<Neutral.ToolCall> = []
    let text: string
    if (Array.isArray(content)) {
      const pieces: Array<string> = []
      for (const block of content) {
        if (block.type === "text") pieces.push((block as typeof TextBlock.Type).text)
        else if (block.type === "tool_use") {
          const use = block as typeof ToolUseBlock.Type
          toolCalls.push({ id: use.id, name: use.name, arguments: JSON.stringify(use.input ?? {}) })
        } else if (block.type !== "thinking" && block.type !== "redacted_thinking") {
          pieces.push(Neutral.placeholder(block.type))
        }
      }
      text = pieces.join("\n\n")
    } else text = Neutral.textOf(content as Neutral.ContentValue)
    messages.push(...Neutral.named(index, [{ role: "assistant", text, toolCalls }]))
  })
  return messages
}

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Anthropic tool inputs are objects; arguments that are not a JSON object are wrapped so nothing is lost. */
const inputOf = (args: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(args)
    if (isRecord(parsed)) return parsed
  } catch {
    // fall through
  }
  return { arguments: args }
}

/**
 * The neutral transcript as Anthropic messages.
 *
 * @since 0.1.0
 * @category codecs
 */
export const encode = (transcript: Neutral.Transcript): Array<typeof Message.Encoded> => {
  const out: Array<typeof Message.Encoded> = []
  let userBlocks: Array<typeof TextBlock.Type | typeof ToolResultBlock.Type> | undefined
  const flush = () => {
    if (userBlocks === undefined) return
    const [first] = userBlocks
    const onlyText = userBlocks.length === 1 && first!.type === "text"
    out.push({ role: "user", content: onlyText ? (first as typeof TextBlock.Type).text : userBlocks })
    userBlocks = undefined
  }
  for (const message of transcript.messages) {
    if (message.role === "user") (userBlocks ??= []).push({ type: "text", text: message.text })
    else if (message.role === "tool") {
      ;(userBlocks ??= []).push({
        type: "tool_result",
        tool_use_id: message.callId,
        content: message.text,
        ...(message.isError === true ? { is_error: true } : {})
      })
    } else {
      flush()
      if (message.toolCalls.length === 0) out.push({ role: "assistant", content: message.text })
      else {
        const blocks: Array<typeof TextBlock.Type | typeof ToolUseBlock.Type> = []
        if (message.text.length > 0) blocks.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          blocks.push({ type: "tool_use", id: call.id, name: call.name, input: inputOf(call.arguments) })
        }
        out.push({ role: "assistant", content: blocks })
      }
    }
  }
  flush()
  return out
}

/**
 * The codec: decodes Anthropic messages to a validated, sealed neutral transcript (the rules of
 * `Transcript.validate` included), encodes a neutral transcript to Anthropic messages.
 *
 * @since 0.1.0
 * @category codecs
 */
export const Codec = Neutral.codecOf(Message, "messages", toNeutral, encode)

/**
 * Decodes Anthropic messages (`CheckpointInvalid` naming the message by `#index` when they are
 * malformed or break a rule).
 *
 * @since 0.1.0
 * @category codecs
 */
export const decode: (input: unknown) => Effect.Effect<Neutral.Transcript, CheckpointInvalid> =
  Neutral.decoderOf(Codec, 'expected Anthropic messages: an array, or an object with a "messages" array')
