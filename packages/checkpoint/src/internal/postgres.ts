// The PostgreSQL store: `@effect/sql-pg`, the shared SQL store, a schema of its own. Loaded only
// when a host selects PostgreSQL, so SQLite hosts never load the driver.
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as PgCopy from "./pgCopy.js"
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
    appendRows: PgCopy.appendRows
  })
})
