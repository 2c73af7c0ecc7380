// The laws of the peer policies the context benchmark compares toolcap with: what reaches the
// model is bounded by the policy's documented numbers, the kept head is a prefix and the kept tail a
// suffix of the output within their shares, nothing is split inside a character, a marker appears
// exactly when the policy cut, and a saved copy holds the whole output and is named in the text.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  byteLength,
  CLAUDE_CODE_MAX_CHARS,
  CLAUDE_CODE_PREVIEW_BYTES,
  claudeCode,
  CLINE_MAX_BYTES,
  clineRoo,
  codex,
  CODEX_BYTES_PER_TOKEN,
  CODEX_TOKEN_LIMIT,
  combined,
  GEMINI_HEAD_SHARE,
  GEMINI_THRESHOLD_CHARS,
  geminiCli,
  OPENCODE_MAX_BYTES,
  OPENCODE_MAX_LINES,
  opencode,
  peers,
  type PolicyView,
  type RawOutput
} from "../src/Policies.js"

const runs = { fastCheck: { numRuns: 150 } }
const SAVED = "/tmp/saved/case.txt"

/** A run of one line repeated, with or without its newline: outputs from a few bytes to a few hundred KB. */
const block: fc.Arbitrary<string> = fc
  .record({
    line: fc.string({ unit: fc.constantFrom("a", "b", " ", "1", "é", "€", "中", "😀"), maxLength: 80 }),
    // at most ~960 KB: below Codex's 1 MiB stream capture, whose drop is not a head/tail cut
    repeat: fc.integer({ min: 1, max: 1000 }),
    newline: fc.boolean()
  })
  .map(({ line, newline, repeat }) => (newline ? `${line}\n` : line).repeat(repeat))

/** Many short lines, so the line limits (opencode's 2000) bind before the byte limits. */
const shortLines: fc.Arbitrary<string> = fc
  .integer({ min: 1, max: 4000 })
  .map((n) => Array.from({ length: n }, (_, i) => `${i}\n`).join(""))

/** One line without a newline (a minified bundle, a JSON blob): the cuts must fall inside it. */
const oneLine: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom("x", "é", "€", "😀", "a€"), fc.integer({ min: 1, max: 60_000 }))
  .map(([unit, n]) => unit.repeat(n))

const stream: fc.Arbitrary<string> = fc.oneof(
  fc.constant(""),
  fc.array(block, { minLength: 1, maxLength: 3 }).map((blocks) => blocks.join("")),
  shortLines,
  oneLine
)

const raw: fc.Arbitrary<RawOutput> = fc.record({ stdout: stream, stderr: stream })

const hasSplitCharacter = (text: string): boolean => text.includes("\uFFFD") || /\p{Surrogate}/u.test(text)

/** Laws every peer shares. */
const commonLaws = (input: RawOutput, view: PolicyView): void => {
  const whole = combined(input)
  assert.isTrue(whole.startsWith(view.head), "the head is a prefix of the output")
  assert.isTrue(whole.endsWith(view.tail), "the tail is a suffix of the output")
  assert.isFalse(hasSplitCharacter(view.head) || hasSplitCharacter(view.tail), "no character split")
  if (!view.truncated) {
    assert.strictEqual(view.text, whole, "uncut output reaches the model as it is")
    assert.isUndefined(view.marker)
    assert.isUndefined(view.savedCopy)
  } else {
    assert.isDefined(view.marker, "a cut always says so")
    assert.include(view.text, view.marker!)
    assert.isBelow(byteLength(view.head) + byteLength(view.tail), byteLength(whole), "a cut drops something")
    if (view.savedCopy !== undefined) {
      assert.strictEqual(view.savedCopy.content, whole, "the saved copy is the whole output")
      assert.include(view.text, view.savedCopy.path, "the text names the saved copy")
    }
  }
}

