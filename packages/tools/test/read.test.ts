import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { LineClip, ToolError, Utf8 } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { LineIndex, Read } from "@toolcap/tools"
import { attempt, leftOf, rightOf, searchEnv, writeTree } from "./readFixtures.js"

const read = (input: unknown) => attempt(Read.read(input))

const numbered = (from: number, to: number, width = 0) => {
  let out = ""
  for (let i = from; i <= to; i++) out += `${String(i).padStart(width, "0")}\n`
  return out
}

describe("Read windows", () => {
  it.scopedLive("returns a small file whole and byte-faithful, with totalLines at end of file", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const text = "alpha\r\nbeta\n\n\tgamma ünï 🎉\r\nlast line without newline"
      writeTree(env.workspace, { "a.txt": text })
      const result = rightOf(yield* read({ path: "a.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(result.content, text)
      assert.strictEqual(result.path, "a.txt")
      assert.strictEqual(result.root, "workspace")
      assert.strictEqual(result.offset, 1)
      assert.strictEqual(result.lineCount, 5)
      assert.strictEqual(result.totalLines, 5)
      assert.strictEqual(result.fileBytes, Buffer.byteLength(text))
      assert.isFalse(result.truncated)
      assert.isUndefined(result.notice)
      assert.isUndefined(result.truncation)
    })
  )

  it.scopedLive("an empty file reads as an empty window; any later offset is past its end", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "empty.txt": "" })
      const result = rightOf(yield* read({ path: "empty.txt" }).pipe(Effect.provide(env.context)))
      assert.deepStrictEqual(
        {
          content: result.content,
          lineCount: result.lineCount,
          totalLines: result.totalLines,
          truncated: result.truncated
        },
        { content: "", lineCount: 0, totalLines: 0, truncated: false }
      )
      const error = leftOf(yield* read({ path: "empty.txt", offset: 2 }).pipe(Effect.provide(env.context)))
      assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
      assert.include(error.message, "empty")
    })
  )

  it.scopedLive("stops at limit, at the 2000-line window and at the 48KB budget, whichever comes first", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      // 3000 short lines: the line window stops first
      writeTree(env.workspace, { "short.txt": numbered(1, 3000, 5), "wide.txt": "" })
      // 1000 lines of 100 bytes: the byte budget stops first (491 lines of 100 bytes fit in 49152)
      fs.writeFileSync(
        path.join(env.workspace, "wide.txt"),
        Array.from({ length: 1000 }, () => "w".repeat(99) + "\n").join("")
      )

      const byLines = rightOf(yield* read({ path: "short.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(byLines.lineCount, 2000)
      assert.strictEqual(byLines.content, numbered(1, 2000, 5))
      assert.isTrue(byLines.truncated)
      assert.isUndefined(byLines.totalLines)
      assert.strictEqual(byLines.truncation?.nextOffset, 2001)
      assert.include(byLines.notice, "offset 2001")

      const byBytes = rightOf(yield* read({ path: "wide.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(byBytes.lineCount, Math.floor(49152 / 100))
      assert.isAtMost(Buffer.byteLength(byBytes.content), 49152)
      assert.include(byBytes.notice, "48KB")
      assert.strictEqual(byBytes.truncation?.nextOffset, 492)

      const byLimit = rightOf(
        yield* read({ path: "short.txt", offset: 10, limit: 5 }).pipe(Effect.provide(env.context))
      )
      assert.strictEqual(byLimit.content, numbered(10, 14, 5))
      assert.strictEqual(byLimit.truncation?.nextOffset, 15)

      const clamped = rightOf(
        yield* read({ path: "short.txt", limit: 5000 }).pipe(Effect.provide(env.context))
      )
      assert.strictEqual(clamped.lineCount, 2000)
      assert.include(clamped.notice, "clamped to 2000")
    })
  )

  it.scopedLive("totalLines appears exactly when the window reaches end of file", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "ten.txt": numbered(1, 10) })
      const whole = rightOf(yield* read({ path: "ten.txt", limit: 10 }).pipe(Effect.provide(env.context)))
      assert.strictEqual(whole.totalLines, 10)
      assert.isFalse(whole.truncated)
      const short = rightOf(yield* read({ path: "ten.txt", limit: 9 }).pipe(Effect.provide(env.context)))
      assert.isUndefined(short.totalLines)
      assert.isTrue(short.truncated)
      const tail = rightOf(yield* read({ path: "ten.txt", offset: 10 }).pipe(Effect.provide(env.context)))
      assert.deepStrictEqual([tail.content, tail.lineCount, tail.totalLines], ["10\n", 1, 10])
    })
  )

  it.scopedLive(
    "paginates a multi-megabyte file instead of refusing it, and each notice names the next offset",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const text = Array.from(
          { length: 120_000 },
          (_, i) => `line ${i + 1} ${"lorem ipsum ".repeat(i % 5)}\n`
        ).join("")
        writeTree(env.workspace, { "big.log": text })
        assert.isAbove(text.length, 4 * 1024 * 1024)
        let offset = 1
        let pages = 0
        let joined = ""
        for (;;) {
          const page = rightOf(yield* read({ path: "big.log", offset }).pipe(Effect.provide(env.context)))
          pages++
          joined += page.content
          assert.isAtMost(Buffer.byteLength(page.content), 49152)
          if (page.totalLines !== undefined) {
            assert.strictEqual(page.totalLines, 120_000)
            assert.isFalse(page.truncated)
            break
          }
          assert.isTrue(page.truncated)
          assert.strictEqual(page.truncation?.nextOffset, offset + page.lineCount)
          assert.include(page.notice, `offset ${offset + page.lineCount}`)
          offset += page.lineCount
        }
        assert.strictEqual(joined, text)
        assert.isAbove(pages, 80)
      })
  )

  it.scopedLive("clips lines longer than 2000 code points, keeps their endings and counts them", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const longAscii = "x".repeat(5000)
      const longEmoji = "😀".repeat(3000)
      writeTree(env.workspace, { "long.txt": `ok\n${longAscii}\r\n${longEmoji}\nend` })
      const result = rightOf(yield* read({ path: "long.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(result.content, `ok\n${"x".repeat(2000)}\r\n${"😀".repeat(2000)}\nend`)
      assert.strictEqual(result.totalLines, 4)
      assert.isTrue(result.truncated)
      assert.strictEqual(result.truncation?.clippedLines, 2)
      assert.include(result.notice, "2 lines longer than 2000 characters were clipped")
    })
  )

  it.scopedLive("a line larger than the whole budget yields a UTF-8-safe prefix, never an empty window", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({ maxLineChars: 100_000, searchMaxBytes: 1000 })
      writeTree(env.workspace, { "one.txt": "é".repeat(3000) + "\nnext\n" })
      const result = rightOf(yield* read({ path: "one.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(result.lineCount, 1)
      assert.strictEqual(result.content, "é".repeat(500))
      assert.strictEqual(result.truncation?.singleLineBytes, 6001)
      assert.strictEqual(result.truncation?.nextOffset, 2)
      const next = rightOf(yield* read({ path: "one.txt", offset: 2 }).pipe(Effect.provide(env.context)))
      assert.strictEqual(next.content, "next\n")
    })
  )

  it.scopedLive("the next page of an unchanged file seeks from the index; a change drops the entry", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const lineIndex = Context.get(env.context, LineIndex.LineIndex)
      const file = path.join(env.workspace, "indexed.txt")
      writeTree(env.workspace, { "indexed.txt": numbered(1, 5000) })
      const page = rightOf(
        yield* read({ path: "indexed.txt", offset: 100 }).pipe(Effect.provide(env.context))
      )
      const next = page.truncation!.nextOffset!
      const identityOf = () => {
        const stats = fs.statSync(file, { bigint: true })
        return {
          dev: stats.dev,
          ino: stats.ino,
          size: stats.size,
          mtimeNs: stats.mtimeNs,
          ctimeNs: stats.ctimeNs
        }
      }
      const known = lineIndex.seek(file, identityOf(), next)
      assert.deepStrictEqual(known, { line: next, byte: Buffer.byteLength(numbered(1, next - 1)) })
      fs.appendFileSync(file, "5001\n")
      assert.deepStrictEqual(lineIndex.seek(file, identityOf(), next), { line: 1, byte: 0 })
      const after = rightOf(
        yield* read({ path: "indexed.txt", offset: 4990 }).pipe(Effect.provide(env.context))
      )
      assert.strictEqual(after.content, numbered(4990, 5001))
      assert.strictEqual(after.totalLines, 5001)
    })
  )

  it.scopedLive("a page read through the index equals the same page read from scratch", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "n.txt": numbered(1, 30_000) })
      const fresh = rightOf(
        yield* read({ path: "n.txt", offset: 25_000, limit: 7 }).pipe(Effect.provide(env.context))
      )
      const again = rightOf(
        yield* read({ path: "n.txt", offset: 25_000, limit: 7 }).pipe(Effect.provide(env.context))
      )
      const later = rightOf(
        yield* read({ path: "n.txt", offset: 25_003, limit: 2 }).pipe(Effect.provide(env.context))
      )
      assert.strictEqual(fresh.content, numbered(25_000, 25_006))
      assert.deepStrictEqual(again, fresh)
      assert.strictEqual(later.content, numbered(25_003, 25_004))
    })
  )
})

