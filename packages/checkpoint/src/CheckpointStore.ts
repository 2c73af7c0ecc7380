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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { CheckpointStoreFailed } from "./CheckpointError.js"
import * as OpenOnFirstSave from "./internal/openOnFirstSave.js"
import * as OwnedFile from "./internal/ownedFile.js"
import * as Record from "./internal/record.js"
import * as Save from "./internal/save.js"
import * as SqlStore from "./internal/sqlStore.js"
import type { CheckpointStoreValue } from "./internal/storeValue.js"
import type * as Transcript from "./Transcript.js"

/**
 * `StoredCheckpoint`, a checkpoint as the store holds it (schema and type), and
 * `CheckpointStoreValue`, what a store does.
 *
 * @since 0.1.0
 * @category models
 */
export { type CheckpointStoreValue, StoredCheckpoint } from "./internal/storeValue.js"

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
 * Migration 2: every transcript row carries the running prefix digest, and every session its head
 * (message count and last prefix digest), so a save checks what is stored with one read; a new
 * row keeps its text apart from the JSON body (`text`, see `internal/record.ts`). Existing rows keep
 * their whole-message body (`text` null); their digests are recomputed the new way and their
 * prefixes backfilled in order, the rewrite guard lifted for the backfill only.
 */
const sessionHeads: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transcript_messages ADD COLUMN text TEXT`
  yield* sql`ALTER TABLE transcript_messages ADD COLUMN prefix TEXT NOT NULL DEFAULT ''`
  yield* sql`CREATE TABLE checkpoint_sessions (
    session_id TEXT PRIMARY KEY,
    message_count INTEGER NOT NULL,
    prefix TEXT NOT NULL
  )`
  yield* sql`DROP TRIGGER transcript_messages_never_rewritten`
  const rows = yield* sql<{ session_id: string; seq: number; body: string }>`
    SELECT session_id, seq, body FROM transcript_messages ORDER BY session_id, seq`
  const heads = new Map<string, Record.Head>()
  const into = Record.slab()
  for (const row of rows) {
    const previous = heads.get(row.session_id)?.prefix ?? ""
    const { digest, prefix } = Record.messageRow(
      JSON.parse(row.body) as Transcript.Message,
      row.seq,
      previous,
      into
    )
    heads.set(row.session_id, { length: row.seq + 1, prefix })
    yield* sql`UPDATE transcript_messages SET digest = ${digest}, prefix = ${prefix}
      WHERE session_id = ${row.session_id} AND seq = ${row.seq}`
  }
  for (const [sessionId, head] of heads) {
    yield* sql`INSERT INTO checkpoint_sessions ${sql.insert({ session_id: sessionId, message_count: head.length, prefix: head.prefix })}`
  }
  yield* sql`CREATE TRIGGER transcript_messages_never_rewritten BEFORE UPDATE ON transcript_messages
    BEGIN SELECT RAISE(ABORT, 'transcript messages are never rewritten'); END`
})

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
  }),
  "2_session_heads": sessionHeads
}

/**
 * How long a SQLite writer waits for another process's write transaction before SQLite gives up
 * (better-sqlite3's default). A save that still finds the database busy runs again (below).
 */
const busyTimeoutMs = 5_000

/**
 * Runs of a save that found the database busy: short jittered back-off, for up to two minutes in
 * all, so a burst of writers from many processes queues instead of failing.
 */
const busyRetry = Schedule.exponential("10 millis", 1.5).pipe(
  Schedule.union(Schedule.spaced("1 second")),
  Schedule.jittered,
  Schedule.upTo("2 minutes")
)

const isBusy = (error: SqlError): boolean => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

/**
 * The page size of a new database file (SQLite's default is 4 KiB). A transcript row is a few KiB
 * of text: in 4 KiB pages most rows spill into chains of overflow pages, and writing a 50 MB
 * transcript took about twice as long as in 16 KiB pages, where most rows fit in one page. A file
 * keeps the page size it was created with (WAL fixes it); older files keep theirs.
 */
const pageSizeBytes = 16_384

/*
 * newFileWal: a new database file takes WAL after its first save (or when the store closes), not
 * when it is opened. In WAL mode a transaction's pages are written twice, into the WAL and then,
 * at a checkpoint, into the database; with the rollback journal a new file's first transaction
 * writes its pages once (the journal holds only pages that existed before: none). The first save
 * into a new file is often a whole transcript (`toolcap checkpoint build`): 50 MB took about 500 ms
 * instead of about 700 ms, and closing 5 ms instead of 35. Until it switches, writers of the file
 * take turns through SQLite's file locks (busy timeout and retries as in WAL mode); a process that
 * opens the file once it holds data switches it at open, and connections already open follow
 * when they next read the header.
 */

/**
 * Whether the database file holds nothing yet (the driver creates it empty; the first write
 * transaction lays it out).
 */
const isNewFile = (filename: string): boolean =>
  (fs.statSync(filename, { throwIfNoEntry: false })?.size ?? 0) === 0

const makeSqlite = (options: SqliteOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // see `newFileWal`
    const fresh = isNewFile(options.filename)
    // another process migrating or checkpointing the file can hold it while this one opens it
    const open = (statement: string) =>
      sql
        .unsafe(statement)
        .pipe(
          Effect.retry({ schedule: busyRetry, while: (error) => isBusy(error) }),
          Effect.mapError(SqlStore.failed("open"))
        )
    yield* open(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
    // before WAL: a new file takes the page size with its first write; WAL mode fixes it after
    yield* open(`PRAGMA page_size = ${pageSizeBytes}`)
    if (!fresh) yield* open("PRAGMA journal_mode = WAL")
    if (options.cacheSizeKiB !== undefined) {
      yield* open(`PRAGMA cache_size = -${Math.max(1, Math.floor(options.cacheSizeKiB))}`)
    }
    yield* open("PRAGMA synchronous = FULL")
    yield* open("PRAGMA foreign_keys = ON")
    const store = yield* SqlStore.make({
      sql,
      migrations,
      // processes opening a file together migrate one after another: the first write takes the
      // database's write lock for the whole migration, so no process reads a half-migrated schema
      migrate: (run) =>
        sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`CREATE TABLE IF NOT EXISTS checkpoint_open_lock (held INTEGER)`
              yield* sql`DELETE FROM checkpoint_open_lock`
              return yield* run
            })
          )
          .pipe(Effect.retry({ schedule: busyRetry, while: (error) => isSqlErrorBusy(error) })),
      retryWhile: isBusy,
      retry: busyRetry,
      afterFailedFinish: sql.unsafe("ROLLBACK").pipe(Effect.ignore)
    })
    if (!fresh) return store
    // a new file: its first save goes through the rollback journal, then the file takes WAL
    let walPending = true
    const toWal = Effect.suspend(() =>
      walPending
        ? sql<{ journal_mode: string }>`PRAGMA journal_mode = WAL`.pipe(
            Effect.map(([mode]) => {
              // "wal" also when another process switched it first
              if (mode?.journal_mode === "wal") walPending = false
            }),
            // another process holding the file past the busy timeout: the next save tries again
            Effect.ignore
          )
        : Effect.void
    )
    yield* Effect.addFinalizer(() => toWal)
    return {
      ...store,
      save: (sessionId, transcript, checkpoint) =>
        Effect.ensuring(store.save(sessionId, transcript, checkpoint), toWal)
    } satisfies CheckpointStoreValue
  })

const isSqlErrorBusy = (error: unknown): boolean =>
  (SqlStore.isSqlError(error) && isBusy(error)) ||
  (error instanceof Migrator.MigrationError && SqlStore.isSqlError(error.cause) && isBusy(error.cause))

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

const openRefused = (problem: string) =>
  new CheckpointStoreFailed({ operation: "open", detail: OwnedFile.refusal(problem) })

/**
 * Opens the SQLite file (creating it and its directory when missing) in the current scope: the
 * file and its companions are checked before and after the open (see `internal/ownedFile.ts`).
 */
const openSqlite = (
  options: SqliteOptions
): Effect.Effect<CheckpointStoreValue, CheckpointStoreFailed, Scope.Scope> =>
  Effect.gen(function* () {
    const file = yield* Effect.try({
      try: () => {
        fs.mkdirSync(path.dirname(path.resolve(options.filename)), { recursive: true })
        return OwnedFile.locate(options.filename).file
      },
      catch: (cause) =>
        new CheckpointStoreFailed({
          operation: "open",
          detail: `cannot create the directory of ${options.filename}: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    })
    const planted = OwnedFile.check(file)
    if (planted !== undefined) return yield* openRefused(planted)
    // WAL is switched on by the store itself, after the page size (see `pageSizeBytes`)
    const client = yield* Layer.build(SqliteClient.layer({ filename: file, disableWAL: true }))
    const sql = Context.get(client, SqlClient.SqlClient)
    // the name SQLite resolved the file to, before anything is written
    const databases = yield* sql<{ name: string; file: string }>`PRAGMA database_list`.pipe(
      Effect.mapError(SqlStore.failed("open"))
    )
    const swapped = OwnedFile.checkOpened(file, databases.find((db) => db.name === "main")?.file ?? "")
    if (swapped !== undefined) return yield* openRefused(swapped)
    const store = yield* makeSqlite({ ...options, filename: file }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql)
    )
    // the WAL and its index exist by now (unless the file is new)
    const afterOpen = OwnedFile.check(file)
    if (afterOpen !== undefined) return yield* openRefused(afterOpen)
    return store
  }).pipe(
    // better-sqlite3 throws while opening a file that is not a database; that is bad input, not a crash
    Effect.catchAllCause((cause) => Effect.fail(openFailure(options.filename, cause)))
  )

