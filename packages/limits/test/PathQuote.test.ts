// Names that cannot forge lines (rules H7): a name with a control character is C-quoted as git
// quotes it, the quoted form holds no line break or other control character and reads back to
// the raw name; every other name is shown as it is; the shell word reads back in a real bash.
import { assert, describe, it } from "@effect/vitest"
import { PathQuote } from "@toolcap/limits"
import { FastCheck as fc } from "effect"
import { spawnSync } from "node:child_process"

// oxlint-disable-next-line no-control-regex -- the control characters are what is looked for
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** Names mixing plain text, quotes, backslashes and control characters (never NUL: no name holds one). */
const nameArb = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.constantFrom(
        "\n",
        "\r",
        "\u001b[31m",
        "\t",
        "\u007f",
        "\u0085",
        "\u009b",
        "\u2028",
        '"',
        "\\",
        "'",
        "é",
        "/"
      ),
      fc.integer({ min: 1, max: 0x9f }).map((code) => String.fromCharCode(code))
    ),
    { maxLength: 8 }
  )
  .map((parts) => parts.join("").replace(/\0/g, ""))

describe("PathQuote", () => {
  it("quotes as git does with core.quotePath", () => {
    assert.strictEqual(PathQuote.quote("dir\n/etc/shadow"), '"dir\\n/etc/shadow"')
    assert.strictEqual(PathQuote.quote("a\rb\tc\u001bd"), '"a\\rb\\tc\\033d"')
    assert.strictEqual(PathQuote.quote('x\n"y"\\z'), '"x\\n\\"y\\"\\\\z"')
    assert.strictEqual(PathQuote.quote("c1\u0085"), '"c1\\302\\205"')
    assert.strictEqual(PathQuote.quote("del\u007f"), '"del\\177"')
    assert.strictEqual(PathQuote.quote("ls\u2028x"), '"ls\\342\\200\\250x"')
    // nothing to quote: shown as it is, non-ASCII, spaces, quotes and backslashes inside included
    for (const plain of ["src/a.ts", "naïve café.md", 'say "hi".txt', "a\\b", ""])
      assert.strictEqual(PathQuote.quote(plain), plain)
    // a raw name that looks quoted is quoted, so the two never read alike
    assert.strictEqual(PathQuote.quote('"dir\\n/etc/shadow"'), '"\\"dir\\\\n/etc/shadow\\""')
  })

  it.prop("a quoted name holds no control character and reads back to the raw name", [nameArb], ([name]) => {
    const shown = PathQuote.quote(name)
    assert.isFalse(CONTROL.test(shown), JSON.stringify(shown))
    assert.strictEqual(PathQuote.unquote(shown), PathQuote.needsQuoting(name) ? name : shown)
    if (!PathQuote.needsQuoting(name)) assert.strictEqual(shown, name)
    else assert.isTrue(shown.startsWith('"') && shown.endsWith('"'))
  })

  it.prop("a shell word holds no control character", [nameArb], ([name]) => {
    assert.isFalse(CONTROL.test(PathQuote.shellWord(name)), JSON.stringify(name))
  })

  it("a shell word reads back to the raw name in a real bash", () => {
    const names = [
      "plain.txt",
      "with space",
      "it's",
      "dir\n/etc/shadow",
      "esc\u001b[31m'q'\\",
      "c1\u0085\u2028",
      "tab\there"
    ]
    const script = names.map((name) => `printf '%s\\0' ${PathQuote.shellWord(name)}`).join("\n")
    const run = spawnSync("bash", ["-c", script], { encoding: "utf8" })
    assert.strictEqual(run.status, 0, run.stderr)
    assert.deepStrictEqual(run.stdout.split("\0").slice(0, -1), names)
  })
})
