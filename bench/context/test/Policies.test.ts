// The laws of the peer models the context benchmark compares toolcap with. Shell: what reaches the
// model is bounded by the host's numbers, the kept head is a prefix and the kept tail a suffix of
// the output within their shares, nothing is split inside a character, a marker appears exactly
// when the host cut, and a saved copy holds the whole output and is named in the text. Read: the
// window is the file's first lines in order, within the host's line and size limits, each shown
// whole or clipped at the host's width, and a cut names where the rest is. Search: only matching
// lines, in order, within the host's cap.
import { assert, describe, it } from "@effect/vitest"
import { TokenEstimator } from "@toolcap/checkpoint"
import { FastCheck as fc } from "effect"
import { locate } from "../src/Needle.js"
import { type Location, matchingLines, type View } from "../src/Peer.js"
import {
  CLAUDE_CODE_GREP_HEAD_LIMIT,
  CLAUDE_CODE_GREP_MAX_COLUMNS,
  CLAUDE_CODE_MAX_CHARS,
  CLAUDE_CODE_PREVIEW_CHARS,
  CLAUDE_CODE_READ_MAX_BYTES,
  CLAUDE_CODE_READ_MAX_TOKENS,
  CLAUDE_CODE_ERROR_KEEP_CHARS,
  CLAUDE_CODE_ERROR_SLACK_CHARS,
  CLAUDE_CODE_FAILED_CAPTURE_BYTES,
  claudeCode,
  claudeCodeFails
} from "../src/peers/claudeCode.js"
import {
  CLINE_LINE_CHARS,
  CLINE_MAX_OUTPUT_CHARS,
  CLINE_READ_CHARS,
  CLINE_READ_LINES,
  CLINE_TOOL_RESULT_CHARS,
  cline
} from "../src/peers/cline.js"
import { CODEX_BYTES_PER_TOKEN, CODEX_MAX_OUTPUT_TOKENS, codex, codexAggregate } from "../src/peers/codex.js"
import {
  GEMINI_GREP_MAX_MATCHES,
  GEMINI_HEAD_SHARE,
  GEMINI_LINE_CHARS,
  GEMINI_READ_LINES,
  GEMINI_THRESHOLD_CHARS,
  geminiCli
} from "../src/peers/geminiCli.js"
import {
  OPENCODE_GREP_LIMIT,
  OPENCODE_LINE_CHARS,
  OPENCODE_MAX_BYTES,
  OPENCODE_MAX_LINES,
  OPENCODE_READ_LINES,
  opencode
} from "../src/peers/opencode.js"
import { ROO_LINE_CHARS, ROO_PREVIEW_BYTES, ROO_READ_LINES, rooCode } from "../src/peers/rooCode.js"
import { PI_GREP_LIMIT, pi } from "../src/peers/pi.js"
import { rtk } from "../src/peers/rtk.js"
import { peers } from "../src/Policies.js"
import { peerCell } from "../src/Reach.js"
import { byteLength, combined, headBytes, type RawOutput, splitLines } from "../src/Text.js"

const runs = { fastCheck: { numRuns: 120 } }
const SAVED = "/tmp/saved/case.txt"

/** A run of one line repeated, with or without its newline: outputs from a few bytes to a few hundred KB. */
const block: fc.Arbitrary<string> = fc
  .record({
    line: fc.string({ unit: fc.constantFrom("a", "b", " ", "1", "é", "€", "中", "😀"), maxLength: 80 }),
    repeat: fc.integer({ min: 1, max: 1000 }),
    newline: fc.boolean()
  })
  .map(({ line, newline, repeat }) => (newline ? `${line}\n` : line).repeat(repeat))

/** Many short lines, so the line limits (2000) bind before the byte limits. */
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

const raw: fc.Arbitrary<RawOutput> = fc.record({
  stdout: stream,
  stderr: stream,
  exitCode: fc.constantFrom(0, 1, 2)
})

