import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { LineClip, Utf8 } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Grep } from "@toolcap/tools"
import {
  attempt,
  leftOf,
  oracleFlags,
  plain,
  ripgrep,
  rightOf,
  searchEnv,
  setMtime,
  sortedCopy,
  writeTree
} from "./readFixtures.js"
import * as Rg from "../src/internal/search/ripgrep.js"

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : 1)

const grep = (input: unknown, options?: Grep.GrepOptions) => attempt(Grep.grep(input, options))

const asContent = (result: Grep.GrepResult) => {
  if (!("matches" in result)) throw new Error(`expected content mode, got ${JSON.stringify(result)}`)
  return result
}
const asFiles = (result: Grep.GrepResult) => {
  if (!("files" in result) || typeof result.files === "number")
    throw new Error("expected filesWithMatches mode")
  return result as typeof Grep.FilesResult.Type
}
const asCounts = (result: Grep.GrepResult) => {
  if (!("counts" in result)) throw new Error("expected count mode")
  return result
}

/** Live processes whose command line mentions `needle` (zombies aside). */
const liveProcessesMentioning = (needle: string): Array<number> =>
  fs
    .readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
        const state = /^State:\s+(\w)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
        return cmdline.includes(needle) && state !== "Z" && Number(pid) !== process.pid ? [Number(pid)] : []
      } catch {
        return []
      }
    })

/**
 * Grep's content result for `line` (among short lines) agrees with ripgrep's own `--column`: a
 * window exactly where the clip of the line's start does not reach the first match, holding it.
 */
const windowsAsRipgrepColumns = (example: {
  readonly line: string
  readonly pattern: string
  readonly caseInsensitive: boolean
  readonly named: boolean
  readonly maxLineChars: number
}) =>
  Effect.gen(function* () {
    const { caseInsensitive, line, maxLineChars, pattern } = example
    const env = yield* searchEnv({ maxLineChars })
    const lines = ["head", line, `${line} ab`, "ab"]
    writeTree(env.workspace, { "f.txt": `${lines.join("\n")}\n` })
    // ripgrep's own first-match columns, the line printed whole
    const oracle = new Map(
      ripgrep(
        [
          "--no-config",
          "--column",
          "--line-number",
          "--no-heading",
          caseInsensitive ? "--ignore-case" : "--case-sensitive",
          `--regexp=${pattern}`,
          "f.txt"
        ],
        env.workspace
      ).map((record) => {
        const [number, column] = record.split(":")
        return [Number(number), Number(column) - 1] as const
      })
    )
    const result = asContent(
      rightOf(
        yield* grep({
          pattern,
          caseInsensitive,
          outputMode: "content",
          ...(example.named ? { path: "f.txt" } : {})
        }).pipe(Effect.provide(env.context))
      )
    )
    assert.deepStrictEqual(
      result.matches.map((match) => match.line),
      [...oracle.keys()]
    )
    for (const match of result.matches) {
      const text = lines[match.line - 1]!
      const bytes = Buffer.from(text)
      const first = oracle.get(match.line)!
      const keptBytes = Buffer.byteLength(LineClip.clipLine(text, maxLineChars).text)
      const clipped = [...text].length > maxLineChars
      assert.strictEqual(
        match.column !== undefined,
        clipped && first >= keptBytes,
        `${JSON.stringify(example)} line ${match.line}`
      )
      const start = match.column === undefined ? 0 : match.column - 1
      assert.isTrue(
        bytes.subarray(start, start + Buffer.byteLength(match.text)).equals(Buffer.from(match.text))
      )
      if (match.column !== undefined) {
        assert.isAtMost(start, first)
        assert.isAbove(start + Buffer.byteLength(match.text), first)
      }
    }
  })