/**
 * The SQLite store (`@effect/sql-sqlite-node`): WAL, migrations on open, one transaction per
 * checkpoint. The file is created by the first save that passes every check (until then reads
 * answer as an empty store and nothing is written); an existing file that cannot be opened or
 * migrated fails the layer with `CheckpointStoreFailed`. The file, its WAL, shared-memory index and
 * journal are never opened through a link: a planted one is refused with `CheckpointStoreFailed`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<CheckpointStore, CheckpointStoreFailed> =>
  Layer.scoped(
    CheckpointStore,
    Effect.suspend(() => {
      const located = OwnedFile.locate(options.filename)
      if (located.problem !== undefined)
        return Effect.fail(
          new CheckpointStoreFailed({
            operation: "open",
            detail: `cannot create the directory of ${options.filename}: ${located.problem}`
          })
        )
      const planted = OwnedFile.check(located.file)
      if (planted !== undefined) return Effect.fail(openRefused(planted))
      const open = openSqlite(options)
      return located.directoryExists && OwnedFile.exists(located.file)
        ? open
        : OpenOnFirstSave.make({
            open,
            exists: () => OwnedFile.exists(OwnedFile.locate(options.filename).file)
          })
    })
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
// PostgreSQL

/**
 * @since 0.1.0
 * @category models
 */
