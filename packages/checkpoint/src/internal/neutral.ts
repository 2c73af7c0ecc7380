// The provider-neutral transcript model, its rules, and what every codec shares: how a transcript
// is sealed once validated, how a schema failure becomes a `CheckpointInvalid`, content parts.
// `Transcript.ts` publishes the model; the codec modules build on it without importing that module.
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import { CheckpointInvalid } from "../CheckpointError.js"

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

export const invalid = (reason: CheckpointInvalid["reason"], detail: string, messageId?: string) =>
  new CheckpointInvalid(messageId === undefined ? { reason, detail } : { reason, detail, messageId })

/**
 * The rules a transcript keeps beyond its shape: unique message ids, no reserved id, unique tool
 * call ids, every tool result answering an earlier call, no call answered twice. The first broken
 * rule, or `undefined`.
 */
export const brokenRule = (transcript: Transcript): CheckpointInvalid | undefined => {
  const messageIds = new Set<string>()
  const calls = new Set<string>()
  const answered = new Set<string>()
  for (const message of transcript.messages) {
    if (messageIds.has(message.id))
      return invalid("duplicate-message-id", "message ids must be unique", message.id)
    if (message.id.startsWith(reservedIdPrefix)) {
      return invalid(
        "reserved-id",
        `ids starting with "${reservedIdPrefix}" are reserved for the checkpoint`,
        message.id
      )
    }
    messageIds.add(message.id)
    if (message.role === "assistant") {
      for (const call of message.toolCalls) {
        if (calls.has(call.id)) {
          return invalid(
            "duplicate-call-id",
            `tool call id ${JSON.stringify(call.id)} is used twice`,
            message.id
          )
        }
        calls.add(call.id)
      }
    } else if (message.role === "tool") {
      if (!calls.has(message.callId)) {
        return invalid(
          "orphan-result",
          `tool result answers call ${JSON.stringify(message.callId)}, which no earlier assistant message made`,
          message.id
        )
      }
      if (answered.has(message.callId)) {
        return invalid(
          "duplicate-result",
          `tool call ${JSON.stringify(message.callId)} is answered twice`,
          message.id
        )
      }
      answered.add(message.callId)
    }
  }
  return undefined
}

/**
 * Transcripts decoded and validated here. They are frozen (the container and its message list),
 * so one handed back in, to `Checkpoint.build` or a store's `save`, is known valid without another
 * pass: a host that decodes once pays for validation once.
 */
const validated = new WeakSet<object>()

export const seal = (transcript: Transcript): Transcript => {
  Object.freeze(transcript.messages)
  validated.add(Object.freeze(transcript))
  return transcript
}

export const isValidated = (input: unknown): input is Transcript =>
  typeof input === "object" && input !== null && validated.has(input)

// ---------------------------------------------------------------------------------------------
// schema failures as CheckpointInvalid

/** Issues a rule raised, with the `CheckpointInvalid` they stand for. */
const refusals = new WeakMap<ParseResult.ParseIssue, CheckpointInvalid>()

/** A schema issue that stands for `error`: decoding fails with it, named as the rule named it. */
export const refuse = (ast: AST.AST, actual: unknown, error: CheckpointInvalid): ParseResult.ParseIssue => {
  const issue = new ParseResult.Type(ast, actual, error.detail)
  refusals.set(issue, error)
  return issue
}

/** The first issue a rule raised, with the path to it, depth first. */
const findRefusal = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>
): readonly [CheckpointInvalid, ReadonlyArray<PropertyKey>] | undefined => {
  const own = refusals.get(issue)
  if (own !== undefined) return [own, path]
  if (issue instanceof ParseResult.Pointer) return findRefusal(issue.issue, [...path, ...keysOf(issue)])
  if (issue instanceof ParseResult.Refinement || issue instanceof ParseResult.Transformation) {
    return findRefusal(issue.issue, path)
  }
  if (issue instanceof ParseResult.Composite) {
    for (const inner of innerIssues(issue)) {
      const found = findRefusal(inner, path)
      if (found !== undefined) return found
    }
  }
  return undefined
}

const keysOf = (pointer: ParseResult.Pointer): ReadonlyArray<PropertyKey> =>
  Array.isArray(pointer.path) ? pointer.path : [pointer.path as PropertyKey]

const innerIssues = (composite: ParseResult.Composite): ReadonlyArray<ParseResult.ParseIssue> =>
  Array.isArray(composite.issues) ? composite.issues : [composite.issues as ParseResult.ParseIssue]

/** The first path to a failure that is not a rule's: where the schema itself refused. */
const firstPath = (issue: ParseResult.ParseIssue): ReadonlyArray<PropertyKey> => {
  if (issue instanceof ParseResult.Pointer) return [...keysOf(issue), ...firstPath(issue.issue)]
  if (issue instanceof ParseResult.Refinement || issue instanceof ParseResult.Transformation) {
    return firstPath(issue.issue)
  }
  if (issue instanceof ParseResult.Composite) return firstPath(innerIssues(issue)[0]!)
  return []
}

/** `#index` of the provider message a path leads into (its first numeric step). */
const positionOf = (path: ReadonlyArray<PropertyKey>): string | undefined => {
  const index = path.find((key) => typeof key === "number")
  return index === undefined ? undefined : `#${String(index)}`
}

/**
 * The `CheckpointInvalid` of a failed decoding: the rule's own error when a rule refused (naming
 * the provider message by `#index` when the rule could not), else reason `schema` with the schema's
 * report; `shape` words a value that is not a transcript at all.
 */
