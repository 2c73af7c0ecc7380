// The one newline counter (src/Newlines.ts), behind a streaming cut's totals, a spill copy's line
// count and Read's scan to an offset: the SIMD count equals a byte-by-byte count on any input, at
// any start, across its 64 KiB slices, in a counter's own memory, and without WebAssembly.
import { afterAll, assert, beforeAll, describe, it, vi } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { Newlines } from "../src/index.js"

const naive = (bytes: Uint8Array, from = 0, to = bytes.length): number => {
  let count = 0
  for (let at = from; at < to; at++) if (bytes[at] === 0x0a) count++
  return count
}

/** Bytes with newlines dense or sparse, long enough to take the SIMD path and span slices. */
const generated = fc
  .record({
    length: fc.oneof(fc.integer({ min: 0, max: 2048 }), fc.integer({ min: 60_000, max: 200_000 })),
    density: fc.constantFrom(0, 0.001, 0.05, 0.5, 1),
    seed: fc.integer()
  })
  .map(({ length, density, seed }) => {
    const bytes = Buffer.alloc(length)
    let state = seed >>> 0
    for (let at = 0; at < length; at++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0
      bytes[at] = state / 2 ** 32 < density ? 0x0a : state & 0xff
    }
    return bytes
  })

/** Any bytes at all, as a plain `Uint8Array` (not a Buffer), some of them past the 512-byte cutover. */
const arbitrary = fc.uint8Array({ maxLength: 3000 })

const input = fc.oneof(generated, arbitrary)

/** Any bytes and a start within them (their end included). */
const bytesFrom = fc
  .record({ bytes: input, start: fc.nat() })
  .map(({ bytes, start }) => ({ bytes, from: start % (bytes.length + 1) }))

describe("Newlines.count", () => {
  it.prop(
    "equals a byte-by-byte count, from any start",
    { input: bytesFrom },
    ({ input: { bytes, from } }) => {
      assert.strictEqual(Newlines.count(bytes, from), naive(bytes, from))
    },
    { fastCheck: { numRuns: 80 } }
  )
})

describe("Newlines counters", () => {
  it.prop(
    "a counter counts what was written into its memory, over any length; a released one is reused with the next contents",
    { first: input, second: input, cut: fc.nat() },
    ({ cut, first, second }) => {
      const capacity = 256 * 1024
      const counter = Newlines.acquire(capacity)
      assert.strictEqual(counter.memory.byteLength, capacity)
      counter.memory.set(first, 0)
      const length = cut % (first.length + 1)
      assert.strictEqual(counter.count(length), naive(first, 0, length))
      Newlines.release(counter)
      const again = Newlines.acquire(capacity)
      assert.strictEqual(again, counter, "the idle counter of that size")
      again.memory.set(second, 0)
      assert.strictEqual(again.count(second.length), naive(second))
      Newlines.release(again)
      // another size is another counter
      assert.notStrictEqual(Newlines.acquire(capacity / 2), counter)
    },
    { fastCheck: { numRuns: 40 } }
  )
})

describe("Newlines without WebAssembly", () => {
  let fallback: typeof Newlines
  beforeAll(async () => {
    vi.stubGlobal("WebAssembly", undefined)
    vi.resetModules()
    fallback = await import("../src/Newlines.js")
  })
  afterAll(() => {
    vi.unstubAllGlobals()
    vi.resetModules()
  })

  it.prop(
    "the indexOf fallback gives the same counts, over a buffer and in a counter",
    { input: bytesFrom },
    ({ input: { bytes, from } }) => {
      assert.strictEqual(fallback.count(bytes, from), naive(bytes, from))
      const counter = fallback.make(bytes.length + 1)
      // a plain buffer of that size, not WebAssembly memory (whole 64 KiB pages)
      assert.strictEqual(counter.memory.buffer.byteLength, bytes.length + 1)
      counter.memory.set(bytes, 0)
      assert.strictEqual(counter.count(bytes.length), naive(bytes))
    },
    { fastCheck: { numRuns: 40 } }
  )
})
