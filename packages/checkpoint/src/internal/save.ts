// One save, for every store: validate, find what the store already holds, write only the rest.
//
// Cost: a process remembers, per session, the messages it last saved and their prefix digests.
// The next save compares the incoming messages with those field by field (string identity when
// the host hands in the same strings; never serialized or hashed) and serializes, hashes and
// writes only the messages after them. Whatever another writer appended meanwhile is checked by
// one read: the stored prefix digest at the position where the two transcripts meet.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Checkpoint from "../Checkpoint.js"
import { CheckpointConflict, type CheckpointInvalid, CheckpointStoreFailed } from "../CheckpointError.js"
import * as Transcript from "../Transcript.js"
import * as Record from "./record.js"

/** A stored transcript row as the conflict check reads it. */
export interface StoredRow {
  readonly seq: number
  readonly messageId: string
  readonly digest: string
}

/** What a store does inside one write transaction; every method fails only with the store's `E`. */
export interface WriteTx<E> {
  /** Locks the session until the transaction ends (another writer of it waits) and reads its head. */
  readonly lockHead: (sessionId: string) => Effect.Effect<Record.Head, E>
  /** The prefix digest stored at `seq` (which is below the head's length). */
  readonly prefixAt: (sessionId: string, seq: number) => Effect.Effect<string, E>
  /** Stored rows with `from <= seq < to`, in order. */
  readonly rows: (sessionId: string, from: number, to: number) => Effect.Effect<ReadonlyArray<StoredRow>, E>
  /** Appends `count` rows, in order; each row is computed when the iteration reaches it. */
  readonly append: (
    sessionId: string,
    rows: Iterable<Record.MessageRow>,
    count: number
  ) => Effect.Effect<void, E>
  readonly setHead: (sessionId: string, head: Record.Head) => Effect.Effect<void, E>
  readonly insertCheckpoint: (row: CheckpointRow) => Effect.Effect<number, E>
  readonly insertEntries: (
    checkpointId: number,
    entries: ReadonlyArray<Record.EntryRow>
  ) => Effect.Effect<void, E>
}

/** A checkpoint's own row, as a store writes it. */
export interface CheckpointRow {
  readonly sessionId: string
  readonly createdAt: number
  readonly transcriptLength: number
  readonly retainedTokens: number
  readonly summaryTokens: number
  readonly report: string
}

/**
 * A whole save in one statement, for a store that can run one (PostgreSQL): when the session's
 * head is still `expected`, appends `rows`, moves the head to `head`, writes the checkpoint and its
 * entries, and returns the checkpoint's id; otherwise writes nothing and returns none. A save that
 * extends what this process last saved tries it first: one round trip instead of a transaction's
 * several.
 */
export type SaveIfHead = (save: {
  readonly sessionId: string
  readonly expected: Record.Head
  readonly rows: ReadonlyArray<Record.MessageRow>
  readonly head: Record.Head
  readonly checkpoint: CheckpointRow
  readonly entries: ReadonlyArray<Record.EntryRow>
}) => Effect.Effect<Option.Option<number>, CheckpointStoreFailed>

/** Runs `body` as one transaction (all or nothing), mapping the store's own failures. */
export type Transact<E> = <A, E2>(
  body: (tx: WriteTx<E>) => Effect.Effect<A, E | E2>
) => Effect.Effect<A, E2 | CheckpointStoreFailed>

interface Known {
  readonly messages: ReadonlyArray<Transcript.Message>
  readonly prefixes: ReadonlyArray<string>
}

/**
 * Sessions whose last save this process remembers. A worker serves a few sessions at a time; the
 * memory held is the prefix digests (about 50 bytes a message) and references to messages the
 * host holds anyway.
 */
const rememberedSessions = 16

/** The per-process memory of what each session's stored transcript begins with. */
export const makeKnownSessions = () => {
  const sessions = new Map<string, Known>()
  return {
    get: (sessionId: string) => sessions.get(sessionId),
    set: (sessionId: string, known: Known) => {
      sessions.delete(sessionId)
      sessions.set(sessionId, known)
      if (sessions.size > rememberedSessions) sessions.delete(sessions.keys().next().value!)
    },
    forget: (sessionId: string) => sessions.delete(sessionId)
  }
}

export type KnownSessions = ReturnType<typeof makeKnownSessions>

export interface Saved {
  readonly checkpointId: number
  readonly sessionId: string
  readonly createdAt: number
  readonly checkpoint: Checkpoint.Checkpoint
}

/**
 * New messages up to which a save tries `SaveIfHead`: its parameters grow with the rows, and a
 * larger append goes through the transaction, whose bulk form suits it.
 */
const saveIfHeadRows = 16

const rewrite = (sessionId: string, position: number, messageId: string, detail: string) =>
  new CheckpointConflict({ sessionId, kind: "rewrite", position, messageId, detail })

/** The first position where the stored rows and the incoming messages disagree. */
const locate = <E>(
  tx: WriteTx<E>,
  sessionId: string,
  messages: ReadonlyArray<Transcript.Message>,
  to: number
) =>
  Effect.gen(function* () {
    const stored = yield* tx.rows(sessionId, 0, to)
    const incoming = Record.messageRows(messages.slice(0, to), 0, "")
    for (const row of stored) {
      const next = incoming[row.seq]!
      if (next.messageId !== row.messageId)
        return rewrite(
          sessionId,
          row.seq,
          next.messageId,
          `the stored transcript has message ${row.messageId} there`
        )
      if (next.digest !== row.digest) return rewrite(sessionId, row.seq, row.messageId, "its content changed")
    }
    return rewrite(sessionId, to - 1, messages[to - 1]!.id, "the stored transcript differs before it")
  })

