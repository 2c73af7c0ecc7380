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
import { CheckpointInvalid } from "./CheckpointError.js"

/**
 * A tool call of an assistant message. `arguments` is the call's input as JSON text, exactly as the
 * provider gave it (OpenAI) or serialized from the input object (Anthropic).
 *
 * @since 0.1.0
 * @category models
 */
export const ToolCall = Schema.Struct({
  id: Schema.NonEmptyString,
  name: Schema.String,
  arguments: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type ToolCall = typeof ToolCall.Type

/**
 * @since 0.1.0
 * @category models
 */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  id: Schema.NonEmptyString,
  text: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type UserMessage = typeof UserMessage.Type

/**
 * @since 0.1.0
 * @category models
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  id: Schema.NonEmptyString,
  text: Schema.String,
  toolCalls: Schema.Array(ToolCall)
})

/**
 * @since 0.1.0
 * @category models
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * The result of one tool call, answering it by `callId`.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolResultMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  id: Schema.NonEmptyString,
  callId: Schema.NonEmptyString,
  text: Schema.String,
  isError: Schema.optional(Schema.Boolean)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ToolResultMessage = typeof ToolResultMessage.Type

/**
 * @since 0.1.0
 * @category models
 */
export const Message = Schema.Union(UserMessage, AssistantMessage, ToolResultMessage)

/**
 * @since 0.1.0
 * @category models
 */
export type Message = typeof Message.Type

/**
 * @since 0.1.0
 * @category models
 */
export const Transcript = Schema.Struct({ messages: Schema.Array(Message) })

/**
 * @since 0.1.0
 * @category models
 */
export type Transcript = typeof Transcript.Type

/**
 * The roles of the neutral model.
 *
 * @since 0.1.0
 * @category models
 */
export const roles: ReadonlyArray<Message["role"]> = ["user", "assistant", "tool"]

/**
 * Ids starting with this prefix belong to messages the checkpoint itself adds (the summary).
 *
 * @since 0.1.0
 * @category models
 */
export const reservedIdPrefix = "checkpoint:"

const invalid = (reason: CheckpointInvalid["reason"], detail: string, messageId?: string) =>
  new CheckpointInvalid(messageId === undefined ? { reason, detail } : { reason, detail, messageId })

const decodeMessage = Schema.decodeUnknownEither(Message)

/**
 * Transcripts this module decoded and validated. They are frozen (the container and its message
 * list), so one handed back in, to `Checkpoint.build` or a store's `save`, is known valid without
 * another pass: a host that decodes once pays for validation once.
 */
const validated = new WeakSet<object>()

const sealed = (transcript: Transcript): Transcript => {
  Object.freeze(transcript.messages)
  validated.add(Object.freeze(transcript))
  return transcript
}

/**
 * Whether a value is a transcript this module decoded and validated (and froze).
 *
 * @since 0.1.0
 * @category models
 */
export const isValidated = (input: unknown): input is Transcript =>
  typeof input === "object" && input !== null && validated.has(input)

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

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

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
      if (typeof role !== "string" || !(roles as ReadonlyArray<string>).includes(role)) {
        const id = isRecord(message) && typeof message.id === "string" ? message.id : `#${index}`
        return Effect.fail(
          invalid("unknown-role", `role ${JSON.stringify(role)} is not one of ${roles.join(", ")}`, id)
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
    return Effect.as(validate(transcript), sealed(transcript))
  })

/**
 * Checks what the schema cannot: unique message ids, unique tool call ids, every tool result
 * answering an earlier call, no call answered twice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const validate = (transcript: Transcript): Effect.Effect<void, CheckpointInvalid> =>
  Effect.suspend(() => {
    const messageIds = new Set<string>()
    const calls = new Set<string>()
    const answered = new Set<string>()
    for (const message of transcript.messages) {
      if (messageIds.has(message.id)) {
        return Effect.fail(invalid("duplicate-message-id", "message ids must be unique", message.id))
      }
      if (message.id.startsWith(reservedIdPrefix)) {
        return Effect.fail(
          invalid(
            "reserved-id",
            `ids starting with "${reservedIdPrefix}" are reserved for the checkpoint`,
            message.id
          )
        )
      }
      messageIds.add(message.id)
      if (message.role === "assistant") {
        for (const call of message.toolCalls) {
          if (calls.has(call.id)) {
            return Effect.fail(
              invalid(
                "duplicate-call-id",
                `tool call id ${JSON.stringify(call.id)} is used twice`,
                message.id
              )
            )
          }
          calls.add(call.id)
        }
      } else if (message.role === "tool") {
        if (!calls.has(message.callId)) {
          return Effect.fail(
            invalid(
              "orphan-result",
              `tool result answers call ${JSON.stringify(message.callId)}, which no earlier assistant message made`,
              message.id
            )
          )
        }
        if (answered.has(message.callId)) {
          return Effect.fail(
            invalid(
              "duplicate-result",
              `tool call ${JSON.stringify(message.callId)} is answered twice`,
              message.id
            )
          )
        }
        answered.add(message.callId)
      }
    }
    return Effect.void
  })

/**
 * Parses transcript JSON from bytes (or text). Bytes that are not valid UTF-8 are refused rather
 * than silently replaced. The bytes are validated, then decoded, natively (a fatal `TextDecoder`
 * took longer than parsing the JSON); a byte order mark is dropped.
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
// shared helpers of the codecs

/** Builds messages of one provider message, then names them `m{i}` or `m{i}.{k}`. */
const named = (
  index: number,
  parts: ReadonlyArray<Omit<UserMessage, "id"> | Omit<AssistantMessage, "id"> | Omit<ToolResultMessage, "id">>
): Array<Message> =>
  parts.map((part, k) => ({ ...part, id: parts.length === 1 ? `m${index}` : `m${index}.${k}` }) as Message)

const listOf = (
  input: unknown,
  key: string,
  shape: string
): Either.Either<ReadonlyArray<unknown>, CheckpointInvalid> => {
  if (Array.isArray(input)) return Either.right(input)
  if (isRecord(input) && Array.isArray(input[key])) return Either.right(input[key] as ReadonlyArray<unknown>)
  return Either.left(invalid("schema", `expected ${shape}: an array, or an object with a "${key}" array`))
}

const stringField = (
  record: Record<string, unknown>,
  key: string,
  at: string
): Either.Either<string, CheckpointInvalid> => {
  const value = record[key]
  return typeof value === "string"
    ? Either.right(value)
    : Either.left(invalid("schema", `"${key}" must be a string`, at))
}

/** Text of a content value: a string, or an array of parts whose text parts are joined; other parts become `[type]`. */
const contentText = (
  content: unknown,
  textTypes: ReadonlyArray<string>,
  at: string
): Either.Either<string, CheckpointInvalid> => {
  if (typeof content === "string") return Either.right(content)
  if (content === null || content === undefined) return Either.right("")
  if (!Array.isArray(content))
    return Either.left(invalid("schema", "content must be a string or an array of parts", at))
  const pieces: Array<string> = []
  for (const part of content as ReadonlyArray<unknown>) {
    if (!isRecord(part) || typeof part.type !== "string") {
      return Either.left(invalid("schema", 'every content part needs a string "type"', at))
    }
    if (textTypes.includes(part.type)) {
      if (typeof part.text !== "string")
        return Either.left(invalid("schema", 'a text part needs a string "text"', at))
      pieces.push(part.text)
    } else {
      pieces.push(placeholder(part.type))
    }
  }
  return Either.right(pieces.join("\n\n"))
}

/** What a non-text part (image, file, audio) becomes in the neutral text. */
const placeholder = (type: string): string => `[${type} omitted]`

const finish = (messages: Array<Message>): Effect.Effect<Transcript, CheckpointInvalid> => {
  const transcript: Transcript = { messages }
  return Effect.as(validate(transcript), sealed(transcript))
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

/**
 * From Anthropic Messages (`messages` of a request, or the request itself). Each block of a user
 * message becomes a message of its own, in block order: `tool_result` blocks tool results, text
 * blocks user messages;
 * `thinking` / `redacted_thinking` blocks are dropped; other non-text blocks (image, document,
 * server tools) become the text `[type omitted]`.
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromAnthropic = (input: unknown): Effect.Effect<Transcript, CheckpointInvalid> =>
  Effect.gen(function* () {
    const list = yield* listOf(input, "messages", "Anthropic messages")
    const messages: Array<Message> = []
    for (let index = 0; index < list.length; index++) {
      const at = `#${index}`
      const raw = list[index]
      if (!isRecord(raw)) return yield* invalid("schema", "a message must be an object", at)
      const { content, role } = raw
      if (role === "user") {
        if (!Array.isArray(content)) {
          messages.push(...named(index, [{ role: "user", text: yield* contentText(content, ["text"], at) }]))
          continue
        }
        const parts: Array<Omit<UserMessage, "id"> | Omit<ToolResultMessage, "id">> = []
        for (const block of content as ReadonlyArray<unknown>) {
          if (!isRecord(block) || typeof block.type !== "string") {
            return yield* invalid("schema", 'every content block needs a string "type"', at)
          }
          if (block.type === "tool_result") {
            const callId = yield* stringField(block, "tool_use_id", at)
            const text = yield* contentText(block.content, ["text"], at)
            parts.push(
              block.is_error === true
                ? { role: "tool", callId, text, isError: true }
                : { role: "tool", callId, text }
            )
          } else {
            const text =
              block.type === "text" ? yield* stringField(block, "text", at) : placeholder(block.type)
            parts.push({ role: "user", text })
          }
        }
        messages.push(...named(index, parts))
      } else if (role === "assistant") {
        let text = ""
        const toolCalls: Array<ToolCall> = []
        if (Array.isArray(content)) {
          const pieces: Array<string> = []
          for (const block of content as ReadonlyArray<unknown>) {
            if (!isRecord(block) || typeof block.type !== "string") {
              return yield* invalid("schema", 'every content block needs a string "type"', at)
            }
            if (block.type === "text") pieces.push(yield* stringField(block, "text", at))
            else if (block.type === "tool_use") {
              toolCalls.push({
                id: yield* stringField(block, "id", at),
                name: yield* stringField(block, "name", at),
                arguments: JSON.stringify(block.input ?? {})
              })
            } else if (block.type !== "thinking" && block.type !== "redacted_thinking") {
              pieces.push(placeholder(block.type))
            }
          }
          text = pieces.join("\n\n")
        } else {
          text = yield* contentText(content, ["text"], at)
        }
        messages.push(...named(index, [{ role: "assistant", text, toolCalls }]))
      } else {
        return yield* invalid(
          "unknown-role",
          `Anthropic role ${JSON.stringify(role)} is not user or assistant`,
          at
        )
      }
    }
    return yield* finish(messages)
  })

/** Anthropic tool inputs are objects; arguments that are not a JSON object are wrapped so nothing is lost. */
const anthropicInput = (args: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(args)
    if (isRecord(parsed)) return parsed
  } catch {
    // fall through
  }
  return { arguments: args }
}

/**
 * To Anthropic Messages. Consecutive user-side messages (user text and tool results) share one
 * user message, so roles alternate; a user message of plain text only has string content.
 *
 * @since 0.1.0
 * @category codecs
 */
export const toAnthropic = (transcript: Transcript): Array<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  let userBlocks: Array<Record<string, unknown>> | undefined
  const flush = () => {
    if (userBlocks === undefined) return
    const onlyText = userBlocks.length === 1 && userBlocks[0]!.type === "text"
    out.push({ role: "user", content: onlyText ? userBlocks[0]!.text : userBlocks })
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
        const blocks: Array<Record<string, unknown>> = []
        if (message.text.length > 0) blocks.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          blocks.push({
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: anthropicInput(call.arguments)
          })
        }
        out.push({ role: "assistant", content: blocks })
      }
    }
  }
  flush()
  return out
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