describe("Grep results", () => {
  it.scopedLive("stops at headLimit (default 200) with truncated: true", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "many.txt": Array.from({ length: 500 }, (_, i) => `hit ${i + 1}\n`).join("")
      })
      const result = asContent(
        rightOf(yield* grep({ pattern: "hit", outputMode: "content" }).pipe(Effect.provide(env.context)))
      )
      assert.strictEqual(result.matches.length, 200)
      assert.deepStrictEqual(result.matches[199], { path: "many.txt", line: 200, text: "hit 200" })
      assert.strictEqual(result.count, 200)
      assert.strictEqual(result.files, 1)
      assert.isTrue(result.truncated)
      assert.strictEqual(result.truncation?.limitLines, 200)
      assert.include(result.notice, "headLimit 200")
      const small = asContent(
        rightOf(
          yield* grep({ pattern: "hit 4\\d\\d", outputMode: "content", headLimit: 7 }).pipe(
            Effect.provide(env.context)
          )
        )
      )
      assert.deepStrictEqual(
        small.matches.map((m) => m.line),
        [400, 401, 402, 403, 404, 405, 406]
      )
      assert.isTrue(small.truncated)
      const all = asContent(
        rightOf(
          yield* grep({ pattern: "hit 49\\d", outputMode: "content" }).pipe(Effect.provide(env.context))
        )
      )
      assert.strictEqual(all.matches.length, 10)
      assert.isFalse(all.truncated)
      assert.isUndefined(all.notice)
    })
  )

  it.scopedLive("orders files by modification time, newest first, ties by path, in every mode", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "old.txt": "needle 1\nneedle 2\n",
        "new.txt": "needle\n",
        "tie-b.txt": "needle\n",
        "tie-a.txt": "needle\nneedle\nneedle\n",
        "none.txt": "nothing here\n"
      })
      setMtime(path.join(env.workspace, "old.txt"), 1_000)
      setMtime(path.join(env.workspace, "new.txt"), 5_000)
      setMtime(path.join(env.workspace, "tie-b.txt"), 3_000)
      setMtime(path.join(env.workspace, "tie-a.txt"), 3_000)
      const files = asFiles(rightOf(yield* grep({ pattern: "needle" }).pipe(Effect.provide(env.context))))
      assert.deepStrictEqual(files.files, ["new.txt", "tie-a.txt", "tie-b.txt", "old.txt"])
      assert.strictEqual(files.count, 4)
      for (const spelling of ["files_with_matches", "files-with-matches", "filesWithMatches"]) {
        const again = asFiles(
          rightOf(yield* grep({ pattern: "needle", outputMode: spelling }).pipe(Effect.provide(env.context)))
        )
        assert.deepStrictEqual(again.files, files.files)
      }
      const counts = asCounts(
        rightOf(yield* grep({ pattern: "needle", outputMode: "count" }).pipe(Effect.provide(env.context)))
      )
      assert.deepStrictEqual(counts.counts, [
        { path: "new.txt", count: 1 },
        { path: "tie-a.txt", count: 3 },
        { path: "tie-b.txt", count: 1 },
        { path: "old.txt", count: 2 }
      ])
      assert.strictEqual(counts.count, 7)
      const content = asContent(
        rightOf(
          yield* grep({ pattern: "needle", outputMode: "content", headLimit: 5 }).pipe(
            Effect.provide(env.context)
          )
        )
      )
      assert.deepStrictEqual(
        content.matches.map((m) => `${m.path}:${m.line}`),
        ["new.txt:1", "tie-a.txt:1", "tie-a.txt:2", "tie-a.txt:3", "tie-b.txt:1"]
      )
      assert.strictEqual(content.files, 3)
    })
  )

  it.scopedLive("count mode agrees with rg --count", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "a.ts": "foo\nfoo foo\nbar\n",
        "src/b.ts": "foo\r\nx\r\nfoo\r\n",
        "src/c.md": "no\n",
        ".hidden/d.txt": "foo\n"
      })
      const ours = asCounts(
        rightOf(yield* grep({ pattern: "foo", outputMode: "count" }).pipe(Effect.provide(env.context)))
      )
      const theirs = ripgrep([...oracleFlags, "--count", "--regexp=foo", "."], env.workspace).map((line) => {
        const at = line.lastIndexOf(":")
        return { path: plain(line.slice(0, at)), count: Number(line.slice(at + 1)) }
      })
      assert.deepStrictEqual(sortedCopy(ours.counts, byPath), sortedCopy(theirs, byPath))
    })
  )

  it.scopedLive("clips lines at 2000 code points, counts them, and returns valid UTF-8", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "wide.txt": `needle ${"x".repeat(4000)}\nshort needle\n${"🎉".repeat(2500)} needle\r\n`
      })
      const result = asContent(
        rightOf(yield* grep({ pattern: "needle", outputMode: "content" }).pipe(Effect.provide(env.context)))
      )
      assert.deepStrictEqual(
        result.matches.map((m) => [m.line, [...m.text].length, m.column]),
        [
          [1, 2000, undefined],
          [2, 12, undefined],
          // the match lies past the clip: a window around it, 500 characters before it
          [3, 506, 2000 * 4 + 5]
        ]
      )
      assert.strictEqual(result.matches[0]!.text, `needle ${"x".repeat(1993)}`)
      assert.strictEqual(result.matches[2]!.text, `${"🎉".repeat(499)} needle`)
      for (const match of result.matches) assert.strictEqual(Utf8.decode(Utf8.encode(match.text)), match.text)
      assert.strictEqual(result.truncation?.clippedLines, 2)
      assert.include(result.notice, "2 lines longer than 2000 characters were clipped")
      assert.include(result.notice, "1 line whose first match lies past the clip is shown around that match")
    })
  )

  it.live.prop(
    "a long line's window around its first match is the line's own bytes at its column, with the match, within the clip",
    {
      before: FastCheck.array(FastCheck.constantFrom("a", "é", "€", "🎉", " "), {
        minLength: 0,
        maxLength: 3000
      }),
      after: FastCheck.array(FastCheck.constantFrom("b", "ü", "🎉"), { minLength: 0, maxLength: 300 }),
      maxLineChars: FastCheck.integer({ min: 8, max: 400 })
    },
    ({ after, before, maxLineChars }) =>
      Effect.gen(function* () {
        const env = yield* searchEnv({ maxLineChars })
        const line = `${before.join("")}NEEDLE${after.join("")}`
        writeTree(env.workspace, { "f.txt": `head\n${line}\n` })
        const result = asContent(
          rightOf(yield* grep({ pattern: "NEEDLE", outputMode: "content" }).pipe(Effect.provide(env.context)))
        )
        const match = result.matches[0]!
        assert.strictEqual(match.line, 2)
        assert.isAtMost([...match.text].length, maxLineChars)
        const bytes = Buffer.from(line)
        const start = match.column === undefined ? 0 : match.column - 1
        assert.isTrue(
          bytes.subarray(start, start + Buffer.byteLength(match.text)).equals(Buffer.from(match.text))
        )
        const charsBefore = Array.from(line.slice(0, line.indexOf("NEEDLE"))).length
        // a window is used exactly where the clip of the line's start would hide the match's start
        assert.strictEqual(match.column !== undefined, charsBefore >= maxLineChars)
        // and then shows the whole match (a quarter of the width before it, 6 characters of it)
        if (match.column !== undefined || charsBefore + 6 <= maxLineChars)
          assert.include(match.text, "NEEDLE")
      }).pipe(Effect.scoped),
    { fastCheck: { numRuns: 60 } }
  )

  it.live.prop(
    "a clipped line shows a window exactly where ripgrep's --column puts its first match past the clip, for literals, regexes and either case, walked or named",
    {
      // characters that fold (K, the Kelvin sign), end words, or take 1 to 4 bytes
      pieces: FastCheck.array(
        FastCheck.constantFrom("a", "b", "ab", "AB", "k", "\u212a", "é", "🎉", " ", "x", "xx", "-"),
        { minLength: 0, maxLength: 700 }
      ),
      // a start of 4-byte characters about as long as the clip: ripgrep's printed start then ends
      // just past the clip, where an end assertion could be fooled by the cut
      lead: FastCheck.option(FastCheck.integer({ min: -3, max: 2 })),
      pattern: FastCheck.constantFrom(
        "[a-z]+$",
        "[a-zé]+\\b",
        "ab",
        "k",
        "é",
        "a[b]",
        "b$",
        "\\bab\\b",
        "x+",
        "(?:é|🎉)b",
        "[^ ]{12}",
        "b|a",
        "x*"
      ),
      caseInsensitive: FastCheck.boolean(),
      named: FastCheck.boolean(),
      maxLineChars: FastCheck.integer({ min: 8, max: 120 })
    },
    ({ caseInsensitive, lead, maxLineChars, named, pattern, pieces }) =>
      windowsAsRipgrepColumns({
        line: `${"🎉".repeat(lead === null ? 0 : Math.max(0, maxLineChars + lead))}${pieces.join("")}`,
        pattern,
        caseInsensitive,
        named,
        maxLineChars
      }).pipe(Effect.scoped),
    { fastCheck: { numRuns: 80 } }
  )

  it.scopedLive(
    "a first match the start of a line cannot place is placed by ripgrep: a Kelvin sign folded to k, an end assertion at the cut of the printed start",
    () =>
      Effect.forEach(
        [
          // ignoring case, K (the Kelvin sign) is a k: the first match, before the clip or past it
          { line: `\u212a${"x".repeat(40)}k`, pattern: "k", caseInsensitive: true },
          { line: `${"x".repeat(40)}\u212a${"x".repeat(5)}k`, pattern: "k", caseInsensitive: true },
          // ripgrep prints 4 * 20 + 4 bytes of the line: the letters end there, the line goes on
          { line: `${"🎉".repeat(19)}${"x".repeat(12)} ab`, pattern: "[a-z]+$", caseInsensitive: false },
          { line: `${"🎉".repeat(19)}${"x".repeat(12)}é ab`, pattern: "x+\\b", caseInsensitive: false }
        ],
        (example) =>
          Effect.forEach([false, true], (named) =>
            windowsAsRipgrepColumns({ ...example, named, maxLineChars: 20 })
          ),
        { discard: true }
      )
  )

  it.scopedLive("context lines come marked, in file order, around their match", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "c.txt": "one\ntwo\nTHREE\nfour\nfive\n" })
      const result = asContent(
        rightOf(
          yield* grep({
            pattern: "three",
            caseInsensitive: true,
            outputMode: "content",
            contextBefore: 1,
            contextAfter: 2
          }).pipe(Effect.provide(env.context))
        )
      )
      assert.deepStrictEqual(result.matches, [
        { path: "c.txt", line: 2, text: "two", context: true },
        { path: "c.txt", line: 3, text: "THREE" },
        { path: "c.txt", line: 4, text: "four", context: true },
        { path: "c.txt", line: 5, text: "five", context: true }
      ])
      assert.strictEqual(result.count, 1)
      const multiline = asContent(
        rightOf(
          yield* grep({ pattern: "two.THREE", multiline: true, outputMode: "content" }).pipe(
            Effect.provide(env.context)
          )
        )
      )
      assert.deepStrictEqual(
        multiline.matches.map((m) => [m.line, m.text]),
        [
          [2, "two"],
          [3, "THREE"]
        ]
      )
    })
  )

  it.scopedLive("glob and type filter files without overriding ignore rules", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        ".gitignore": "ignored.ts\n",
        "ignored.ts": "hit\n",
        "a.ts": "hit\n",
        "deep/b.ts": "hit\n",
        "deep/c.tsx": "hit\n",
        "src/d.ts": "hit\n",
        "e.md": "hit\n"
      })
      const run = (input: Record<string, unknown>) =>
        grep({ pattern: "hit", ...input }).pipe(
          Effect.provide(env.context),
          Effect.map((either) => sortedCopy(asFiles(rightOf(either)).files))
        )
      assert.deepStrictEqual(yield* run({ glob: "*.ts" }), ["a.ts", "deep/b.ts", "src/d.ts"])
      assert.deepStrictEqual(yield* run({ glob: "*.{ts,tsx}" }), [
        "a.ts",
        "deep/b.ts",
        "deep/c.tsx",
        "src/d.ts"
      ])
      assert.deepStrictEqual(yield* run({ glob: "src/*.ts" }), ["src/d.ts"])
      assert.deepStrictEqual(
        yield* run({ glob: "!*.ts" }),
        [".gitignore", "deep/c.tsx", "e.md"].filter((f) => f !== ".gitignore")
      )
      assert.deepStrictEqual(yield* run({ type: "md" }), ["e.md"])
      const badType = leftOf(
        yield* grep({ pattern: "hit", type: "no-such-type" }).pipe(Effect.provide(env.context))
      )
      assert.strictEqual(badType.code, "TOOL_INVALID_INPUT")
      assert.include(badType.message, "type")
    })
  )
})

