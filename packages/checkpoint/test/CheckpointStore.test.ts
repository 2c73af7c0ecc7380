// The stores (memory, SQLite, and a real PostgreSQL server): a checkpoint reads back exactly as
// built; transcripts are append-only and stored once; a save writes only the messages the store
// does not hold yet; an empty transcript and a save behind the stored transcript are refused with
// the latest checkpoint unchanged; the schemas are migrated and refuse rewrites; bad input gets
// typed errors.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Checkpoint, CheckpointError, CheckpointStore, TokenEstimator, Transcript } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Array as Arr, Context, Effect, Either, Layer, Option, Order, Redacted, type Scope } from "effect"
import * as fc from "effect/FastCheck"
import { arbTranscript, batchTranscript } from "./fixtures/generate.js"
import { freshLocation, type StoreKind, storeKinds, tempDir } from "./fixtures/stores.js"

const transcriptOf = (seed: number, prefix = "") =>
  batchTranscript({
    seed,
    prefix,
    exchanges: 3,
    userWords: 6000,
    historyResultWords: 500,
    batchResultWords: [25000, 300, 18000]
  })

const buildWith = (transcript: unknown, options: Checkpoint.BuildOptions = {}) =>
  Checkpoint.build(transcript, options).pipe(Effect.provide(Layer.merge(Budgets.layer, TokenEstimator.layer)))

