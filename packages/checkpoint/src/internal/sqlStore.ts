// The store over an `@effect/sql` client, shared by SQLite and PostgreSQL: the same tables and
// statements; the dialects differ only in how a writer locks a session and in the migrations.
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import type { CheckpointStoreValue, StoredCheckpoint } from "./storeValue.js"
import { CheckpointStoreFailed } from "../CheckpointError.js"
import * as Transcript from "../Transcript.js"
import * as Record from "./record.js"
import * as Save from "./save.js"

/** The driver's error code of a failed statement (`SQLITE_FULL`, a PostgreSQL SQLSTATE), if any. */
const codeOf = (error: SqlError): unknown => (error.cause as { code?: unknown } | undefined)?.code

export const failed = (operation: string) => (error: SqlError) => {
  const detail = error.cause instanceof Error ? error.cause.message : error.message
  // SQLite's SQLITE_FULL, PostgreSQL's disk_full
  const full = codeOf(error) === "SQLITE_FULL" || codeOf(error) === "53100"
  return new CheckpointStoreFailed({
    operation,
    detail: full
      ? `${detail}: the disk holding the store is full; free space and save again (the checkpoints saved before are intact)`
      : detail
  })
}

/**
 * `@effect/sql` makes a failed COMMIT or ROLLBACK a defect; for a store it is a failed save or
 * read (a full disk fails the COMMIT), reported like any other failed statement.
 */
const failedFinish =
  (operation: string, recover: Effect.Effect<void>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.catchSomeDefect(effect, (defect) =>
      isSqlError(defect)
        ? Option.some(Effect.zipRight(recover, Effect.fail(failed(operation)(defect))))
        : Option.none()
    )

/**
 * Rows per INSERT statement: far below SQLite's and PostgreSQL's bound-parameter limits
 * (32,766 and 65,535; 7 columns a row).
 */
const chunkRows = 500

/**
 * Body bytes per INSERT statement: a 46 MiB transcript goes in as many statements of a few MiB,
 * never as one statement the server must buffer whole.
 */
const chunkBytes = 4 * 1024 * 1024

/** Rows in batches of bounded size (see `chunkRows`, `chunkBytes`), each taken from `rows` as it is reached. */
export function* chunks<A>(rows: Iterable<A>, size: (row: A) => number): Generator<ReadonlyArray<A>> {
  let current: Array<A> = []
  let bytes = 0
  for (const row of rows) {
    if (current.length > 0 && (current.length >= chunkRows || bytes + size(row) > chunkBytes)) {
      yield current
      current = []
      bytes = 0
    }
    current.push(row)
    bytes += size(row)
  }
  if (current.length > 0) yield current
}

/**
 * Rows from which a save uses the dialect's bulk form (`appendRows`), when it has one. A COPY
 * takes two round trips (its start, then its data and end) where an INSERT takes one, so the few
 * rows of a save after an append go in as an INSERT.
 */
const bulkRows = 16

/** A transcript row's size as `chunks` counts it. */
export const rowBytes = (row: Record.MessageRow): number => row.body.length + (row.text?.length ?? 0)

export interface SqlStoreOptions {
  readonly sql: SqlClient.SqlClient
  readonly migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>>
  /** How the migrator runs (PostgreSQL: under an advisory lock, so hosts starting together take turns). */
  readonly migrate: <A, E>(
    run: Effect.Effect<A, E, SqlClient.SqlClient>
  ) => Effect.Effect<A, E | SqlError, SqlClient.SqlClient>
  /** Which failures are worth running the whole transaction again (SQLite: a busy database), how often. */
  readonly retryWhile: (error: SqlError) => boolean
  readonly retry: Schedule.Schedule<unknown, unknown>
  /**
   * Run after a COMMIT or ROLLBACK failed, so the connection takes the next transaction (SQLite:
   * a ROLLBACK, which fails harmlessly when SQLite already rolled back).
   */
  readonly afterFailedFinish?: Effect.Effect<void> | undefined
  /**
   * Writes transcript rows inside the open transaction in the dialect's bulk form (PostgreSQL:
   * `COPY`), one bounded batch at a time; without it they go in as multi-row INSERTs.
   */
  readonly appendRows?: (
    sessionId: string,
    batches: Iterable<ReadonlyArray<Record.MessageRow>>
  ) => Effect.Effect<void, SqlError>
  /** A whole save in one statement when the head is as this process left it (PostgreSQL). */
  readonly saveIfHead?: Save.SaveIfHead
}

type CheckpointRow = {
  checkpoint_id: number | string
  session_id: string
  created_at: number | string
  report: string
}

export const make = (options: SqlStoreOptions) =>
  Effect.gen(function* () {
    const { sql } = options
    yield* options
      .migrate(
        Migrator.make({})({
          loader: Migrator.fromRecord(options.migrations),
          table: "checkpoint_migrations"
        })
      )
      .pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.mapError(
          (error) =>
            new CheckpointStoreFailed({
              operation: "migrate",
              detail:
                error instanceof Migrator.MigrationError
                  ? error.message
                  : String((error as SqlError).cause ?? (error as SqlError).message)
            })
        )
      )
    return store(options)
  })

