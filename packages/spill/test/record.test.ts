// Rules F3 and F4: a spill copy is the whole stream when it fits SPILL_MAX_BYTES, else its head
// and its tail (half each, cut where a head or tail cut of @toolcap/limits cuts) with one line
// between them stating what was left out; the copy is streamed to disk once it outgrows memory.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { Budgets, Marker, SpillCopy, Utf8 } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { readOnlyDir, smallDisk, tempDir } from "./fixtures.js"

const NEWLINE = 0x0a

/** Small budgets so a property run stays fast; the capture decides memory (small) or disk (large). */
const budgetsFor = (spillMaxBytes: number, captureMaxBytes: number) =>
  Budgets.layerWith({
    shellStdoutMaxBytes: 4,
    shellStdoutMaxLines: 1,
    shellStderrMaxBytes: 4,
    shellStderrMaxLines: 1,
    captureMaxBytes,
    captureMaxLines: 2,
    spillMaxBytes
  }).pipe(Layer.orDie)

const scratchWith = (dataDir: string, spillMaxBytes: number, captureMaxBytes: number) =>
  Scratch.make({ dataDir, sessionId: "rec" }).pipe(
    Effect.provide(Layer.merge(NodeFileSystem.layer, budgetsFor(spillMaxBytes, captureMaxBytes)))
  )

const linesOf = (bytes: Uint8Array): number => {
  let newlines = 0
  for (const byte of bytes) if (byte === NEWLINE) newlines++
  return newlines + (bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE ? 1 : 0)
}

/** Streams: lines of text (some multi-byte, some long), sometimes raw bytes that are not UTF-8. */
const stream = FastCheck.array(
  FastCheck.oneof(
    {
      weight: 6,
      arbitrary: FastCheck.string({ unit: "grapheme", maxLength: 40 }).map((line) => Utf8.encode(`${line}\n`))
    },
    {
      weight: 1,
      arbitrary: FastCheck.string({ unit: "binary", minLength: 100, maxLength: 500 }).map(Utf8.encode)
    },
    { weight: 1, arbitrary: FastCheck.uint8Array({ maxLength: 40 }) }
  ),
  { maxLength: 40 }
).map((pieces) => Uint8Array.from(pieces.flatMap((piece) => [...piece])))

const chunked = (bytes: Uint8Array, sizes: ReadonlyArray<number>): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  let at = 0
  for (let i = 0; at < bytes.length; i++) {
    const size = Math.max(1, sizes[i % Math.max(1, sizes.length)] ?? bytes.length)
    out.push(bytes.slice(at, at + size))
    at += size
  }
  return out
}

