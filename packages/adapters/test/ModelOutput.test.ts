// What the model reads of each tool's result: plain lines, each result followed by its notice.
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { ModelOutput } from "@toolcap/adapters"

const read = (
  content: string,
  extra: Partial<{ offset: number; notice: string; fileBytes: number }> = {}
) => ({
  path: "a.ts",
  root: "workspace" as const,
  content,
  offset: extra.offset ?? 1,
  lineCount: content.split("\n").length,
  fileBytes: extra.fileBytes ?? content.length,
  truncated: extra.notice !== undefined,
  ...(extra.notice === undefined ? {} : { notice: extra.notice })
})

/** The guards of a ripgrep run, which the model's text leaves out. */
const guard = { launcher: true, landlockRead: true }

describe("ModelOutput", () => {
  it.prop(
    "Read without line numbers is the window itself, byte for byte",
    [FastCheck.string({ unit: "binary", minLength: 1, maxLength: 200 })],
    ([content]) => {
      assert.strictEqual(ModelOutput.readText(read(content)), content)
    }
  )

  it("Read's notice follows on a line of its own, in brackets", () => {
    assert.strictEqual(
      ModelOutput.readText(read("one\ntwo\n", { notice: "Read with offset 3 to see more." })),
      "one\ntwo\n[Read with offset 3 to see more.]"
    )
    assert.strictEqual(ModelOutput.readText(read("no newline", { notice: "n" })), "no newline\n[n]")
    assert.strictEqual(ModelOutput.readText(read("", { fileBytes: 0 })), "(empty file)")
  })

  it("Read with line numbers numbers from the window's offset, cat -n style, also from the end", () => {
    assert.strictEqual(
      ModelOutput.readText(read("a\n\tb\r\n", { offset: 41 }), { lineNumbers: true }),
      "    41\ta\n    42\t\tb\r"
    )
    assert.strictEqual(
      ModelOutput.readText(read("x\ny\n", { offset: -2, notice: "n" }), { lineNumbers: true }),
      "    -2\tx\n    -1\ty\n[n]"
    )
  })

  it("Grep content: path:line:text, context lines path-line-text, -- between groups", () => {
    const result = {
      matches: [
        { path: "a.ts", line: 3, text: "before", context: true as const },
        { path: "a.ts", line: 4, text: "hit" },
        { path: "a.ts", line: 9, text: "hit again\n" },
        { path: "b.ts", line: 1, text: "hit" }
      ],
      count: 3,
      files: 2,
      truncated: true,
      notice: "Stopped at headLimit 3.",
      guard
    }
    assert.strictEqual(
      ModelOutput.grepText(result),
      "a.ts-3-before\na.ts:4:hit\n--\na.ts:9:hit again\n--\nb.ts:1:hit\n[Stopped at headLimit 3.]"
    )
    assert.strictEqual(
      ModelOutput.grepText({
        ...result,
        matches: result.matches.filter((m) => m.context !== true),
        notice: undefined
      }),
      "a.ts:4:hit\na.ts:9:hit again\nb.ts:1:hit"
    )
  })

  it("Grep files and counts, Glob paths, and what an empty result says", () => {
    assert.strictEqual(
      ModelOutput.grepText({ files: ["a.ts", "b.ts"], count: 2, truncated: false, guard }),
      "a.ts\nb.ts"
    )
    assert.strictEqual(
      ModelOutput.grepText({ counts: [{ path: "a.ts", count: 4 }], count: 4, truncated: false, guard }),
      "a.ts:4"
    )
    assert.strictEqual(
      ModelOutput.grepText({ files: [], count: 0, truncated: false, guard }),
      "No matches found"
    )
    assert.strictEqual(
      ModelOutput.globText({ matches: ["x", "y"], count: 2, truncated: false, guard }),
      "x\ny"
    )
    assert.strictEqual(
      ModelOutput.globText({ matches: [], count: 0, truncated: false, notice: "n", guard }),
      "No files found\n[n]"
    )
  })

  it("text dispatches by tool; errors read CODE: message; unknown tools stay JSON", () => {
    assert.strictEqual(ModelOutput.text("Read", { ok: true, result: read("q\n") }), "q\n")
    assert.strictEqual(
      ModelOutput.text("Read", { ok: false, error: { code: "TOOL_NOT_FOUND", message: "gone" } }),
      "TOOL_NOT_FOUND: gone"
    )
    assert.strictEqual(ModelOutput.text("Mine", { ok: true, result: { a: 1 } }), '{"a":1}')
  })
})