/** The same laws for both stores. */
const storeLaws = (
  makeLayer: Effect.Effect<Layer.Layer<CheckpointStore.CheckpointStore, unknown>, never, Scope.Scope>
) => {
  const withStore = <A, E>(f: (store: CheckpointStore.CheckpointStoreValue) => Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const layer = yield* makeLayer
      return yield* Effect.flatMap(CheckpointStore.CheckpointStore, f).pipe(Effect.provide(layer))
    })

  it.scoped("a saved checkpoint reads back exactly as built, with its transcript", () =>
    withStore((store) =>
      Effect.gen(function* () {
        const transcript = transcriptOf(1)
        const checkpoint = yield* buildWith(transcript, { summary: "what happened so far" })
        const saved = yield* store.save("session-1", transcript, checkpoint)
        const latest = yield* store.latest("session-1")
        assert.isTrue(Option.isSome(latest))
        assert.deepStrictEqual(Option.getOrThrow(latest), saved)
        assert.deepStrictEqual(Option.getOrThrow(latest).checkpoint, checkpoint)
        assert.strictEqual(JSON.stringify(Option.getOrThrow(latest).checkpoint), JSON.stringify(checkpoint))
        assert.deepStrictEqual(yield* store.get(saved.checkpointId), latest)
        assert.deepStrictEqual(yield* store.transcript("session-1"), transcript)
        assert.deepStrictEqual(yield* store.latest("other"), Option.none())
        assert.deepStrictEqual(yield* store.transcript("other"), { messages: [] })
      })
    )
  )

  it.scoped("transcripts are append-only: later saves extend them, a rewrite is a CheckpointConflict", () =>
    withStore((store) =>
      Effect.gen(function* () {
        const full = transcriptOf(2)
        const first: Transcript.Transcript = { messages: full.messages.slice(0, 5) }
        const one = yield* store.save("s", first, yield* buildWith(first))
        const two = yield* store.save("s", full, yield* buildWith(full))
        assert.isAbove(two.checkpointId, one.checkpointId)
        assert.deepStrictEqual(yield* store.list("s"), [one.checkpointId, two.checkpointId])
        assert.deepStrictEqual(yield* store.transcript("s"), full)
        // the older checkpoint still reads back as it was
        assert.deepStrictEqual(Option.getOrThrow(yield* store.get(one.checkpointId)), one)

        const rewritten: Transcript.Transcript = {
          messages: full.messages.map((m, k) => (k === 3 && m.role === "user" ? { ...m, text: "edited" } : m))
        }
        const conflict = yield* Effect.flip(store.save("s", rewritten, yield* buildWith(rewritten)))
        assert.instanceOf(conflict, CheckpointError.CheckpointConflict)
        assert.strictEqual((conflict as { code: string }).code, "CHECKPOINT_TRANSCRIPT_CONFLICT")
        assert.deepStrictEqual(yield* store.transcript("s"), full)
        assert.deepStrictEqual(yield* store.list("s"), [one.checkpointId, two.checkpointId])
      })
    )
  )

  it.scoped("a transcript of more rows than one write batch holds reads back whole and in order", () =>
    withStore((store) =>
      Effect.gen(function* () {
        // 1,201 messages: three batches of at most 500 rows (PostgreSQL: three COPYs)
        const messages: Array<Transcript.Message> = Array.from({ length: 1_201 }, (_, k) =>
          k % 2 === 0
            ? {
                role: "user",
                id: `u${k}`,
                text: `question ${k}: what does line ${k} do?\n\ttabs, "quotes", \\ é 😀`
              }
            : { role: "assistant", id: `a${k}`, text: `answer ${k}`, toolCalls: [] }
        )
        const transcript: Transcript.Transcript = { messages }
        const saved = yield* store.save("many", transcript, yield* buildWith(transcript))
        assert.deepStrictEqual(yield* store.transcript("many"), transcript)
        assert.deepStrictEqual(Option.getOrThrow(yield* store.latest("many")), saved)
        const grown: Transcript.Transcript = {
          messages: [...messages, { role: "user", id: "last", text: "and one more" }]
        }
        yield* store.save("many", grown, yield* buildWith(grown))
        assert.deepStrictEqual(yield* store.transcript("many"), grown)
      })
    )
  )

  it.scoped("bad input: session ids, a checkpoint of another transcript, a non-transcript", () =>
    withStore((store) =>
      Effect.gen(function* () {
        const transcript = transcriptOf(3)
        const checkpoint = yield* buildWith(transcript)
        for (const bad of ["", ".", "..", "a/b", "x".repeat(129)]) {
          const error = yield* Effect.flip(store.save(bad, transcript, checkpoint))
          assert.strictEqual(error instanceof CheckpointError.CheckpointInvalid && error.reason, "session-id")
          assert.instanceOf(yield* Effect.flip(store.latest(bad)), CheckpointError.CheckpointInvalid)
        }
        const other = transcriptOf(4, "o-")
        const mismatch = yield* Effect.flip(store.save("s", other, checkpoint))
        assert.strictEqual(
          mismatch instanceof CheckpointError.CheckpointInvalid && mismatch.reason,
          "mismatch"
        )
        const notTranscript = yield* Effect.flip(store.save("s", 42, checkpoint))
        assert.instanceOf(notTranscript, CheckpointError.CheckpointInvalid)
        assert.deepStrictEqual(yield* store.list("s"), [])
      })
    )
  )

  it.scoped(
    "texts a text column cannot carry (NUL, lone surrogates) and any other text round-trip exactly",
    () =>
      withStore((store) =>
        Effect.gen(function* () {
          const texts = [
            "nul \u0000 inside",
            "lone \ud800 high",
            "lone \udc00 low",
            "pair \ud83d\ude00 emoji",
            "replacement \ufffd char",
            "\u4e2d\u6587 and \u00e9",
            ""
          ]
          const transcript: Transcript.Transcript = {
            messages: texts.map((text, k) => ({ role: "user" as const, id: `t${k}`, text }))
          }
          const saved = yield* store.save("texts", transcript, yield* buildWith(transcript))
          assert.deepStrictEqual(yield* store.transcript("texts"), transcript)
          assert.deepStrictEqual(yield* store.latest("texts"), Option.some(saved))
          // an edit of one of them is still caught
          const edited: Transcript.Transcript = {
            messages: transcript.messages.map((m, k) => (k === 1 ? { ...m, text: "lone \ud801 high" } : m))
          }
          const conflict = yield* Effect.flip(store.save("texts", edited, yield* buildWith(edited)))
          assert.strictEqual(conflict instanceof CheckpointError.CheckpointConflict && conflict.position, 1)
        })
      )
  )

  it.scoped(
    "an empty transcript ([], { messages: [] }, no user message) is refused; the latest checkpoint stays",
    () =>
      withStore((store) =>
        Effect.gen(function* () {
          const transcript = transcriptOf(6)
          const saved = yield* store.save("s", transcript, yield* buildWith(transcript))
          const noUser = {
            messages: [{ role: "assistant", id: "a", text: "hello", toolCalls: [] }]
          }
          for (const empty of [[], { messages: [] }, noUser]) {
            // `[]` is a provider shape (an empty message list): decoded first, then refused the same way
            const built = yield* Effect.flip(Effect.flatMap(Transcript.fromAny(empty), (t) => buildWith(t)))
            assert.strictEqual(built instanceof CheckpointError.CheckpointInvalid && built.reason, "empty")
            // a checkpoint of a real transcript saved with the empty one: refused before anything is written
            const error = yield* Effect.flip(store.save("s", empty, saved.checkpoint))
            assert.strictEqual(error instanceof CheckpointError.CheckpointInvalid && error.reason, "empty")
            assert.strictEqual(error.code, "CHECKPOINT_INVALID")
          }
          assert.deepStrictEqual(yield* store.latest("s"), Option.some(saved))
          assert.deepStrictEqual(yield* store.list("s"), [saved.checkpointId])
          assert.deepStrictEqual(yield* store.transcript("s"), transcript)
        })
      )
  )

  it.scoped(
    "a save behind the stored transcript is a CheckpointConflict (behind); the latest never goes back",
    () =>
      withStore((store) =>
        Effect.gen(function* () {
          const full = transcriptOf(7)
          const shorter: Transcript.Transcript = { messages: full.messages.slice(0, 6) }
          const longer = yield* store.save("s", full, yield* buildWith(full))
          const error = yield* Effect.flip(store.save("s", shorter, yield* buildWith(shorter)))
          assert.instanceOf(error, CheckpointError.CheckpointConflict)
          assert.strictEqual((error as CheckpointError.CheckpointConflict).kind, "behind")
          assert.strictEqual((error as CheckpointError.CheckpointConflict).position, 6)
          assert.deepStrictEqual(yield* store.latest("s"), Option.some(longer))
          // the same transcript again is no conflict: a new checkpoint, the latest
          const again = yield* store.save("s", full, yield* buildWith(full, { summary: "again" }))
          assert.deepStrictEqual(yield* store.latest("s"), Option.some(again))
        })
      )
  )

  it.scoped(
    "law: saving a transcript in growing prefixes stores exactly it; editing a saved message is a rewrite conflict",
    () =>
      withStore((store) =>
        Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              arbTranscript,
              fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
              fc.nat(),
              async (transcript, cuts, edit) => {
                const session = `law-${++lawRuns}`
                const n = transcript.messages.length
                const ends = Arr.sort([...new Set([...cuts.map((cut) => 1 + (cut % n)), n])], Order.number)
                for (const end of ends) {
                  const part: Transcript.Transcript = { messages: transcript.messages.slice(0, end) }
                  const built = await Effect.runPromise(Effect.either(buildWith(part)))
                  // a prefix without a user message or with a too small batch is refused before the store
                  if (Either.isLeft(built)) continue
                  await Effect.runPromise(store.save(session, part, built.right))
                }
                assert.deepStrictEqual(await Effect.runPromise(store.transcript(session)), transcript)
                const at = edit % n
                const edited: Transcript.Transcript = {
                  messages: transcript.messages.map((m, k) =>
                    k === at ? { ...m, text: `${m.text} (edited)` } : m
                  )
                }
                const built = await Effect.runPromise(Effect.either(buildWith(edited)))
                if (Either.isLeft(built)) return
                const conflict = await Effect.runPromise(
                  Effect.flip(store.save(session, edited, built.right))
                )
                assert.instanceOf(conflict, CheckpointError.CheckpointConflict)
                assert.strictEqual((conflict as CheckpointError.CheckpointConflict).kind, "rewrite")
                assert.strictEqual((conflict as CheckpointError.CheckpointConflict).position, at)
              }
            ),
            { numRuns: 25 }
          )
        )
      ),
    60_000
  )
}