export interface PostgresOptions {
  /** A connection URL, `postgres://user:password@host:port/database` (libpq syntax). */
  readonly url: string
  /** Connections in the pool (default 4). */
  readonly maxConnections?: number | undefined
  /** Shown in `pg_stat_activity.application_name` (default `toolcap-checkpoint`). */
  readonly applicationName?: string | undefined
}

/** A failed open as `CheckpointStoreFailed`, naming `target` when the failure does not. */
const openFailure = (target: string, cause: Cause.Cause<unknown>): CheckpointStoreFailed =>
  Cause.failureOption(cause).pipe(
    Option.filter((error): error is CheckpointStoreFailed => error instanceof CheckpointStoreFailed),
    Option.getOrElse(() => {
      const squashed = Cause.squash(cause)
      const error = squashed as { cause?: unknown; message?: unknown }
      const detail =
        error.cause instanceof Error
          ? error.cause.message
          : squashed instanceof Error
            ? squashed.message
            : Cause.pretty(cause)
      return new CheckpointStoreFailed({ operation: "open", detail: `${target}: ${detail}` })
    })
  )

/** The URL without its password, for messages. */
const redactUrl = (url: string): string => url.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@")

/**
 * The PostgreSQL store (`@effect/sql-pg`), for a fleet of workers sharing sessions: migrations on
 * open (hosts starting together take turns), one transaction per checkpoint with the session's row
 * locked, so two writers of one session commit one after the other and the second is checked
 * against what the first stored. The driver loads only when this layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPostgres = (
  options: PostgresOptions
): Layer.Layer<CheckpointStore, CheckpointStoreFailed> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.tryPromise({
        try: () => import("./internal/postgres.js"),
        catch: (cause) =>
          new CheckpointStoreFailed({
            operation: "open",
            detail: `cannot load the PostgreSQL driver (install @effect/sql-pg): ${cause instanceof Error ? cause.message : String(cause)}`
          })
      }),
      (postgres) =>
        Layer.effect(CheckpointStore, postgres.make).pipe(Layer.provide(postgres.clientLayer(options)))
    )
  ).pipe(Layer.catchAllCause((cause) => Layer.fail(openFailure(redactUrl(options.url), cause))))

/**
 * Whether a store location is a PostgreSQL connection URL.
 *
 * @since 0.1.0
 * @category models
 */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//i.test(location)