/**
 * Everything a save checks before it touches a store: the session id, the transcript (decoded to
 * the neutral shape a store holds, with a user message), and that the checkpoint is the
 * transcript's.
 */
export const prepare = (sessionId: string, transcript: unknown, checkpoint: Checkpoint.Checkpoint) =>
  Effect.gen(function* () {
    yield* Record.checkSessionId(sessionId)
    // a host may hand in a provider shape; the neutral one is what is stored
    const decoded = yield* Transcript.fromAny(transcript)
    yield* Checkpoint.requireUserMessage(decoded)
    const prepared = yield* Record.prepareCheckpoint(decoded, checkpoint)
    return { decoded, prepared }
  })

/** Saves a checkpoint with its transcript through a store's transaction. */
export const save = <E>(
  transact: Transact<E>,
  known: KnownSessions,
  sessionId: string,
  transcript: unknown,
  checkpoint: Checkpoint.Checkpoint,
  /**
   * Whether the store writes rows while later ones are still being computed (PostgreSQL's COPY);
   * otherwise every row is computed before the transaction, which then holds its lock only to write.
   */
  streamRows = false,
  saveIfHead?: SaveIfHead
): Effect.Effect<Saved, CheckpointInvalid | CheckpointConflict | CheckpointStoreFailed> =>
  Effect.gen(function* () {
    const { decoded, prepared } = yield* prepare(sessionId, transcript, checkpoint)
    const createdAt = yield* Clock.currentTimeMillis
    const messages = decoded.messages
    const length = messages.length

    // the leading messages this process already saved: compared, not serialized
    const remembered = known.get(sessionId)
    let same = 0
    if (remembered !== undefined) {
      const limit = Math.min(remembered.messages.length, length)
      while (same < limit && Record.sameMessage(messages[same]!, remembered.messages[same]!)) same++
      if (same < limit) {
        const stored = remembered.messages[same]!
        return yield* rewrite(
          sessionId,
          same,
          messages[same]!.id,
          stored.id === messages[same]!.id
            ? "its content changed"
            : `the stored transcript has message ${stored.id} there`
        )
      }
    }
    // computed as the transaction needs them: the rows a store writes can go out while the next
    // ones are being encoded and hashed
    const rows = Record.rowSource(messages, same, same > 0 ? remembered!.prefixes[same - 1]! : "")
    const prefixAt = (seq: number): string => (seq < same ? remembered!.prefixes[seq]! : rows.row(seq).prefix)
    if (!streamRows) rows.all()

    const checkpointRow: CheckpointRow = {
      sessionId,
      createdAt,
      transcriptLength: length,
      retainedTokens: checkpoint.retainedTokens,
      summaryTokens: checkpoint.summaryTokens,
      report: prepared.report
    }
    const remember = (checkpointId: number): Saved => {
      // copies of the arrays (references only): the host may push to its own array afterwards
      const prefixes = same === 0 ? [] : remembered!.prefixes.slice(0, same)
      for (const row of rows.all()) prefixes.push(row.prefix)
      known.set(sessionId, { messages: messages.slice(), prefixes })
      return { checkpointId, sessionId, createdAt, checkpoint: prepared.checkpoint }
    }

    // the usual save: this process saved the session last and the host appended a few messages
    if (
      saveIfHead !== undefined &&
      same > 0 &&
      same === remembered!.messages.length &&
      length - same <= saveIfHeadRows
    ) {
      const saved = yield* saveIfHead({
        sessionId,
        expected: { length: same, prefix: remembered!.prefixes[same - 1]! },
        rows: rows.all(),
        head: { length, prefix: prefixAt(length - 1) },
        checkpoint: checkpointRow,
        entries: prepared.entries
      })
      if (Option.isSome(saved)) return remember(saved.value)
      // another writer moved the head: the transaction below finds out how
    }

    const checkpointId = yield* transact<number, CheckpointConflict | CheckpointStoreFailed>((tx) =>
      Effect.gen(function* () {
        const head = yield* tx.lockHead(sessionId)
        if (head.length < same) {
          known.forget(sessionId)
          return yield* new CheckpointStoreFailed({
            operation: "save",
            detail: `session ${sessionId} holds ${head.length} stored messages, fewer than the ${same} this process saved before: the store was replaced or restored under it; retry the save`
          })
        }
        if (head.length > 0) {
          // where the two transcripts meet: equal prefix digests there mean equal prefixes
          const meet = Math.min(length, head.length) - 1
          const stored = meet === head.length - 1 ? head.prefix : yield* tx.prefixAt(sessionId, meet)
          if (stored !== prefixAt(meet)) return yield* yield* locate(tx, sessionId, messages, meet + 1)
        }
        if (length < head.length) {
          const [next] = yield* tx.rows(sessionId, length, length + 1)
          return yield* new CheckpointConflict({
            sessionId,
            kind: "behind",
            position: length,
            messageId: next?.messageId ?? "",
            detail: `${head.length} messages stored, this checkpoint was built from ${length}`
          })
        }
        if (length > head.length) {
          yield* tx.append(sessionId, rows.from(head.length), length - head.length)
          yield* tx.setHead(sessionId, { length, prefix: prefixAt(length - 1) })
        }
        const id = yield* tx.insertCheckpoint(checkpointRow)
        yield* tx.insertEntries(id, prepared.entries)
        return id
      })
    )
    return remember(checkpointId)
  })