/** Commands the failure path classifies differently, and the arrival of both streams in chunks. */
const failing: fc.Arbitrary<RawOutput> = fc
  .record({
    chunks: fc.array(
      fc.record({ stream: fc.constantFrom("stdout" as const, "stderr" as const), data: stream }),
      {
        minLength: 1,
        maxLength: 4
      }
    ),
    exitCode: fc.constantFrom(1, 2, 3, 127),
    command: fc.constantFrom(
      "grep -n x f",
      "rg x",
      "git diff",
      "git -C repo grep x",
      "npm test",
      "cd a && grep x f",
      "grep x f | wc -l",
      "npx vitest run",
      "test -f x"
    )
  })
  .map(({ chunks, command, exitCode }) => ({
    stdout: chunks
      .filter((chunk) => chunk.stream === "stdout")
      .map((chunk) => chunk.data)
      .join(""),
    stderr: chunks
      .filter((chunk) => chunk.stream === "stderr")
      .map((chunk) => chunk.data)
      .join(""),
    exitCode,
    command,
    arrival: chunks
  }))

const longestStream = (input: RawOutput): number => Math.max(input.stdout.length, input.stderr.length)

const hasSplitCharacter = (text: string): boolean => text.includes("\uFFFD") || /\p{Surrogate}/u.test(text)

/** Laws every shell cut shares; `base` is the text the host cuts. */
const shellLaws = (view: View, base: string): void => {
  assert.isTrue(base.startsWith(view.head), "the head is a prefix of the output")
  assert.isTrue(base.endsWith(view.tail), "the tail is a suffix of the output")
  assert.isFalse(hasSplitCharacter(view.text), "no character split")
  if (!view.truncated) {
    assert.isTrue(view.text.includes(base), "uncut output reaches the model whole")
    assert.isUndefined(view.marker)
    assert.isUndefined(view.location)
  } else {
    assert.isDefined(view.marker, "a cut always says so")
    assert.include(view.text, view.marker!)
    assert.isBelow(view.head.length + view.tail.length, base.length, "a cut drops something")
    if (view.location !== undefined) {
      assert.strictEqual(view.location.kind, "copy")
      assert.include(view.location.content, base, "the saved copy holds the whole output")
      assert.include(view.text, view.location.path, "the text names the saved copy")
    }
  }
}

