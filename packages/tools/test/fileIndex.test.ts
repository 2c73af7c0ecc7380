/**
 * The watched file index of a long-lived host: Glob and Grep through it follow files created,
 * modified, deleted and renamed between two calls, see a write made just before the call, and
 * never answer from a stale index when the watcher may have lost events. A Grep of a small tree
 * through it is one ripgrep process.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Order from "effect/Order"
import { createRequire, syncBuiltinESMExports } from "node:module"
import { rgPath } from "@vscode/ripgrep"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import { Glob, Grep } from "@toolcap/tools"
import { Budgets } from "@toolcap/limits"
import * as FirstMatch from "../src/internal/search/firstMatch.js"
import * as Lanes from "../src/internal/search/lanes.js"
import * as Rg from "../src/internal/search/ripgrep.js"
import { type Env, indexReady, leftOf, rightOf, searchEnv, setMtime, writeTree } from "./readFixtures.js"

const globAll = (pattern = "**/*") =>
  Glob.glob({ pattern, limit: 1000 }).pipe(
    Effect.either,
    Effect.map((either) => rightOf(either).matches)
  )

const grepFiles = (pattern: string, headLimit?: number) =>
  Grep.grep({
    pattern,
    outputMode: "filesWithMatches",
    ...(headLimit !== undefined ? { headLimit } : {})
  }).pipe(
    Effect.either,
    Effect.map((either) => {
      const result = rightOf(either)
      if (!("files" in result) || typeof result.files === "number") throw new Error("expected files")
      return result.files as ReadonlyArray<string>
    })
  )

const sorted = (items: ReadonlyArray<string>) => Arr.sort(items, Order.string)

/** Counts `spawn` calls of the ripgrep binary (confined or not) while `effect` runs. */
const countingRipgrep = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const childProcess = createRequire(import.meta.url)(
        "node:child_process"
      ) as typeof import("node:child_process")
      const original = childProcess.spawn
      const counter = { count: 0 }
      childProcess.spawn = ((command: string, ...rest: Array<unknown>) => {
        // ripgrep itself, or the confinement launcher that execs it (its arguments name rg)
        const argv = Array.isArray(rest[0]) ? (rest[0] as ReadonlyArray<string>) : []
        if (path.basename(command) === "rg" || argv.some((arg) => path.basename(arg) === "rg"))
          counter.count++
        return (original as (...args: Array<unknown>) => unknown)(command, ...rest)
      }) as typeof original
      syncBuiltinESMExports()
      return { childProcess, original, counter }
    }),
    ({ counter }) => Effect.map(effect, (value) => ({ value, spawns: counter.count })),
    ({ childProcess, original }) =>
      Effect.sync(() => {
        childProcess.spawn = original
        syncBuiltinESMExports()
      })
  )

