// MAX_LINE_CHARS (rules L6): any single line is clipped at 2000 chars (code points, rules L2) and
// counted for the notice; line endings stay byte-faithful; no surrogate pair is ever split.
import { assert, describe, it } from "@effect/vitest"
import { Budgets, LineClip } from "@toolcap/limits"
import { FastCheck as fc } from "effect"

const runs = { fastCheck: { numRuns: 1000 } }
const limit = Budgets.defaults.maxLineChars

/** Naive reference: split after each "\n", separate a "\r\n" / "\n" ending, count code points with Array.from. */
const naiveLines = (text: string): Array<{ body: string; ending: string }> => {
  const pieces = text.split(/(?<=\n)/).filter((piece) => piece.length > 0)
  return pieces.map((piece) => {
    const ending = piece.endsWith("\r\n") ? "\r\n" : piece.endsWith("\n") ? "\n" : ""
    return { body: piece.slice(0, piece.length - ending.length), ending }
  })
}

const anyText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom("\n", "\r\n", "\r", "a", "é", "€", "😀", "𝄞", "\ud800", "\udc00", "\udbff"),
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.string({ unit: fc.constantFrom("x", "😀"), minLength: 5, maxLength: 30 })
    ),
    { maxLength: 30 }
  )
  .map((pieces) => pieces.join(""))

describe("LineClip.clipLine", () => {
  it("keeps a line of exactly the limit and clips one char more, keeping its ending", () => {
    assert.deepStrictEqual(LineClip.clipLine("a".repeat(limit) + "\n", limit), {
      text: "a".repeat(limit) + "\n",
      clippedLines: 0
    })
    assert.deepStrictEqual(LineClip.clipLine("a".repeat(limit + 1) + "\r\n", limit), {
      text: "a".repeat(limit) + "\r\n",
      clippedLines: 1
    })
  })

  it("counts code points, not UTF-16 units: 2000 emoji are 2000 chars", () => {
    const emoji = "\u{1F600}".repeat(limit)
    assert.strictEqual(LineClip.clipLine(emoji, limit).clippedLines, 0)
    const clipped = LineClip.clipLine(emoji + "\u{1F600}x", limit)
    assert.strictEqual(clipped.text, emoji)
    assert.strictEqual(clipped.clippedLines, 1)
  })

  it("never splits a surrogate pair at the limit", () => {
    assert.strictEqual(LineClip.clipLine("ab\u{1F600}cd", 3).text, "ab\u{1F600}")
    assert.strictEqual(LineClip.clipLine("ab\u{1F600}cd", 2).text, "ab")
  })
})

describe("LineClip.clipLines", () => {
  it("clips each long line and counts them", () => {
    const text = ["short", "y".repeat(2500), "z".repeat(2000), "w".repeat(9000)].join("\n")
    const clipped = LineClip.clipLines(text, limit)
    assert.strictEqual(clipped.clippedLines, 2)
    assert.strictEqual(
      clipped.text,
      ["short", "y".repeat(2000), "z".repeat(2000), "w".repeat(2000)].join("\n")
    )
  })

  it.prop(
    "laws: clipped lines counted, endings kept, <= maxChars code points per line, a code-point prefix of the input line",
    { text: anyText, maxChars: fc.integer({ min: 1, max: 12 }) },
    ({ maxChars, text }) => {
      const clipped = LineClip.clipLines(text, maxChars)
      let expectedClipped = 0
      let rebuilt = ""
      for (const line of naiveLines(text)) {
        const out = LineClip.clipLine(line.body + line.ending, maxChars).text
        rebuilt += out
        assert.isTrue(out.endsWith(line.ending), "the line ending is kept")
        const outBody = out.slice(0, out.length - line.ending.length)
        const inChars = Array.from(line.body)
        const outChars = Array.from(outBody)
        assert.isAtMost(outChars.length, maxChars)
        // a prefix in code points: a split surrogate pair would leave a lone high surrogate here
        assert.deepStrictEqual(outChars, inChars.slice(0, outChars.length))
        if (inChars.length > maxChars) {
          expectedClipped++
          assert.strictEqual(outChars.length, maxChars)
        } else {
          assert.strictEqual(outBody, line.body)
        }
      }
      assert.strictEqual(clipped.text, rebuilt)
      assert.strictEqual(clipped.clippedLines, expectedClipped)
    },
    runs
  )

  it.prop(
    "clipLines == clipLine applied to each line",
    { text: anyText, maxChars: fc.integer({ min: 1, max: 12 }) },
    ({ maxChars, text }) => {
      const lines = text.split(/(?<=\n)/).filter((piece) => piece.length > 0)
      const each = lines.map((line) => LineClip.clipLine(line, maxChars))
      assert.deepStrictEqual(LineClip.clipLines(text, maxChars), {
        text: each.map((c) => c.text).join(""),
        clippedLines: each.reduce((n, c) => n + c.clippedLines, 0)
      })
    },
    runs
  )
})