describe("peer shell models", () => {
  it.prop(
    "Claude Code: a command that succeeds passes whole up to 30,000 characters, else a 2,000-character preview and the saved file",
    { input: raw },
    ({ input }) => {
      const succeeded = { ...input, exitCode: 0 }
      const view = claudeCode.shell.apply(succeeded, SAVED)
      const base = combined(succeeded)
        .replace(/^(\s*\n)+/, "")
        .trimEnd()
      shellLaws(view, base)
      assert.strictEqual(view.truncated, base.length > CLAUDE_CODE_MAX_CHARS)
      if (view.truncated) {
        assert.isAtMost(view.head.length, CLAUDE_CODE_PREVIEW_CHARS)
        assert.strictEqual(view.tail, "")
        assert.isDefined(view.location)
        assert.isAtMost(view.text.length, CLAUDE_CODE_PREVIEW_CHARS + view.marker!.length + 80)
      }
    },
    runs
  )

  it.prop(
    "Claude Code: a failed command is `Exit code N` and the first 30,000 bytes of its one output file, cut to 5,000 + 5,000 characters past 11,024, nothing saved",
    { input: failing },
    ({ input }) => {
      const view = claudeCode.shell.apply(input, SAVED)
      const exitCode = input.exitCode!
      const fails = claudeCodeFails(input.command, exitCode)
      if (!fails) {
        assert.notMatch(view.text, /^Exit code /, "an exit the host accepts takes the success path")
        return
      }
      assert.isUndefined(view.location, "a failed command saves nothing")
      assert.notInclude(view.text, "<persisted-output>")
      const file = input.arrival!.map((chunk) => chunk.data).join("")
      const captured = headBytes(file, CLAUDE_CODE_FAILED_CAPTURE_BYTES)
      assert.isAtMost(byteLength(captured), CLAUDE_CODE_FAILED_CAPTURE_BYTES)
      const message = `Exit code ${exitCode}\n${captured}`.trim()
      const limit = CLAUDE_CODE_ERROR_KEEP_CHARS + CLAUDE_CODE_ERROR_SLACK_CHARS
      assert.isFalse(hasSplitCharacter(view.text))
      if (message.length <= limit) {
        assert.strictEqual(view.text, message)
        assert.strictEqual(view.truncated, captured.length < file.length)
        return
      }
      assert.isTrue(view.truncated)
      const marker = /\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n/.exec(view.text)
      assert.isNotNull(marker, "a cut message says how much it dropped")
      const first = view.text.slice(0, marker!.index)
      const last = view.text.slice(marker!.index + marker![0].length)
      assert.isTrue(message.startsWith(first) && message.endsWith(last), "head and tail of the message")
      assert.isAtMost(first.length, CLAUDE_CODE_ERROR_KEEP_CHARS / 2)
      assert.isAtLeast(first.length, CLAUDE_CODE_ERROR_KEEP_CHARS / 2 - 1)
      assert.isAtMost(last.length, CLAUDE_CODE_ERROR_KEEP_CHARS / 2)
      assert.isAtLeast(last.length, CLAUDE_CODE_ERROR_KEEP_CHARS / 2 - 1)
      assert.strictEqual(Number(marker![1]), message.length - first.length - last.length)
    },
    runs
  )

  it("Claude Code: the failure text, exactly (the streams in arrival order; a long message's 5,000 + 5,000)", () => {
    const interleaved: RawOutput = {
      stdout: "one\nthree\n",
      stderr: "two\n",
      exitCode: 1,
      command: "make check",
      arrival: [
        { stream: "stdout", data: "one\n" },
        { stream: "stderr", data: "two\n" },
        { stream: "stdout", data: "three\n" }
      ]
    }
    const small = claudeCode.shell.apply(interleaved, SAVED)
    assert.deepStrictEqual(
      [small.text, small.truncated, small.location],
      ["Exit code 1\none\ntwo\nthree", false, undefined]
    )
    const lines = "a\n".repeat(8000)
    const long = claudeCode.shell.apply(
      {
        stdout: lines,
        stderr: "",
        exitCode: 2,
        command: "npm test",
        arrival: [{ stream: "stdout", data: lines }]
      },
      SAVED
    )
    assert.strictEqual(
      long.text,
      `Exit code 2\n${"a\n".repeat(2494)}\n\n... [6011 characters truncated] ...\n\n${"\na".repeat(2500)}`
    )
    assert.isUndefined(long.location)
  })

  it("Claude Code: the error carries the first 30,000 bytes of the output file only", () => {
    const wide = "é".repeat(40_000)
    const view = claudeCode.shell.apply(
      { stdout: wide, stderr: "", exitCode: 1, command: "make", arrival: [{ stream: "stdout", data: wide }] },
      SAVED
    )
    // 30,000 bytes are 15,000 two-byte characters: the message is 15,012 characters, 5,012 dropped
    assert.include(view.text, "\n\n... [5012 characters truncated] ...\n\n")
    assert.isTrue(view.text.startsWith(`Exit code 1\n${"é".repeat(4988)}`))
  })

  it("Claude Code: exit 1 of grep, rg, egrep, fgrep, find, diff, test, [, git diff and git grep is not a failure", () => {
    const output = `${"match\n".repeat(6000)}`
    for (const command of [
      "grep -rn x .",
      "rg x",
      "egrep x f",
      "fgrep x f",
      "find . -name x",
      "diff a b",
      "test -f x",
      "[ -f x ]",
      "git diff",
      "git -C repo grep x",
      "cd src && grep x f",
      "cat f | grep x"
    ]) {
      const exitOne = {
        stdout: output,
        stderr: "",
        exitCode: 1,
        command,
        arrival: [{ stream: "stdout" as const, data: output }]
      }
      const view = claudeCode.shell.apply(exitOne, SAVED)
      assert.include(view.text, "<persisted-output>", command)
      assert.isDefined(view.location, command)
      const failed = claudeCode.shell.apply({ ...exitOne, exitCode: 2 }, SAVED)
      assert.isTrue(failed.text.startsWith("Exit code 2\n"), command)
      assert.isUndefined(failed.location, command)
    }
    for (const command of ["grep x f | wc -l", "git log", "npx vitest run", "python3 -m pytest", undefined]) {
      const view = claudeCode.shell.apply(
        {
          stdout: output,
          stderr: "",
          exitCode: 1,
          arrival: [{ stream: "stdout", data: output }],
          ...(command === undefined ? {} : { command })
        },
        SAVED
      )
      assert.isTrue(view.text.startsWith("Exit code 1\n"), String(command))
    }
  })

  it.prop(
    "Codex: shell_command's reply, its output within 10,000 tokens × 4 bytes, head and tail half each, no saved copy",
    { input: raw },
    ({ input }) => {
      const view = codex.shell.apply(input, SAVED)
      const base = codexAggregate(input)
      const budget = CODEX_MAX_OUTPUT_TOKENS * CODEX_BYTES_PER_TOKEN
      shellLaws(view, base)
      assert.strictEqual(view.truncated, byteLength(base) > budget)
      assert.isUndefined(view.location)
      assert.isTrue(view.text.startsWith(`Exit code: ${input.exitCode}\nWall time: `))
      assert.notInclude(view.text, "Process exited with code", "not exec_command's header")
      if (view.truncated) {
        assert.isAtMost(byteLength(view.head), budget / 2)
        assert.isAtMost(byteLength(view.tail), budget / 2)
        assert.match(view.marker!, /^…\d+ tokens truncated…$/)
      }
    },
    runs
  )

  it("Codex: the shell_command reply, exactly; stdout before stderr, each stream's first 1 MiB", () => {
    const small = codex.shell.apply(
      {
        stdout: "hello\n",
        stderr: "oops\n",
        exitCode: 1,
        arrival: [
          { stream: "stderr", data: "oops\n" },
          { stream: "stdout", data: "hello\n" }
        ]
      },
      SAVED
    )
    assert.strictEqual(small.text, "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nhello\noops\n")
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`).join("")
    const long = codex.shell.apply({ stdout: lines, stderr: "", exitCode: 0 }, SAVED)
    assert.isTrue(
      long.text.startsWith(
        "Exit code: 0\nWall time: 0.1 seconds\nTotal output lines: 20000\nOutput:\nline 0\n"
      )
    )
    const flood = "a".repeat(2 * 1024 * 1024)
    const joined = codexAggregate({ stdout: flood, stderr: "b".repeat(10), exitCode: 1 })
    assert.strictEqual(joined, `${"a".repeat(1024 * 1024 - 10)}${"b".repeat(10)}`)
    const both = codexAggregate({ stdout: flood, stderr: "b".repeat(2 * 1024 * 1024), exitCode: 1 })
    // past 1 MiB together: a third for stdout, the rest for stderr
    assert.isTrue(both === `${"a".repeat(349_525)}${"b".repeat(1024 * 1024 - 349_525)}`)
  })

  it.prop(
    "opencode: whole within 2000 lines and 50 KB, else whole lines of the tail and the saved file",
    { input: raw },
    ({ input }) => {
      const view = opencode.shell.apply(input, SAVED)
      const base = combined(input)
      if (base === "") {
        assert.strictEqual(view.text, "(no output)")
        return
      }
      shellLaws(view, base)
      assert.strictEqual(
        view.truncated,
        base.split("\n").length > OPENCODE_MAX_LINES || byteLength(base) > OPENCODE_MAX_BYTES
      )
      if (view.truncated) {
        assert.strictEqual(view.head, "")
        assert.isAtMost(byteLength(view.tail), OPENCODE_MAX_BYTES)
        assert.isAtMost(view.tail.split("\n").length, OPENCODE_MAX_LINES)
        const wholeLines = base.endsWith(`\n${view.tail}`) || base === view.tail
        const oneLineEnd = !view.tail.includes("\n")
        assert.isTrue(wholeLines || oneLineEnd, "the tail starts at a line start, or is the end of one line")
        assert.isDefined(view.location)
      }
    },
    runs
  )

  it.prop(
    "Gemini CLI: the shell result within 40,000 characters, else its first 20% and last 80% and the saved file",
    { input: raw },
    ({ input }) => {
      const view = geminiCli.shell.apply(input, SAVED)
      const output = combined(input)
      const base = view.truncated ? view.location!.content : view.text
      assert.include(base, output === "" ? "(empty)" : output)
      shellLaws(view, base)
      assert.strictEqual(view.truncated, base.length > GEMINI_THRESHOLD_CHARS)
      if (view.truncated) {
        assert.isAtMost(view.head.length, GEMINI_THRESHOLD_CHARS * GEMINI_HEAD_SHARE)
        assert.isAtMost(view.head.length + view.tail.length, GEMINI_THRESHOLD_CHARS)
        assert.isAtLeast(view.tail.length, GEMINI_THRESHOLD_CHARS * (1 - GEMINI_HEAD_SHARE) - 1)
      }
    },
    runs
  )

  it.prop(
    "Roo Code: whole within 10 KB, else 5 KB of head and 5 KB of tail and the saved artifact",
    { input: raw },
    ({ input }) => {
      const view = rooCode.shell.apply(input, SAVED)
      const base = combined(input)
      shellLaws(view, base)
      assert.strictEqual(view.truncated, byteLength(base) > ROO_PREVIEW_BYTES)
      if (view.truncated) {
        assert.isAtMost(byteLength(view.head), ROO_PREVIEW_BYTES / 2)
        assert.isAtMost(byteLength(view.tail), ROO_PREVIEW_BYTES / 2)
        assert.isAtLeast(byteLength(view.head), ROO_PREVIEW_BYTES / 2 - 3)
        assert.match(view.marker!, /^\[\.\.\.\d+ bytes omitted\.\.\.\]$/)
        assert.isDefined(view.location)
      }
    },
    runs
  )

  it.prop(
    "Cline: the command cut of 48,000 characters, then every result cut to 8,000, no saved copy",
    { input: raw },
    ({ input }) => {
      const view = cline.shell.apply(input, SAVED)
      assert.isAtMost(view.text.length, CLINE_TOOL_RESULT_CHARS, "never more than 8,000 characters")
      assert.isUndefined(view.location)
      const exit = (input.exitCode ?? 0) === 0 ? "" : `[Command exited with code ${input.exitCode}]\n`
      const executor = `${exit}${input.stdout}${input.stderr === "" ? "" : `\n[stderr]\n${input.stderr}`}`
      if (executor.length <= CLINE_TOOL_RESULT_CHARS) {
        assert.isFalse(view.truncated)
        assert.strictEqual(view.text, executor, "a result within 8,000 characters is passed as it is")
        return
      }
      assert.isTrue(view.truncated)
      const marker = /\n\n\.\.\.\[truncated (\d+) chars\]\.\.\.\n\n/.exec(view.text)
      assert.isNotNull(marker, "the cut names what it dropped")
      const first = view.text.slice(0, marker!.index)
      const last = view.text.slice(marker!.index + marker![0].length)
      assert.strictEqual(first.length, last.length, "the same number of characters from each end")
      assert.isAtLeast(first.length, (CLINE_TOOL_RESULT_CHARS - marker![0].length - 1) / 2)
      assert.isTrue(executor.startsWith(first), "the head of the executor's text")
      if (longestStream(input) <= CLINE_MAX_OUTPUT_CHARS / 2 && executor.length <= CLINE_MAX_OUTPUT_CHARS) {
        assert.isTrue(executor.endsWith(last), "the tail of the executor's text")
        // the count is taken before the marker's own length is known: when its digit count grows
        // the named count is 2 short of what was dropped, as the host's two-pass cut does
        const dropped = executor.length - first.length - last.length
        assert.include([dropped, dropped - 2], Number(marker![1]))
      }
      if (exit !== "") assert.isTrue(view.text.startsWith(exit))
    },
    runs
  )

  it("Cline: the 8,000-character cut, exactly", () => {
    const view = cline.shell.apply({ stdout: "x".repeat(20_000), stderr: "", exitCode: 0 }, SAVED)
    assert.strictEqual(
      view.text,
      `${"x".repeat(3983)}\n\n...[truncated 12034 chars]...\n\n${"x".repeat(3983)}`
    )
    assert.strictEqual(view.marker, "...[truncated 12034 chars]...")
  })

  it("head+tail cuts keep the first and the last line of a long output; tail cuts keep the last", () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`)
    const input = { stdout: `${lines.join("\n")}\n`, stderr: "", exitCode: 0 }
    for (const peer of [codex, geminiCli, rooCode, cline]) {
      const view = peer.shell.apply(input, SAVED)
      assert.include(view.head, "line 0\n", peer.name)
      assert.include(view.tail, "line 19999", peer.name)
      assert.notInclude(view.text, "line 10000\n", peer.name)
    }
    const tail = opencode.shell.apply(input, SAVED)
    assert.include(tail.text, "line 19999")
    assert.notInclude(tail.text, "line 0\n")
  })
})

