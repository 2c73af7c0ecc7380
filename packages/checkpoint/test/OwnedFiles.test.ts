// The SQLite store's files are its own: the database, its WAL, shared-memory index and journal are
// never opened through a link (a planted one is refused, its target untouched, nothing made
// outside), and nothing is written before a save passed every check (a refused save leaves no
// file; reads of a store that has no file yet answer empty and make none). Real files, real links.
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Checkpoint, CheckpointError, CheckpointStore, TokenEstimator } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import { Effect, Layer, Option } from "effect"
import * as fc from "effect/FastCheck"
import { tempDir } from "./fixtures/stores.js"
import { plant, plantedKinds, snapshot } from "./fixtures/files.js"

const transcript = { messages: [{ role: "user", id: "u1", text: "keep this" }] }
const buildWith = (input: unknown) =>
  Checkpoint.build(input).pipe(Effect.provide(Layer.merge(Budgets.layer, TokenEstimator.layer)))

const withStore = <A, E>(
  filename: string,
  f: (store: CheckpointStore.CheckpointStoreValue) => Effect.Effect<A, E>
) =>
  Effect.scoped(
    Effect.flatMap(CheckpointStore.CheckpointStore, f).pipe(
      Effect.provide(CheckpointStore.layerSqlite({ filename }))
    )
  )

const companion = fc.constantFrom("", "-wal", "-shm", "-journal")
const planted = fc.constantFrom(...plantedKinds)

describe("the SQLite store opens its own files only", () => {
  it.scoped.prop(
    "a planted link at the database or a companion is refused with CHECKPOINT_STORE_FAILED, its target untouched, nothing made outside",
    [companion, planted, fc.boolean()],
    ([suffix, kind, existing]) =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const data = path.join(dir, "data")
        const outside = path.join(dir, "outside")
        fs.mkdirSync(data)
        fs.mkdirSync(outside)
        const filename = path.join(data, CheckpointStore.defaultFileName)
        const checkpoint = yield* buildWith(transcript)
        // an earlier, real store beside the planted file (or none)
        if (existing) yield* withStore(filename, (store) => store.save("s", transcript, checkpoint))
        const otherStore = path.join(outside, "other.sqlite")
        yield* withStore(otherStore, (store) => store.save("victim", transcript, checkpoint))
        const name = `${filename}${suffix}`
        plant(kind, name, outside, otherStore)
        const before = snapshot(outside)
        const dataBefore = snapshot(data)

        const refused = yield* Effect.flip(
          withStore(filename, (store) => store.save("s", transcript, checkpoint))
        )
        assert.instanceOf(refused, CheckpointError.CheckpointStoreFailed)
        assert.strictEqual(refused.code, "CHECKPOINT_STORE_FAILED")
        assert.include(refused.message, path.basename(name))
        assert.match(refused.message, /symbolic link|hard links/)
        const read = yield* Effect.flip(withStore(filename, (store) => store.latest("s")))
        assert.instanceOf(read, CheckpointError.CheckpointStoreFailed)
        assert.deepStrictEqual(snapshot(outside), before, "nothing outside changed or was made")
        assert.deepStrictEqual(snapshot(data), dataBefore, "nothing written beside the link")
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.scoped(
    "a link planted in place of the WAL is refused at the next open, its target never made; the store itself stays intact",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = path.join(dir, "store.sqlite")
        const checkpoint = yield* buildWith(transcript)
        yield* withStore(filename, (store) => store.save("s", transcript, checkpoint))
        // the WAL of a closed store is gone; a link planted in its place is refused at the next open
        const outsideWal = path.join(dir, "outside-wal")
        fs.symlinkSync(outsideWal, `${filename}-wal`)
        const refused = yield* Effect.flip(withStore(filename, (store) => store.latest("s")))
        assert.include(refused.message, "store.sqlite-wal is a symbolic link")
        assert.isFalse(fs.existsSync(outsideWal))
        fs.rmSync(`${filename}-wal`)
        const latest = yield* withStore(filename, (store) => store.latest("s"))
        assert.isTrue(Option.isSome(latest), "the store itself is intact")
      })
  )
})

const sessionIds = fc.oneof(
  fc.constantFrom("", ".", "..", "../x", "a/b", "x".repeat(129)),
  fc.string({ maxLength: 10 }).filter((s) => !/^[A-Za-z0-9._-]{1,128}$/.test(s) || s === "." || s === "..")
)
const badTranscripts = fc.oneof(
  fc.constantFrom<unknown>([], { messages: [] }, "x", 7, null, [{ role: "bogus", content: "hi" }], {
    messages: [{ role: "tool", id: "t", callId: "nowhere", text: "orphan" }]
  }),
  fc.anything({ maxDepth: 2 })
)

describe("a store that has no file yet writes nothing before a save passes its checks", () => {
  it.scoped.prop(
    "a refused session id, transcript or checkpoint leaves the directory empty; reads answer empty and make nothing",
    [
      fc.oneof(
        sessionIds.map((id) => ({ id, input: transcript as unknown })),
        badTranscripts.map((input) => ({ id: "s", input }))
      )
    ],
    ([{ id, input }]) =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const data = path.join(dir, "data")
        fs.mkdirSync(data)
        const filename = path.join(data, CheckpointStore.defaultFileName)
        // a checkpoint of another transcript: refused as a mismatch when the input itself is fine
        const checkpoint = yield* buildWith({
          messages: [{ role: "user", id: "other", text: "not this one" }]
        })
        const refused = yield* Effect.flip(withStore(filename, (store) => store.save(id, input, checkpoint)))
        assert.oneOf(refused.code, ["CHECKPOINT_INVALID", "CHECKPOINT_TRANSCRIPT_CONFLICT"])
        assert.deepStrictEqual(fs.readdirSync(data), [])
        yield* withStore(filename, (store) =>
          Effect.gen(function* () {
            assert.deepStrictEqual(yield* store.latest("s"), Option.none())
            assert.deepStrictEqual(yield* store.list("s"), [])
            assert.deepStrictEqual(yield* store.transcript("s"), { messages: [] })
            assert.deepStrictEqual(yield* store.get(1), Option.none())
          })
        )
        assert.deepStrictEqual(fs.readdirSync(data), [])
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.scoped(
    "a store in a missing directory creates it with its first save, and another process's file is read once it exists",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const filename = path.join(dir, "new", "deeper", "store.sqlite")
        const checkpoint = yield* buildWith(transcript)
        yield* withStore(filename, (reader) =>
          Effect.gen(function* () {
            assert.deepStrictEqual(yield* reader.latest("s"), Option.none())
            assert.isFalse(fs.existsSync(path.join(dir, "new")))
            // another writer makes the file while this store has none open
            const saved = yield* withStore(filename, (writer) => writer.save("s", transcript, checkpoint))
            assert.deepStrictEqual(yield* reader.latest("s"), Option.some(saved))
          })
        )
      })
  )
})
