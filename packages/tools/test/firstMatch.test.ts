import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as FirstMatch from "../src/internal/search/firstMatch.js"

const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Byte offset of the first match of `literal` in `line` (Unicode case folding when ignoring case). */
const firstMatch = (line: string, literal: string, caseInsensitive: boolean): number | undefined => {
  const at = line.search(new RegExp(escape(literal), caseInsensitive ? "iu" : "u"))
  return at === -1 ? undefined : Buffer.byteLength(line.slice(0, at))
}

describe("first matches placed from a line's printed start", () => {
  it.prop(
    "a literal is placed exactly when case-sensitive, and only ever inside the clip when ignoring case",
    {
      // K and the Kelvin sign fold to k; é and 🎉 take more than one byte
      line: FastCheck.array(FastCheck.constantFrom("a", "b", "k", "K", "\u212a", "é", "É", "🎉", " "), {
        maxLength: 80
      }),
      needle: FastCheck.constantFrom("k", "ab", "é", "🎉 a", "b k"),
      caseInsensitive: FastCheck.boolean(),
      cut: FastCheck.nat(),
      kept: FastCheck.nat()
    },
    ({ caseInsensitive, cut, kept, line, needle }) => {
      const text = line.join("")
      const bytes = Buffer.from(text)
      const headBytes = bytes.length === 0 ? 0 : cut % (bytes.length + 1)
      const keptBytes = kept % (headBytes + 1)
      const finder = FirstMatch.finder({
        pattern: needle,
        caseInsensitive,
        multiline: false,
        patternFlags: [],
        patternOnStdin: false
      })
      const placed = finder.inHead({
        lineByte: 0,
        keptBytes,
        head: bytes.subarray(0, headBytes),
        whole: headBytes === bytes.length
      })
      const truth = firstMatch(text, needle, caseInsensitive)
      if (placed === "inside") assert.isTrue(truth !== undefined && truth < keptBytes)
      else if (placed !== undefined) {
        assert.isFalse(caseInsensitive)
        assert.strictEqual(placed, truth)
      } else if (!caseInsensitive) {
        // left open only when no occurrence lies whole inside the start
        assert.isTrue(truth === undefined || truth + Buffer.byteLength(needle) > headBytes)
      }
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it.prop(
    "a pattern with regex syntax or a multiline search is never placed from the start alone",
    {
      pattern: FastCheck.constantFrom("a.b", "k+", "(k)", "[k]", "^k", "k$", "a|b", "a\\b", "k{2}", "k?"),
      multiline: FastCheck.boolean()
    },
    ({ multiline, pattern }) => {
      const finder = FirstMatch.finder({
        pattern,
        caseInsensitive: false,
        multiline,
        patternFlags: [`--regexp=${pattern}`],
        patternOnStdin: false
      })
      const head = Buffer.from(`${pattern} ${"k".repeat(20)}`)
      assert.isUndefined(finder.inHead({ lineByte: 0, keptBytes: 4, head, whole: false }))
      assert.strictEqual(finder.columns, multiline)
      assert.strictEqual(finder.headFlags === undefined, multiline)
    }
  )
})
