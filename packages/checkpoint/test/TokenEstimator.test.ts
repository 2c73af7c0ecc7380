// The default estimate's properties, which make cuts exact (see TokenEstimator.ts), and plugging.
import { assert, describe, it } from "@effect/vitest"
import { TokenEstimator } from "@toolcap/checkpoint"
import { Effect, FastCheck as fc } from "effect"

const { estimate } = TokenEstimator

/** Strings of code points from every class the estimate tells apart, lone surrogates excluded. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom("a", "Z", "7", " ", "\n", "\t", "{", ";", "é", "ж", "中", "😀", "ｆ"),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 })
  ),
  maxLength: 200
})

const codePoints = (s: string) => Array.from(s)

describe("TokenEstimator", () => {
  it("the empty text costs nothing; ordinary prose about four characters a token", () => {
    assert.strictEqual(estimate(""), 0)
    const prose = "The checkpoint keeps only user messages, newest first, until the budget. ".repeat(40)
    const ratio = prose.length / estimate(prose)
    assert.isAbove(ratio, 3)
    assert.isBelow(ratio, 6)
  })

  it.prop(
    "appending or prepending one code point adds 0 or 1 token",
    { s: text, c: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
    ({ c, s }) => {
      for (const point of codePoints(c)) {
        const appended = estimate(s + point) - estimate(s)
        const prepended = estimate(point + s) - estimate(s)
        assert.include([0, 1], appended)
        assert.include([0, 1], prepended)
      }
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it.prop(
    "a text joined at a newline costs no more than its parts",
    { a: text, b: text },
    ({ a, b }) => {
      assert.isAtMost(estimate(`${a}\n${b}`), estimate(a) + estimate("\n") + estimate(b))
      assert.isAtMost(estimate(`${a}\n`) + estimate(b), estimate(a) + 1 + estimate(b))
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it.effect("layerWith plugs a host's own estimator", () =>
    Effect.gen(function* () {
      const estimator = yield* TokenEstimator.TokenEstimator
      assert.strictEqual(estimator.estimate("one two three"), 3)
    }).pipe(Effect.provide(TokenEstimator.layerWith((t) => t.split(" ").length)))
  )
})