describe("Read refusals", () => {
  it.scopedLive("bad offsets and limits get TOOL_INVALID_INPUT naming the field", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "f.txt": numbered(1, 3) })
      const cases: Array<[unknown, string, string]> = [
        [{ path: "f.txt", offset: 0 }, "offset", "1-based"],
        [{ path: "f.txt", offset: -1.5 }, "offset", "-N for the last N lines"],
        [{ path: "f.txt", offset: 1.5 }, "offset", "1-based"],
        [{ path: "f.txt", offset: 4 }, "offset", "has 3 lines"],
        [{ path: "f.txt", offset: 999_999_999 }, "offset", "has 3 lines"],
        [{ path: "f.txt", limit: 0 }, "limit", "from 1 to 2000"],
        [{ path: "f.txt", limit: -1 }, "limit", "from 1 to 2000"],
        [{ path: "f.txt", offset: "2" }, "offset", "number"],
        [{ path: 7 }, "path", "string"],
        [{ file: "f.txt" }, "file", "its fields are path, offset, limit"],
        [{ path: "f.txt", offest: 2 }, "offest", "no field"],
        ["f.txt", "input", "object"],
        [{ path: "" }, "path", "empty"]
      ]
      for (const [input, field, hint] of cases) {
        const error = leftOf(yield* read(input).pipe(Effect.provide(env.context)))
        assert.instanceOf(error, ToolError.ToolInvalidInput, JSON.stringify(input))
        if (error instanceof ToolError.ToolInvalidInput) {
          assert.strictEqual(error.field, field, JSON.stringify(input))
          assert.include(error.message, hint, JSON.stringify(input))
        }
      }
    })
  )

  it.scopedLive("paths outside every root are denied; symlinks are resolved before the check", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.outside, { "secret.txt": "secret\n" })
      writeTree(env.workspace, { "inside.txt": "inside\n" })
      fs.symlinkSync(path.join(env.outside, "secret.txt"), path.join(env.workspace, "escape.txt"))
      fs.symlinkSync(env.outside, path.join(env.workspace, "escape-dir"))
      fs.symlinkSync(path.join(env.workspace, "inside.txt"), path.join(env.workspace, "alias.txt"))
      const denied = [
        "../../etc/passwd",
        "/etc/passwd",
        "escape.txt",
        "escape-dir/secret.txt",
        path.join(env.outside, "secret.txt")
      ]
      for (const requested of denied) {
        const error = leftOf(yield* read({ path: requested }).pipe(Effect.provide(env.context)))
        assert.strictEqual(error.code, "TOOL_PATH_DENIED", requested)
        assert.include(error.message, "Use a path inside the workspace")
      }
      // a missing file outside is denied too, without revealing whether it exists
      const missingOutside = leftOf(
        yield* read({ path: "../nope-nothing-here" }).pipe(Effect.provide(env.context))
      )
      assert.strictEqual(missingOutside.code, "TOOL_PATH_DENIED")
      const alias = rightOf(yield* read({ path: "alias.txt" }).pipe(Effect.provide(env.context)))
      assert.deepStrictEqual([alias.path, alias.content], ["inside.txt", "inside\n"])
    })
  )

  it.scopedLive("a NUL byte in the path, a missing file and a directory get their typed errors", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "dir/file.txt": "x\n" })
      const nul = leftOf(yield* read({ path: "dir\0/file.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(nul.code, "TOOL_INVALID_INPUT")
      assert.include(nul.message, "NUL")
      const missing = leftOf(yield* read({ path: "dir/nope.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(missing.code, "TOOL_NOT_FOUND")
      assert.include(missing.message, "Glob")
      const directory = leftOf(yield* read({ path: "dir" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(directory.code, "TOOL_IS_DIRECTORY")
      assert.include(directory.message, "Glob")
    })
  )

  it.scopedLive("a FIFO is refused with a typed error, without blocking", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const fifo = path.join(env.workspace, "pipe")
      assert.strictEqual(spawnSync("mkfifo", [fifo]).status, 0)
      // nobody ever writes to it: a blocking open would hang this test
      const error = leftOf(yield* read({ path: "pipe" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
      assert.include(error.message, "FIFO")
    })
  )

  it.scopedLive("binary content is refused with TOOL_BINARY_CONTENT, path, size and reason", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "data.bin": Buffer.from([0x41, 0x42, 0x00, 0x43, 0x0a]),
        "image.png": "not really a png, but the extension decides\n",
        "utf16.txt": Buffer.from("\ufeffhello utf-16\n", "utf16le"),
        "noise.dat": Buffer.from(
          Array.from({ length: 400 }, (_, i) => (i % 3 === 0 ? 0x41 : 0x80 + (i % 60)))
        ),
        "accents.txt": "résumé naïve café — 日本語 🎉\n".repeat(50)
      })
      const cases: Array<[string, string]> = [
        ["data.bin", "NUL"],
        ["image.png", ".png"],
        ["utf16.txt", "UTF-16"],
        ["noise.dat", "not printable"]
      ]
      for (const [file, reason] of cases) {
        const error = leftOf(yield* read({ path: file }).pipe(Effect.provide(env.context)))
        assert.strictEqual(error.code, "TOOL_BINARY_CONTENT", file)
        if (error instanceof ToolError.ToolBinaryContent) {
          assert.strictEqual(error.path, file)
          assert.strictEqual(error.size, fs.statSync(path.join(env.workspace, file)).size)
          assert.include(error.reason, reason)
        }
      }
      const text = rightOf(yield* read({ path: "accents.txt" }).pipe(Effect.provide(env.context)))
      assert.strictEqual(text.lineCount, 50)
    })
  )
})

describe("Read roots", () => {
  it.scopedLive(
    "scratch spill files read with root scratch; approved external files with root external",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const spilled = yield* Effect.flatMap(Scratch.Scratch, (scratch) =>
          scratch.spill("bash-stdout", Utf8.encode(numbered(1, 100)))
        ).pipe(Effect.provide(env.context))
        assert.isTrue(Option.isSome(spilled))
        if (Option.isNone(spilled)) return
        const fromScratch = rightOf(
          yield* read({ path: spilled.value, offset: 99 }).pipe(Effect.provide(env.context))
        )
        assert.strictEqual(fromScratch.root, "scratch")
        assert.strictEqual(fromScratch.path, spilled.value)
        assert.strictEqual(fromScratch.content, "99\n100\n")
        writeTree(env.external, { "ref/notes.md": "# notes\n" })
        const external = rightOf(
          yield* read({ path: path.join(env.external, "ref/notes.md") }).pipe(Effect.provide(env.context))
        )
        assert.strictEqual(external.root, "external")
        assert.strictEqual(external.path, path.join(env.external, "ref/notes.md"))
      })
  )
})