/**
 * From OpenAI Chat Completions messages (the array, or a request with `messages`). `system` and
 * `developer` messages are skipped (the host re-adds its instructions; a checkpoint keeps user
 * messages only); their positions still count for ids. Non-text parts become `[type omitted]`.
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromOpenAIChat = (input: unknown): Effect.Effect<Transcript, CheckpointInvalid> =>
  Effect.gen(function* () {
    const list = yield* listOf(input, "messages", "OpenAI Chat messages")
    const messages: Array<Message> = []
    for (let index = 0; index < list.length; index++) {
      const at = `#${index}`
      const raw = list[index]
      if (!isRecord(raw)) return yield* invalid("schema", "a message must be an object", at)
      const textTypes = ["text", "refusal"]
      switch (raw.role) {
        case "system":
        case "developer":
          break
        case "user":
          messages.push(
            ...named(index, [{ role: "user", text: yield* contentText(raw.content, textTypes, at) }])
          )
          break
        case "assistant": {
          const toolCalls: Array<ToolCall> = []
          if (raw.tool_calls !== undefined && raw.tool_calls !== null) {
            if (!Array.isArray(raw.tool_calls))
              return yield* invalid("schema", "tool_calls must be an array", at)
            for (const call of raw.tool_calls as ReadonlyArray<unknown>) {
              if (!isRecord(call) || !isRecord(call.function)) {
                return yield* invalid(
                  "schema",
                  "a tool call needs an id and a function { name, arguments }",
                  at
                )
              }
              toolCalls.push({
                id: yield* stringField(call, "id", at),
                name: yield* stringField(call.function, "name", at),
                arguments: yield* stringField(call.function, "arguments", at)
              })
            }
          }
          const text = yield* contentText(raw.content, textTypes, at)
          messages.push(...named(index, [{ role: "assistant", text, toolCalls }]))
          break
        }
        case "tool":
          messages.push(
            ...named(index, [
              {
                role: "tool",
                callId: yield* stringField(raw, "tool_call_id", at),
                text: yield* contentText(raw.content, textTypes, at)
              }
            ])
          )
          break
        default:
          return yield* invalid(
            "unknown-role",
            `OpenAI Chat role ${JSON.stringify(raw.role)} is not system, developer, user, assistant or tool`,
            at
          )
      }
    }
    return yield* finish(messages)
  })

/**
 * To OpenAI Chat Completions messages. `isError` has no Chat field and is not carried.
 *
 * @since 0.1.0
 * @category codecs
 */