describe("the file index", () => {
  it.scopedLive("follows files created, modified, deleted and renamed between two calls", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({}, { fileIndex: true })
      writeTree(env.workspace, {
        ".gitignore": "*.log\n",
        "a.txt": "needle a\n",
        "src/b.ts": "needle b\n",
        "src/deep/c.ts": "no\n",
        "old/d.txt": "needle d\n"
      })
      const run = <A, E>(effect: Effect.Effect<A, E, Env>) => Effect.provide(effect, env.context)
      assert.deepStrictEqual(sorted(yield* run(globAll())), [
        ".gitignore",
        "a.txt",
        "old/d.txt",
        "src/b.ts",
        "src/deep/c.ts"
      ])
      assert.deepStrictEqual(sorted(yield* run(grepFiles("needle"))), ["a.txt", "old/d.txt", "src/b.ts"])
      // the first calls listed the tree; from here the index answers
      assert.isTrue(yield* indexReady(env))

      // create (also a new directory with files, and an ignored file), then search at once
      writeTree(env.workspace, {
        "new/e.ts": "needle e\n",
        "new/sub/f.ts": "needle f\n",
        "x.log": "needle\n"
      })
      assert.deepStrictEqual(sorted(yield* run(grepFiles("needle"))), [
        "a.txt",
        "new/e.ts",
        "new/sub/f.ts",
        "old/d.txt",
        "src/b.ts"
      ])
      // modify: the content is searched anew and the file becomes the newest
      for (const [file, seconds] of [
        ["a.txt", 1000],
        ["src/b.ts", 2000],
        ["src/deep/c.ts", 3000],
        ["old/d.txt", 4000],
        ["new/e.ts", 5000],
        ["new/sub/f.ts", 6000]
      ] as const)
        setMtime(path.join(env.workspace, file), seconds)
      fs.writeFileSync(path.join(env.workspace, "src/deep/c.ts"), "needle now\n")
      assert.deepStrictEqual(yield* run(grepFiles("needle", 1)), ["src/deep/c.ts"])
      assert.deepStrictEqual((yield* run(globAll("**/*.ts"))).slice(0, 2), ["src/deep/c.ts", "new/sub/f.ts"])
      // delete a file and a directory
      fs.rmSync(path.join(env.workspace, "a.txt"))
      fs.rmSync(path.join(env.workspace, "new"), { recursive: true })
      assert.deepStrictEqual(sorted(yield* run(grepFiles("needle"))), [
        "old/d.txt",
        "src/b.ts",
        "src/deep/c.ts"
      ])
      // rename a file and a directory
      fs.renameSync(path.join(env.workspace, "src/b.ts"), path.join(env.workspace, "src/renamed.ts"))
      fs.renameSync(path.join(env.workspace, "old"), path.join(env.workspace, "moved"))
      assert.deepStrictEqual(sorted(yield* run(globAll())), [
        ".gitignore",
        "moved/d.txt",
        "src/deep/c.ts",
        "src/renamed.ts"
      ])
      assert.deepStrictEqual(sorted(yield* run(grepFiles("needle"))), [
        "moved/d.txt",
        "src/deep/c.ts",
        "src/renamed.ts"
      ])
      // a directory replaced by another of the same name, again and again: the new one often gets
      // the freed inode number back, and must still be walked anew
      for (let round = 0; round < 10; round++) {
        fs.rmSync(path.join(env.workspace, "src"), { recursive: true })
        writeTree(env.workspace, { [`src/z${round}.ts`]: "needle z\n" })
        assert.deepStrictEqual(sorted(yield* run(grepFiles("needle"))), ["moved/d.txt", `src/z${round}.ts`])
      }
      fs.renameSync(path.join(env.workspace, "src/z9.ts"), path.join(env.workspace, "src/z.ts"))
      // a changed ignore file rebuilds the decisions
      fs.writeFileSync(path.join(env.workspace, ".gitignore"), "moved/\n")
      assert.deepStrictEqual(sorted(yield* run(grepFiles("needle"))), ["src/z.ts", "x.log"])
    })
  )

  it.scopedLive("more events at once than the kernel queue may hold rebuild the index: no stale answer", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({}, { fileIndex: true })
      writeTree(env.workspace, { "seed.txt": "x\n" })
      const run = <A, E>(effect: Effect.Effect<A, E, Env>) => Effect.provide(effect, env.context)
      assert.deepStrictEqual(yield* run(globAll()), ["seed.txt"])
      assert.isTrue(yield* indexReady(env))
      // each file is a create and a write event: far past the default 16384-event inotify queue
      const dir = path.join(env.workspace, "many")
      fs.mkdirSync(dir)
      for (let k = 0; k < 12_000; k++) fs.writeFileSync(path.join(dir, `f${k}.txt`), "x\n")
      const found = yield* run(
        Glob.glob({ pattern: "**/*.txt" }).pipe(
          Effect.either,
          Effect.map((either) => rightOf(either))
        )
      )
      assert.strictEqual(found.truncation?.totalLines, 12_001)
    })
  )

  it.scopedLive(
    "a rare pattern past the newest files is left to one ripgrep walk, with the same answer",
    () =>
      Effect.gen(function* () {
        const env = yield* searchEnv({}, { fileIndex: true })
        const files: Record<string, string | Uint8Array> = { "x.png": "rare\n" }
        // more files than one ordered run takes (ONE_RUN_FILES), so the search starts with a batch
        const count = 2100
        for (let k = 0; k < count; k++)
          files[`d${k % 9}/f${k}.txt`] = k % 200 === 7 ? `a rare line ${k}\n` : "plain\n"
        // text to the binary sniff (no NUL in its first 4KB), the match after a later NUL
        files["late/nul.txt"] = Buffer.concat([Buffer.alloc(5000, "x"), Buffer.from("\0\nrare after nul\n")])
        writeTree(env.workspace, files)
        for (const [k, relative] of Object.keys(files).entries())
          setMtime(path.join(env.workspace, relative), 1000 + k)
        setMtime(path.join(env.workspace, "late/nul.txt"), 500)
        assert.isTrue(yield* indexReady(env))
        const { value, spawns } = yield* countingRipgrep(
          Grep.grep({ pattern: "rare", outputMode: "content" }).pipe(
            Effect.either,
            Effect.provide(env.context)
          )
        )
        const result = rightOf(value)
        // the newest files first, then the walk: two runs
        assert.strictEqual(spawns, 2)
        // newest first: the rare lines from the highest k down, then the oldest file
        const rare: Array<[string, number]> = []
        for (let k = count - 1; k >= 0; k--) if (k % 200 === 7) rare.push([`d${k % 9}/f${k}.txt`, 1])
        assert.deepStrictEqual("matches" in result ? result.matches.map((m) => [m.path, m.line]) : [], [
          ...rare,
          ["late/nul.txt", 2]
        ])
      })
  )

  it.scopedLive("a Grep of a 100-file tree through the index is one ripgrep process, in every mode", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({}, { fileIndex: true })
      const files: Record<string, string> = {}
      for (let k = 0; k < 100; k++)
        files[`d${k % 7}/f${k}.ts`] = k % 3 === 0 ? `const needle = ${k}\n` : "other\n"
      writeTree(env.workspace, files)
      // the first call is a listing of its own (one ripgrep); the index is built after it
      const first = yield* countingRipgrep(
        Grep.grep({ pattern: "needle", outputMode: "content" }).pipe(
          Effect.either,
          Effect.provide(env.context)
        )
      )
      assert.strictEqual(first.spawns, 1)
      assert.isTrue(yield* indexReady(env))
      for (const outputMode of ["content", "filesWithMatches", "count"] as const) {
        const { value, spawns } = yield* countingRipgrep(
          Grep.grep({ pattern: "needle", outputMode }).pipe(Effect.either, Effect.provide(env.context))
        )
        assert.strictEqual(spawns, 1, outputMode)
        assert.strictEqual(rightOf(value).count, outputMode === "count" ? 34 : 34)
      }
      // a bad pattern fails from that same single run
      const bad = yield* countingRipgrep(
        Grep.grep({ pattern: "needle(" }).pipe(Effect.either, Effect.provide(env.context))
      )
      assert.strictEqual(bad.spawns, 1)
      assert.instanceOf(leftOf(bad.value), ToolError.ToolPatternInvalid)
    })
  )
})