describe("peer policies", () => {
  it.prop(
    "Claude Code: whole up to 30,000 characters, else a ~2 KB head preview and the saved file",
    { input: raw },
    ({ input }) => {
      const view = claudeCode.apply(input, SAVED)
      commonLaws(input, view)
      const whole = combined(input)
      assert.strictEqual(view.truncated, whole.length > CLAUDE_CODE_MAX_CHARS)
      if (view.truncated) {
        assert.isAtMost(byteLength(view.head), CLAUDE_CODE_PREVIEW_BYTES)
        assert.strictEqual(view.tail, "")
        assert.isDefined(view.savedCopy)
        // the preview, the marker and the `<persisted-output>` wrapper
        assert.isAtMost(view.text.length, CLAUDE_CODE_PREVIEW_BYTES + view.marker!.length + 48)
      }
    },
    runs
  )

  it.prop(
    "Codex: within 10,000 tokens × 4 bytes, head and tail half each, no saved copy",
    { input: raw },
    ({ input }) => {
      const view = codex.apply(input, SAVED)
      commonLaws(input, view)
      const budget = CODEX_TOKEN_LIMIT * CODEX_BYTES_PER_TOKEN
      assert.strictEqual(view.truncated, byteLength(combined(input)) > budget)
      assert.isAtMost(byteLength(view.text), budget)
      assert.isUndefined(view.savedCopy)
      if (view.truncated) {
        assert.isAtMost(byteLength(view.head), budget / 2)
        assert.isAtMost(byteLength(view.tail), budget / 2)
        assert.match(view.marker!, /^…\d+ tokens truncated…$/)
      }
    },
    runs
  )

  it.prop(
    "opencode: whole within 2000 lines and 50 KB, else whole lines of the head and the saved file",
    { input: raw },
    ({ input }) => {
      const view = opencode.apply(input, SAVED)
      commonLaws(input, view)
      const whole = combined(input)
      assert.strictEqual(
        view.truncated,
        whole.split("\n").length > OPENCODE_MAX_LINES || byteLength(whole) > OPENCODE_MAX_BYTES
      )
      if (view.truncated) {
        assert.isAtMost(byteLength(view.head), OPENCODE_MAX_BYTES)
        assert.isAtMost(view.head.split("\n").length, OPENCODE_MAX_LINES)
        assert.strictEqual(view.tail, "")
        assert.isTrue(whole.startsWith(`${view.head}\n`) || view.head === "", "the head ends at a line end")
        assert.isDefined(view.savedCopy)
      }
    },
    runs
  )

  it.prop(
    "Gemini CLI: within 40,000 characters, head 20% of it, tail the rest, and the saved file",
    { input: raw },
    ({ input }) => {
      const view = geminiCli.apply(input, SAVED)
      commonLaws(input, view)
      assert.strictEqual(view.truncated, combined(input).length > GEMINI_THRESHOLD_CHARS)
      if (view.truncated) {
        assert.isAtMost(view.head.length, GEMINI_THRESHOLD_CHARS * GEMINI_HEAD_SHARE)
        assert.isAtMost(view.head.length + view.tail.length, GEMINI_THRESHOLD_CHARS)
        assert.isDefined(view.savedCopy)
      }
    },
    runs
  )

  it.prop(
    "Cline / Roo: within 10 KB, head and tail half each, no saved copy",
    { input: raw },
    ({ input }) => {
      const view = clineRoo.apply(input, SAVED)
      commonLaws(input, view)
      assert.strictEqual(view.truncated, byteLength(combined(input)) > CLINE_MAX_BYTES)
      assert.isUndefined(view.savedCopy)
      if (view.truncated) {
        assert.isAtMost(byteLength(view.head), CLINE_MAX_BYTES / 2)
        assert.isAtMost(byteLength(view.tail), CLINE_MAX_BYTES / 2)
      }
    },
    runs
  )

  it("head/tail policies keep the first and the last line of a long multi-line output", () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`)
    const input = { stdout: `${lines.join("\n")}\n`, stderr: "" }
    for (const policy of [codex, geminiCli, clineRoo]) {
      const view = policy.apply(input, SAVED)
      assert.isTrue(view.head.startsWith("line 0\n"), policy.name)
      assert.isTrue(view.tail.endsWith("line 19999\n"), policy.name)
      assert.isFalse(view.text.includes("line 10000\n"), policy.name)
    }
  })

  it("stderr follows stdout on a line of its own", () => {
    assert.strictEqual(combined({ stdout: "out", stderr: "err\n" }), "out\nerr\n")
    assert.strictEqual(combined({ stdout: "out\n", stderr: "err\n" }), "out\nerr\n")
    assert.strictEqual(combined({ stdout: "", stderr: "err" }), "err")
    assert.strictEqual(combined({ stdout: "out", stderr: "" }), "out")
  })

  it("every peer names where its numbers come from", () => {
    assert.strictEqual(peers.length, 5)
    for (const peer of peers) {
      assert.isAbove(peer.model.length, 40, peer.name)
      assert.isAbove(peer.source.length, 40, peer.name)
    }
  })
})