let lawRuns = 0

const layerOf = (kind: StoreKind, location: string) =>
  kind === "postgres"
    ? CheckpointStore.layerPostgres({ url: location })
    : CheckpointStore.layerSqlite({ filename: location })

describe("CheckpointStore.layerMemory", () => {
  storeLaws(Effect.succeed(CheckpointStore.layerMemory))
})
for (const kind of storeKinds) {
  describe(`CheckpointStore (${kind})`, () => {
    storeLaws(Effect.map(freshLocation(kind), (location) => layerOf(kind, location)))

    it.scoped("a second host on the same store checks what the first stored by prefix digest", () =>
      Effect.gen(function* () {
        const location = yield* freshLocation(kind)
        const full = transcriptOf(8)
        const first: Transcript.Transcript = { messages: full.messages.slice(0, 7) }
        // two layers, two stores that share nothing but the database: two hosts
        const hostA = yield* Layer.build(layerOf(kind, location))
        const hostB = yield* Layer.build(layerOf(kind, location))
        const a = Context.get(hostA, CheckpointStore.CheckpointStore)
        const b = Context.get(hostB, CheckpointStore.CheckpointStore)
        yield* a.save("s", first, yield* buildWith(first))
        // B never saw the session: a rewrite of a stored message is caught by the prefix digest
        const rewritten: Transcript.Transcript = {
          messages: full.messages.map((m, k) => (k === 2 ? { ...m, text: "edited" } : m))
        }
        const conflict = yield* Effect.flip(b.save("s", rewritten, yield* buildWith(rewritten)))
        assert.instanceOf(conflict, CheckpointError.CheckpointConflict)
        assert.strictEqual((conflict as CheckpointError.CheckpointConflict).position, 2)
        // B appends; A, which remembers the first save, checks B's messages and appends after them
        const second: Transcript.Transcript = { messages: full.messages.slice(0, 10) }
        yield* b.save("s", second, yield* buildWith(second))
        const last = yield* a.save("s", full, yield* buildWith(full))
        assert.deepStrictEqual(yield* b.transcript("s"), full)
        assert.deepStrictEqual(yield* b.latest("s"), Option.some(last))
        // A remembers a transcript B extended differently: a conflict, not a silent fork
        const forked: Transcript.Transcript = {
          messages: [...full.messages, { role: "user", id: "fork-a", text: "A's turn" }]
        }
        const other: Transcript.Transcript = {
          messages: [...full.messages, { role: "user", id: "fork-b", text: "B's turn" }]
        }
        yield* b.save("s", other, yield* buildWith(other))
        const lost = yield* Effect.flip(a.save("s", forked, yield* buildWith(forked)))
        assert.instanceOf(lost, CheckpointError.CheckpointConflict)
        assert.strictEqual((lost as CheckpointError.CheckpointConflict).kind, "rewrite")
        assert.strictEqual((lost as CheckpointError.CheckpointConflict).position, full.messages.length)
        assert.deepStrictEqual(yield* a.transcript("s"), other)
      })
    )
  })
}