/** The file `k` of the ordered-runs tree. */
const name = (k: number) => `d${k % 23}/e${k % 5}/f${k}.txt`

describe("the indexed search in ordered runs", () => {
  it.scopedLive(
    "answers what the one-shot search answers, whatever the pattern's density, and in ordered lanes",
    () =>
      Effect.gen(function* () {
        const indexed = yield* searchEnv({}, { fileIndex: true })
        const oneShot = yield* searchEnv()
        // 6,000 files in a scrambled modification order, the ten newest sharing one time (ties
        // by path); `hit<n>` lines in one of every 1, 7, 40 and 300 files
        const files: Record<string, string> = {}
        for (let k = 0; k < 6000; k++) {
          const lines = [`plain ${k}`]
          for (const every of [1, 7, 40, 300])
            if (k % every === 0) lines.push(`hit${every} ${k}`, `hit${every} again`)
          files[name(k)] = `${lines.join("\n")}\n`
        }
        for (const env of [indexed, oneShot]) {
          writeTree(env.workspace, files)
          for (let k = 0; k < 6000; k++)
            setMtime(path.join(env.workspace, name(k)), k < 10 ? 20_000 : 10_000 + ((k * 7919) % 6000))
        }
        assert.isTrue(yield* indexReady(indexed))
        // a glob narrows the index's list first (in slices, the event loop served between them)
        for (const glob of ["d1*/**", "!*3.txt", "f5*"]) {
          const input = { pattern: "hit7 ", outputMode: "content", glob }
          const ours = rightOf(yield* Grep.grep(input).pipe(Effect.either, Effect.provide(indexed.context)))
          const expected = rightOf(
            yield* Grep.grep(input).pipe(Effect.either, Effect.provide(oneShot.context))
          )
          assert.deepStrictEqual(ours, expected, glob)
        }
        for (const pattern of ["hit1 ", "hit7 ", "hit40 ", "hit300 ", "hit300 again|hit40 ", "no-such-hit"]) {
          for (const outputMode of ["content", "filesWithMatches", "count"] as const) {
            const input = { pattern, outputMode }
            const { value, spawns } = yield* countingRipgrep(
              Grep.grep(input).pipe(Effect.either, Effect.provide(indexed.context))
            )
            const expected = rightOf(
              yield* Grep.grep(input).pipe(Effect.either, Effect.provide(oneShot.context))
            )
            assert.deepStrictEqual(rightOf(value), expected, `${pattern} ${outputMode}`)
            // the newest files, then ordered runs or the walk started beside them
            assert.isAtLeast(spawns, 1)
          }
        }
      }),
    120_000
  )
})

