// The needle locator on generated samples: it finds the line its rule names wherever the line is
// placed, reports its position and offset, keeps only the match and some context of a huge line,
// refuses an output without the needle, and counts a needle as seen only as a whole line.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { LONG_LINE_CHARS, LONG_LINE_CONTEXT, locate, visibleIn } from "../src/Needle.js"
import { replaceRegion } from "../src/Region.js"

const runs = { fastCheck: { numRuns: 300 } }

/** Noise lines that never match /error TS\d+/. */
const noise: fc.Arbitrary<Array<string>> = fc.array(
  fc.string({ unit: fc.constantFrom("a", "b", " ", "1", ":", "é", "😀", "T", "S"), maxLength: 60 }),
  { maxLength: 300 }
)
const needleLine = fc
  .integer({ min: 1000, max: 9999 })
  .map((code) => `src/app.ts(3,7): error TS${code}: broken`)
const rule = { describe: "the line with `error TS`", pattern: /error TS\d+/, stream: "stdout" as const }

describe("needle locator", () => {
  it.prop(
    "finds the line wherever it is placed, with its 1-based line number and byte offset",
    { lines: noise, needle: needleLine, at: fc.nat(), crlf: fc.boolean() },
    ({ at, crlf, lines, needle }) => {
      const index = at % (lines.length + 1)
      const all = [...lines.slice(0, index), needle, ...lines.slice(index)]
      const eol = crlf ? "\r\n" : "\n"
      const stdout = all.join(eol) + eol
      const found = locate(rule, { stdout, stderr: "" })
      assert.strictEqual(found.line, index + 1)
      assert.strictEqual(found.text, needle)
      assert.isTrue(found.whole)
      assert.strictEqual(found.totalLines, all.length)
      assert.strictEqual(found.stream, "stdout")
      assert.strictEqual(
        Buffer.from(stdout).subarray(found.byteOffset).toString().slice(0, needle.length),
        needle
      )
    },
    runs
  )

  it.prop(
    "picks the first or the last of several matches, in the stream the rule names",
    { lines: noise, first: needleLine, last: needleLine },
    ({ first, last, lines }) => {
      const stderr = [first, ...lines, last].join("\n")
      const raw = { stdout: first, stderr }
      assert.strictEqual(locate({ ...rule, stream: "stderr" }, raw).text, first)
      const picked = locate({ ...rule, stream: "stderr", pick: "last" }, raw)
      assert.strictEqual(picked.text, last)
      assert.strictEqual(picked.line, lines.length + 2)
    },
    runs
  )

  it.prop(
    "keeps only the match and its context of a line longer than the long-line limit",
    { before: fc.integer({ min: 0, max: 5000 }), after: fc.integer({ min: 0, max: 5000 }) },
    ({ after, before }) => {
      const line = `${"x".repeat(before)}error TS2322${"y".repeat(after)}`
      const found = locate(rule, { stdout: `first\n${line}\nlast\n`, stderr: "" })
      assert.strictEqual(found.line, 2)
      if (line.length <= LONG_LINE_CHARS) {
        assert.strictEqual(found.text, line)
      } else {
        assert.isFalse(found.whole)
        assert.include(found.text, "error TS2322")
        assert.include(line, found.text)
        assert.isAtMost(found.text.length, "error TS2322".length + 2 * LONG_LINE_CONTEXT)
      }
    },
    runs
  )

  it("a coloured needle is seen raw or as a terminal shows it, as a whole line either way", () => {
    const esc = String.fromCharCode(27)
    const line = `${esc}[31m FAIL ${esc}[39m test/a.test.ts > adds`
    const needle = locate(
      { describe: "the failure", pattern: /FAIL/, stream: "stdout" },
      { stdout: `ok\n${line}\ndone\n`, stderr: "", exitCode: 1 }
    )
    assert.strictEqual(needle.text, line)
    assert.isTrue(visibleIn(`a\n${line}\nb`, needle))
    assert.isTrue(visibleIn("a\n FAIL  test/a.test.ts > adds\nb", needle))
    assert.isFalse(visibleIn("a\nx FAIL  test/a.test.ts > adds\nb", needle))
    assert.isFalse(visibleIn("a\n FAIL  test/a.test.ts > adds 2\nb", needle))
  })

  it("refuses an output without the needle", () => {
    assert.throws(
      () => locate(rule, { stdout: "all good\n", stderr: "error TS2322 on the other stream\n" }),
      /no line/
    )
  })

  it.prop(
    "a whole-line needle is seen only as a whole line of the text",
    { lines: noise, needle: needleLine, at: fc.nat() },
    ({ at, lines, needle }) => {
      const found = locate(rule, { stdout: `${needle}\n`, stderr: "" })
      const index = at % (lines.length + 1)
      const withLine = [...lines.slice(0, index), needle, ...lines.slice(index)].join("\n")
      assert.isTrue(visibleIn(withLine, found))
      assert.isTrue(visibleIn(withLine.replace(/\n/g, "\r\n"), found))
      assert.isFalse(visibleIn(lines.join("\n"), found))
      assert.isFalse(visibleIn(`prefix ${needle}`, found))
      assert.isFalse(visibleIn(needle.slice(0, -1), found))
    },
    runs
  )
})

describe("generated regions", () => {
  it("appends a region once and then replaces only its body", () => {
    const first = replaceRegion("# Title\n\nprose\n", "bench", "one")
    assert.strictEqual(
      first,
      "# Title\n\nprose\n\n<!-- begin generated: bench -->\n\none\n\n<!-- end generated: bench -->\n"
    )
    const second = replaceRegion(`${first}\nafter\n`, "bench", "two")
    assert.strictEqual(second, first.replace("one", "two") + "\nafter\n")
    const other = replaceRegion(second, "bench summary", "three")
    assert.include(replaceRegion(other, "bench", "four"), "three")
    assert.throws(() => replaceRegion("<!-- begin generated: bench -->\n", "bench", "x"), /without/)
  })
})
