/**
 * Glob and Grep against ripgrep itself, on real trees with nested ignore files: the repository's
 * own node_modules (given explicitly, so the root .gitignore that lists it does not apply), a
 * generated tree, and random trees with random rules. Glob's files must equal `rg --files`, and
 * Grep's files-with-matches must equal `rg -l`, file for file.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { isLong } from "@toolcap/bench-report"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Binary, FileIndex, Glob, Grep, Supervisor, Workspace } from "@toolcap/tools"
import { indexReady, oracleFlags, plain, ripgrep, rightOf, searchEnv, writeTree } from "./readFixtures.js"

/** Budgets loose enough that nothing is capped: the comparison is about which files, not how many. */
const unbounded = {
  globMaxLimit: 10_000_000,
  globLimit: 10_000_000,
  grepHeadLimit: 10_000_000,
  searchMaxLines: 10_000_000,
  searchMaxBytes: 1024 * 1024 * 1024
} as const

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

const repoContext = (fileIndex: boolean) =>
  Effect.gen(function* () {
    const layer = Layer.mergeAll(
      Budgets.layerWith(unbounded).pipe(Layer.orDie),
      Workspace.layer({ root: repoRoot }).pipe(Layer.orDie),
      fileIndex ? FileIndex.layer() : Layer.empty,
      Scratch.layerTest(),
      Supervisor.layer()
    ).pipe(Layer.orDie)
    return yield* Layer.build(layer)
  })

const globFiles = (
  context: Context.Context<Budgets.Budgets | Workspace.Workspace | Scratch.Scratch | Supervisor.Supervisor>,
  pattern: string,
  dir?: string
) =>
  Glob.glob({ pattern, ...(dir !== undefined ? { path: dir } : {}) }).pipe(
    Effect.either,
    Effect.provide(context),
    Effect.map((either) => {
      const result = rightOf(either)
      assert.isFalse(result.truncated)
      return result.matches
    })
  )

const grepFiles = (
  context: Context.Context<Budgets.Budgets | Workspace.Workspace | Scratch.Scratch | Supervisor.Supervisor>,
  pattern: string,
  dir?: string
) =>
  Grep.grep({ pattern, outputMode: "filesWithMatches", ...(dir !== undefined ? { path: dir } : {}) }).pipe(
    Effect.either,
    Effect.provide(context),
    Effect.map((either) => {
      const result = rightOf(either)
      if (!("files" in result) || typeof result.files === "number") throw new Error("expected files")
      assert.isFalse(result.truncated)
      return result.files as ReadonlyArray<string>
    })
  )

/** `rg --files` under `dir`, as paths relative to `prefixFrom`. */
const rgFiles = (dir: string, prefix: string, globs: ReadonlyArray<string> = []) =>
  ripgrep(
    [
      ...oracleFlags.slice(0, -2),
      ...globs.flatMap((g) => ["--glob", g]),
      "--glob",
      "!.git",
      "--files",
      "--null",
      "."
    ],
    dir
  ).map((file) => path.posix.join(prefix, plain(file)))

/** `rg -l` under `dir` (binary files searched like the explicit files Grep hands ripgrep), minus binary files. */
const rgFilesWithMatches = (dir: string, prefix: string, pattern: string) =>
  ripgrep([...oracleFlags, "--binary", "--files-with-matches", "--null", `--regexp=${pattern}`, "."], dir)
    .filter((file) => Option.isNone(Binary.detectSync(path.join(dir, file), 4096, 0.3)))
    .map((file) => path.posix.join(prefix, plain(file)))

const sameSet = (ours: ReadonlyArray<string>, theirs: ReadonlyArray<string>, label: string) => {
  const a = new Set(ours)
  const b = new Set(theirs)
  const missing = [...b].filter((x) => !a.has(x)).slice(0, 5)
  const extra = [...a].filter((x) => !b.has(x)).slice(0, 5)
  assert.deepStrictEqual({ missing, extra }, { missing: [], extra: [] }, label)
  assert.strictEqual(a.size, b.size, label)
  assert.strictEqual(ours.length, a.size, `${label}: no duplicates`)
}