export const toInvalid = (error: ParseResult.ParseError, shape: string): CheckpointInvalid => {
  const refused = findRefusal(error.issue, [])
  if (refused !== undefined) {
    const [own, path] = refused
    const at = positionOf(path)
    return own.messageId !== undefined || at === undefined ? own : invalid(own.reason, own.detail, at)
  }
  const at = positionOf(firstPath(error.issue))
  if (at === undefined) return invalid("schema", shape)
  return invalid("schema", ParseResult.TreeFormatter.formatErrorSync(error), at)
}

// ---------------------------------------------------------------------------------------------
// what codecs share

/** A value of the neutral model, validated: sealed ones by their seal, others by schema and rules. */
export const ValidTranscript: Schema.Schema<Transcript> = Schema.declare(
  (input: unknown): input is Transcript =>
    isValidated(input) ||
    (Either.isRight(Schema.decodeUnknownEither(Transcript)(input)) &&
      brokenRule(input as Transcript) === undefined),
  { identifier: "ValidTranscript" }
)

/** Refuses an unknown role (or item type) with reason `unknown-role`, naming it. */
export const unknownRole = <A extends Record<string, unknown>>(
  known: (value: A) => boolean,
  detail: (value: A) => string
) =>
  Schema.filter<Schema.Schema<A>>((value, _, ast) =>
    known(value) ? false : refuse(ast, value, invalid("unknown-role", detail(value)))
  )

/** What a non-text part (image, file, audio) becomes in the neutral text. */
export const placeholder = (type: string): string => `[${type} omitted]`

/** A content part: a text part (one of `textTypes`) with its text, or any other typed part. */
const Part = (textTypes: ReadonlyArray<string>) =>
  Schema.Union(
    Schema.Struct({
      type: Schema.Literal(...(textTypes as [string, ...Array<string>])),
      text: Schema.String
    }),
    Schema.Struct({ type: Schema.String.pipe(Schema.filter((type) => !textTypes.includes(type))) })
  )

/** A content value: a string, nothing, or an array of parts. */
export const Content = (textTypes: ReadonlyArray<string>) =>
  Schema.optional(Schema.Union(Schema.String, Schema.Null, Schema.Array(Part(textTypes))))

export type ContentValue =
  string | null | undefined | ReadonlyArray<{ readonly type: string; readonly text?: string }>

/** The text of a content value: text parts joined by a blank line; other parts become `[type omitted]`. */
export const textOf = (content: ContentValue): string => {
  if (typeof content === "string") return content
  if (content === null || content === undefined) return ""
  return content.map((part) => (part.text !== undefined ? part.text : placeholder(part.type))).join("\n\n")
}

type Unnamed = Omit<UserMessage, "id"> | Omit<AssistantMessage, "id"> | Omit<ToolResultMessage, "id">

/** Names the messages one provider message became: `m{i}`, or `m{i}.{k}` when it became several. */
export const named = (index: number, parts: ReadonlyArray<Unnamed>): Array<Message> =>
  parts.map((part, k) => ({ ...part, id: parts.length === 1 ? `m${index}` : `m${index}.${k}` }) as Message)

/** The provider shape a codec reads: its list, or an object holding it under `key`. */
export const listOrHolder = <A, I>(item: Schema.Schema<A, I>, key: string) =>
  Schema.Union(Schema.Array(item), Schema.Struct({ [key]: Schema.Array(item) }))

/** The list of a provider shape. */
export const listOf = <A>(
  input: ReadonlyArray<A> | { readonly [key: string]: ReadonlyArray<A> },
  key: string
) =>
  Array.isArray(input)
    ? (input as ReadonlyArray<A>)
    : (input as { readonly [key: string]: ReadonlyArray<A> })[key]!

/** A decoded transcript, checked against the rules and sealed; or the issue of its broken rule. */
export const finish = (
  messages: Array<Message>,
  ast: AST.AST,
  actual: unknown
): Either.Either<Transcript, ParseResult.ParseIssue> => {
  const transcript: Transcript = { messages }
  const broken = brokenRule(transcript)
  return broken === undefined ? Either.right(seal(transcript)) : Either.left(refuse(ast, actual, broken))
}

/**
 * A codec's decoding as an effect: the sealed transcript, or the `CheckpointInvalid` of the first
 * failure (`shape` words a value that is not the provider's shape at all).
 */
export const decoderOf = <I>(codec: Schema.Schema<Transcript, I>, shape: string) => {
  const decode = Schema.decodeUnknownEither(codec)
  return (input: unknown): Effect.Effect<Transcript, CheckpointInvalid> =>
    Effect.suspend(() =>
      Either.match(decode(input), {
        onLeft: (error) => Effect.fail(toInvalid(error, shape)),
        onRight: Effect.succeed
      })
    )
}

/**
 * A provider codec: from the provider's list (or an object holding it under `key`) of `item`s to a
 * validated, sealed transcript, and back.
 */
export const codecOf = <A, I>(
  item: Schema.Schema<A, I>,
  key: string,
  toNeutral: (list: ReadonlyArray<A>) => Array<Message>,
  fromNeutral: (transcript: Transcript) => ReadonlyArray<A>
) =>
  Schema.transformOrFail(listOrHolder(item, key), ValidTranscript, {
    strict: false,
    decode: (input, _, ast) => finish(toNeutral(listOf(input as ReadonlyArray<A>, key)), ast, input),
    encode: (transcript) => ParseResult.succeed(fromNeutral(transcript))
  })
