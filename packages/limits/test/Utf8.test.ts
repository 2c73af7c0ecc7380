// The boundaries every cut relies on (rules M8: no cut splits a code point or a UTF-8 sequence),
// checked against TextDecoder itself, including on input that is not UTF-8 at all.
import { assert, describe, it } from "@effect/vitest"
import { Utf8 } from "@toolcap/limits"
import { FastCheck as fc } from "effect"
import { bytes, decode, isSafeCut } from "./oracle.js"

const runs = { fastCheck: { numRuns: 1000 } }
const of = (...values: Array<number>) => Uint8Array.from(values)

describe("Utf8 boundaries", () => {
  it("never split a well-formed sequence", () => {
    const euro = of(0x61, 0xe2, 0x82, 0xac, 0x62) // a € b
    assert.deepStrictEqual(
      [0, 1, 2, 3, 4, 5].map((k) => Utf8.isBoundary(euro, k)),
      [true, true, false, false, true, true]
    )
    assert.strictEqual(Utf8.prefixBoundary(euro, 3), 1)
    assert.strictEqual(Utf8.suffixBoundary(euro, 2), 4)
    const emoji = of(0xf0, 0x9f, 0x98, 0x80) // 😀
    assert.strictEqual(Utf8.prefixBoundary(emoji, 3), 0)
    assert.strictEqual(Utf8.suffixBoundary(emoji, 1), 4)
  })

  it("treat an incomplete sequence as one unit, as TextDecoder does (one U+FFFD)", () => {
    const truncatedEmoji = of(0xf0, 0x9f, 0x98, 0x41) // F0 9F 98 then "A"
    assert.strictEqual(decode(truncatedEmoji), "\uFFFDA")
    assert.strictEqual(Utf8.prefixBoundary(truncatedEmoji, 2), 0)
    assert.strictEqual(Utf8.suffixBoundary(truncatedEmoji, 1), 3)
  })

  it("treat stray and overlong bytes as units of their own", () => {
    // C0 80 is an overlong NUL; E0 80 is not a valid start of E0 sequences; ED A0 80 is a surrogate
    for (const input of [
      of(0xc0, 0x80, 0x41),
      of(0xe0, 0x80, 0x80),
      of(0xed, 0xa0, 0x80),
      of(0x80, 0x80, 0x80)
    ]) {
      for (let k = 0; k <= input.length; k++) assert.isTrue(Utf8.isBoundary(input, k), `${k} of ${input}`)
    }
    assert.isFalse(Utf8.isBoundary(of(0xed, 0x9f, 0xbf), 1)) // U+D7FF is fine: ED 9F BF is one unit
  })

  it.prop(
    "isBoundary agrees with TextDecoder at every position of arbitrary bytes",
    { input: bytes },
    ({ input }) => {
      for (let k = 0; k <= input.length; k++) {
        assert.strictEqual(Utf8.isBoundary(input, k), isSafeCut(input, k), `position ${k}`)
      }
    },
    runs
  )

  it.prop(
    "prefixBoundary is the last safe cut at or before end; suffixBoundary the first at or after start",
    { input: bytes, at: fc.nat({ max: 300 }) },
    ({ at, input }) => {
      const position = Math.min(at, input.length)
      let before = position
      while (!isSafeCut(input, before)) before--
      let after = position
      while (!isSafeCut(input, after)) after++
      assert.strictEqual(Utf8.prefixBoundary(input, position), before)
      assert.strictEqual(Utf8.suffixBoundary(input, position), after)
      assert.isAtMost(position - before, 3)
      assert.isAtMost(after - position, 3)
    },
    runs
  )

  it.prop(
    "decode gives valid Unicode; valid UTF-8 round-trips byte for byte, invalid bytes become U+FFFD",
    { input: bytes },
    ({ input }) => {
      const text = Utf8.decode(input)
      assert.notMatch(text, /\p{Surrogate}/u)
      let valid = true
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(input)
      } catch {
        valid = false
      }
      if (valid) assert.deepStrictEqual(Array.from(Utf8.encode(text)), Array.from(input))
      else assert.include(text, "\uFFFD")
    },
    runs
  )

  it("decode keeps a byte order mark; encode turns a lone surrogate into U+FFFD", () => {
    assert.strictEqual(Utf8.decode(of(0xef, 0xbb, 0xbf, 0x61)), "\uFEFFa")
    assert.deepStrictEqual(Array.from(Utf8.encode("\ud800")), [0xef, 0xbf, 0xbd])
  })
})
