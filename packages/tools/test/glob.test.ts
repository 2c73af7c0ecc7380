import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { Scratch } from "@toolcap/spill"
import { Glob } from "@toolcap/tools"
import { attempt, leftOf, rightOf, searchEnv, setMtime, sortedCopy, writeTree } from "./readFixtures.js"

const glob = (input: unknown, options?: Glob.GlobOptions) => attempt(Glob.glob(input, options))

describe("Glob order and limits", () => {
  it.scopedLive("orders matches by modification time, newest first, equal times by path", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, {
        "b.ts": "",
        "a.ts": "",
        "c/old.ts": "",
        "c/new.ts": "",
        "same2.ts": "",
        "same1.ts": ""
      })
      const times: Record<string, number> = {
        "b.ts": 1_000,
        "a.ts": 2_000,
        "c/old.ts": 500,
        "c/new.ts": 9_000,
        "same2.ts": 3_000,
        "same1.ts": 3_000
      }
      for (const [file, time] of Object.entries(times)) setMtime(path.join(env.workspace, file), time)
      const result = rightOf(yield* glob({ pattern: "**/*.ts" }).pipe(Effect.provide(env.context)))
      assert.deepStrictEqual(result.matches, ["c/new.ts", "same1.ts", "same2.ts", "a.ts", "b.ts", "c/old.ts"])
      assert.strictEqual(result.count, 6)
      assert.isFalse(result.truncated)
      assert.isUndefined(result.truncation)
    })
  )

  it.scopedLive(
    "limit defaults to 100, is clamped to 1000 with a notice, and a capped list keeps the newest",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const files: Record<string, string> = {}
        for (let i = 0; i < 130; i++) files[`f${String(i).padStart(3, "0")}.txt`] = ""
        writeTree(env.workspace, files)
        for (let i = 0; i < 130; i++)
          setMtime(path.join(env.workspace, `f${String(i).padStart(3, "0")}.txt`), 10_000 + i)
        const capped = rightOf(yield* glob({ pattern: "*.txt" }).pipe(Effect.provide(env.context)))
        assert.strictEqual(capped.matches.length, 100)
        assert.strictEqual(capped.matches[0], "f129.txt")
        assert.strictEqual(capped.matches[99], "f030.txt")
        assert.isTrue(capped.truncated)
        assert.deepStrictEqual(
          [capped.truncation?.keptLines, capped.truncation?.totalLines, capped.truncation?.limitLines],
          [100, 130, 100]
        )
        assert.include(capped.notice, "100 newest of 130")
        const clamped = rightOf(
          yield* glob({ pattern: "*.txt", limit: 5000 }).pipe(Effect.provide(env.context))
        )
        assert.strictEqual(clamped.matches.length, 130)
        assert.isFalse(clamped.truncated)
        assert.include(clamped.notice, "clamped to 1000")
        const small = rightOf(yield* glob({ pattern: "*.txt", limit: 3 }).pipe(Effect.provide(env.context)))
        assert.deepStrictEqual(small.matches, ["f129.txt", "f128.txt", "f127.txt"])
        for (const limit of [0, -1, 2.5]) {
          const error = leftOf(yield* glob({ pattern: "*.txt", limit }).pipe(Effect.provide(env.context)))
          assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
          assert.include(error.message, "limit")
        }
      })
  )

  it.scopedLive("the byte budget stops a long list too", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({ searchMaxBytes: 64 })
      writeTree(
        env.workspace,
        Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`long-name-${i}.md`, ""]))
      )
      const result = rightOf(yield* glob({ pattern: "*.md" }).pipe(Effect.provide(env.context)))
      assert.isTrue(result.truncated)
      assert.isAtMost(
        result.matches.reduce((sum, m) => sum + Buffer.byteLength(m) + 1, 0),
        64
      )
      assert.include(result.notice, "64 bytes result budget")
    })
  )

  it.scopedLive.prop(
    "any mtimes: the list is the newest-first prefix of all matches, capped by limit",
    [
      FastCheck.array(FastCheck.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 25 }),
      FastCheck.integer({ min: 1, max: 30 })
    ],
    ([ages, limit]) =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const names = ages.map((_, i) => `d${i % 3}/n${i}.js`)
        writeTree(env.workspace, Object.fromEntries(names.map((name) => [name, ""])))
        names.forEach((name, i) => setMtime(path.join(env.workspace, name), 1_000_000 - ages[i]! * 100))
        const result = rightOf(yield* glob({ pattern: "**/*.js", limit }).pipe(Effect.provide(env.context)))
        const expected = sortedCopy(
          names.map((name, i) => ({ name, time: 1_000_000 - ages[i]! * 100 })),
          (a, b) => b.time - a.time || (a.name < b.name ? -1 : 1)
        ).map((entry) => entry.name)
        assert.deepStrictEqual(result.matches, expected.slice(0, limit))
        assert.strictEqual(result.truncated, names.length > limit)
        assert.strictEqual(result.count, Math.min(limit, names.length))
      }),
    { fastCheck: { numRuns: 25 } }
  )
})