describe("Grep reach", () => {
  it.scopedLive("binary files are skipped silently; the files Read would refuse", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "text.txt": "needle\n",
        "nul.dat": Buffer.from("needle\0needle\n"),
        "picture.png": "needle\n",
        "utf16.txt": Buffer.from("\ufeffneedle\n", "utf16le"),
        "late-nul.txt": `needle\n${"filler\n".repeat(1000)}\0\n`
      })
      const result = asFiles(rightOf(yield* grep({ pattern: "needle" }).pipe(Effect.provide(env.context))))
      assert.deepStrictEqual(sortedCopy(result.files), ["late-nul.txt", "text.txt"])
      assert.isUndefined(result.notice)
      const direct = asFiles(
        rightOf(yield* grep({ pattern: "needle", path: "nul.dat" }).pipe(Effect.provide(env.context)))
      )
      assert.deepStrictEqual(direct.files, [])
    })
  )

  it.scopedLive("an explicit path reaches into an ignored tree and into the session's spill files", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        ".gitignore": "node_modules/\n",
        "main.ts": "import x\n",
        "node_modules/lib/index.js": "import y\n",
        "node_modules/lib/.gitignore": "test/\n",
        "node_modules/lib/test/t.js": "import z\n"
      })
      const implicit = asFiles(rightOf(yield* grep({ pattern: "import" }).pipe(Effect.provide(env.context))))
      assert.deepStrictEqual(implicit.files, ["main.ts"])
      const explicit = asFiles(
        rightOf(yield* grep({ pattern: "import", path: "node_modules" }).pipe(Effect.provide(env.context)))
      )
      assert.deepStrictEqual(explicit.files, ["node_modules/lib/index.js"])
      const spilled = Option.getOrThrow(
        yield* Effect.flatMap(Scratch.Scratch, (scratch) =>
          scratch.spill("bash-stdout", Utf8.encode("build ok\nerror: disk full\n"))
        ).pipe(Effect.provide(env.context))
      )
      const fromSpill = asContent(
        rightOf(
          yield* grep({ pattern: "error", path: env.sessionDir, outputMode: "content" }).pipe(
            Effect.provide(env.context)
          )
        )
      )
      assert.deepStrictEqual(fromSpill.matches, [{ path: spilled, line: 2, text: "error: disk full" }])
      const oneFile = asContent(
        rightOf(
          yield* grep({ pattern: "disk", path: spilled, outputMode: "content" }).pipe(
            Effect.provide(env.context)
          )
        )
      )
      assert.deepStrictEqual(oneFile.matches, [{ path: spilled, line: 2, text: "error: disk full" }])
    })
  )
})