const store = (options: SqlStoreOptions): CheckpointStoreValue => {
  const { sql } = options
  const known = Save.makeKnownSessions()

  /** Rows in statements of bounded size (see `chunkRows`, `chunkBytes`), one after another. */
  const insertChunked = <A>(
    table: string,
    rows: Iterable<A>,
    size: (row: A) => number,
    record: (row: A) => Record<string, unknown>
  ) =>
    Effect.forEach(
      chunks(rows, size),
      (chunk) => sql`INSERT INTO ${sql(table)} ${sql.insert(chunk.map(record))}`,
      {
        discard: true
      }
    )

  const tx: Save.WriteTx<SqlError> = {
    lockHead: (sessionId) =>
      // one statement that writes the session's row (creating it when new) and returns it: the
      // write locks it until the save commits (SQLite: the database's write lock; PostgreSQL: the
      // row, so a second writer of the session waits, then reads what the first committed)
      Effect.map(
        sql<{ message_count: number; prefix: string }>`
          INSERT INTO checkpoint_sessions (session_id, message_count, prefix) VALUES (${sessionId}, 0, '')
          ON CONFLICT (session_id) DO UPDATE SET message_count = checkpoint_sessions.message_count
          RETURNING message_count, prefix`,
        ([head]) =>
          head === undefined ? Record.emptyHead : { length: Number(head.message_count), prefix: head.prefix }
      ),
    prefixAt: (sessionId, seq) =>
      Effect.map(
        sql<{
          prefix: string
        }>`SELECT prefix FROM transcript_messages WHERE session_id = ${sessionId} AND seq = ${seq}`,
        (rows) => rows[0]?.prefix ?? ""
      ),
    rows: (sessionId, from, to) =>
      Effect.map(
        sql<{ seq: number; message_id: string; digest: string }>`
          SELECT seq, message_id, digest FROM transcript_messages
          WHERE session_id = ${sessionId} AND seq >= ${from} AND seq < ${to} ORDER BY seq`,
        (rows) => rows.map((row) => ({ seq: Number(row.seq), messageId: row.message_id, digest: row.digest }))
      ),
    append: (sessionId, rows, count) =>
      // a few rows (a save after an append) take one INSERT: fewer round trips than a COPY
      options.appendRows !== undefined && count > bulkRows
        ? options.appendRows(sessionId, chunks(rows, rowBytes))
        : insertChunked("transcript_messages", rows, rowBytes, (row) => ({
            session_id: sessionId,
            seq: row.seq,
            message_id: row.messageId,
            role: row.role,
            body: row.body,
            // SQLite keeps the bytes as a BLOB, PostgreSQL receives them as text in binary format
            text: row.bytes,
            digest: row.digest,
            prefix: row.prefix
          })),
    setHead: (sessionId, head) =>
      sql`UPDATE checkpoint_sessions SET message_count = ${head.length}, prefix = ${head.prefix}
        WHERE session_id = ${sessionId}`.pipe(Effect.asVoid),
    insertCheckpoint: (row) =>
      Effect.map(
        sql<{ checkpoint_id: number | string }>`INSERT INTO checkpoints ${sql.insert({
          session_id: row.sessionId,
          created_at: row.createdAt,
          transcript_length: row.transcriptLength,
          retained_tokens: row.retainedTokens,
          summary_tokens: row.summaryTokens,
          report: row.report
        })} RETURNING checkpoint_id`,
        (rows) => Number(rows[0]!.checkpoint_id)
      ),
    insertEntries: (checkpointId, entries) =>
      insertChunked(
        "checkpoint_entries",
        entries,
        (entry) => entry.body?.length ?? 0,
        (row) => ({
          checkpoint_id: checkpointId,
          position: row.position,
          origin: row.origin,
          message_id: row.messageId,
          tokens: row.tokens,
          body: row.body
        })
      )
  }

  const recover = options.afterFailedFinish ?? Effect.void

  const transact: Save.Transact<SqlError> = (body) =>
    sql.withTransaction(body(tx)).pipe(
      Effect.retry({
        schedule: options.retry,
        while: (error) => isSqlError(error) && options.retryWhile(error)
      }),
      Effect.catchIf(isSqlError, (error) => Effect.fail(failed("save")(error))),
      failedFinish("save", recover)
    ) as never

  const readCheckpoint = (
    row: CheckpointRow
  ): Effect.Effect<StoredCheckpoint, CheckpointStoreFailed | SqlError> =>
    Effect.gen(function* () {
      const checkpointId = Number(row.checkpoint_id)
      const entries = yield* sql<{
        origin: string
        tokens: number
        body: string | null
        original: string | null
        originalText: string | Uint8Array | null
      }>`
        SELECT e.origin, e.tokens, e.body, m.body AS original, m.text AS "originalText"
        FROM checkpoint_entries e
        LEFT JOIN transcript_messages m ON m.session_id = ${row.session_id} AND m.message_id = e.message_id
        WHERE e.checkpoint_id = ${checkpointId}
        ORDER BY e.position`
      const checkpoint = yield* Record.reconstruct(checkpointId, row.report, entries)
      return { checkpointId, sessionId: row.session_id, createdAt: Number(row.created_at), checkpoint }
    })

  const read = <A, E>(effect: Effect.Effect<A, E | SqlError>) =>
    sql.withTransaction(effect).pipe(
      Effect.retry({
        schedule: options.retry,
        while: (error) => isSqlError(error) && options.retryWhile(error)
      }),
      Effect.catchIf(isSqlError, (error) => Effect.fail(failed("read")(error))),
      failedFinish("read", recover)
    ) as Effect.Effect<A, Exclude<E, SqlError> | CheckpointStoreFailed>

  const one = (rows: ReadonlyArray<CheckpointRow>) =>
    rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(readCheckpoint(rows[0]), Option.some)

  return {
    save: (sessionId, transcript, checkpoint) =>
      Save.save(
        transact,
        known,
        sessionId,
        transcript,
        checkpoint,
        options.appendRows !== undefined,
        options.saveIfHead
      ),
    latest: (sessionId) =>
      Effect.zipRight(
        Record.checkSessionId(sessionId),
        read(
          Effect.flatMap(
            sql<CheckpointRow>`
              SELECT checkpoint_id, session_id, created_at, report FROM checkpoints
              WHERE session_id = ${sessionId} ORDER BY checkpoint_id DESC LIMIT 1`,
            one
          )
        )
      ),
    get: (checkpointId) =>
      read(
        Effect.flatMap(
          sql<CheckpointRow>`
            SELECT checkpoint_id, session_id, created_at, report FROM checkpoints
            WHERE checkpoint_id = ${checkpointId}`,
          one
        )
      ),
    list: (sessionId) =>
      Effect.zipRight(
        Record.checkSessionId(sessionId),
        read(
          Effect.map(
            sql<{ checkpoint_id: number | string }>`
              SELECT checkpoint_id FROM checkpoints WHERE session_id = ${sessionId} ORDER BY checkpoint_id`,
            (rows) => rows.map((row) => Number(row.checkpoint_id))
          )
        )
      ),
    transcript: (sessionId) =>
      Effect.gen(function* () {
        yield* Record.checkSessionId(sessionId)
        const rows = yield* read(
          sql<{
            body: string
            text: string | Uint8Array | null
          }>`SELECT body, text FROM transcript_messages WHERE session_id = ${sessionId} ORDER BY seq`
        )
        return yield* Transcript.decode({
          messages: rows.map((row) => Record.messageOf(row.body, row.text))
        }).pipe(
          Effect.mapError(
            (error) =>
              new CheckpointStoreFailed({ operation: "read", detail: `stored transcript: ${error.detail}` })
          )
        )
      })
  }
}

export const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError
