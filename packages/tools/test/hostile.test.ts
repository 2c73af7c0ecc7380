// Hostile paths and patterns through Read, Glob and Grep: `..`, absolute paths, /proc, /dev, a
// FIFO, a socket, NUL bytes, loops, links out of the workspace (`rootlink/…`, `up/**`, dangling),
// brace tricks (`{..,.}/**`): no answer holds an outside byte or an outside name, and an outside
// path is denied the same way whether or not its target exists. A link planted at the scratch
// directory widens nothing. TOOLCAP_LONG_TESTS=1 runs the table again through pairs of path
// rewrites (`./`, `//`, `src/../`, a trailing `/`, ...): over 5,000 calls. Patterns that make a
// backtracking matcher run for minutes (`*a*a…*a*b` against names of 60 to 200 `a`s, nested `**`,
// `+(a|aa)b`) in Glob's `pattern`, Grep's `glob` and ignore files are answered within 2 s, the host
// serving other work meanwhile (long mode: 100 runs of each). Counts are printed (and written where
// TOOLCAP_RELIABILITY_OUT points, for `pnpm bench`).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Glob, Grep, Read, type Roots } from "@toolcap/tools"
import * as Pattern from "../src/internal/search/pattern/glob.js"
import * as Walk from "../src/internal/search/walk.js"
import { SECRET, escapes, hostileEnv } from "./hostileFixtures.js"
import { type Env, indexReady, searchEnv, sortedCopy, writeTree } from "./readFixtures.js"
import { isLong, reportReliability } from "@toolcap/bench-report"

type Call = readonly ["Read" | "Glob" | "Grep", Record<string, unknown>]

const run = ([tool, input]: Call): Effect.Effect<
  unknown,
  { readonly code: string; readonly message: string },
  Env
> => (tool === "Read" ? Read.read(input) : tool === "Glob" ? Glob.glob(input) : Grep.grep(input))

/** Every outcome: the result, or the error's wire form (code, message and fields). */
const outcomeOf = (either: Either.Either<unknown, { readonly code?: string; readonly message?: string }>) =>
  Either.isRight(either)
    ? { ok: true, result: either.right }
    : { ok: false, code: either.left.code, message: either.left.message, error: { ...either.left } }