/** The window rules, computed the obvious way over the whole text. */
const oracle = (text: string, offset: number, maxLines: number, maxBytes: number, maxChars: number) => {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? []
  const out: Array<string> = []
  let bytes = 0
  let clipped = 0
  for (let i = offset - 1; i < lines.length && out.length < maxLines; i++) {
    const clip = LineClip.clipLine(lines[i]!, maxChars)
    const size = Buffer.byteLength(clip.text)
    if (out.length > 0 && bytes + size > maxBytes) break
    out.push(clip.text)
    bytes += size
    clipped += clip.clippedLines
  }
  const atEof = offset - 1 + out.length >= lines.length
  return { content: out.join(""), lineCount: out.length, atEof, total: lines.length, clipped }
}

const lineArbitrary = FastCheck.oneof(
  FastCheck.string({ maxLength: 40 }),
  FastCheck.string({ unit: "grapheme", maxLength: 30 }),
  FastCheck.constantFrom("x".repeat(70), "é".repeat(45), "🎉".repeat(40), "")
)
const textArbitrary = FastCheck.tuple(
  FastCheck.array(FastCheck.tuple(lineArbitrary, FastCheck.constantFrom("\n", "\r\n")), { maxLength: 60 }),
  FastCheck.boolean()
).map(([lines, finalNewline]) => {
  const body = lines.map(([line, ending]) => line.replace(/[\r\n]/g, "") + ending).join("")
  return finalNewline || body.length === 0 ? body : body + "tail"
})