/**
 * The store at a location: a `postgres://` / `postgresql://` URL selects PostgreSQL, anything
 * else is a SQLite file name. This is what `--store` and `TOOLCAP_CHECKPOINT_STORE` name.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromLocation = (location: string): Layer.Layer<CheckpointStore, CheckpointStoreFailed> =>
  isPostgresUrl(location) ? layerPostgres({ url: location }) : layerSqlite({ filename: location })

// ---------------------------------------------------------------------------------------------
// memory

interface MemorySession {
  readonly rows: ReadonlyArray<Record.MessageRow>
  readonly head: Record.Head
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
 * An in-memory store with the SQL stores' semantics (append-only transcripts, conflicts,
 * validation, one writer at a time), for tests of the layers above.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<CheckpointStore> = Layer.effect(
  CheckpointStore,
  Effect.gen(function* () {
    const state = yield* Ref.make<MemoryState>({ sessions: new Map(), checkpoints: [] })
    const writer = yield* Effect.makeSemaphore(1)
    const known = Save.makeKnownSessions()

    // a transaction works on a draft that replaces the state only when it succeeds
    const transact: Save.Transact<never> = (body) =>
      writer.withPermits(1)(
        Effect.gen(function* () {
          const snapshot = yield* Ref.get(state)
          const sessions = new Map(snapshot.sessions)
          const checkpoints = [...snapshot.checkpoints]
          const session = (id: string): MemorySession =>
            sessions.get(id) ?? { rows: [], head: Record.emptyHead }
          const result = yield* body({
            lockHead: (id) => Effect.succeed(session(id).head),
            prefixAt: (id, seq) => Effect.succeed(session(id).rows[seq]?.prefix ?? ""),
            rows: (id, from, to) => Effect.succeed(session(id).rows.slice(from, to)),
            append: (id, rows) =>
              Effect.sync(() => {
                const current = session(id)
                sessions.set(id, { ...current, rows: [...current.rows, ...rows] })
              }),
            setHead: (id, head) => Effect.sync(() => sessions.set(id, { ...session(id), head })),
            insertCheckpoint: (row) =>
              Effect.sync(() => {
                const checkpointId = (checkpoints.at(-1)?.checkpointId ?? 0) + 1
                checkpoints.push({
                  checkpointId,
                  sessionId: row.sessionId,
                  createdAt: row.createdAt,
                  report: row.report,
                  entries: []
                })
                return checkpointId
              }),
            insertEntries: (checkpointId, entries) =>
              Effect.sync(() => {
                const at = checkpoints.findIndex((entry) => entry.checkpointId === checkpointId)
                checkpoints[at] = { ...checkpoints[at]!, entries }
              })
          })
          yield* Ref.set(state, { sessions, checkpoints })
          return result
        })
      )

    const read = (snapshot: MemoryState, stored: MemoryCheckpoint) =>
      Effect.gen(function* () {
        const rows = new Map(
          (snapshot.sessions.get(stored.sessionId)?.rows ?? []).map((row) => [row.messageId, row])
        )
        const checkpoint = yield* Record.reconstruct(
          stored.checkpointId,
          stored.report,
          stored.entries.map((entry) => ({
            origin: entry.origin,
            tokens: entry.tokens,
            body: entry.body,
            original: entry.messageId === null ? null : (rows.get(entry.messageId)?.body ?? null),
            originalText: entry.messageId === null ? null : (rows.get(entry.messageId)?.text ?? null)
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
        Save.save(transact, known, sessionId, transcript, checkpoint),
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
          const rows = snapshot.sessions.get(sessionId)?.rows ?? []
          return { messages: rows.map((row) => Record.messageOf(row.body, row.text) as Transcript.Message) }
        })
    }
    return store
  })
)