describe("Grep records", () => {
  it.scopedLive(
    "a text file with a late NUL byte shows its matching lines, and the next file's record is intact",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        writeTree(env.workspace, {
          "late.txt": Buffer.concat([Buffer.alloc(5000, "x"), Buffer.from("\0\nneedle after nul\n")]),
          "next.txt": "needle next\n"
        })
        setMtime(path.join(env.workspace, "late.txt"), 2000)
        setMtime(path.join(env.workspace, "next.txt"), 1000)
        const result = asContent(
          rightOf(yield* grep({ pattern: "needle", outputMode: "content" }).pipe(Effect.provide(env.context)))
        )
        assert.deepStrictEqual(
          result.matches.map((m) => [m.path, m.line, m.text]),
          [
            ["late.txt", 2, "needle after nul"],
            ["next.txt", 1, "needle next"]
          ]
        )
      })
  )
})

describe("Grep refusals and processes", () => {
  it.scopedLive("an invalid regex fails with TOOL_PATTERN_INVALID carrying ripgrep's reason", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "a.txt": "a\n" })
      const error = leftOf(yield* grep({ pattern: "foo(bar" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(error.code, "TOOL_PATTERN_INVALID")
      assert.include(error.message, "unclosed group")
      // even with nothing to search, the pattern is checked
      fs.rmSync(path.join(env.workspace, "a.txt"))
      const empty = leftOf(yield* grep({ pattern: "[z-a]" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(empty.code, "TOOL_PATTERN_INVALID")
    })
  )

  it.scopedLive(
    "a 100 KB pattern is refused with a typed error, at once; a long pattern within the limit works",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        // a periodic 100 KB literal against a line holding it keeps ripgrep busy for minutes
        const huge = "ab".repeat(51_200)
        writeTree(env.workspace, { "hit.txt": `${huge}\n`, "miss.txt": "ab\n" })
        const refused = leftOf(yield* grep({ pattern: huge }).pipe(Effect.provide(env.context)))
        assert.strictEqual(refused.code, "TOOL_INVALID_INPUT")
        assert.include(refused.message, "102400 bytes, over the 4KB limit")
        assert.isBelow(refused.message.length, 1_000)
        const long = "ab".repeat(2_000)
        const found = asFiles(rightOf(yield* grep({ pattern: long }).pipe(Effect.provide(env.context))))
        assert.deepStrictEqual(found.files, ["hit.txt"])
      })
  )

  it.scopedLive(
    "past one argument's size (when a host allows such patterns) the pattern travels on stdin",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv({ grepMaxPatternBytes: 512 * 1024 })
        const words = Array.from({ length: 20_000 }, (_, i) => `word${i}x`)
        writeTree(env.workspace, { "a.txt": "word19999x\n", "b.txt": "word5\n" })
        const pattern = words.join("|")
        assert.isAbove(Buffer.byteLength(pattern), 128 * 1024)
        const found = asFiles(rightOf(yield* grep({ pattern }).pipe(Effect.provide(env.context))))
        assert.deepStrictEqual(found.files, ["a.txt"])
        const broken = leftOf(yield* grep({ pattern: `${pattern}|(` }).pipe(Effect.provide(env.context)))
        assert.strictEqual(broken.code, "TOOL_PATTERN_INVALID")
        assert.isBelow(broken.message.length, 5_000)
      })
  )

  it.scopedLive("bad input gets typed errors naming the field", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "a.txt": "a\n" })
      assert.strictEqual(spawnSync("mkfifo", [path.join(env.workspace, "pipe")]).status, 0)
      const cases: Array<[unknown, string, string]> = [
        [{ pattern: "a", headLimit: 0 }, "TOOL_INVALID_INPUT", "headLimit"],
        [{ pattern: "a", headLimit: -3 }, "TOOL_INVALID_INPUT", "headLimit"],
        [{ pattern: "a", contextBefore: -1 }, "TOOL_INVALID_INPUT", "contextBefore"],
        [{ pattern: "a", outputMode: "lines" }, "TOOL_INVALID_INPUT", "outputMode"],
        [{ pattern: "a\0" }, "TOOL_INVALID_INPUT", "NUL"],
        [{ pattern: "a", path: "../../etc/passwd" }, "TOOL_PATH_DENIED", "outside"],
        [{ pattern: "a", path: "b\0c" }, "TOOL_INVALID_INPUT", "NUL"],
        [{ pattern: "a", path: "missing" }, "TOOL_NOT_FOUND", "Glob"],
        [{ pattern: "a", path: "pipe" }, "TOOL_INVALID_INPUT", "regular file"],
        [{ pattern: "a", glob: "" }, "TOOL_INVALID_INPUT", "glob"],
        [{ pattern: "a", type: "x y" }, "TOOL_INVALID_INPUT", "type"],
        [{ regex: "a" }, "TOOL_INVALID_INPUT", "fields"]
      ]
      for (const [input, code, hint] of cases) {
        const error = leftOf(yield* grep(input).pipe(Effect.provide(env.context)))
        assert.strictEqual(error.code, code, JSON.stringify(input))
        assert.include(error.message, hint, JSON.stringify(input))
      }
    })
  )

  it.scopedLive("ripgrep is killed when its fiber is interrupted, and only then does the call end", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const fifo = path.join(env.workspace, "blocking-fifo")
      assert.strictEqual(spawnSync("mkfifo", [fifo]).status, 0)
      const rg = yield* Rg.binary
      // nobody writes to the FIFO: ripgrep blocks opening it until it is killed
      const fiber = yield* Effect.fork(
        Rg.run(rg, ["--regexp=x", "--", fifo], { cwd: env.workspace, onData: () => {} }).pipe(
          Effect.provide(env.context)
        )
      )
      let seen: Array<number> = []
      for (let poll = 0; poll < 200 && seen.length === 0; poll++) {
        yield* Effect.sleep(Duration.millis(10))
        seen = liveProcessesMentioning(fifo)
      }
      assert.strictEqual(seen.length, 1)
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(liveProcessesMentioning(fifo), [])
    })
  )

  it.scopedLive("an aborted signal interrupts the call", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "a.txt": "a\n" })
      const controller = new AbortController()
      controller.abort()
      const exit = yield* Effect.exit(Grep.grep({ pattern: "a" }, { signal: controller.signal })).pipe(
        Effect.provide(env.context)
      )
      assert.isTrue(Exit.isInterrupted(exit))
    })
  )
})

