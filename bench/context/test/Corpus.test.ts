// The corpus as declared: at least 40 cases with unique ids, each naming why a user runs it and a
// follow-up that is not its needle's pattern and that JavaScript, `grep -E` and ripgrep read alike;
// the sized cases take distinct rungs of a log-uniform ladder from 2 KB to 10 MB.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { cases, ladderBytes, SIZE_RUNGS } from "../src/Corpus.js"

describe("corpus", () => {
  it("at least 40 cases, unique ids, each with why and a follow-up that is not the needle's pattern", () => {
    assert.isAtLeast(cases.length, 40)
    assert.strictEqual(new Set(cases.map((c) => c.id)).size, cases.length)
    for (const c of cases) {
      assert.isAbove(c.why.length, 10, c.id)
      assert.isAbove(c.followUp.from.length, 5, c.id)
      assert.notStrictEqual(c.followUp.pattern.source, c.needle.pattern.source, c.id)
      // plain terms only: no escapes or groups that grep -E reads differently
      assert.notMatch(c.followUp.pattern.source, /\\[dswbDSWB]|\(\?|\{/, c.id)
      assert.strictEqual(c.followUp.pattern.flags, "", c.id)
    }
  })

  it("the sized cases take distinct rungs, from 2 KB to 10 MB", () => {
    const sized = cases.flatMap((c) => (c.targetBytes === undefined ? [] : [c.targetBytes]))
    assert.strictEqual(sized.length, SIZE_RUNGS)
    assert.sameMembers(
      sized,
      Array.from({ length: SIZE_RUNGS }, (_, k) => ladderBytes(k))
    )
    assert.strictEqual(ladderBytes(0), 2 * 1024)
    assert.strictEqual(ladderBytes(SIZE_RUNGS - 1), 2 * 1024 * 5000)
  })

  it.prop(
    "the ladder is log-uniform: every step multiplies by the same factor",
    { k: fc.integer({ min: 0, max: SIZE_RUNGS - 2 }) },
    ({ k }) => {
      const factor = 5000 ** (1 / (SIZE_RUNGS - 1))
      assert.approximately(ladderBytes(k + 1) / ladderBytes(k), factor, 0.001 * factor)
    }
  )
})
