// The newline count behind a streaming cut's exact totals (src/internal/newlines.ts): the SIMD
// count equals a byte-by-byte count on any input, at any start, across its 64 KiB slices.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { countNewlines } from "../src/internal/newlines.js"

const naive = (bytes: Uint8Array, from: number): number => {
  let count = 0
  for (let at = from; at < bytes.length; at++) if (bytes[at] === 0x0a) count++
  return count
}

/** Bytes with newlines dense or sparse, long enough to take the SIMD path and span slices. */
const input = fc
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

describe("countNewlines", () => {
  it.prop(
    "equals a byte-by-byte count, from any start",
    { bytes: input, start: fc.nat() },
    ({ bytes, start }) => {
      const from = bytes.length === 0 ? 0 : start % (bytes.length + 1)
      assert.strictEqual(countNewlines(bytes, from), naive(bytes, from))
    },
    { fastCheck: { numRuns: 60 } }
  )
})