describe("ordered lanes", () => {
  it.scopedLive.prop(
    "any number of lanes shows the same newest entries, and stops no earlier than it may",
    [
      FastCheck.integer({ min: 1, max: 4 }),
      FastCheck.integer({ min: 1, max: 40 }),
      FastCheck.integer({ min: 0, max: 120 })
    ],
    ([lanes, every, entriesLeft]) =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        const files: Record<string, string> = {}
        for (let k = 0; k < 600; k++)
          files[`d${k % 7}/f${k}.txt`] = k % every === 0 ? `hit ${k}\nhit again\n` : "plain\n"
        writeTree(env.workspace, files)
        const batch = Object.keys(files).map((relative, k) => ({
          relative,
          absolute: path.join(env.workspace, relative),
          display: relative,
          mtimeMs: k
        }))
        const budgets = yield* Effect.provide(Budgets.Budgets, env.context)
        const search = (laneCount: number) =>
          Lanes.searchOrdered(
            {
              rg: rgPath,
              cwd: env.workspace,
              mode: "content",
              flags: [...Rg.commonFlags, "--regexp=hit"],
              stdin: undefined,
              pattern: "hit",
              budgets,
              finder: FirstMatch.finder({
                pattern: "hit",
                caseInsensitive: false,
                multiline: false,
                patternFlags: ["--regexp=hit"],
                patternOnStdin: false
              })
            },
            { files: batch, lanes: laneCount },
            entriesLeft,
            budgets.searchMaxBytes
          ).pipe(Effect.provide(env.context))
        /** The entries a result would show: files in order until one entry more than fits. */
        const shown = (hits: Map<string, { readonly lines: ReadonlyArray<{ readonly line: number }> }>) => {
          const entries: Array<string> = []
          for (const file of batch) {
            for (const line of hits.get(file.relative)?.lines ?? [])
              entries.push(`${file.relative}:${line.line}`)
            if (entries.length > entriesLeft) break
          }
          return entries.slice(0, entriesLeft + 1)
        }
        assert.deepStrictEqual(shown(yield* search(lanes)), shown(yield* search(1)))
      }),
    { fastCheck: { numRuns: 12 } }
  )
})