const clientOf = (kind: StoreKind, location: string): Layer.Layer<SqlClient.SqlClient, unknown> =>
  kind === "postgres"
    ? PgClient.layer({ url: Redacted.make(location), maxConnections: 1 })
    : SqliteClient.layer({ filename: location })

const expectedMigrations: Record<StoreKind, Array<[number, string]>> = {
  sqlite: [
    [1, "create_tables"],
    [2, "session_heads"]
  ],
  postgres: [
    [1, "create_tables"],
    [2, "inline_rows"]
  ]
}

for (const kind of storeKinds) {
  describe(`CheckpointStore (${kind}) schema`, () => {
    it.scoped(
      "migrated, messages stored once, a save after one more message writes one row, checkpoints store only what they changed, rewrites refused",
      () =>
        Effect.gen(function* () {
          const location = yield* freshLocation(kind)
          const transcript = transcriptOf(5)
          const checkpoint = yield* buildWith(transcript, { summary: "summary" })
          const longer: Transcript.Transcript = {
            messages: [...transcript.messages, { role: "user", id: "one-more", text: "One more thing." }]
          }
          yield* Effect.gen(function* () {
            const store = yield* CheckpointStore.CheckpointStore
            yield* store.save("s", transcript, checkpoint)
            yield* store.save("s", transcript, checkpoint)
            yield* store.save("s", longer, yield* buildWith(longer))
          }).pipe(Effect.provide(layerOf(kind, location)))

          yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            const migrations = yield* sql<{
              migration_id: number
              name: string
            }>`SELECT migration_id, name FROM checkpoint_migrations ORDER BY migration_id`
            assert.deepStrictEqual(
              migrations.map((m) => [m.migration_id, m.name]),
              expectedMigrations[kind]
            )
            // how a new store lays out its rows: SQLite in 16 KiB pages, PostgreSQL rows inline up to a page
            if (kind === "sqlite") {
              const [pageSize] = yield* sql<{ page_size: number }>`PRAGMA page_size`
              assert.strictEqual(pageSize?.page_size, 16_384)
            } else {
              const [table] = yield* sql<{
                reloptions: ReadonlyArray<string> | null
              }>`SELECT reloptions FROM pg_class WHERE relname = 'transcript_messages'`
              assert.deepStrictEqual(table?.reloptions, ["toast_tuple_target=8160"])
            }
            if (kind === "sqlite") {
              const [mode] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
              assert.strictEqual(mode!.journal_mode, "wal")
            }
            // three checkpoints, one copy of the transcript; the head names its last prefix digest
            const rows = yield* sql<{
              seq: number
              prefix: string
            }>`SELECT seq, prefix FROM transcript_messages ORDER BY seq`
            assert.strictEqual(rows.length, longer.messages.length)
            assert.strictEqual(new Set(rows.map((row) => row.prefix)).size, rows.length)
            const [head] = yield* sql<{ message_count: number; prefix: string }>`
              SELECT message_count, prefix FROM checkpoint_sessions WHERE session_id = 's'`
            assert.strictEqual(Number(head!.message_count), longer.messages.length)
            assert.strictEqual(head!.prefix, rows.at(-1)!.prefix)
            const entries = yield* sql<{ origin: string; body: string | null; message_id: string | null }>`
              SELECT origin, body, message_id FROM checkpoint_entries
              WHERE checkpoint_id = (SELECT min(checkpoint_id) FROM checkpoints) ORDER BY position`
            for (const entry of entries) {
              const changed = ["cut", "result-cut", "summary"].includes(entry.origin)
              assert.strictEqual(entry.body !== null, changed, `${entry.origin} ${entry.message_id}`)
            }
            assert.isTrue(entries.some((entry) => entry.origin === "result-cut"))
            const refused = yield* Effect.either(
              sql`UPDATE transcript_messages SET body = '{}' WHERE seq = 0`
            )
            assert.isTrue(Either.isLeft(refused))
            if (kind === "sqlite") {
              const [integrity] = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
              assert.strictEqual(integrity!.integrity_check, "ok")
            }
          }).pipe(Effect.provide(clientOf(kind, location)))
        })
    )
  })
}

