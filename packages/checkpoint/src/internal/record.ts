// What the stores write and read: transcript messages as JSON rows with a digest and a running
// prefix digest (written once), and a checkpoint as its figures plus entries that reference
// transcript messages and hold a body only where the checkpoint changed the message.
import * as crypto from "node:crypto"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Checkpoint from "../Checkpoint.js"
import { CheckpointInvalid, CheckpointStoreFailed } from "../CheckpointError.js"
import type * as Transcript from "../Transcript.js"

const sessionIdPattern = /^[A-Za-z0-9._-]{1,128}$/

export const checkSessionId = (sessionId: string): Effect.Effect<void, CheckpointInvalid> =>
  typeof sessionId === "string" && sessionIdPattern.test(sessionId) && sessionId !== "." && sessionId !== ".."
    ? Effect.void
    : Effect.fail(
        new CheckpointInvalid({
          reason: "session-id",
          detail: `session id ${JSON.stringify(sessionId)} must match [A-Za-z0-9._-]{1,128} and not be "." or ".."`
        })
      )

export interface MessageRow {
  readonly seq: number
  readonly messageId: string
  readonly role: string
  /** The message as JSON without its text, or the whole message when `text` is null. */
  readonly body: string
  /**
   * The message's text as is, never JSON-escaped (escaping a large text costs more than parsing
   * it). Null when the text holds a NUL or a lone surrogate, which text columns cannot carry: then
   * `body` holds the whole message, escaped.
   */
  readonly text: string | null
  /** `text` as UTF-8, encoded once for the digest and bound as is (a driver would encode it again). */
  readonly bytes: Uint8Array | null
  /** SHA-256 of the message (see `messageRow`). */
  readonly digest: string
  /** SHA-256 over the previous row's prefix digest and this row's digest: one value names the whole prefix. */
  readonly prefix: string
}

export interface EntryRow {
  readonly position: number
  readonly origin: Checkpoint.Origin
  /** The transcript message it comes from; null for the summary. */
  readonly messageId: string | null
  readonly tokens: number
  /** The message as it stands in the context, only when it differs from the transcript's. */
  readonly body: string | null
}

/** What a session's stored transcript is, in two values: its length and its last prefix digest. */
export interface Head {
  readonly length: number
  /** Prefix digest of the last message ("" for an empty transcript). */
  readonly prefix: string
}

export const emptyHead: Head = { length: 0, prefix: "" }

/** One-shot hashing (Node 20.12+) skips a Hash object per message; older Nodes take the long way. */
const sha256 =
  typeof crypto.hash === "function"
    ? (data: string | Uint8Array) => crypto.hash("sha256", data, "base64url")
    : (data: string | Uint8Array) => crypto.createHash("sha256").update(data).digest("base64url")

export const prefixOf = (previous: string, digest: string): string => sha256(`${previous}\n${digest}`)

/** U+FFFD in UTF-8: what a lone surrogate becomes when a string is encoded. */
const replacement = Buffer.from("\ufffd")

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Bytes of the buffer rows are encoded into. Messages are encoded one after another into a shared
 * buffer, each row keeping a view of its bytes: a 50 MB transcript is a dozen allocations instead
 * of one per message, which halved the collector's share of a first save. A full buffer is
 * replaced, never reused: the views of rows not yet written keep theirs alive. The buffer belongs
 * to one batch of rows (a `Slab`), allocated when its first row is encoded, never at import.
 */
const slabBytes = 4 * 1024 * 1024

/** The longest UTF-8 encoding of one UTF-16 code unit. */
const maxBytesPerUnit = 3

/** The buffer one batch of rows is encoded into, and how much of it is used. */
export interface Slab {
  buffer: Buffer | undefined
  used: number
}

/** An empty slab: its buffer is allocated by its first row. */
export const slab = (): Slab => ({ buffer: undefined, used: 0 })

/**
 * Writes `head`, a newline and `text` as UTF-8 into the slab's buffer, which first gets room for
 * the longest encoding: returns the buffer, where the record starts, and where its text starts and ends.
 */
const encodeRecord = (into: Slab, head: string, text: string): readonly [Buffer, number, number, number] => {
  const worst = (head.length + text.length) * maxBytesPerUnit + 1
  if (into.buffer === undefined || into.buffer.length - into.used < worst) {
    into.buffer = Buffer.allocUnsafe(
      worst <= slabBytes ? slabBytes : Buffer.byteLength(head) + Buffer.byteLength(text) + 1
    )
    into.used = 0
  }
  const buffer = into.buffer
  const start = into.used
  const newline = start + buffer.write(head, start)
  buffer[newline] = 0x0a
  const end = newline + 1 + buffer.write(text, newline + 1)
  into.used = end
  return [buffer, start, newline + 1, end]
}