/** A file of `count` lines, the i-th `width` characters long with its number inside. */
const fileOf = (count: number, width: number): string =>
  Array.from({ length: count }, (_, i) => `${i}:`.padEnd(width, "x")).join("\n") + "\n"

const file: fc.Arbitrary<Location> = fc
  .oneof(
    fc.record({ count: fc.integer({ min: 1, max: 5000 }), width: fc.integer({ min: 1, max: 120 }) }),
    fc.record({ count: fc.integer({ min: 1, max: 60 }), width: fc.integer({ min: 1000, max: 12_000 }) })
  )
  .map(({ count, width }) => ({ kind: "file", path: "/work/file.txt", content: fileOf(count, width) }))

/** Laws every Read model shares: the first lines, in order, each whole or clipped to `width`. */
const readLaws = (view: View, location: Location, width: number): void => {
  const lines = splitLines(location.content)
  const shown = view.shown ?? splitLines(view.head)
  assert.isTrue(location.content.startsWith(view.head), "the window is a prefix of the file")
  shown.forEach((line, i) => {
    const original = lines[i]!
    assert.isTrue(
      line === original || (original.length > width && line.startsWith(original.slice(0, width - 3))),
      `line ${i + 1} is shown whole or clipped to ${width}`
    )
  })
  if (view.truncated) {
    assert.isDefined(view.marker)
    assert.strictEqual(view.location, location, "a cut names the file")
  } else assert.deepStrictEqual([...shown], lines, "an uncut window shows every line as it is")
}