describe("CheckpointStore.layerPostgres schema", () => {
  it.scoped(
    "a URL with options=-csearch_path keeps the tables in a schema of their own (as the README shows)",
    () =>
      Effect.gen(function* () {
        const location = yield* freshLocation("postgres")
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE SCHEMA toolcap`).pipe(
          Effect.provide(clientOf("postgres", location))
        )
        const url = `${location}?options=-csearch_path%3Dtoolcap`
        const transcript = transcriptOf(3)
        const saved = yield* Effect.flatMap(CheckpointStore.CheckpointStore, (store) =>
          Effect.flatMap(buildWith(transcript), (checkpoint) => store.save("s", transcript, checkpoint))
        ).pipe(Effect.provide(layerOf("postgres", url)))
        const tables = yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ table_schema: string; table_name: string }>`
          SELECT table_schema, table_name FROM information_schema.tables
          WHERE table_name IN ('transcript_messages', 'checkpoints') ORDER BY table_name`
        ).pipe(Effect.provide(clientOf("postgres", location)))
        assert.deepStrictEqual(
          tables.map((t) => [t.table_schema, t.table_name]),
          [
            ["toolcap", "checkpoints"],
            ["toolcap", "transcript_messages"]
          ]
        )
        const latest = yield* Effect.flatMap(CheckpointStore.CheckpointStore, (store) =>
          store.latest("s")
        ).pipe(Effect.provide(layerOf("postgres", url)))
        assert.deepStrictEqual(latest, Option.some(saved))
      })
  )
})

describe("CheckpointStore.layerSqlite schema", () => {
  it.scoped(
    "a version 1 file is migrated: prefix digests backfilled, later saves append and catch rewrites",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = path.join(dir, "v1.sqlite")
        const transcript = transcriptOf(9)
        const first: Transcript.Transcript = { messages: transcript.messages.slice(0, 8) }
        // a store as version 1 wrote it: messages with their digests, no prefix digests, no heads
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* Migrator.make({})({
            loader: Migrator.fromRecord({
              "1_create_tables": CheckpointStore.migrations["1_create_tables"]!
            }),
            table: "checkpoint_migrations"
          })
          for (const [seq, message] of first.messages.entries()) {
            const body = JSON.stringify(message)
            yield* sql`INSERT INTO transcript_messages ${sql.insert({
              session_id: "old",
              seq,
              message_id: message.id,
              role: message.role,
              body,
              digest: createHash("sha256").update(body).digest("base64url")
            })}`
          }
        }).pipe(Effect.provide(SqliteClient.layer({ filename })))

        yield* Effect.gen(function* () {
          const store = yield* CheckpointStore.CheckpointStore
          assert.deepStrictEqual(yield* store.transcript("old"), first)
          const rewritten: Transcript.Transcript = {
            messages: transcript.messages.map((m, k) => (k === 5 ? { ...m, text: "edited" } : m))
          }
          const conflict = yield* Effect.flip(store.save("old", rewritten, yield* buildWith(rewritten)))
          assert.strictEqual(conflict instanceof CheckpointError.CheckpointConflict && conflict.position, 5)
          yield* store.save("old", transcript, yield* buildWith(transcript))
          assert.deepStrictEqual(yield* store.transcript("old"), transcript)
        }).pipe(Effect.provide(CheckpointStore.layerSqlite({ filename })))
      })
  )

  it.scoped(
    "a new file's first save goes through the rollback journal, then the file is in WAL; another store reads and extends it",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = path.join(dir, "new.sqlite")
        const transcript = transcriptOf(10)
        const first: Transcript.Transcript = { messages: transcript.messages.slice(0, 6) }
        const a = Context.get(
          yield* Layer.build(CheckpointStore.layerSqlite({ filename })),
          CheckpointStore.CheckpointStore
        )
        // a connection that leaves the journal mode as it finds it
        const journalMode = Effect.map(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ journal_mode: string }>`PRAGMA journal_mode`),
          ([row]) => row?.journal_mode
        ).pipe(Effect.provide(SqliteClient.layer({ filename, disableWAL: true })))
        assert.strictEqual(yield* journalMode, "delete")
        const saved = yield* a.save("s", first, yield* buildWith(first))
        assert.strictEqual(yield* journalMode, "wal")
        const b = Context.get(
          yield* Layer.build(CheckpointStore.layerSqlite({ filename })),
          CheckpointStore.CheckpointStore
        )
        assert.deepStrictEqual(yield* b.latest("s"), Option.some(saved))
        const last = yield* b.save("s", transcript, yield* buildWith(transcript))
        assert.deepStrictEqual(yield* a.transcript("s"), transcript)
        assert.deepStrictEqual(yield* a.latest("s"), Option.some(last))
      })
  )

  it.scoped("a file that is not a database fails the layer with CheckpointStoreFailed, no crash", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = path.join(dir, "garbage.sqlite")
      fs.writeFileSync(filename, "this is not a database ".repeat(200))
      const error = yield* Effect.flip(
        Effect.provide(CheckpointStore.CheckpointStore, CheckpointStore.layerSqlite({ filename }))
      )
      assert.instanceOf(error, CheckpointError.CheckpointStoreFailed)
      assert.strictEqual(error.code, "CHECKPOINT_STORE_FAILED")
      const blocked = path.join(dir, "file-not-dir")
      fs.writeFileSync(blocked, "")
      const noDir = yield* Effect.flip(
        Effect.provide(
          CheckpointStore.CheckpointStore,
          CheckpointStore.layerSqlite({ filename: path.join(blocked, "x.sqlite") })
        )
      )
      assert.instanceOf(noDir, CheckpointError.CheckpointStoreFailed)
    })
  )
})
