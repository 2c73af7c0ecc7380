/**
 * Where checkpoints persist: SQLite by default (one file under the host's data dir, WAL, one
 * transaction per checkpoint, versioned migrations), or memory for tests. Transcript messages are
 * stored once and never rewritten; a checkpoint references them and stores only what it changed
 * (the cut message, cut results, repairs, the summary) plus its figures.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Checkpoint from "./Checkpoint.js"
import { CheckpointConflict, type CheckpointInvalid, CheckpointStoreFailed } from "./CheckpointError.js"
import * as Record from "./internal/record.js"
import * as Transcript from "./Transcript.js"

/**
 * A checkpoint as the store holds it.
 *
 * @since 0.1.0
 * @category models
 */
export const StoredCheckpoint = Schema.Struct({
  /** Increases with every checkpoint saved to the store. */
  checkpointId: Schema.Int,
  sessionId: Schema.String,
  /** When it was saved, in ms since the epoch (effect `Clock`). */
  createdAt: Schema.Int,
  checkpoint: Checkpoint.Checkpoint
})

/**
 * @since 0.1.0
 * @category models
 */
export type StoredCheckpoint = typeof StoredCheckpoint.Type

/**
 * @since 0.1.0
 * @category models
 */
export interface CheckpointStoreValue {
  /**
   * Saves a checkpoint with the transcript it was built from, in one transaction. Messages the
   * store already holds for the session must be unchanged (`CheckpointConflict` otherwise); new
   * ones are appended.
   */
  readonly save: (
    sessionId: string,
    transcript: unknown,
    checkpoint: Checkpoint.Checkpoint
  ) => Effect.Effect<StoredCheckpoint, CheckpointInvalid | CheckpointConflict | CheckpointStoreFailed>
  /** The session's most recent checkpoint. */
  readonly latest: (
    sessionId: string
  ) => Effect.Effect<Option.Option<StoredCheckpoint>, CheckpointInvalid | CheckpointStoreFailed>
  /** A checkpoint by id. */
  readonly get: (
    checkpointId: number
  ) => Effect.Effect<Option.Option<StoredCheckpoint>, CheckpointStoreFailed>
  /** The ids of the session's checkpoints, oldest first. */
  readonly list: (
    sessionId: string
  ) => Effect.Effect<ReadonlyArray<number>, CheckpointInvalid | CheckpointStoreFailed>
  /** The session's transcript as stored (empty when nothing was saved). */
  readonly transcript: (
    sessionId: string
  ) => Effect.Effect<Transcript.Transcript, CheckpointInvalid | CheckpointStoreFailed>
}

/**
 * @since 0.1.0
 * @category services
 */
export class CheckpointStore extends Context.Tag("@toolcap/checkpoint/CheckpointStore")<
  CheckpointStore,
  CheckpointStoreValue
>() {}

/**
 * The file name the store uses under a data directory.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultFileName = "checkpoints.sqlite"

// ---------------------------------------------------------------------------------------------
// SQLite

/**
 * The schema, as versioned migrations (run by `@effect/sql`'s Migrator, recorded in the table
 * `checkpoint_migrations`). Migrations are append-only: a change is a new numbered entry.
 *
 * @since 0.1.0
 * @category models
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "1_create_tables": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // one row per transcript message, written once: the trigger refuses any rewrite
    yield* sql`CREATE TABLE transcript_messages (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      message_id TEXT NOT NULL,
      role TEXT NOT NULL,
      body TEXT NOT NULL,
      digest TEXT NOT NULL,
      PRIMARY KEY (session_id, seq),
      UNIQUE (session_id, message_id)
    )`
    yield* sql`CREATE TRIGGER transcript_messages_never_rewritten BEFORE UPDATE ON transcript_messages
      BEGIN SELECT RAISE(ABORT, 'transcript messages are never rewritten'); END`
    yield* sql`CREATE TABLE checkpoints (
      checkpoint_id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      transcript_length INTEGER NOT NULL,
      retained_tokens INTEGER NOT NULL,
      summary_tokens INTEGER NOT NULL,
      report TEXT NOT NULL
    )`
    yield* sql`CREATE INDEX checkpoints_by_session ON checkpoints (session_id, checkpoint_id)`
    yield* sql`CREATE TABLE checkpoint_entries (
      checkpoint_id INTEGER NOT NULL REFERENCES checkpoints (checkpoint_id),
      position INTEGER NOT NULL,
      origin TEXT NOT NULL,
      message_id TEXT,
      tokens INTEGER NOT NULL,
      body TEXT,
      PRIMARY KEY (checkpoint_id, position)
    )`
  })
}

const failed = (operation: string) => (error: SqlError) =>
  new CheckpointStoreFailed({
    operation,
    detail: error.cause instanceof Error ? error.cause.message : error.message
  })

/** Rows per INSERT statement: keeps every statement far below SQLite's bound-parameter limit. */
const insertChunk = 200

