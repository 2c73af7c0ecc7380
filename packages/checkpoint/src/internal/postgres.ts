// The PostgreSQL store: `@effect/sql-pg`, the shared SQL store, a schema of its own. Loaded only
// when a host selects PostgreSQL, so SQLite hosts never load the driver.
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as PgCopy from "./pgCopy.js"
import type * as Save from "./save.js"
import * as SqlStore from "./sqlStore.js"

/**
 * The schema, as versioned migrations (recorded in `checkpoint_migrations`). Append-only: a
 * change is a new numbered entry.
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "1_create_tables": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // one row per transcript message, written once: the trigger refuses any rewrite
    yield* sql`CREATE TABLE transcript_messages (
      session_id text NOT NULL,
      seq integer NOT NULL,
      message_id text NOT NULL,
      role text NOT NULL,
      body text NOT NULL,
      text text,
      digest text NOT NULL,
      prefix text NOT NULL,
      PRIMARY KEY (session_id, seq),
      UNIQUE (session_id, message_id)
    )`
    // texts go in uncompressed: compressing tens of MiB of tool output costs more than it saves
    yield* sql`ALTER TABLE transcript_messages ALTER COLUMN text SET STORAGE EXTERNAL`
    yield* sql`CREATE FUNCTION toolcap_transcript_messages_never_rewritten() RETURNS trigger
      LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'transcript messages are never rewritten'; END $$`
    yield* sql`CREATE TRIGGER transcript_messages_never_rewritten BEFORE UPDATE ON transcript_messages
      FOR EACH ROW EXECUTE FUNCTION toolcap_transcript_messages_never_rewritten()`
    // the row a writer locks: saves of one session take turns, saves of different sessions do not wait
    yield* sql`CREATE TABLE checkpoint_sessions (
      session_id text PRIMARY KEY,
      message_count integer NOT NULL,
      prefix text NOT NULL
    )`
    yield* sql`CREATE TABLE checkpoints (
      checkpoint_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      session_id text NOT NULL,
      created_at bigint NOT NULL,
      transcript_length integer NOT NULL,
      retained_tokens integer NOT NULL,
      summary_tokens integer NOT NULL,
      report text NOT NULL
    )`
    yield* sql`CREATE INDEX checkpoints_by_session ON checkpoints (session_id, checkpoint_id)`
    yield* sql`CREATE TABLE checkpoint_entries (
      checkpoint_id bigint NOT NULL REFERENCES checkpoints (checkpoint_id),
      position integer NOT NULL,
      origin text NOT NULL,
      message_id text,
      tokens integer NOT NULL,
      body text,
      PRIMARY KEY (checkpoint_id, position)
    )`
  }),
  // A message row up to a heap page (8 KiB) stays in it, rather than moving its text to the TOAST
  // table from 2 KiB on: a few KiB is a typical message, and writing a 50 MB transcript took a
  // fifth less time.
  "2_inline_rows": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE transcript_messages SET (toast_tuple_target = 8160)`
  })
}

/**
 * `Save.SaveIfHead` as one statement: the head's UPDATE matches only the expected head (and waits
 * for a writer holding the session's row, then checks what it committed); every insert takes its
 * rows from the UPDATE's result, so when it matched nothing, nothing is written. One statement is
 * one transaction: no BEGIN and COMMIT round trips.
 */
const saveIfHead =
  (sql: SqlClient.SqlClient): Save.SaveIfHead =>
  ({ checkpoint, entries, expected, head, rows, sessionId }) => {
    const params: Array<unknown> = []
    const param = (value: unknown, type: string) => {
      params.push(value)
      return `$${params.length}::${type}`
    }
    const ctes = [
      `head AS (UPDATE checkpoint_sessions SET message_count = ${param(head.length, "integer")}, prefix = ${param(head.prefix, "text")}
        WHERE session_id = ${param(sessionId, "text")} AND message_count = ${param(expected.length, "integer")} AND prefix = ${param(expected.prefix, "text")}
        RETURNING session_id)`
    ]
    if (rows.length > 0) {
      const values = rows.map(
        (row) =>
          `(${param(row.seq, "integer")}, ${param(row.messageId, "text")}, ${param(row.role, "text")}, ${param(row.body, "text")}, ${param(row.bytes, "text")}, ${param(row.digest, "text")}, ${param(row.prefix, "text")})`
      )
      ctes.push(`messages AS (INSERT INTO transcript_messages (session_id, seq, message_id, role, body, text, digest, prefix)
        SELECT head.session_id, v.* FROM head, (VALUES ${values.join(", ")}) AS v (seq, message_id, role, body, text, digest, prefix))`)
    }
    ctes.push(`checkpoint AS (INSERT INTO checkpoints (session_id, created_at, transcript_length, retained_tokens, summary_tokens, report)
      SELECT session_id, ${param(checkpoint.createdAt, "bigint")}, ${param(checkpoint.transcriptLength, "integer")}, ${param(checkpoint.retainedTokens, "integer")}, ${param(checkpoint.summaryTokens, "integer")}, ${param(checkpoint.report, "text")} FROM head
      RETURNING checkpoint_id)`)
    if (entries.length > 0) {
      const values = entries.map(
        (entry) =>
          `(${param(entry.position, "integer")}, ${param(entry.origin, "text")}, ${param(entry.messageId, "text")}, ${param(entry.tokens, "integer")}, ${param(entry.body, "text")})`
      )
      ctes.push(`entries AS (INSERT INTO checkpoint_entries (checkpoint_id, position, origin, message_id, tokens, body)
        SELECT checkpoint.checkpoint_id, v.* FROM checkpoint, (VALUES ${values.join(", ")}) AS v (position, origin, message_id, tokens, body))`)
    }
    return sql
      .unsafe<{ checkpoint_id: number | string }>(
        `WITH ${ctes.join(", ")} SELECT checkpoint_id FROM checkpoint`,
        params
      )
      .pipe(
        Effect.map((found) =>
          found[0] === undefined ? Option.none() : Option.some(Number(found[0].checkpoint_id))
        ),
        Effect.mapError(SqlStore.failed("save"))
      )
  }

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (any libpq connection URL). */
  readonly url: string
  /** Connections in the pool (default 4: one save at a time per session, a few sessions at once). */
  readonly maxConnections?: number | undefined
  /** Shown in `pg_stat_activity.application_name`. */
  readonly applicationName?: string | undefined
}

/** Connections a worker opens by default: saves of one session take turns anyway. */
const defaultConnections = 4

export const clientLayer = (options: PostgresOptions) =>
  PgClient.layer({
    url: Redacted.make(options.url),
    maxConnections: options.maxConnections ?? defaultConnections,
    applicationName: options.applicationName ?? "toolcap-checkpoint"
  })

export const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* SqlStore.make({
    sql,
    migrations,
    // hosts starting together migrate one after another: the first creates, the others find it done
    migrate: (run) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SELECT pg_advisory_xact_lock(hashtext('toolcap-checkpoint-migrations'))`
          yield* sql`CREATE TABLE IF NOT EXISTS checkpoint_migrations (
            migration_id integer PRIMARY KEY,
            created_at timestamp with time zone NOT NULL DEFAULT now(),
            name text NOT NULL
          )`
          return yield* run
        })
      ),
    retryWhile: () => false,
    retry: Schedule.stop,
    appendRows: PgCopy.appendRows,
    saveIfHead: saveIfHead(sql)
  })
})