describe("Grep laws", () => {
  const lineArbitrary = FastCheck.oneof(
    FastCheck.string({ unit: "grapheme", maxLength: 30 }),
    FastCheck.constantFrom("k".repeat(2100), "é".repeat(2100), "🎉".repeat(2100))
  )

  it.scopedLive.prop(
    "results are the newest files' matches in order, capped by headLimit, valid UTF-8, truncated iff capped",
    [
      FastCheck.array(
        FastCheck.tuple(
          FastCheck.integer({ min: 0, max: 4 }),
          FastCheck.array(lineArbitrary, { maxLength: 6 })
        ),
        { minLength: 1, maxLength: 8 }
      ),
      FastCheck.integer({ min: 1, max: 12 })
    ],
    ([files, headLimit]) =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const expected: Array<{ path: string; line: number; time: number; size: number }> = []
        files.forEach(([age, lines], i) => {
          const name = `f${i}.txt`
          const body = lines.map((line) => `${line.replace(/[\r\n\0]/g, "")}|k\n`)
          writeTree(env.workspace, { [name]: body.join("") })
          const time = 1_000_000 - age * 10
          setMtime(path.join(env.workspace, name), time)
          body.forEach((text, k) => {
            // rendered as `path:line:text` plus a newline, the text clipped at 2000 characters, or
            // where the match (`|k` at the end) lies past that, the 500 characters before it and it
            const chars = Array.from(text.slice(0, -1))
            const at = chars.length - 2
            const clipped =
              at >= 2000 ? chars.slice(at - 500).join("") : LineClip.clipLine(text.slice(0, -1), 2000).text
            const size = Buffer.byteLength(name) + 1 + Buffer.byteLength(`:${k + 1}:${clipped}`) + 1
            expected.push({ path: name, line: k + 1, time, size })
          })
        })
        expected.sort(
          (a, b) => b.time - a.time || (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line)
        )
        const result = asContent(
          rightOf(
            yield* grep({ pattern: "\\|k$", outputMode: "content", headLimit }).pipe(
              Effect.provide(env.context)
            )
          )
        )
        // the newest entries up to headLimit, and as many as fit the 48KB budget (at least one)
        const admitted: typeof expected = []
        let bytes = 0
        for (const entry of expected) {
          if (admitted.length >= headLimit || (admitted.length > 0 && bytes + entry.size > 48 * 1024)) break
          admitted.push(entry)
          bytes += entry.size
        }
        assert.deepStrictEqual(
          result.matches.map((m) => `${m.path}:${m.line}`),
          admitted.map((e) => `${e.path}:${e.line}`)
        )
        assert.strictEqual(
          result.truncated,
          expected.length > admitted.length || result.truncation?.clippedLines !== undefined
        )
        for (const match of result.matches) {
          assert.isAtMost([...match.text].length, 2000)
          assert.strictEqual(Utf8.decode(Utf8.encode(match.text)), match.text)
        }
      }),
    { fastCheck: { numRuns: 20 } }
  )
})