describe("Read laws", () => {
  it.scopedLive.prop(
    "every window equals the oracle's: byte-faithful, bounded, clipped, valid UTF-8",
    [textArbitrary, FastCheck.integer({ min: 1, max: 70 }), FastCheck.integer({ min: 1, max: 30 })],
    ([text, offsetSeed, limit]) =>
      Effect.gen(function* () {
        // small budgets so that every stop rule is exercised by short texts
        const budgets = { searchMaxBytes: 300, maxLineChars: 50, readWindowLines: 20, searchMaxLines: 20 }
        const env = yield* searchEnv(budgets)
        writeTree(env.workspace, { "p.txt": text })
        const expected = oracle(
          text,
          1,
          Number.MAX_SAFE_INTEGER,
          Number.MAX_SAFE_INTEGER,
          Number.MAX_SAFE_INTEGER
        )
        const offset = Math.min(offsetSeed, Math.max(1, expected.total))
        const outcome = yield* read({ path: "p.txt", offset, limit }).pipe(Effect.provide(env.context))
        const want = oracle(text, offset, Math.min(limit, 20), 300, 50)
        const result = rightOf(outcome)
        assert.strictEqual(result.content, want.content)
        assert.strictEqual(result.lineCount, want.lineCount)
        assert.strictEqual(result.totalLines, want.atEof ? want.total : undefined)
        assert.strictEqual(result.truncated, !want.atEof || want.clipped > 0)
        assert.strictEqual(result.truncated, result.truncation !== undefined)
        assert.isAtMost(Buffer.byteLength(result.content), 300)
        assert.strictEqual(Utf8.decode(Utf8.encode(result.content)), result.content)
        if (!want.atEof) assert.strictEqual(result.truncation?.nextOffset, offset + want.lineCount)
      }),
    { fastCheck: { numRuns: 60 } }
  )
})