describe("peer Read models", () => {
  it.prop(
    "Claude Code: refuses over 256 KB, else every line numbered, a partial view past 25,000 tokens",
    { location: file },
    ({ location }) => {
      const view = claudeCode.read.apply(location)
      if (byteLength(location.content) > CLAUDE_CODE_READ_MAX_BYTES) {
        assert.isTrue(view.truncated)
        assert.match(view.text, /exceeds maximum allowed size \(256KB\)/)
        assert.strictEqual(view.location, location)
        return
      }
      readLaws(view, location, Number.POSITIVE_INFINITY)
      const tokens = TokenEstimator.estimate(splitLines(location.content).join("\n"))
      assert.strictEqual(view.truncated, tokens > CLAUDE_CODE_READ_MAX_TOKENS)
      if (view.truncated) {
        const kept = view.shown!.length
        assert.include(view.marker!, `offset=${kept + 1}`)
        assert.isTrue(
          kept === 1 || TokenEstimator.estimate(view.shown!.join("\n")) <= CLAUDE_CODE_READ_MAX_TOKENS
        )
      }
      assert.isTrue(view.text.startsWith("1\t"))
    },
    runs
  )

  it.prop(
    "opencode: 2000 lines within 50 KB, lines clipped at 2000 characters, a notice naming the next offset",
    { location: file },
    ({ location }) => {
      const view = opencode.read.apply(location)
      readLaws(view, location, OPENCODE_LINE_CHARS)
      const shown = view.shown!
      assert.isAtMost(shown.length, OPENCODE_READ_LINES)
      assert.isAtMost(byteLength(shown.join("\n")), OPENCODE_MAX_BYTES)
      if (shown.length < splitLines(location.content).length)
        assert.include(view.marker!, `Use offset=${shown.length + 1} to continue`)
    },
    runs
  )

  it.prop(
    "Gemini CLI: 2000 lines, lines clipped at 2000 characters, a notice naming the next start line",
    { location: file },
    ({ location }) => {
      const view = geminiCli.read.apply(location)
      const lines = location.content.split(/\r?\n/)
      assert.isAtMost(view.shown!.length, GEMINI_READ_LINES)
      view.shown!.forEach((line, i) => assert.isTrue(line === lines[i] || line.endsWith("... [truncated]")))
      assert.strictEqual(
        view.truncated,
        lines.length > GEMINI_READ_LINES || lines.some((line) => line.length > GEMINI_LINE_CHARS)
      )
      if (view.truncated) assert.include(view.marker!, `start_line: ${view.shown!.length + 1}`)
    },
    runs
  )

  it.prop(
    "Roo Code: 2000 numbered lines, lines clipped at 2000 characters, a notice naming the next offset",
    { location: file },
    ({ location }) => {
      const view = rooCode.read.apply(location)
      const lines = location.content.split("\n")
      assert.isAtMost(view.shown!.length, ROO_READ_LINES)
      view.shown!.forEach((line, i) =>
        assert.isTrue(line === lines[i] || (line.length === ROO_LINE_CHARS && line.endsWith("...")))
      )
      assert.strictEqual(
        view.truncated,
        lines.length > ROO_READ_LINES ||
          lines.slice(0, ROO_READ_LINES).some((line) => line.length > ROO_LINE_CHARS)
      )
      if (lines.length > ROO_READ_LINES) assert.include(view.marker!, `offset=${ROO_READ_LINES + 1}`)
    },
    runs
  )

  it.prop(
    "Cline: 2000 numbered lines within 48,000 characters, lines clipped at 2000, then the 8,000-character cut keeping the window's first and last lines",
    { location: file },
    ({ location }) => {
      const view = cline.read.apply(location)
      assert.isAtMost(view.text.length, CLINE_TOOL_RESULT_CHARS, "never more than 8,000 characters")
      const lines = splitLines(location.content)
      const shown = view.shown!
      assert.isAtMost(shown.length, CLINE_READ_LINES)
      assert.isTrue(location.content.startsWith(view.head), "the head is a prefix of the file")
      // every line shown is a line of the window, whole or clipped, in order, with its own number
      let from = 0
      for (const line of shown) {
        const at = lines.findIndex(
          (original, i) =>
            i >= from &&
            (line === original ||
              (original.length > CLINE_LINE_CHARS &&
                line === `${original.slice(0, CLINE_LINE_CHARS)} [line truncated]`))
        )
        assert.isAtLeast(at, 0, "a shown line is a line of the file, in order")
        from = at + 1
      }
      if (!view.truncated) {
        assert.deepStrictEqual([...shown], lines)
        assert.isAtMost(shown.join("\n").length, CLINE_READ_CHARS)
      } else {
        assert.strictEqual(view.location, location, "a cut names the file")
        assert.isDefined(view.marker)
        assert.include(view.text, view.marker!)
      }
    },
    runs
  )

  it.prop(
    "Codex: the file through its shell cut, pointing back to the file when cut",
    { location: file },
    ({ location }) => {
      const { location: named, ...view } = codex.read.apply(location)
      shellLaws(view, location.content)
      if (view.truncated) assert.strictEqual(named, location)
    }
  )
})