describe("Scratch.record", () => {
  it.live.prop(
    "the copy is the stream byte for byte when it fits, else its head, the gap line and its tail (memory and disk)",
    [
      stream,
      FastCheck.array(FastCheck.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }),
      FastCheck.constantFrom(160, 255, 400),
      FastCheck.boolean(),
      // half the runs end within a few bytes of the cap, where whole turns into head and tail
      FastCheck.option(FastCheck.integer({ min: -3, max: 3 }), { freq: 2 })
    ],
    ([generated, sizes, spillMaxBytes, onDisk, around]) =>
      Effect.scoped(
        Effect.gen(function* () {
          const bytes =
            around === null
              ? generated
              : Uint8Array.from(
                  { length: spillMaxBytes + around },
                  (_, i) => generated[i % Math.max(1, generated.length)] ?? 0x0a
                )
          const dataDir = yield* tempDir()
          // on disk: memory holds less than the copy, so the copy is written while it streams
          const scratch = yield* scratchWith(dataDir, spillMaxBytes, onDisk ? 64 : 4096)
          const recorder = scratch.record("bash-stdout")
          for (const chunk of chunked(bytes, sizes)) recorder.push(chunk)
          const saved = Option.getOrThrow(yield* recorder.save(linesOf(bytes)))
          const expected = SpillCopy.of(bytes, spillMaxBytes)
          const written = new Uint8Array(fs.readFileSync(saved.path))
          assert.deepStrictEqual(written, expected.bytes)
          assert.isAtMost(written.length, spillMaxBytes)
          assert.strictEqual(saved.complete, expected.complete)
          assert.strictEqual(saved.totalBytes, bytes.length)
          assert.deepStrictEqual(saved.ranges, expected.ranges)
          // the marker's sentence says "Full output saved" exactly when the copy is byte-identical
          const sentence = Marker.nextStep(saved)
          assert.strictEqual(
            sentence.startsWith("Full output saved"),
            written.length === bytes.length && saved.complete
          )
          // nothing but the copy is left in the directory
          assert.deepStrictEqual(fs.readdirSync(path.dirname(saved.path)), [path.basename(saved.path)])
        })
      ),
    { fastCheck: { numRuns: 150 } }
  )

  it.live.prop(
    "reads of any size, small ones gathered into blocks and large ones kept whole, make the same copy",
    [
      FastCheck.array(FastCheck.integer({ min: 1, max: 20_000 }), { minLength: 1, maxLength: 30 }),
      FastCheck.integer({ min: 0, max: 200_000 }),
      FastCheck.boolean()
    ],
    ([sizes, length, onDisk]) =>
      Effect.scoped(
        Effect.gen(function* () {
          const line = Utf8.encode("a line of the stream, with é and \u{1F600}\n")
          const bytes = Uint8Array.from({ length }, (_, i) => line[i % line.length]!)
          const dataDir = yield* tempDir()
          const scratch = yield* scratchWith(dataDir, 64 * 1024, onDisk ? 16 * 1024 : 64 * 1024)
          const recorder = scratch.record("bash-stdout")
          for (const chunk of chunked(bytes, sizes)) recorder.push(chunk)
          const saved = Option.getOrThrow(yield* recorder.save(linesOf(bytes)))
          assert.deepStrictEqual(
            new Uint8Array(fs.readFileSync(saved.path)),
            SpillCopy.of(bytes, 64 * 1024).bytes
          )
        })
      ),
    { fastCheck: { numRuns: 60 } }
  )

  it.scopedLive("a copy too large for memory is on disk before the stream ends, and discard removes it", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const scratch = yield* scratchWith(dataDir, 64 * 1024, 16 * 1024)
      const recorder = scratch.record("bash-stderr")
      const outputDir = path.join(scratch.sessionDir, Scratch.toolOutputDirName)
      // reads of a pipe's size (small ones are gathered into blocks of that size first)
      recorder.push(Utf8.encode("x".repeat(10_000)))
      assert.isFalse(fs.existsSync(outputDir), "within memory nothing is written")
      recorder.push(Utf8.encode("y".repeat(10_000)))
      assert.strictEqual(fs.readdirSync(outputDir).length, 1, "past memory the copy streams to its file")
      recorder.discard()
      assert.deepStrictEqual(fs.readdirSync(outputDir), [])
      assert.isTrue(Option.isNone(yield* recorder.save(1)))
    })
  )

  it.scopedLive("a stream that never needs a copy touches nothing, whatever its size", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const scratch = yield* scratchWith(dataDir, 400, 4096)
      const recorder = scratch.record("bash-stdout")
      for (let i = 0; i < 1000; i++) recorder.push(Utf8.encode(`line ${i}\n`))
      recorder.discard()
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])
    })
  )

  it.scopedLive("a copy that cannot be written answers None, in memory or on disk, and leaves nothing", () =>
    Effect.gen(function* () {
      const ro = yield* readOnlyDir()
      for (const capture of [4096, 64]) {
        const scratch = yield* scratchWith(ro.path, 400, capture)
        const recorder = scratch.record("bash-stdout")
        for (let i = 0; i < 100; i++) recorder.push(Utf8.encode(`line ${i}\n`))
        assert.isTrue(Option.isNone(yield* recorder.save(100)), `${ro.mechanism}, capture ${capture}`)
      }
      assert.isFalse(fs.existsSync(path.join(ro.path, "scratch", "rec", Scratch.toolOutputDirName)))
    })
  )

  it.scopedLive("a disk filling up while the copy streams answers None and leaves no partial file", () =>
    Effect.gen(function* () {
      const dataDir = yield* smallDisk(256 * 1024)
      const scratch = yield* scratchWith(dataDir, 1024 * 1024, 16 * 1024)
      const recorder = scratch.record("bash-stdout")
      const read = Utf8.encode(`${"z".repeat(1023)}\n`.repeat(64))
      for (let i = 0; i < 12; i++) recorder.push(read)
      assert.isTrue(Option.isNone(yield* recorder.save(12 * 64)))
      assert.deepStrictEqual(fs.readdirSync(path.join(scratch.sessionDir, Scratch.toolOutputDirName)), [])
    })
  )

  it.live("the in-memory scratch keeps the same copies", () =>
    Effect.gen(function* () {
      const files = new Map<string, Uint8Array>()
      const scratch = yield* Effect.provide(Scratch.Scratch, Scratch.layerTest({ files, spillMaxBytes: 200 }))
      const bytes = Utf8.encode(Array.from({ length: 60 }, (_, i) => `row ${i}\n`).join(""))
      const recorder = scratch.record("bash-stdout")
      recorder.push(bytes)
      const saved = Option.getOrThrow(yield* recorder.save(60))
      assert.deepStrictEqual(files.get(saved.path), SpillCopy.of(bytes, 200).bytes)
      assert.isFalse(saved.complete)
    })
  )
})
