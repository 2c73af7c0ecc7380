/**
 * The OpenAI Responses codec: an effect `Schema` from the `input` items of a request (or the
 * request itself) to the neutral `Transcript`, and back.
 *
 * Decoding: an assistant `message` item and the `function_call` items right after it form one
 * assistant message (a parallel batch); `function_call_output` items are tool results; `system` /
 * `developer` messages and `reasoning` items are skipped; any other item type is refused
 * (`unknown-role`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { CheckpointInvalid } from "./CheckpointError.js"
import * as Neutral from "./internal/neutral.js"

const textContent = Neutral.Content(["input_text", "output_text", "text", "refusal"])

/**
 * A message item (`type` may be left out).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageItem = Schema.Struct({
  type: Schema.optional(Schema.Literal("message")),
  role: Schema.Literal("user", "assistant", "system", "developer"),
  content: textContent
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const FunctionCallOutputItem = Schema.Struct({
  type: Schema.Literal("function_call_output"),
  call_id: Schema.String,
  output: textContent
})

/**
 * The model's own reasoning: never crosses a checkpoint.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasoningItem = Schema.Struct({ type: Schema.Literal("reasoning") })

const types: ReadonlyArray<unknown> = ["message", "function_call", "function_call_output", "reasoning"]
const roles: ReadonlyArray<unknown> = ["user", "assistant", "system", "developer"]

/**
 * One input item (any other item type, or message role, is refused with `unknown-role`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Item = Schema.Union(
  MessageItem,
  FunctionCallItem,
  FunctionCallOutputItem,
  ReasoningItem,
  Schema.Struct({ type: Schema.optional(Schema.Unknown), role: Schema.optional(Schema.Unknown) }).pipe(
    Neutral.unknownRole(
      (item) =>
        (item.type ?? "message") === "message" ? roles.includes(item.role) : types.includes(item.type),
      (item) =>
        (item.type ?? "message") === "message"
          ? `OpenAI Responses role ${JSON.stringify(item.role)} is not user, assistant, system or developer`
          : `OpenAI Responses item type ${JSON.stringify(item.type)} is not supported`
    )
  )
)

const toNeutral = (list: ReadonlyArray<typeof Item.Type>): Array<Neutral.Message> => {
  const messages: Array<Neutral.Message> = []
  // the assistant message function calls attach to, while nothing else came in between
  let open: { text: string; toolCalls: Array<Neutral.ToolCall>; index: number } | undefined
  const close = () => {
    if (open !== undefined)
      messages.push(
        ...Neutral.named(open.index, [{ role: "assistant", text: open.text, toolCalls: open.toolCalls }])
      )
    open = undefined
  }
  list.forEach((item, index) => {
    switch (item.type) {
      case "function_call": {
        const call = item as typeof FunctionCallItem.Type
        open ??= { text: "", toolCalls: [], index }
        open.toolCalls.push({ id: call.call_id, name: call.name, arguments: call.arguments })
        break
      }
      case "function_call_output": {
        const output = item as typeof FunctionCallOutputItem.Type
        close()
        messages.push(
          ...Neutral.named(index, [
            { role: "tool", callId: output.call_id, text: Neutral.textOf(output.output) }
          ])
        )
        break
      }
      case "reasoning":
        // reasoning items are the model's own and never cross a checkpoint
        break
      default: {
        const message = item as typeof MessageItem.Type
        close()
        if (message.role === "assistant")
          open = { text: Neutral.textOf(message.content), toolCalls: [], index }
        else if (message.role === "user")
          messages.push(...Neutral.named(index, [{ role: "user", text: Neutral.textOf(message.content) }]))
      }
    }
  })
  close()
  return messages
}

/**
 * The neutral transcript as Responses input items.
 *
 * @since 0.1.0
 * @category codecs
 */
export const encode = (transcript: Neutral.Transcript): Array<typeof Item.Encoded> =>
  transcript.messages.flatMap((message): Array<typeof Item.Encoded> => {
    switch (message.role) {
      case "user":
        return [{ type: "message", role: "user", content: message.text }]
      case "tool":
        return [{ type: "function_call_output", call_id: message.callId, output: message.text }]
      case "assistant":
        return [
          ...(message.text.length > 0 || message.toolCalls.length === 0
            ? [
                {
                  type: "message" as const,
                  role: "assistant" as const,
                  content: [{ type: "output_text", text: message.text }]
                }
              ]
            : []),
          ...message.toolCalls.map((call) => ({
            type: "function_call" as const,
            call_id: call.id,
            name: call.name,
            arguments: call.arguments
          }))
        ]
    }
  })

/**
 * The codec: decodes Responses input items to a validated, sealed neutral transcript, encodes a
 * neutral transcript to them.
 *
 * @since 0.1.0
 * @category codecs
 */
export const Codec = Neutral.codecOf(Item, "input", toNeutral, encode)

/**
 * Decodes Responses input items (`CheckpointInvalid` naming the item by `#index` when they are
 * malformed or break a rule).
 *
 * @since 0.1.0
 * @category codecs
 */
export const decode: (input: unknown) => Effect.Effect<Neutral.Transcript, CheckpointInvalid> =
  Neutral.decoderOf(
    Codec,
    'expected OpenAI Responses input items: an array, or an object with an "input" array'
  )