describe("Grep on very long lines", () => {
  it.scopedLive(
    "a match in a 20 MB line comes back numbered, as a window around it, the line never held whole",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const long = `${"é".repeat(1000)}"\\\t${"x".repeat(20 * 1024 * 1024)} needle${"y".repeat(3000)}`
        writeTree(env.workspace, { "min.js": `first\n${long}\nneedle too\n` })
        const result = asContent(
          rightOf(yield* grep({ pattern: "needle", outputMode: "content" }).pipe(Effect.provide(env.context)))
        )
        assert.deepStrictEqual(
          result.matches.map((m) => [m.line, [...m.text].length]),
          [
            [2, 2000],
            [3, 10]
          ]
        )
        // 500 characters before the match, the rest after it
        const at = Buffer.byteLength(long.slice(0, long.indexOf(" needle") + 1))
        assert.strictEqual(result.matches[0]!.text, `${"x".repeat(499)} needle${"y".repeat(1494)}`)
        assert.strictEqual(result.matches[0]!.column, at - 500 + 1)
        assert.strictEqual(result.truncation?.clippedLines, 1)
        // the notice names a command that shows what follows the window
        const command = /`(tail -c [^`]+)`/.exec(result.notice ?? "")?.[1]
        assert.isDefined(command, result.notice)
        const shown = spawnSync("sh", ["-c", command!], { cwd: env.workspace, maxBuffer: 1 << 20 }).stdout
        assert.strictEqual(shown.toString(), `${"y".repeat(1506)}\nneedle too\n`)
      })
  )

  it.scopedLive(
    "a 1 GiB single line is searched in every mode: no TOOL_SPAWN_FAILED, a 2000-character view",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const file = path.join(env.workspace, "huge.txt")
        const fd = fs.openSync(file, "w")
        const block = Buffer.alloc(16 * 1024 * 1024, "a")
        fs.writeSync(fd, "needle ")
        for (let k = 0; k < 64; k++) fs.writeSync(fd, block)
        fs.writeSync(fd, " needle\n")
        fs.closeSync(fd)
        const files = asFiles(
          rightOf(yield* grep({ pattern: "needle", path: "huge.txt" }).pipe(Effect.provide(env.context)))
        )
        assert.deepStrictEqual(files.files, ["huge.txt"])
        const counts = asCounts(
          rightOf(
            yield* grep({ pattern: "needle", path: "huge.txt", outputMode: "count" }).pipe(
              Effect.provide(env.context)
            )
          )
        )
        assert.deepStrictEqual(counts.counts, [{ path: "huge.txt", count: 1 }])
        const content = asContent(
          rightOf(
            yield* grep({ pattern: "needle", path: "huge.txt", outputMode: "content" }).pipe(
              Effect.provide(env.context)
            )
          )
        )
        assert.deepStrictEqual(
          content.matches.map((m) => [m.line, m.text.length]),
          [[1, 2000]]
        )
        assert.strictEqual(content.matches[0]!.text, `needle ${"a".repeat(1993)}`)
        assert.strictEqual(content.truncation?.clippedLines, 1)
        fs.rmSync(file)
      }),
    120_000
  )
})