/**
 * The row of one message and its digest: SHA-256 over the message without its text (JSON), a
 * newline, and the text's UTF-8 bytes, which are encoded once and searched natively for what a
 * text column cannot carry (a NUL; U+FFFD, then checked for a lone surrogate). Such a text is
 * hashed and stored JSON-escaped, marked by a NUL byte no plain text has.
 */
export const messageRow = (
  message: Transcript.Message,
  seq: number,
  previous: string,
  into: Slab
): MessageRow => {
  const { text, ...envelope } = message
  const head = JSON.stringify(envelope)
  const [buffer, start, textStart, end] = encodeRecord(into, head, text)
  const bytes = buffer.subarray(textStart, end)
  const plain = bytes.indexOf(0) === -1 && (bytes.indexOf(replacement) === -1 || !loneSurrogate.test(text))
  const digest = plain
    ? sha256(buffer.subarray(start, end))
    : crypto
        .createHash("sha256")
        .update(head)
        .update("\n")
        .update("\u0000")
        .update(JSON.stringify(text))
        .digest("base64url")
  return {
    seq,
    messageId: message.id,
    role: message.role,
    body: plain ? head : JSON.stringify(message),
    text: plain ? text : null,
    bytes: plain ? bytes : null,
    digest,
    prefix: prefixOf(previous, digest)
  }
}

/** Rows for messages `from ..` of a transcript, continuing the prefix chain from `previous`. */
export const messageRows = (
  messages: ReadonlyArray<Transcript.Message>,
  from: number,
  previous: string
): Array<MessageRow> => {
  const rows: Array<MessageRow> = []
  const into = slab()
  let prefix = previous
  for (let seq = from; seq < messages.length; seq++) {
    const row = messageRow(messages[seq]!, seq, prefix, into)
    prefix = row.prefix
    rows.push(row)
  }
  return rows
}

/**
 * The rows of messages `from ..`, continuing the prefix chain from `previous`, computed (encoded,
 * hashed) only as far as they are asked for: a store can write the first rows while the next are
 * still to be computed.
 */
export interface RowSource {
  /** The row at `seq` (at least `from`), computing the rows before it first. */
  readonly row: (seq: number) => MessageRow
  /** The rows from `seq` to the end, each computed when the iteration reaches it. */
  readonly from: (seq: number) => Iterable<MessageRow>
  /** Every row, all computed. */
  readonly all: () => ReadonlyArray<MessageRow>
}

export const rowSource = (
  messages: ReadonlyArray<Transcript.Message>,
  from: number,
  previous: string
): RowSource => {
  const rows: Array<MessageRow> = []
  const into = slab()
  let prefix = previous
  const next = () => {
    const row = messageRow(messages[from + rows.length]!, from + rows.length, prefix, into)
    prefix = row.prefix
    rows.push(row)
    return row
  }
  const row = (seq: number) => {
    while (from + rows.length <= seq) next()
    return rows[seq - from]!
  }
  return {
    row,
    from: function* (seq) {
      for (let at = seq; at < messages.length; at++)
        yield at - from < rows.length ? rows[at - from]! : row(at)
    },
    all: () => {
      while (from + rows.length < messages.length) next()
      return rows
    }
  }
}

/** A stored message from its row: the body, with the text put back when it was stored apart. */
export const messageOf = (body: string, text: string | Uint8Array | null): unknown => {
  const parsed = JSON.parse(body) as Record<string, unknown>
  if (text === null) return parsed
  return { ...parsed, text: typeof text === "string" ? text : Buffer.from(text).toString("utf8") }
}

const sameCalls = (a: ReadonlyArray<Transcript.ToolCall>, b: ReadonlyArray<Transcript.ToolCall>): boolean =>
  a === b ||
  (a.length === b.length &&
    a.every((call, k) => {
      const other = b[k]!
      return call.id === other.id && call.name === other.name && call.arguments === other.arguments
    }))

/**
 * Whether two neutral messages are the same value, field by field. Strings are compared with
 * `===` (a pointer check when the host hands in the same strings again), never serialized.
 */
export const sameMessage = (a: Transcript.Message, b: Transcript.Message): boolean => {
  if (a === b) return true
  if (a.role !== b.role || a.id !== b.id || a.text !== b.text) return false
  switch (a.role) {
    case "user":
      return true
    case "assistant":
      return sameCalls(a.toolCalls, (b as Transcript.AssistantMessage).toolCalls)
    case "tool": {
      const other = b as Transcript.ToolResultMessage
      return a.callId === other.callId && a.isError === other.isError
    }
  }
}

/** The checkpoint without its context: the figures, stored as one JSON document. */
export type Report = Omit<Checkpoint.Checkpoint, "context">

export interface PreparedCheckpoint {
  readonly entries: ReadonlyArray<EntryRow>
  readonly report: string
  readonly checkpoint: Checkpoint.Checkpoint
}

const encodeCheckpoint = Schema.encodeSync(Checkpoint.Checkpoint)
const decodeCheckpoint = Schema.decodeUnknownEither(Checkpoint.Checkpoint)

const mismatch = (detail: string, messageId?: string) =>
  Effect.fail(
    new CheckpointInvalid(
      messageId === undefined ? { reason: "mismatch", detail } : { reason: "mismatch", detail, messageId }
    )
  )

const malformed = (checkpointId: number, detail: string) =>
  Effect.fail(
    new CheckpointStoreFailed({ operation: "read", detail: `checkpoint ${checkpointId} ${detail}` })
  )

/**
 * The entry rows and report of a checkpoint, after checking that it belongs to the transcript.
 * Serializes only the context (the retained window), never the whole transcript.
 */
export const prepareCheckpoint = (
  transcript: Transcript.Transcript,
  checkpoint: Checkpoint.Checkpoint
): Effect.Effect<PreparedCheckpoint, CheckpointInvalid> =>
  Effect.suspend(() => {
    if (checkpoint.transcriptLength !== transcript.messages.length) {
      return mismatch(
        `the checkpoint was built from ${checkpoint.transcriptLength} messages but the transcript has ${transcript.messages.length}; save it with the transcript it was built from`
      )
    }
    // the messages the context references, found from the end, where the retained window is: a
    // save after an append looks at the window, not at the whole transcript
    const byId = new Map<string, Transcript.Message | undefined>()
    for (const entry of checkpoint.context)
      if (entry.origin !== "summary") byId.set(entry.message.id, undefined)
    let missing = byId.size
    for (let at = transcript.messages.length - 1; at >= 0 && missing > 0; at--) {
      const message = transcript.messages[at]!
      if (byId.has(message.id) && byId.get(message.id) === undefined) {
        byId.set(message.id, message)
        missing--
      }
    }
    const entries: Array<EntryRow> = []
    for (const [position, entry] of checkpoint.context.entries()) {
      if (entry.origin === "summary") {
        entries.push({
          position,
          origin: entry.origin,
          messageId: null,
          tokens: entry.tokens,
          body: JSON.stringify(entry.message)
        })
        continue
      }
      const original = byId.get(entry.message.id)
      if (original === undefined) {
        return mismatch("the checkpoint references a message the transcript does not have", entry.message.id)
      }
      entries.push({
        position,
        origin: entry.origin,
        messageId: entry.message.id,
        tokens: entry.tokens,
        body: sameMessage(entry.message, original) ? null : JSON.stringify(entry.message)
      })
    }
    const { context: _context, ...report } = encodeCheckpoint(checkpoint)
    return Effect.succeed({ entries, report: JSON.stringify(report), checkpoint })
  })

export interface StoredEntry {
  readonly origin: string
  readonly tokens: number
  /** The entry's own body, or the transcript message's when the checkpoint did not change it. */
  readonly body: string | null
  /** The transcript message's row (body and text), when it references one. */
  readonly original: string | null
  readonly originalText: string | Uint8Array | null
}

/** Rebuilds a checkpoint from its report and entries, validating what was read. */
export const reconstruct = (
  checkpointId: number,
  report: string,
  entries: ReadonlyArray<StoredEntry>
): Effect.Effect<Checkpoint.Checkpoint, CheckpointStoreFailed> =>
  Effect.suspend(() => {
    let figures: Record<string, unknown>
    const context: Array<unknown> = []
    try {
      figures = JSON.parse(report) as Record<string, unknown>
      for (const entry of entries) {
        const message =
          entry.body !== null
            ? (JSON.parse(entry.body) as unknown)
            : entry.original !== null
              ? messageOf(entry.original, entry.originalText)
              : undefined
        if (message === undefined)
          return malformed(checkpointId, "references a transcript message the store does not hold")
        context.push({ origin: entry.origin, message, tokens: entry.tokens })
      }
    } catch (cause) {
      return malformed(
        checkpointId,
        `holds malformed JSON (${cause instanceof Error ? cause.message : String(cause)})`
      )
    }
    const decoded = decodeCheckpoint({ context, ...figures })
    return Either.isLeft(decoded)
      ? malformed(checkpointId, `does not decode: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
      : Effect.succeed(decoded.right)
  })