describe("Glob ignore rules", () => {
  it.scopedLive(
    "nested .gitignore, .ignore and .git/info/exclude apply; .git is never listed; hidden files are",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        writeTree(env.workspace, {
          ".gitignore": "*.log\nbuild/\n/root-only.txt\n",
          ".ignore": "!keep.log\n",
          ".git/info/exclude": "secret.txt\n",
          ".git/HEAD": "ref: refs/heads/main\n",
          ".github/workflows/ci.yml": "on: push\n",
          ".env.example": "A=1\n",
          "app.log": "",
          "keep.log": "",
          "root-only.txt": "",
          "secret.txt": "",
          "src/root-only.txt": "",
          "src/build/out.js": "",
          "src/.gitignore": "!build/\ngenerated.ts\n",
          "src/generated.ts": "",
          "src/main.ts": "",
          "build/x.js": "",
          "pkg/.ignore": "*.tmp\n",
          "pkg/a.tmp": "",
          "pkg/b.txt": ""
        })
        const result = rightOf(
          yield* glob({ pattern: "**/*", limit: 1000 }).pipe(Effect.provide(env.context))
        )
        assert.deepStrictEqual(sortedCopy(result.matches), [
          ".env.example",
          ".github/workflows/ci.yml",
          ".gitignore",
          ".ignore",
          "keep.log",
          "pkg/.ignore",
          "pkg/b.txt",
          "src/.gitignore",
          "src/build/out.js",
          "src/main.ts",
          "src/root-only.txt"
        ])
      })
  )

  it.scopedLive("symlinks are not followed nor listed", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "real/a.ts": "" })
      writeTree(env.outside, { "outside.ts": "" })
      fs.symlinkSync(path.join(env.workspace, "real"), path.join(env.workspace, "linked-dir"))
      fs.symlinkSync(path.join(env.workspace, "real/a.ts"), path.join(env.workspace, "linked.ts"))
      fs.symlinkSync(env.outside, path.join(env.workspace, "out"))
      const result = rightOf(yield* glob({ pattern: "**/*.ts" }).pipe(Effect.provide(env.context)))
      assert.deepStrictEqual(result.matches, ["real/a.ts"])
    })
  )

  it.scopedLive(
    "an explicit path reaches into an ignored tree; ignore files at or below it still apply",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        writeTree(env.workspace, {
          ".gitignore": "node_modules/\ndist/\n",
          "index.ts": "",
          "node_modules/pkg/index.ts": "",
          "node_modules/pkg/.gitignore": "fixtures/\n",
          "node_modules/pkg/fixtures/f.ts": "",
          "dist/out.ts": ""
        })
        const implicit = rightOf(yield* glob({ pattern: "**/*.ts" }).pipe(Effect.provide(env.context)))
        assert.deepStrictEqual(implicit.matches, ["index.ts"])
        const explicit = rightOf(
          yield* glob({ pattern: "**/*.ts", path: "node_modules" }).pipe(Effect.provide(env.context))
        )
        assert.deepStrictEqual(explicit.matches, ["node_modules/pkg/index.ts"])
        const dist = rightOf(yield* glob({ pattern: "*.ts", path: "dist" }).pipe(Effect.provide(env.context)))
        assert.deepStrictEqual(dist.matches, ["dist/out.ts"])
        const absolute = rightOf(
          yield* glob({ pattern: path.join(env.workspace, "node_modules/pkg/*.ts") }).pipe(
            Effect.provide(env.context)
          )
        )
        assert.deepStrictEqual(absolute.matches, ["node_modules/pkg/index.ts"])
      })
  )

  it.scopedLive("the scratch directory and approved external roots answer with absolute paths", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const spilled = yield* Effect.flatMap(Scratch.Scratch, (scratch) =>
        scratch.spill("bash-stdout", new TextEncoder().encode("x\n"))
      ).pipe(Effect.provide(env.context))
      const inScratch = rightOf(
        yield* glob({ pattern: "**/*.log", path: env.sessionDir }).pipe(Effect.provide(env.context))
      )
      assert.deepStrictEqual(inScratch.matches, [Option.getOrThrow(spilled)])
      writeTree(env.external, { "lib/x.py": "" })
      const external = rightOf(
        yield* glob({ pattern: "**/*.py", path: env.external }).pipe(Effect.provide(env.context))
      )
      assert.deepStrictEqual(external.matches, [path.join(env.external, "lib/x.py")])
    })
  )
})

describe("Glob refusals", () => {
  it.scopedLive("bad patterns and paths get typed errors with a next step", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "file.txt": "" })
      const cases: Array<[unknown, string, string]> = [
        [{ pattern: "../*" }, "TOOL_INVALID_INPUT", "'..'"],
        [{ pattern: "a/../../b/*" }, "TOOL_INVALID_INPUT", "'..'"],
        [{ pattern: "" }, "TOOL_INVALID_INPUT", "empty"],
        [{ pattern: "*\0.ts" }, "TOOL_INVALID_INPUT", "NUL"],
        [{ pattern: "*.ts", path: "file.txt" }, "TOOL_INVALID_INPUT", "not a directory"],
        [{ pattern: "*.ts", path: "missing" }, "TOOL_NOT_FOUND", "Glob"],
        [{ pattern: "*.ts", path: "../../etc" }, "TOOL_PATH_DENIED", "outside"],
        [{ pattern: "/etc/*.conf" }, "TOOL_PATH_DENIED", "outside"],
        [{ pattern: "*.ts", path: "a\0b" }, "TOOL_INVALID_INPUT", "NUL"],
        [{ pattern: 3 }, "TOOL_INVALID_INPUT", "pattern"]
      ]
      for (const [input, code, hint] of cases) {
        const error = leftOf(yield* glob(input).pipe(Effect.provide(env.context)))
        assert.strictEqual(error.code, code, JSON.stringify(input))
        assert.include(error.message, hint, JSON.stringify(input))
      }
    })
  )

  it.scopedLive("an aborted signal interrupts the call", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "a.ts": "" })
      const controller = new AbortController()
      controller.abort()
      const exit = yield* Effect.exit(Glob.glob({ pattern: "**/*" }, { signal: controller.signal })).pipe(
        Effect.provide(env.context)
      )
      assert.isTrue(Exit.isInterrupted(exit))
    })
  )
})