/** `tail -n count FILE`, byte for byte. */
const tailOf = (file: string, count: number): Buffer => {
  const result = spawnSync("tail", ["-n", String(count), file])
  if (result.status !== 0) throw new Error(`tail failed: ${String(result.stderr)}`)
  return result.stdout
}

describe("Read from the end", () => {
  it.scopedLive.prop(
    "offset -N equals tail -n N byte for byte (CRLF, multibyte, no final newline)",
    [textArbitrary, FastCheck.integer({ min: 1, max: 80 })],
    ([text, count]) =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        writeTree(env.workspace, { "t.txt": text })
        const result = rightOf(
          yield* read({ path: "t.txt", offset: -count }).pipe(Effect.provide(env.context))
        )
        assert.isTrue(Buffer.from(result.content).equals(tailOf(path.join(env.workspace, "t.txt"), count)))
        const total = oracle(text, 1, 1e9, 1e9, 1e9).total
        if (count >= total) {
          // the backward read reached line 1: the numbers are known
          assert.strictEqual(result.offset, 1)
          assert.strictEqual(result.totalLines, total)
        } else {
          assert.strictEqual(result.offset, -count)
          assert.strictEqual(result.totalLines, undefined)
          assert.include(result.notice, "line numbers are unknown")
        }
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.scopedLive(
    "a multibyte character at the window's edge, and the numbers once the line count is known",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const text = "first\r\n€uro\r\n😀 start\nmiddle é\n\n🎉 last without newline"
        writeTree(env.workspace, { "m.txt": text })
        const file = path.join(env.workspace, "m.txt")
        for (const count of [1, 2, 3, 4, 5]) {
          const result = rightOf(
            yield* read({ path: "m.txt", offset: -count }).pipe(Effect.provide(env.context))
          )
          assert.isTrue(Buffer.from(result.content).equals(tailOf(file, count)), `tail -n ${count}`)
        }
        // a full read learns the line count: from then on a window from the end has real numbers
        rightOf(yield* read({ path: "m.txt" }).pipe(Effect.provide(env.context)))
        const known = rightOf(yield* read({ path: "m.txt", offset: -2 }).pipe(Effect.provide(env.context)))
        assert.strictEqual(known.offset, 5)
        assert.strictEqual(known.totalLines, 6)
        assert.strictEqual(known.content, "\n🎉 last without newline")
      })
  )

  it.scopedLive("pages from the end keep the budgets and name the next negative offset", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({ readWindowLines: 10, searchMaxLines: 10 })
      writeTree(env.workspace, { "n.txt": numbered(1, 100) })
      const first = rightOf(yield* read({ path: "n.txt", offset: -25 }).pipe(Effect.provide(env.context)))
      assert.strictEqual(first.content, numbered(76, 85))
      assert.strictEqual(first.offset, -25)
      assert.strictEqual(first.truncation?.nextOffset, -15)
      const next = rightOf(yield* read({ path: "n.txt", offset: -15 }).pipe(Effect.provide(env.context)))
      assert.strictEqual(next.content, numbered(86, 95))
    })
  )

  it.scopedLive("a clipped line's notice names a Bash command that shows the rest of it", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const long = `${"é".repeat(1999)}😀${"tail part ".repeat(600)}`
      writeTree(env.workspace, { "dir with space/l.txt": `short\n${long}\nafter\n` })
      const result = rightOf(yield* read({ path: "dir with space/l.txt" }).pipe(Effect.provide(env.context)))
      const command = /`(tail -c [^`]+)`/.exec(result.notice ?? "")?.[1]
      assert.isDefined(command, result.notice)
      const shown = spawnSync("sh", ["-c", command!], { cwd: env.workspace }).stdout
      const rest = Buffer.from([...long].slice(2000).join("") + "\nafter\n")
      assert.isTrue(shown.equals(rest.subarray(0, Math.min(rest.length, 48 * 1024))))
    })
  )
})