// every comparison runs twice: listing the tree per call (a one-shot host) and through the
// watched file index of a long-lived host
for (const fileIndex of [false, true])
  describe(`Glob and Grep agree with ripgrep (file index ${fileIndex ? "on" : "off"})`, () => {
    it.scopedLive(
      "on the repository's node_modules given explicitly",
      () =>
        Effect.gen(function* () {
          const context = yield* repoContext(fileIndex)
          const dir = path.join(repoRoot, "node_modules")
          if (fileIndex) {
            const index = Context.get(
              context as unknown as Context.Context<FileIndex.FileIndex>,
              FileIndex.FileIndex
            )
            assert.isTrue(yield* index.ready(fs.realpathSync(dir)))
          }
          // the default suite compares one Glob and one Grep over this large tree; the long mode all
          const cases: Array<[string, ReadonlyArray<string>]> = isLong()
            ? [
                ["**/*.ts", ["*.ts"]],
                ["**/*", []]
              ]
            : [["**/*.ts", ["*.ts"]]]
          for (const [pattern, globs] of cases) {
            const ours = yield* globFiles(context, pattern, "node_modules")
            sameSet(ours, rgFiles(dir, "node_modules", globs), `Glob ${pattern}`)
            assert.isAbove(ours.length, 100, pattern)
          }
          const patterns = isLong()
            ? ["\\bexport\\s+default\\b", "TODO|FIXME", "zq-no-such-text-qz"]
            : ["\\bexport\\s+default\\b"]
          for (const pattern of patterns) {
            const ours = yield* grepFiles(context, pattern, "node_modules")
            sameSet(ours, rgFilesWithMatches(dir, "node_modules", pattern), `Grep ${pattern}`)
          }
        }),
      120_000
    )

    it.scopedLive(
      "on a generated tree with nested .gitignore, .ignore, .rgignore and .git/info/exclude",
      () =>
        Effect.gen(function* () {
          const env = yield* searchEnv(unbounded, { fileIndex })
          const files: Record<string, string> = {
            ".gitignore": "*.log\n/dist/\ntmp/\n!important.log\ndocs/**/*.draft.md\n",
            ".git/info/exclude": "local-notes.txt\n",
            ".git/config": "[core]\n",
            ".ignore": "!dist/keep.js\nvendor/\n",
            "src/.gitignore": "generated/\n!generated/\n*.gen.ts\n!keep.gen.ts\n",
            "src/lib/.rgignore": "secret-*.ts\n",
            "pkg/a/.gitignore": "/only-here.txt\nbuild\n",
            "pkg/a/sub/.ignore": "*.txt\n"
          }
          const leaves = [
        "main.ts", "app.log", "important.log", "local-notes.txt", "dist/out.js", "dist/keep.js",
        "tmp/x.ts", "src/tmp/y.ts", "vendor/v.js", "src/vendor/w.js", "docs/guide.md", "docs/a/b/plan.draft.md",
        "docs/plan.draft.md", "src/index.ts", "src/util.gen.ts", "src/keep.gen.ts", "src/generated/types.ts",
        "src/lib/secret-key.ts", "src/lib/public.ts", "src/lib/deep/secret-x.ts", "pkg/a/only-here.txt",
        "pkg/a/x/only-here.txt", "pkg/a/build/b.js", "pkg/a/src/build", "pkg/a/sub/readme.txt", "pkg/a/sub/code.ts",
        ".github/workflows/ci.yml", ".env.example", "pkg/b/.hidden/h.ts"
      ] // prettier-ignore
          for (const leaf of leaves) files[leaf] = `needle in ${leaf}\n`
          writeTree(env.workspace, files)
          // with the index, the comparisons go through it once it is built
          if (fileIndex) assert.isTrue(yield* indexReady(env))
          const ours = yield* globFiles(env.context, "**/*")
          sameSet(ours, rgFiles(env.workspace, ""), "Glob **/* from the root")
          const fromPkg = yield* globFiles(env.context, "**/*", "pkg/a")
          sameSet(fromPkg, rgFiles(path.join(env.workspace, "pkg/a"), "pkg/a"), "Glob **/* under pkg/a")
          const fromDist = yield* globFiles(env.context, "**/*", "dist")
          sameSet(
            fromDist,
            rgFiles(path.join(env.workspace, "dist"), "dist"),
            "Glob **/* under the ignored dist"
          )
          // Glob filters the same files by pattern (ripgrep's --glob would re-include ignored files)
          const tsOnly = yield* globFiles(env.context, "**/*.ts")
          sameSet(
            tsOnly,
            rgFiles(env.workspace, "").filter((file) => file.endsWith(".ts")),
            "Glob **/*.ts"
          )
          for (const pattern of ["needle", "needle in src", "keep|public", "nothing-matches"]) {
            const found = yield* grepFiles(env.context, pattern)
            sameSet(found, rgFilesWithMatches(env.workspace, "", pattern), `Grep ${pattern}`)
          }
          if (fileIndex) {
            const indexed = Context.get(
              env.context as unknown as Context.Context<FileIndex.FileIndex>,
              FileIndex.FileIndex
            ).sizes()
            assert.isTrue(
              indexed.some((entry) => entry.root === env.workspace && entry.files > 0),
              "the index was used"
            )
          }
          // the rules change between two calls: a kept index must follow them
          writeTree(env.workspace, {
            ".gitignore": "*.log\n/dist/\n!important.log\n",
            "src/.gitignore": "",
            "tmp/new.ts": "needle new\n",
            "vendor/.gitignore": "*.js\n",
            "pkg/a/.git/info/exclude": "code.ts\n"
          })
          sameSet(
            yield* globFiles(env.context, "**/*"),
            rgFiles(env.workspace, ""),
            "Glob **/* after rule changes"
          )
          sameSet(
            yield* grepFiles(env.context, "needle"),
            rgFilesWithMatches(env.workspace, "", "needle"),
            "Grep after rule changes"
          )
        })
    )

    const ruleArbitrary = FastCheck.constantFrom(
    "*.log", "!keep.log", "build/", "/top.txt", "a/**/b.txt", "**/tmp", "docs/*.md", "!docs/keep.md", "x?y.txt",
    "[ab].txt", "sub/", "!sub/", "deep/er/", "*.ts", "!*.d.ts", "/a", "a/", "b", "**/c/*.txt", "\\#hash.txt", "dir/**",
    "!dir/**/keep.txt", "# comment", "", "top.txt ", "*"
  ) // prettier-ignore
    const leafArbitrary = FastCheck.constantFrom(
    "keep.log", "a.log", "top.txt", "a/b.txt", "a/x/b.txt", "tmp/t.txt", "docs/r.md", "docs/keep.md", "xzy.txt",
    "a.txt", "c.txt", "sub/s.txt", "deep/er/e.txt", "x.ts", "x.d.ts", "b", "c/d.txt", "#hash.txt", "dir/z/keep.txt",
    "dir/y.txt", "build/o.js", ".hidden/h.txt"
  ) // prettier-ignore
    const dirArbitrary = FastCheck.constantFrom("", "a/", "sub/", "docs/", "dir/", "p/q/")
    const ignoreFileArbitrary = FastCheck.constantFrom(".gitignore", ".ignore", ".rgignore")

    it.scopedLive.prop(
      "on random trees with random rules at random levels",
      [
        FastCheck.array(
          FastCheck.tuple(
            dirArbitrary,
            ignoreFileArbitrary,
            FastCheck.array(ruleArbitrary, { maxLength: 5 })
          ),
          {
            maxLength: 4
          }
        ),
        FastCheck.array(FastCheck.tuple(dirArbitrary, leafArbitrary), { minLength: 1, maxLength: 14 })
      ],
      ([rules, leaves]) =>
        Effect.gen(function* () {
          const env = yield* searchEnv(unbounded, { fileIndex })
          const files: Record<string, string> = {}
          for (const [dir, leaf] of leaves) files[dir + leaf] = "x\n"
          for (const [dir, name, lines] of rules) files[dir + name] = lines.join("\n") + "\n"
          // a path cannot be both a file and a directory
          for (const file of Object.keys(files)) {
            for (const other of Object.keys(files)) if (other.startsWith(file + "/")) delete files[file]
          }
          writeTree(env.workspace, files)
          if (fileIndex) assert.isTrue(yield* indexReady(env))
          const ours = yield* globFiles(env.context, "**/*")
          sameSet(ours, rgFiles(env.workspace, ""), JSON.stringify(files))
          const found = yield* grepFiles(env.context, "x")
          sameSet(found, rgFilesWithMatches(env.workspace, "", "x"), `Grep: ${JSON.stringify(files)}`)
        }),
      { fastCheck: { numRuns: 25 } }
    )
  })