const searchInput = fc.record({
  lines: fc.array(fc.string({ unit: fc.constantFrom("a", "b", "E", "R", " ", "é"), maxLength: 700 }), {
    maxLength: 400
  }),
  kind: fc.constantFrom("copy" as const, "file" as const)
})

describe("peer search models", () => {
  it.prop(
    "every search shows only matching lines, in order, each whole or clipped, within its cap",
    { input: searchInput },
    ({ input }) => {
      const location: Location = { kind: input.kind, path: "/work/out.txt", content: input.lines.join("\n") }
      const pattern = /ER/
      const matches = matchingLines(location.content, pattern).map((match) => match.text)
      const caps: Record<string, number> = {
        [claudeCode.name]: CLAUDE_CODE_GREP_HEAD_LIMIT,
        [opencode.name]: OPENCODE_GREP_LIMIT,
        [geminiCli.name]: GEMINI_GREP_MAX_MATCHES,
        [pi.name]: PI_GREP_LIMIT,
        [rtk.name]: CLAUDE_CODE_GREP_HEAD_LIMIT
      }
      for (const peer of peers) {
        const result = peer.search.apply(location, pattern)
        if (peer === cline) assert.isAtMost(result.text.length, CLINE_TOOL_RESULT_CHARS, "Cline's 8,000 cap")
        assert.isAtMost(
          result.shown.length,
          Math.min(matches.length, caps[peer.name] ?? matches.length),
          peer.name
        )
        let from = 0
        for (const line of result.shown) {
          const at = matches.findIndex(
            (match, i) =>
              i >= from &&
              (match.trimEnd() === line.trimEnd() ||
                line.startsWith(match.slice(0, 400)) ||
                line === "[Omitted long line with 1 matches]")
          )
          assert.isAtLeast(at, 0, `${peer.name} shows only matching lines, in order`)
          from = at + 1
        }
        if (
          matches.length > 0 &&
          matches.every((m) => byteLength(m) <= CLAUDE_CODE_GREP_MAX_COLUMNS && m.length < 500)
        )
          assert.isAbove(result.shown.length, 0, `${peer.name} shows short matches`)
      }
    },
    runs
  )
})