export const toOpenAIChat = (transcript: Transcript): Array<Record<string, unknown>> =>
  transcript.messages.map((message) => {
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
                type: "function",
                function: { name: call.name, arguments: call.arguments }
              }))
            }
    }
  })

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

/**
 * From OpenAI Responses input items (the array, or a request with `input`). An assistant
 * `message` item and the `function_call` items right after it form one assistant message (a
 * parallel batch); `function_call_output` items are tool results. `system` / `developer` messages
 * and `reasoning` items are skipped; any other item type is refused.
 *
 * @since 0.1.0
 * @category codecs
 */
export const fromOpenAIResponses = (input: unknown): Effect.Effect<Transcript, CheckpointInvalid> =>
  Effect.gen(function* () {
    const list = yield* listOf(input, "input", "OpenAI Responses input items")
    const messages: Array<Message> = []
    // the assistant message function calls attach to, while nothing else came in between
    let open: { text: string; toolCalls: Array<ToolCall>; index: number } | undefined
    const close = () => {
      if (open !== undefined)
        messages.push(
          ...named(open.index, [{ role: "assistant", text: open.text, toolCalls: open.toolCalls }])
        )
      open = undefined
    }
    const textTypes = ["input_text", "output_text", "text", "refusal"]
    for (let index = 0; index < list.length; index++) {
      const at = `#${index}`
      const raw = list[index]
      if (!isRecord(raw)) return yield* invalid("schema", "an input item must be an object", at)
      const type = raw.type ?? "message"
      if (type === "message") {
        if (raw.role === "assistant") {
          close()
          open = { text: yield* contentText(raw.content, textTypes, at), toolCalls: [], index }
        } else if (raw.role === "user") {
          close()
          messages.push(
            ...named(index, [{ role: "user", text: yield* contentText(raw.content, textTypes, at) }])
          )
        } else if (raw.role === "system" || raw.role === "developer") {
          close()
        } else {
          return yield* invalid(
            "unknown-role",
            `OpenAI Responses role ${JSON.stringify(raw.role)} is not user, assistant, system or developer`,
            at
          )
        }
      } else if (type === "function_call") {
        open ??= { text: "", toolCalls: [], index }
        open.toolCalls.push({
          id: yield* stringField(raw, "call_id", at),
          name: yield* stringField(raw, "name", at),
          arguments: yield* stringField(raw, "arguments", at)
        })
      } else if (type === "function_call_output") {
        close()
        messages.push(
          ...named(index, [
            {
              role: "tool",
              callId: yield* stringField(raw, "call_id", at),
              text: yield* contentText(raw.output, textTypes, at)
            }
          ])
        )
      } else if (type === "reasoning") {
        // reasoning items are the model's own and never cross a checkpoint
      } else {
        return yield* invalid(
          "unknown-role",
          `OpenAI Responses item type ${JSON.stringify(type)} is not supported`,
          at
        )
      }
    }
    close()
    return yield* finish(messages)
  })

/**
 * To OpenAI Responses input items.
 *
 * @since 0.1.0
 * @category codecs
 */
export const toOpenAIResponses = (transcript: Transcript): Array<Record<string, unknown>> =>
  transcript.messages.flatMap((message): Array<Record<string, unknown>> => {
    switch (message.role) {
      case "user":
        return [{ type: "message", role: "user", content: message.text }]
      case "tool":
        return [{ type: "function_call_output", call_id: message.callId, output: message.text }]
      case "assistant":
        return [
          ...(message.text.length > 0 || message.toolCalls.length === 0
            ? [{ type: "message", role: "assistant", content: [{ type: "output_text", text: message.text }] }]
            : []),
          ...message.toolCalls.map((call) => ({
            type: "function_call",
            call_id: call.id,
            name: call.name,
            arguments: call.arguments
          }))
        ]
    }
  })

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