/** Rewrites of a path or pattern that name the same place (or a broken one) another way. */
const REWRITES: ReadonlyArray<(p: string) => string> = [
  (p) => p,
  (p) => `./${p}`,
  (p) => `${p}/`,
  (p) => p.replace(/\//g, "//"),
  (p) => `src/../${p}`,
  (p) => `${p}/.`,
  (p) => `././${p}`,
  (p) => (p.startsWith("/") ? `/.${p}` : `./src/./../${p}`),
  (p) => `${p}/../${p.split("/").pop() ?? p}`
]

/** The long mode's variants of a call: every pair of rewrites applied to its path-like fields. */
const variants = ([tool, input]: Call): Array<Call> =>
  REWRITES.flatMap((outer, i) =>
    REWRITES.flatMap((inner, j): Array<Call> => {
      if (i === 0 && j === 0) return []
      const rewritten: Record<string, unknown> = { ...input }
      for (const field of ["path", "glob"] as const)
        if (typeof input[field] === "string") rewritten[field] = outer(inner(input[field] as string))
      if (tool === "Glob" && typeof input["pattern"] === "string")
        rewritten["pattern"] = outer(inner(input["pattern"] as string))
      return [[tool, rewritten]]
    })
  )

describe("hostile input table", () => {
  it.scopedLive(
    "no call escapes the roots: 0 outside bytes or names",
    () =>
      Effect.gen(function* () {
        const env = yield* hostileEnv
        const outside = env.outside
        const parentName = path.basename(path.dirname(env.workspace))
        const calls: Array<Call> = []
        const readPaths = [
          "..",
          `../${path.basename(outside)}/secret.txt`,
          path.join(outside, "secret.txt"),
          "/etc/passwd",
          "/etc/hostname",
          "/proc/self/environ",
          "/proc/self/cwd/package.json",
          "/proc/self/root/etc/passwd",
          "/dev/zero",
          "/dev/stdin",
          "fifo",
          "sock",
          "inside.txt\0.png",
          "loop",
          "loop-a",
          "rootlink/etc/passwd",
          "rootlink/etc/hostname",
          "up/" + parentName,
          `up/${path.basename(outside)}/secret.txt`,
          "outlink/secret.txt",
          "outlink/deep/secret2.txt",
          "filelink",
          "dangling",
          "inside.txt/../../" + path.basename(outside) + "/secret.txt",
          "a/".repeat(300_000)
        ]
        for (const p of readPaths) calls.push(["Read", { path: p }])
        for (const pattern of [
          "rootlink/etc/*shadow*",
          "rootlink/root/.*",
          "rootlink/etc/*",
          "up/**",
          "up/*/secret.txt",
          "{..,.}/**",
          "{..,.}/*/secret.txt",
          "{../*,*}",
          "../**",
          "outlink/**",
          "filelink",
          "**/secret*",
          "loop/**",
          "/etc/*",
          `${outside}/**`,
          "/proc/self/cwd/*",
          "{a,b}".repeat(20),
          "*".repeat(10_000)
        ])
          calls.push(["Glob", { pattern }])
        for (const dir of [
          "outlink",
          "up",
          "rootlink",
          "rootlink/etc",
          "/proc/self/cwd",
          "/dev",
          outside,
          "dangling"
        ])
          calls.push(["Glob", { pattern: "**", path: dir }])
        for (const dir of [
          ".",
          "outlink",
          "outlink/secret.txt",
          "filelink",
          "up",
          "rootlink/etc",
          outside,
          "/proc/self/root/etc",
          "dangling",
          "fifo",
          "loop"
        ]) {
          calls.push(["Grep", { pattern: "SECRET", path: dir }])
          calls.push(["Grep", { pattern: "SECRET", path: dir, outputMode: "filesWithMatches" }])
        }
        for (const glob of ["{..,.}/**", "../*", "up/**", "rootlink/etc/*"])
          calls.push(["Grep", { pattern: "SECRET", glob, outputMode: "count" }])

        let escaped = 0
        const roots = [fs.realpathSync(env.workspace), fs.realpathSync(env.external)]
        const table = calls.length
        if (isLong()) calls.push(...calls.flatMap(variants))
        for (const call of calls) {
          const outcome = outcomeOf(yield* Effect.either(run(call).pipe(Effect.provide(env.context))))
          const found = escapes(env.workspace, roots, outcome.ok ? outcome.result : outcome)
          escaped += found.length
          assert.deepStrictEqual(found, [], `${call[0]} ${JSON.stringify(call[1]).slice(0, 200)}`)
          assert.isAtMost(Buffer.byteLength(JSON.stringify(outcome)), 64 * 1024)
          if (!outcome.ok) assert.isAtMost(Buffer.byteLength(outcome.message ?? ""), 2048)
        }
        console.log(`hostile table: ${calls.length} calls, ${escaped} escapes`)
        reportReliability(
          "hostile path and pattern table",
          { inputs: calls.length, escapes: escaped, crashes: 0, "unbounded results": 0 },
          `Read, Glob and Grep with ${table} hostile paths and patterns${isLong() ? `, and each through ${REWRITES.length ** 2 - 1} pairs of path rewrites` : ""}; every answer within 64 KB, every error message within 2 KB (a defect or a bigger answer fails the test before this line)`
        )
        assert.strictEqual(escaped, 0)
      }),
    { timeout: isLong() ? 1_200_000 : 30_000 }
  )

  it.scopedLive("an outside path is denied whether or not its target exists", () =>
    Effect.gen(function* () {
      const env = yield* hostileEnv
      const pairs: Array<readonly [string, string]> = [
        ["outlink/secret.txt", "outlink/no-such.txt"],
        [path.join(env.outside, "secret.txt"), path.join(env.outside, "no-such.txt")],
        ["rootlink/etc/hostname", "rootlink/etc/no-such-file"],
        ["filelink", "dangling"],
        ["up/" + path.basename(env.outside), "up/no-such-dir/x"]
      ]
      for (const [existing, missing] of pairs) {
        for (const tool of ["Read", "Grep"] as const) {
          const input = tool === "Read" ? { path: existing } : { pattern: "x", path: existing }
          const other = tool === "Read" ? { path: missing } : { pattern: "x", path: missing }
          const a = outcomeOf(yield* Effect.either(run([tool, input]).pipe(Effect.provide(env.context))))
          const b = outcomeOf(yield* Effect.either(run([tool, other]).pipe(Effect.provide(env.context))))
          assert.strictEqual(a.ok ? "ok" : a.code, "TOOL_PATH_DENIED", `${tool} ${existing}`)
          assert.strictEqual(b.ok ? "ok" : b.code, "TOOL_PATH_DENIED", `${tool} ${missing}`)
          // the denial names the requested path and the rule, never where the link leads
          if (!existing.includes(env.outside)) assert.notInclude(a.ok ? "" : (a.message ?? ""), env.outside)
        }
      }
    })
  )

  it.scopedLive("a symlink planted at the scratch directory is refused: nothing reachable through it", () =>
    Effect.gen(function* () {
      const env = yield* hostileEnv
      fs.mkdirSync(path.dirname(env.sessionDir), { recursive: true })
      fs.symlinkSync("/", env.sessionDir)
      const calls: Array<Call> = [
        ["Read", { path: "/etc/hostname" }],
        ["Read", { path: path.join(env.sessionDir, "etc/hostname") }],
        ["Read", { path: path.join(env.outside, "secret.txt") }],
        ["Glob", { pattern: "*", path: path.join(env.sessionDir, "etc") }],
        ["Glob", { pattern: `${env.sessionDir}/etc/*` }],
        ["Grep", { pattern: "SECRET", path: env.outside }],
        ["Grep", { pattern: "root", path: path.join(env.sessionDir, "etc/passwd") }]
      ]
      for (const call of calls) {
        const outcome = outcomeOf(yield* Effect.either(run(call).pipe(Effect.provide(env.context))))
        assert.strictEqual(outcome.ok ? "ok" : outcome.code, "TOOL_PATH_DENIED", JSON.stringify(call))
      }
      assert.isFalse(JSON.stringify(calls).includes(SECRET))
    })
  )
})

describe("an abort stops the work, not only the answer", () => {
  it.scopedLive("Glob's walk reads no directory once its signal aborted", () =>
    Effect.gen(function* () {
      const env = yield* hostileEnv
      for (let i = 0; i < 200; i++)
        fs.mkdirSync(path.join(env.workspace, "tree", `d${i}`, "e", "f"), { recursive: true })
      const controller = new AbortController()
      let reads = 0
      let readsAtAbort = 0
      const guard: Roots.WalkGuard = {
        readDirectory: (dir) => {
          reads++
          if (reads === 20) {
            readsAtAbort = reads
            controller.abort()
          }
          return fs.readdirSync(dir, { withFileTypes: true })
        },
        holdsParentOf: () => true
      }
      yield* Effect.promise(() =>
        Walk.walk(env.workspace, Pattern.compileGlob("**/*"), "", controller.signal, guard, undefined)
      )
      // let anything still queued run: it must not read on
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      assert.strictEqual(reads, readsAtAbort)
    })
  )
})

/** The bound the issue names for a catastrophic pattern's answer. */
const CATASTROPHIC_ANSWER_MS = 2000
/** Runs of each catastrophic attack: the long mode's floor is 100. */
const CATASTROPHIC_RUNS = isLong() ? 100 : 3

const stars = (count: number) => `${"*a".repeat(count)}*b`

describe("catastrophic patterns", () => {
  it.scopedLive(
    "are answered within 2 s through Glob, Grep's glob and ignore files, with or without the file index",
    () =>
      Effect.gen(function* () {
        // an ignore file of 18,000 lines besides (within the 256 KiB the host reads of one)
        const manyRules = Array.from({ length: 6000 }, (_, k) => `*.x${k}\nd${k}/\n!keep${k}.x${k}`).join(
          "\n"
        )
        const files: Record<string, string> = {
          "deep/.gitignore": `${stars(20)}\na/${"**/x/".repeat(12)}**/c\n`,
          "many/.gitignore": `${manyRules}\n`,
          "many/a.x5999": "needle\n",
          "many/keep7.x7": "needle\n",
          "many/d123/b.txt": "needle\n",
          "many/kept.txt": "needle\n"
        }
        for (const length of [60, 100, 150, 200]) {
          files[`names/${"a".repeat(length)}`] = "needle\n"
          files[`names/${"a".repeat(length - 1)}b`] = "needle\n"
        }
        // kept by both rules, and one ignored by each
        files[`deep/a/${"x/".repeat(40)}y.txt`] = "needle\n"
        files[`deep/${"a".repeat(120)}`] = "needle\n"
        files[`deep/a/${"x/".repeat(40)}c`] = "needle\n"
        files[`deep/${"a".repeat(119)}b`] = "needle\n"
        const oneShot = yield* searchEnv()
        const indexed = yield* searchEnv({}, { fileIndex: true })
        writeTree(oneShot.workspace, files)
        writeTree(indexed.workspace, files)
        assert.isTrue(yield* indexReady(indexed))
        const attacks: ReadonlyArray<readonly [string, Call, (result: unknown) => boolean]> = [
          ["Glob 20 stars", ["Glob", { pattern: `names/${stars(20)}` }], (r) => count(r) === 4],
          ["Glob **/ + 20 stars", ["Glob", { pattern: `**/${stars(20)}` }], (r) => count(r) === 4],
          [
            "Glob nested **",
            ["Glob", { pattern: `deep/a/${"**/x/".repeat(12)}**/y.txt` }],
            (r) => count(r) === 1
          ],
          ["Glob +(a|aa)b", ["Glob", { pattern: "names/+(a|aa)b" }], (r) => count(r) === 4],
          [
            "Glob braces of stars",
            ["Glob", { pattern: `names/{${stars(8)},${stars(9)}}` }],
            (r) => count(r) === 4
          ],
          [
            "Grep glob 20 stars",
            ["Grep", { pattern: "needle", glob: stars(20), outputMode: "filesWithMatches" }],
            (r) => count(r) === 4
          ],
          ["ignore file of 20 stars and nested **", ["Glob", { pattern: "deep/**" }], (r) => count(r) === 3],
          // what is left: the ignore file itself, keep7.x7 (re-included) and kept.txt
          ["ignore file of 18,000 lines", ["Glob", { pattern: "many/**" }], (r) => count(r) === 3]
        ]
        let inputs = 0
        let hangs = 0
        let slowest = 0
        for (const [host, env] of [
          ["one-shot", oneShot],
          ["file index", indexed]
        ] as const) {
          for (const [name, call, check] of attacks) {
            for (let runs = 0; runs < CATASTROPHIC_RUNS; runs++) {
              const started = performance.now()
              const outcome = outcomeOf(yield* Effect.either(run(call).pipe(Effect.provide(env.context))))
              const took = performance.now() - started
              inputs++
              slowest = Math.max(slowest, took)
              if (took > CATASTROPHIC_ANSWER_MS) hangs++
              assert.isTrue(
                outcome.ok && check(outcome.result),
                `${host} ${name}: ${JSON.stringify(outcome).slice(0, 300)}`
              )
              assert.isAtMost(took, CATASTROPHIC_ANSWER_MS, `${host} ${name}`)
            }
          }
        }
        reportReliability(
          "hostile catastrophic patterns",
          { inputs, hangs, crashes: 0 },
          `${attacks.length} attacks (${attacks.map(([name]) => name).join("; ")}), each ${CATASTROPHIC_RUNS} times through a one-shot host and a host with the file index; slowest ${slowest.toFixed(0)} ms (bound ${CATASTROPHIC_ANSWER_MS} ms)`
        )
        assert.strictEqual(hangs, 0)
      }),
    { timeout: isLong() ? 600_000 : 60_000 }
  )

  it.scopedLive("an ignore file that is a FIFO blocks neither the host's walk nor its file index", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({}, { fileIndex: true })
      writeTree(env.workspace, { "a.txt": "", "sub/b.txt": "" })
      spawnSync("mkfifo", [path.join(env.workspace, "sub/.gitignore")])
      const guard: Roots.WalkGuard = {
        readDirectory: (dir) => fs.readdirSync(dir, { withFileTypes: true }),
        holdsParentOf: () => true
      }
      const walked = yield* Effect.promise(() =>
        Walk.walk(env.workspace, Pattern.compileGlob("**/*.txt"), "", undefined, guard, undefined)
      )
      assert.deepStrictEqual(sortedCopy(walked.map((file) => file.display)), ["a.txt", "sub/b.txt"])
      // the index is built by the host's own walk: it completes, and Glob answers from it
      assert.isTrue(yield* indexReady(env))
      const found = yield* Glob.glob({ pattern: "**/*.txt" }).pipe(Effect.provide(env.context))
      assert.deepStrictEqual(sortedCopy(found.matches), ["a.txt", "sub/b.txt"])
    })
  )

  it.scopedLive("the host's own fallback walk is linear too, and lets the event loop run", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const files: Record<string, string> = {}
      // more directories than the walk reads between two turns of the event loop
      for (let k = 0; k < 600; k++) files[`d${k % 200}/${"a".repeat(60 + (k % 140))}`] = ""
      writeTree(env.workspace, files)
      const guard: Roots.WalkGuard = {
        readDirectory: (dir) => fs.readdirSync(dir, { withFileTypes: true }),
        holdsParentOf: () => true
      }
      // a chain of immediates advances only while the walk leaves the event loop a turn
      let turns = 0
      let walking = true
      const tick = () => {
        turns++
        if (walking) setImmediate(tick)
      }
      setImmediate(tick)
      const started = performance.now()
      const found = yield* Effect.promise(() =>
        Walk.walk(env.workspace, Pattern.compileGlob(`**/${stars(20)}`), "", undefined, guard, undefined)
      ).pipe(Effect.ensuring(Effect.sync(() => (walking = false))))
      assert.strictEqual(found.length, 0)
      assert.isAtMost(performance.now() - started, CATASTROPHIC_ANSWER_MS)
      assert.isAtLeast(turns, 2)
    })
  )
})

const count = (result: unknown): number => {
  const record = result as {
    readonly matches?: ReadonlyArray<unknown>
    readonly files?: ReadonlyArray<unknown>
  }
  return (record.matches ?? record.files ?? []).length
}