const chunks = <A>(rows: ReadonlyArray<A>): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let at = 0; at < rows.length; at += insertChunk) out.push(rows.slice(at, at + insertChunk))
  return out
}

const decodeTranscript = (transcript: unknown) =>
  // a host may hand in a provider shape; the neutral one is what is stored
  Transcript.fromAny(transcript)

/** What every store does before it writes: validate the session id and transcript, prepare the rows. */
const prepareSave = (sessionId: string, transcript: unknown, checkpoint: Checkpoint.Checkpoint) =>
  Effect.gen(function* () {
    yield* Record.checkSessionId(sessionId)
    const decoded = yield* decodeTranscript(transcript)
    const prepared = yield* Record.prepare(decoded, checkpoint)
    const createdAt = yield* Clock.currentTimeMillis
    return { prepared, createdAt }
  })

const makeSqlite = (options: SqliteOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    if (options.cacheSizeKiB !== undefined) {
      yield* sql
        .unsafe(`PRAGMA cache_size = -${Math.max(1, Math.floor(options.cacheSizeKiB))}`)
        .pipe(Effect.mapError(failed("open")))
    }
    yield* sql`PRAGMA synchronous = FULL`.pipe(Effect.mapError(failed("open")))
    yield* sql`PRAGMA foreign_keys = ON`.pipe(Effect.mapError(failed("open")))
    yield* Migrator.make({})({
      loader: Migrator.fromRecord(migrations),
      table: "checkpoint_migrations"
    }).pipe(
      Effect.mapError(
        (error) =>
          new CheckpointStoreFailed({
            operation: "migrate",
            detail:
              error instanceof Migrator.MigrationError ? error.message : String(error.cause ?? error.message)
          })
      )
    )

    const readCheckpoint = (row: {
      checkpoint_id: number
      session_id: string
      created_at: number
      report: string
    }): Effect.Effect<StoredCheckpoint, CheckpointStoreFailed> =>
      Effect.gen(function* () {
        const entries = yield* sql<{
          origin: string
          tokens: number
          body: string | null
          original: string | null
        }>`
        SELECT e.origin, e.tokens, e.body, m.body AS original
        FROM checkpoint_entries e
        LEFT JOIN transcript_messages m ON m.session_id = ${row.session_id} AND m.message_id = e.message_id
        WHERE e.checkpoint_id = ${row.checkpoint_id}
        ORDER BY e.position`.pipe(Effect.mapError(failed("read")))
        const checkpoint = yield* Record.reconstruct(row.checkpoint_id, row.report, entries)
        return {
          checkpointId: row.checkpoint_id,
          sessionId: row.session_id,
          createdAt: row.created_at,
          checkpoint
        }
      })

    type CheckpointRow = { checkpoint_id: number; session_id: string; created_at: number; report: string }

    const store: CheckpointStoreValue = {
      save: (sessionId, transcript, checkpoint) =>
        Effect.gen(function* () {
          const { prepared, createdAt } = yield* prepareSave(sessionId, transcript, checkpoint)
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                // a write first, so the transaction holds the write lock before it reads
                const inserted = yield* sql<{ checkpoint_id: number }>`INSERT INTO checkpoints ${sql.insert({
                  session_id: sessionId,
                  created_at: createdAt,
                  transcript_length: checkpoint.transcriptLength,
                  retained_tokens: checkpoint.retainedTokens,
                  summary_tokens: checkpoint.summaryTokens,
                  report: prepared.report
                })} RETURNING checkpoint_id`
                const checkpointId = inserted[0]!.checkpoint_id
                const stored = yield* sql<{ seq: number; messageId: string; digest: string }>`
                SELECT seq, message_id AS messageId, digest FROM transcript_messages
                WHERE session_id = ${sessionId} ORDER BY seq`
                const conflict = Record.firstConflict(stored, prepared.messages)
                if (conflict !== undefined) return yield* new CheckpointConflict({ sessionId, ...conflict })
                for (const rows of chunks(prepared.messages.slice(stored.length))) {
                  yield* sql`INSERT INTO transcript_messages ${sql.insert(
                    rows.map((row) => ({
                      session_id: sessionId,
                      seq: row.seq,
                      message_id: row.messageId,
                      role: row.role,
                      body: row.body,
                      digest: row.digest
                    }))
                  )}`
                }
                for (const rows of chunks(prepared.entries)) {
                  yield* sql`INSERT INTO checkpoint_entries ${sql.insert(
                    rows.map((row) => ({
                      checkpoint_id: checkpointId,
                      position: row.position,
                      origin: row.origin,
                      message_id: row.messageId,
                      tokens: row.tokens,
                      body: row.body
                    }))
                  )}`
                }
                return { checkpointId, sessionId, createdAt, checkpoint: prepared.checkpoint }
              })
            )
            .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(failed("save")(error))))
        }),
      latest: (sessionId) =>
        Effect.gen(function* () {
          yield* Record.checkSessionId(sessionId)
          return yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql<CheckpointRow>`
                SELECT checkpoint_id, session_id, created_at, report FROM checkpoints
                WHERE session_id = ${sessionId} ORDER BY checkpoint_id DESC LIMIT 1`.pipe(
                  Effect.mapError(failed("read"))
                )
                return rows[0] === undefined ? Option.none() : Option.some(yield* readCheckpoint(rows[0]))
              })
            )
            .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(failed("read")(error))))
        }),
      get: (checkpointId) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              const rows = yield* sql<CheckpointRow>`
              SELECT checkpoint_id, session_id, created_at, report FROM checkpoints
              WHERE checkpoint_id = ${checkpointId}`.pipe(Effect.mapError(failed("read")))
              return rows[0] === undefined ? Option.none() : Option.some(yield* readCheckpoint(rows[0]))
            })
          )
          .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(failed("read")(error)))),
      list: (sessionId) =>
        Effect.gen(function* () {
          yield* Record.checkSessionId(sessionId)
          const rows = yield* sql<{ checkpoint_id: number }>`
          SELECT checkpoint_id FROM checkpoints WHERE session_id = ${sessionId} ORDER BY checkpoint_id`.pipe(
            Effect.mapError(failed("read"))
          )
          return rows.map((row) => row.checkpoint_id)
        }),
      transcript: (sessionId) =>
        Effect.gen(function* () {
          yield* Record.checkSessionId(sessionId)
          const rows = yield* sql<{ body: string }>`
          SELECT body FROM transcript_messages WHERE session_id = ${sessionId} ORDER BY seq`.pipe(
            Effect.mapError(failed("read"))
          )
          return yield* Transcript.decode({
            messages: rows.map((row) => JSON.parse(row.body) as unknown)
          }).pipe(
            Effect.mapError(
              (error) =>
                new CheckpointStoreFailed({ operation: "read", detail: `stored transcript: ${error.detail}` })
            )
          )
        })
    }
    return store
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions {
  /** The database file; its directory is created when missing. */
  readonly filename: string
  /**
   * The connection's page cache in KiB (better-sqlite3 opens with 16 MiB). A transaction larger
   * than the cache spills pages to the WAL before it commits; lower it to bound the store's memory.
   */
  readonly cacheSizeKiB?: number | undefined
}

