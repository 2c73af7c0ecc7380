// The stores: a checkpoint reads back exactly as built; transcripts are append-only and stored
// once; the SQLite schema is migrated and refuses rewrites; bad input gets typed errors.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import {
  Checkpoint,
  CheckpointError,
  CheckpointStore,
  TokenEstimator,
  type Transcript
} from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Either, Layer, Option, type Scope } from "effect"
import { batchTranscript } from "./fixtures/generate.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-checkpoint-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

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
}

describe("CheckpointStore.layerMemory", () => {
  storeLaws(Effect.succeed(CheckpointStore.layerMemory))
})
describe("CheckpointStore.layerSqlite", () => {
  storeLaws(
    Effect.map(tempDir, (dir) =>
      CheckpointStore.layerSqlite({ filename: path.join(dir, "nested", "store.sqlite") })
    )
  )
})

describe("CheckpointStore.layerSqlite schema", () => {
  it.scoped(
    "migrated, WAL, messages stored once, checkpoints store only what they changed, rewrites refused",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = path.join(dir, CheckpointStore.defaultFileName)
        const transcript = transcriptOf(5)
        const checkpoint = yield* buildWith(transcript, { summary: "summary" })
        yield* Effect.gen(function* () {
          const store = yield* CheckpointStore.CheckpointStore
          yield* store.save("s", transcript, checkpoint)
          yield* store.save("s", transcript, checkpoint)
        }).pipe(Effect.provide(CheckpointStore.layerDataDir(dir)))

        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const migrations = yield* sql<{
            migration_id: number
            name: string
          }>`SELECT migration_id, name FROM checkpoint_migrations`
          assert.deepStrictEqual(
            migrations.map((m) => [m.migration_id, m.name]),
            [[1, "create_tables"]]
          )
          const [mode] = yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
          assert.strictEqual(mode!.journal_mode, "wal")
          // two checkpoints, one copy of the transcript
          const [count] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM transcript_messages`
          assert.strictEqual(count!.n, transcript.messages.length)
          const entries = yield* sql<{ origin: string; body: string | null; message_id: string | null }>`
          SELECT origin, body, message_id FROM checkpoint_entries WHERE checkpoint_id = 1 ORDER BY position`
          for (const entry of entries) {
            const changed = ["cut", "result-cut", "summary"].includes(entry.origin)
            assert.strictEqual(entry.body !== null, changed, `${entry.origin} ${entry.message_id}`)
          }
          assert.isTrue(entries.some((entry) => entry.origin === "result-cut"))
          const refused = yield* Effect.either(sql`UPDATE transcript_messages SET body = '{}' WHERE seq = 0`)
          assert.isTrue(Either.isLeft(refused))
          const [integrity] = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
          assert.strictEqual(integrity!.integrity_check, "ok")
        }).pipe(Effect.provide(SqliteClient.layer({ filename })))
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
