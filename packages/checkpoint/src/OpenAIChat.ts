/**
 * The OpenAI Chat Completions codec: an effect `Schema` from the `messages` of a request (or the
 * request itself) to the neutral `Transcript`, and back.
 *
 * Decoding: `system` / `developer` messages are skipped (the host re-adds its instructions; a
 * checkpoint keeps user messages only), their positions still count for ids; non-text parts
 * become `[type omitted]`; `arguments` is kept exactly, even when not valid JSON. Encoding:
 * `isError` has no Chat field and is not carried.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { CheckpointInvalid } from "./CheckpointError.js"
import * as Neutral from "./internal/neutral.js"

const textContent = Neutral.Content(["text", "refusal"])

/**
 * @since 0.1.0
 * @category schemas
 */
export const InstructionMessage = Schema.Struct({ role: Schema.Literal("system", "developer") })

/**
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: textContent })

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.optional(Schema.Literal("function")),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: textContent,
  tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCall)))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  tool_call_id: Schema.String,
  content: textContent
})

const roles: ReadonlyArray<unknown> = ["system", "developer", "user", "assistant", "tool"]

/**
 * One message (any other role is refused with `unknown-role`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union(
  InstructionMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  Schema.Struct({ role: Schema.Unknown }).pipe(
    Neutral.unknownRole(
      (message) => roles.includes(message.role),
      (message) =>
        `OpenAI Chat role ${JSON.stringify(message.role)} is not system, developer, user, assistant or tool`
    )
  )
)

const toNeutral = (list: ReadonlyArray<typeof Message.Type>): Array<Neutral.Message> => {
  const messages: Array<Neutral.Message> = []
  list.forEach((message, index) => {
    switch (message.role) {
      case "user":
        messages.push(
          ...Neutral.named(index, [
            { role: "user", text: Neutral.textOf((message as typeof UserMessage.Type).content) }
          ])
        )
        break
      case "assistant": {
        const assistant = message as typeof AssistantMessage.Type
        const toolCalls = (assistant.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments
        }))
        messages.push(
          ...Neutral.named(index, [{ role: "assistant", text: Neutral.textOf(assistant.content), toolCalls }])
        )
        break
      }
      case "tool": {
        const tool = message as typeof ToolMessage.Type
        messages.push(
          ...Neutral.named(index, [
            { role: "tool", callId: tool.tool_call_id, text: Neutral.textOf(tool.content) }
          ])
        )
        break
      }
      default:
      // system and developer messages: the host's instructions, not the conversation
    }
  })
  return messages
}

/**
 * The neutral transcript as Chat Completions messages.
 *
 * @since 0.1.0
 * @category codecs
 */
export const encode = (transcript: Neutral.Transcript): Array<typeof Message.Encoded> =>
  transcript.messages.map((message): typeof Message.Encoded => {
    switch (message.role) {
      case "user":
        return { role: "user", content: message.text }
      case "tool":
        return { role: "tool", tool_call_id: message.callId, content: message.text }
      case "assistant":
        return message.toolCalls.length === 0
          ? { role: "assistant", content: message.text }
          : {
              role: "assistant",
              content: message.text.length === 0 ? null : message.text,
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: call.arguments }
              }))
            }
    }
  })

/**
 * The codec: decodes Chat Completions messages to a validated, sealed neutral transcript, encodes
 * a neutral transcript to them.
 *
 * @since 0.1.0
 * @category codecs
 */
export const Codec = Neutral.codecOf(Message, "messages", toNeutral, encode)

/**
 * Decodes Chat Completions messages (`CheckpointInvalid` naming the message by `#index` when they
 * are malformed or break a rule).
 *
 * @since 0.1.0
 * @category codecs
 */
export const decode: (input: unknown) => Effect.Effect<Neutral.Transcript, CheckpointInvalid> =
  Neutral.decoderOf(Codec, 'expected OpenAI Chat messages: an array, or an object with a "messages" array')
