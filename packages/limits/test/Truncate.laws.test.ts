// The laws of the cuts (rules M1, M4, M6, M8, M9: marker iff cut, never empty, valid UTF-8),
// each checked against the naive oracle of ./oracle.ts on inputs biased towards truncation.
import { assert, describe, it } from "@effect/vitest"
import { Truncate } from "@toolcap/limits"
import { Chunk, Effect, FastCheck as fc, Stream } from "effect"
import {
  anyBudget,
  byteChunks,
  bytes,
  chunksOf,
  decode,
  encode,
  full,
  hex,
  isSafeCut,
  observe,
  oracle,
  chunkSizes,
  text
} from "./oracle.js"

const runs = { fastCheck: { numRuns: 1000 } }

/** True when the string holds no unpaired surrogate, i.e. is valid Unicode (and encodable as UTF-8). */
const isWellFormed = (s: string): boolean => !/\p{Surrogate}/u.test(s)

const startsWith = (whole: Uint8Array, part: Uint8Array): boolean =>
  part.length <= whole.length && hex(whole.subarray(0, part.length)) === hex(part)
const endsWith = (whole: Uint8Array, part: Uint8Array): boolean =>
  part.length <= whole.length && hex(whole.subarray(whole.length - part.length)) === hex(part)

describe("Truncate laws", () => {
  it.prop(
    "cutString: kept bytes <= maxBytes, kept lines <= maxLines (marker excluded)",
    { input: text, budget: anyBudget },
    ({ budget, input }) => {
      const cut = Truncate.cutString(input, budget)
      assert.isAtMost(cut.keptBytes, budget.maxBytes)
      assert.isAtMost(cut.bytes.length, budget.maxBytes)
      assert.isAtMost(encode(cut.text).length, budget.maxBytes)
      assert.isAtMost(cut.keptLines, budget.maxLines)
    },
    runs
  )

  it.prop(
    "cutString: output is valid UTF-8 and its bytes decode to its text",
    { input: text, budget: anyBudget },
    ({ budget, input }) => {
      const cut = Truncate.cutString(input, budget)
      assert.isTrue(isWellFormed(cut.text))
      assert.strictEqual(hex(encode(cut.text)), hex(cut.bytes))
      assert.isTrue(isWellFormed(Truncate.render(cut, "/tmp/spill.log")))
    },
    runs
  )

  it.prop(
    "cutString: the kept part is a true prefix (head) or suffix (tail) at a code-point boundary",
    { input: text, budget: anyBudget },
    ({ budget, input }) => {
      const cut = Truncate.cutString(input, budget)
      const whole = encode(input)
      if (budget.keep === "head") {
        assert.isTrue(input.startsWith(cut.text), "text is a prefix")
        assert.isTrue(startsWith(whole, cut.bytes), "bytes are a prefix")
        assert.isTrue(isSafeCut(whole, cut.bytes.length))
      } else {
        assert.isTrue(input.endsWith(cut.text), "text is a suffix")
        assert.isTrue(endsWith(whole, cut.bytes), "bytes are a suffix")
        assert.isTrue(isSafeCut(whole, whole.length - cut.bytes.length))
      }
      // rules M4: never an empty payload for a non-empty input
      if (input.length > 0) assert.isAbove(cut.bytes.length, 0)
    },
    runs
  )

  it.prop(
    "cutBytes: equals the naive line-accumulating oracle, counts included",
    { input: bytes, budget: anyBudget },
    ({ budget, input }) => {
      assert.deepStrictEqual(observe(Truncate.cutBytes(input, budget)), oracle(input, budget))
    },
    runs
  )

  it.prop(
    "cutString: equals the naive oracle on valid text, counts included",
    { input: text, budget: anyBudget },
    ({ budget, input }) => {
      assert.deepStrictEqual(observe(Truncate.cutString(input, budget)), oracle(encode(input), budget))
    },
    runs
  )

  it.prop(
    "marker present iff truncated: appended after a head, prepended before a tail",
    { input: bytes, budget: anyBudget, spilled: fc.boolean() },
    ({ budget, input, spilled }) => {
      const cut = Truncate.cutBytes(input, budget)
      const spillPath = spilled ? "/data/scratch/s1/tool-output/bash-stdout-1-0.log" : undefined
      const rendered = Truncate.render(cut, spillPath)
      assert.strictEqual(cut.truncated, cut.keptBytes < input.length)
      if (!cut.truncated) {
        assert.strictEqual(rendered, cut.text)
        assert.strictEqual(cut.text, decode(input))
        return
      }
      const marker = Truncate.marker(cut, spillPath)
      assert.match(marker, /^\[truncated: .*\]$/)
      assert.strictEqual(marker.includes("Full output saved to"), spilled)
      if (budget.keep === "head") assert.isTrue(rendered.startsWith(cut.text) && rendered.endsWith(marker))
      else assert.isTrue(rendered.startsWith(marker) && rendered.endsWith(cut.text))
    },
    runs
  )

  it.prop(
    "invalid UTF-8: a cut never lands inside a decoder unit, and decodes with U+FFFD",
    { input: bytes, budget: anyBudget },
    ({ budget, input }) => {
      const cut = Truncate.cutBytes(input, budget)
      const at = budget.keep === "head" ? cut.bytes.length : input.length - cut.bytes.length
      assert.isTrue(isSafeCut(input, at), `cut at ${at} splits a sequence of ${hex(input)}`)
      assert.isTrue(isWellFormed(cut.text))
      assert.strictEqual(cut.text, decode(cut.bytes))
      // the decoded kept part is exactly the matching end of the decoded whole
      const whole = decode(input)
      assert.isTrue(budget.keep === "head" ? whole.startsWith(cut.text) : whole.endsWith(cut.text))
      // budget counts input bytes kept, not re-encoded ones
      assert.isAtMost(cut.keptBytes, budget.maxBytes)
    },
    runs
  )

  it.prop(
    "streaming == one-shot for every chunking (random chunk sizes, empty chunks)",
    { input: bytes, budget: anyBudget, sizes: chunkSizes },
    ({ budget, input, sizes }) => {
      const stream = Truncate.stream(budget)
      for (const chunk of chunksOf(input, sizes)) stream.push(chunk)
      assert.strictEqual(stream.bytesSeen(), input.length)
      assert.deepStrictEqual(full(stream.result()), full(Truncate.cutBytes(input, budget)))
    },
    runs
  )

  it.prop(
    "streaming == one-shot when fed 1-byte chunks (every split inside every sequence)",
    { input: bytes, budget: anyBudget },
    ({ budget, input }) => {
      const stream = Truncate.stream(budget)
      for (const chunk of byteChunks(input)) stream.push(chunk)
      assert.deepStrictEqual(full(stream.result()), full(Truncate.cutBytes(input, budget)))
    },
    runs
  )

  it.prop(
    "streaming: a chunk buffer reused by the caller after push does not change the result",
    { input: bytes, budget: anyBudget, sizes: chunkSizes },
    ({ budget, input, sizes }) => {
      const stream = Truncate.stream(budget)
      for (const chunk of chunksOf(input, sizes)) {
        stream.push(chunk)
        chunk.fill(0x21)
      }
      assert.deepStrictEqual(full(stream.result()), full(Truncate.cutBytes(input, budget)))
    },
    runs
  )

  it.prop(
    "streaming: result() may be asked mid-stream and equals the one-shot cut of what was fed",
    { input: bytes, budget: anyBudget, sizes: chunkSizes },
    ({ budget, input, sizes }) => {
      const stream = Truncate.stream(budget)
      let fed = 0
      for (const chunk of chunksOf(input, sizes)) {
        stream.push(chunk)
        fed += chunk.length
        assert.deepStrictEqual(full(stream.result()), full(Truncate.cutBytes(input.subarray(0, fed), budget)))
      }
    },
    runs
  )

  it.prop(
    "narrow(stream(capture budget), result budget) == cutBytes(input, result budget)",
    {
      input: bytes,
      sizes: chunkSizes,
      keep: fc.constantFrom("head" as const, "tail" as const),
      result: fc.record({
        maxBytes: fc.integer({ min: 4, max: 40 }),
        maxLines: fc.integer({ min: 1, max: 6 })
      }),
      extra: fc.record({ bytes: fc.nat({ max: 60 }), lines: fc.nat({ max: 8 }) })
    },
    ({ extra, input, keep, sizes, result }) => {
      const capture = {
        keep,
        maxBytes: result.maxBytes + extra.bytes,
        maxLines: result.maxLines + extra.lines
      }
      const stream = Truncate.stream(capture)
      for (const chunk of chunksOf(input, sizes)) stream.push(chunk)
      const narrowed = Truncate.narrow(stream.result(), result)
      assert.deepStrictEqual(full(narrowed), full(Truncate.cutBytes(input, { keep, ...result })))
    },
    runs
  )

  // Budgets above the 64 KiB a stream starts with exercise buffer growth and the ring's wrap-around.
  it.prop(
    "streaming == one-shot with budgets above the initial stream buffer",
    {
      unit: fc.constantFrom("line of text\n", "é€😀\n", "x", "a\r\n€", "0123456789abcdef€\n"),
      repeat: fc.integer({ min: 1, max: 25_000 }),
      keep: fc.constantFrom("head" as const, "tail" as const),
      maxBytes: fc.integer({ min: 60_000, max: 200_000 }),
      maxLines: fc.integer({ min: 1, max: 20_000 }),
      chunkSize: fc.integer({ min: 1_000, max: 150_000 })
    },
    ({ chunkSize, keep, maxBytes, maxLines, repeat, unit }) => {
      const input = encode(unit.repeat(repeat))
      const budget = { keep, maxBytes, maxLines }
      const stream = Truncate.stream(budget)
      for (let at = 0; at < input.length; at += chunkSize) stream.push(input.subarray(at, at + chunkSize))
      const streamed = stream.result()
      const oneShot = Truncate.cutBytes(input, budget)
      assert.strictEqual(hex(streamed.bytes), hex(oneShot.bytes))
      assert.deepStrictEqual(
        { ...streamed, bytes: null, text: null },
        { ...oneShot, bytes: null, text: null }
      )
    },
    runs
  )

  it.effect("sink == one-shot over an effect Stream of chunks", () =>
    Effect.gen(function* () {
      const samples = fc.sample(fc.tuple(bytes, anyBudget, chunkSizes), { numRuns: 200, seed: 42 })
      for (const [input, budget, sizes] of samples) {
        const cut = yield* Stream.fromChunk(Chunk.fromIterable(chunksOf(input, sizes))).pipe(
          Stream.run(Truncate.sink(budget))
        )
        assert.deepStrictEqual(full(cut), full(Truncate.cutBytes(input, budget)))
      }
    })
  )

  it.prop(
    "head-and-tail: two disjoint ends within their shares, the marker between, iff the input does not fit",
    {
      input: bytes,
      budget: anyBudget,
      share: fc.double({ min: 0.05, max: 0.95, noNaN: true })
    },
    ({ input, budget, share }) => {
      const limit = { maxBytes: budget.maxBytes * 2, maxLines: budget.maxLines * 2 }
      const parts = Truncate.splitBudget(limit, share)
      if (parts.head === undefined || parts.tail === undefined) return
      if (
        parts.head.maxBytes < 4 ||
        parts.tail.maxBytes < 4 ||
        parts.head.maxLines < 1 ||
        parts.tail.maxLines < 1
      )
        return
      const whole = Truncate.cutBytes(input, { keep: "head", ...limit })
      const head = Truncate.cutBytes(input, { keep: "head", ...parts.head })
      const tail = Truncate.cutBytes(input, { keep: "tail", ...parts.tail })
      assert.strictEqual(parts.head.maxBytes + parts.tail.maxBytes, limit.maxBytes)
      assert.strictEqual(parts.head.maxLines + parts.tail.maxLines, limit.maxLines)
      if (!whole.truncated) return
      // the two ends never overlap, so no byte is shown twice
      assert.isBelow(head.keptBytes + tail.keptBytes, input.length)
      assert.isTrue(startsWith(input, head.bytes))
      assert.isTrue(endsWith(input, tail.bytes))
      const rendered = Truncate.renderBoth(head, tail, limit, "/tmp/spill.log")
      const marker = Truncate.markerBoth(head, tail, limit, "/tmp/spill.log")
      assert.isTrue(rendered.startsWith(head.text))
      assert.isTrue(rendered.endsWith(`${marker}\n${tail.text}`))
      assert.include(marker, `of ${whole.totalLines} lines`)
    },
    runs
  )
})