describe("one more call", () => {
  const needleRule = { describe: "the error", pattern: /^ERROR here$/, stream: "stdout" as const }
  const output = `${"noise line\n".repeat(20_000)}ERROR here\n${"more noise\n".repeat(20_000)}`
  const input = { stdout: output, stderr: "", exitCode: 1 }
  const needle = locate(needleRule, input)
  const estimate = TokenEstimator.estimate

  it("a peer that saves a copy reaches a needle its cut dropped, and pays for the search", () => {
    for (const peer of [claudeCode, opencode, geminiCli, rooCode, pi]) {
      // Claude Code saves the output of a command that succeeded only
      const view = peer.shell.apply(peer === claudeCode ? { ...input, exitCode: 0 } : input, SAVED)
      const cell = peerCell(peer, view, needle, needleRule.pattern, estimate)
      assert.isFalse(cell.visible, peer.name)
      assert.isTrue(cell.reachable, peer.name)
      assert.isAbove(cell.callTokens, 0, peer.name)
    }
  })

  it("a peer without a copy loses it, and makes no call (Claude Code when the command failed)", () => {
    for (const peer of [codex, cline, claudeCode, rtk]) {
      const cell = peerCell(peer, peer.shell.apply(input, SAVED), needle, needleRule.pattern, estimate)
      assert.deepStrictEqual([cell.visible, cell.reachable, cell.callTokens], [false, false, 0], peer.name)
    }
  })

  it("a needle in the first result needs no call, on the first line too (after a host's label)", () => {
    for (const stdout of ["ok\nERROR here\n", "ERROR here\n"]) {
      const small = { stdout, stderr: "", exitCode: 1 }
      for (const peer of peers) {
        const cell = peerCell(
          peer,
          peer.shell.apply(small, SAVED),
          locate(needleRule, small),
          needleRule.pattern,
          estimate
        )
        assert.deepStrictEqual(
          [cell.visible, cell.callTokens],
          [true, 0],
          `${peer.name}: ${JSON.stringify(stdout)}`
        )
      }
    }
  })

  it("every peer names the files and versions its numbers come from", () => {
    assert.strictEqual(peers.length, 8)
    for (const peer of peers) {
      assert.isAbove(peer.version.length, 4, peer.name)
      assert.isAtLeast(peer.sources.length, 3, peer.name)
      for (const source of peer.sources) assert.match(source.from, /@|at [0-9a-f]{12}|npm/, peer.name)
    }
  })
})