/**
 * The SQLite store (`@effect/sql-sqlite-node`): WAL, migrations on open, one transaction per
 * checkpoint. A file that cannot be opened or migrated fails the layer with `CheckpointStoreFailed`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<CheckpointStore, CheckpointStoreFailed> =>
  Layer.effect(CheckpointStore, makeSqlite(options)).pipe(
    Layer.provide(
      Layer.unwrapEffect(
        Effect.try({
          try: () => {
            fs.mkdirSync(path.dirname(path.resolve(options.filename)), { recursive: true })
            return SqliteClient.layer({ filename: options.filename })
          },
          catch: (cause) =>
            new CheckpointStoreFailed({
              operation: "open",
              detail: `cannot create the directory of ${options.filename}: ${cause instanceof Error ? cause.message : String(cause)}`
            })
        })
      )
    ),
    // better-sqlite3 throws while opening a file that is not a database; that is bad input, not a crash
    Layer.catchAllCause((cause) =>
      Layer.fail(
        Cause.failureOption(cause).pipe(
          Option.filter((error): error is CheckpointStoreFailed => error instanceof CheckpointStoreFailed),
          Option.getOrElse(
            () =>
              new CheckpointStoreFailed({
                operation: "open",
                detail: `${options.filename}: ${Cause.squash(cause) instanceof Error ? (Cause.squash(cause) as Error).message : Cause.pretty(cause)}`
              })
          )
        )
      )
    )
  )

/**
 * The SQLite store in `<dataDir>/checkpoints.sqlite`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDataDir = (dataDir: string): Layer.Layer<CheckpointStore, CheckpointStoreFailed> =>
  layerSqlite({ filename: path.join(dataDir, defaultFileName) })

// ---------------------------------------------------------------------------------------------
// memory

interface MemorySession {
  readonly messages: ReadonlyArray<Record.MessageRow>
}

interface MemoryCheckpoint {
  readonly checkpointId: number
  readonly sessionId: string
  readonly createdAt: number
  readonly report: string
  readonly entries: ReadonlyArray<Record.EntryRow>
}

interface MemoryState {
  readonly sessions: ReadonlyMap<string, MemorySession>
  readonly checkpoints: ReadonlyArray<MemoryCheckpoint>
}

/**
 * An in-memory store with the SQLite store's semantics (append-only transcripts, conflicts,
 * validation), for tests of the layers above.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<CheckpointStore> = Layer.effect(
  CheckpointStore,
  Effect.gen(function* () {
    const state = yield* Ref.make<MemoryState>({ sessions: new Map(), checkpoints: [] })
    const read = (snapshot: MemoryState, stored: MemoryCheckpoint) =>
      Effect.gen(function* () {
        const bodies = new Map(
          (snapshot.sessions.get(stored.sessionId)?.messages ?? []).map((row) => [row.messageId, row.body])
        )
        const checkpoint = yield* Record.reconstruct(
          stored.checkpointId,
          stored.report,
          stored.entries.map((entry) => ({
            origin: entry.origin,
            tokens: entry.tokens,
            body: entry.body,
            original: entry.messageId === null ? null : (bodies.get(entry.messageId) ?? null)
          }))
        )
        return {
          checkpointId: stored.checkpointId,
          sessionId: stored.sessionId,
          createdAt: stored.createdAt,
          checkpoint
        }
      })
    const store: CheckpointStoreValue = {
      save: (sessionId, transcript, checkpoint) =>
        Effect.gen(function* () {
          const { prepared, createdAt } = yield* prepareSave(sessionId, transcript, checkpoint)
          const outcome = yield* Ref.modify(
            state,
            (snapshot): readonly [Either.Either<StoredCheckpoint, CheckpointConflict>, MemoryState] => {
              const stored = snapshot.sessions.get(sessionId)?.messages ?? []
              const conflict = Record.firstConflict(stored, prepared.messages)
              if (conflict !== undefined) {
                return [Either.left(new CheckpointConflict({ sessionId, ...conflict })), snapshot]
              }
              const checkpointId = (snapshot.checkpoints.at(-1)?.checkpointId ?? 0) + 1
              const sessions = new Map(snapshot.sessions)
              sessions.set(sessionId, { messages: [...stored, ...prepared.messages.slice(stored.length)] })
              const next: MemoryState = {
                sessions,
                checkpoints: [
                  ...snapshot.checkpoints,
                  { checkpointId, sessionId, createdAt, report: prepared.report, entries: prepared.entries }
                ]
              }
              return [
                Either.right({ checkpointId, sessionId, createdAt, checkpoint: prepared.checkpoint }),
                next
              ]
            }
          )
          return yield* outcome
        }),
      latest: (sessionId) =>
        Effect.gen(function* () {
          yield* Record.checkSessionId(sessionId)
          const snapshot = yield* Ref.get(state)
          const stored = snapshot.checkpoints.filter((entry) => entry.sessionId === sessionId).at(-1)
          return stored === undefined ? Option.none() : Option.some(yield* read(snapshot, stored))
        }),
      get: (checkpointId) =>
        Effect.gen(function* () {
          const snapshot = yield* Ref.get(state)
          const stored = snapshot.checkpoints.find((entry) => entry.checkpointId === checkpointId)
          return stored === undefined ? Option.none() : Option.some(yield* read(snapshot, stored))
        }),
      list: (sessionId) =>
        Effect.gen(function* () {
          yield* Record.checkSessionId(sessionId)
          const snapshot = yield* Ref.get(state)
          return snapshot.checkpoints
            .filter((entry) => entry.sessionId === sessionId)
            .map((entry) => entry.checkpointId)
        }),
      transcript: (sessionId) =>
        Effect.gen(function* () {
          yield* Record.checkSessionId(sessionId)
          const snapshot = yield* Ref.get(state)
          const rows = snapshot.sessions.get(sessionId)?.messages ?? []
          return { messages: rows.map((row) => JSON.parse(row.body) as Transcript.Message) }
        })
    }
    return store
  })
)
