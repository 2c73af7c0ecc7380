// What the store writes and reads, shared by the SQLite and in-memory stores: transcript messages
// as JSON rows with a digest (written once), and a checkpoint as its figures plus entries that
// reference transcript messages and hold a body only where the checkpoint changed the message.
import { createHash } from "node:crypto"
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
  readonly body: string
  readonly digest: string
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

/** The checkpoint without its context: the figures, stored as one JSON document. */
export type Report = Omit<Checkpoint.Checkpoint, "context">

export interface Prepared {
  readonly messages: ReadonlyArray<MessageRow>
  readonly entries: ReadonlyArray<EntryRow>
  readonly report: string
  readonly checkpoint: Checkpoint.Checkpoint
}

const digestOf = (body: string): string => createHash("sha256").update(body).digest("base64url")

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

/** Rows for a checkpoint of a transcript, after checking that the two belong together. */
export const prepare = (
  transcript: Transcript.Transcript,
  checkpoint: Checkpoint.Checkpoint
): Effect.Effect<Prepared, CheckpointInvalid> =>
  Effect.suspend(() => {
    if (checkpoint.transcriptLength !== transcript.messages.length) {
      return mismatch(
        `the checkpoint was built from ${checkpoint.transcriptLength} messages but the transcript has ${transcript.messages.length}; save it with the transcript it was built from`
      )
    }
    const messages: Array<MessageRow> = []
    const bodies = new Map<string, string>()
    transcript.messages.forEach((message, seq) => {
      const body = JSON.stringify(message)
      bodies.set(message.id, body)
      messages.push({ seq, messageId: message.id, role: message.role, body, digest: digestOf(body) })
    })
    const entries: Array<EntryRow> = []
    for (const [position, entry] of checkpoint.context.entries()) {
      const body = JSON.stringify(entry.message)
      if (entry.origin === "summary") {
        entries.push({ position, origin: entry.origin, messageId: null, tokens: entry.tokens, body })
        continue
      }
      const original = bodies.get(entry.message.id)
      if (original === undefined) {
        return mismatch("the checkpoint references a message the transcript does not have", entry.message.id)
      }
      entries.push({
        position,
        origin: entry.origin,
        messageId: entry.message.id,
        tokens: entry.tokens,
        body: body === original ? null : body
      })
    }
    const { context: _context, ...report } = encodeCheckpoint(checkpoint)
    return Effect.succeed({ messages, entries, report: JSON.stringify(report), checkpoint })
  })

/** The first position where stored transcript rows and the new ones disagree, if any. */
export const firstConflict = (
  stored: ReadonlyArray<{ readonly seq: number; readonly messageId: string; readonly digest: string }>,
  incoming: ReadonlyArray<MessageRow>
): { readonly position: number; readonly messageId: string; readonly detail: string } | undefined => {
  for (const row of stored) {
    const next = incoming[row.seq]
    if (next === undefined) continue
    if (next.messageId !== row.messageId) {
      return {
        position: row.seq,
        messageId: next.messageId,
        detail: `the stored transcript has message ${row.messageId} there`
      }
    }
    if (next.digest !== row.digest) {
      return { position: row.seq, messageId: row.messageId, detail: "its content changed" }
    }
  }
  return undefined
}

export interface StoredEntry {
  readonly origin: string
  readonly tokens: number
  /** The entry's own body, or the transcript message's when the checkpoint did not change it. */
  readonly body: string | null
  readonly original: string | null
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
        const body = entry.body ?? entry.original
        if (body === null)
          return malformed(checkpointId, "references a transcript message the store does not hold")
        context.push({ origin: entry.origin, message: JSON.parse(body) as unknown, tokens: entry.tokens })
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
