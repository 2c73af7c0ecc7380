/**
 * The corpus: real tool outputs produced at bench time on this machine. Each case builds what it
 * needs in the workspace (a generated project, a git repository, a log), names the Bash command or
 * the file an agent would run or read, and the rule that finds its needle in the output.
 *
 * Nothing here types an output by hand: compilers, test runners, git, find and grep print them.
 * Where a generated input places the defect (a type error, a failing test), the position is a
 * fixed fraction of the input, stated beside it, so the case is the same on every run.
 *
 * @since 0.1.0
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import type { NeedleRule } from "./Needle.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface CaseContext {
  /** The workspace the tools run in (a temp dir). */
  readonly workspace: string
  /** The monorepo, for its own files, compilers and node_modules. */
  readonly repoRoot: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CorpusCase {
  readonly id: string
  readonly title: string
  /** `bash`: the agent runs `command`; `read`: the agent reads `file` (workspace-relative). */
  readonly kind: "bash" | "read"
  /** The size band or shape this case stands for, when it was added for one. */
  readonly group?: string
  readonly setup: (context: CaseContext) => Promise<{ readonly command?: string; readonly file?: string }>
  readonly needle: NeedleRule
}

const requireHere = createRequire(import.meta.url)

/** A dev dependency's directory (typescript, vitest), resolved from this package. */
const packageDir = (name: string): string => path.dirname(requireHere.resolve(`${name}/package.json`))

const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** Deterministic pseudo-random bytes for line `i` of a generated input: a SHA-256 of its index. */
const lineDigest = (seed: string, i: number): Buffer => createHash("sha256").update(`${seed}:${i}`).digest()

/** A TypeScript project in `dir`: its tsconfig (no @types, sources in `src`), compiled by the repo's tsc. */
const tsProject = (dir: string, compilerOptions: Record<string, unknown>): void =>
  write(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: "ES2022", types: [], ...compilerOptions },
      include: ["src"]
    })
  )

const tscCommand = (project: string): string =>
  `node ${JSON.stringify(path.join(packageDir("typescript"), "bin", "tsc"))} -p ${project} --pretty false`

/** What a factory of generated cases is given: the case's id, its title, the group it was added for. */
interface Variant {
  readonly id: string
  readonly title: string
  readonly group?: string
}

/** A Bash case of a variant. */
const bashCase = (variant: Variant, rest: Pick<CorpusCase, "needle" | "setup">): CorpusCase => ({
  id: variant.id,
  title: variant.title,
  kind: "bash",
  ...(variant.group === undefined ? {} : { group: variant.group }),
  ...rest
})

// A flood of unused-variable errors (noUnusedLocals) with one real type error among them: the
// common shape of a strict build in a codebase that let warnings pile up.
const TSC_UNUSED_PER_FILE = 5

/** `tsc` over `files` generated modules, the one with the type error at `defectAt` of them in file order. */
const tscProject = (
  options: Variant & {
    readonly files: number
    readonly defectAt: number
  }
): CorpusCase =>
  bashCase(options, {
    needle: { describe: "the line with `error TS2322`", pattern: /error TS2322/, stream: "stdout" },
    setup: async ({ workspace }) => {
      const dir = path.join(workspace, options.id)
      tsProject(dir, {
        noUnusedLocals: true,
        module: "ES2022",
        moduleResolution: "Bundler",
        skipLibCheck: true
      })
      const defect = Math.floor(options.files * options.defectAt)
      for (let f = 0; f < options.files; f++) {
        const body = Array.from(
          { length: TSC_UNUSED_PER_FILE },
          (_, u) => `  const unused${u} = ${f * 10 + u}`
        ).join("\n")
        const defectLine =
          f === defect ? `  const port: number = "80${pad(f, 2)}"\n  return port\n` : "  return 0\n"
        write(
          path.join(dir, "src", `module${pad(f, 3)}.ts`),
          `export function run${f}(): number {\n${body}\n${defectLine}}\n`
        )
      }
      return { command: tscCommand(options.id) }
    }
  })

const tscFlood = tscProject({
  id: "tsc-flood",
  title: "`tsc` on a generated project: 2,000 unused-variable errors and one type error at 70%",
  files: 400,
  defectAt: 0.7
})

const tscMedium = tscProject({
  id: "tsc-medium",
  title: "`tsc` on a generated project: 600 unused-variable errors and one type error at 70%",
  group: "30–96 KB",
  files: 120,
  defectAt: 0.7
})

const tscFloodMiddle = tscProject({
  id: "tsc-flood-mid",
  title: "`tsc` on a generated project: 3,000 unused-variable errors and one type error at 50%",
  group: "needle mid-flood",
  files: 600,
  defectAt: 0.5
})

const tscSmall: CorpusCase = {
  id: "tsc-small",
  title: "`tsc` on a small project with one error (nothing to cut)",
  kind: "bash",
  needle: { describe: "the line with `error TS2345`", pattern: /error TS2345/, stream: "stdout" },
  setup: async ({ workspace }) => {
    const dir = path.join(workspace, "ts-small")
    tsProject(dir, {})
    write(
      path.join(dir, "src", "price.ts"),
      `export const price = (cents: number): string => (cents / 100).toFixed(2)\n`
    )
    write(
      path.join(dir, "src", "cart.ts"),
      `import { price } from "./price"\nexport const label = price("1999")\n`
    )
    return { command: tscCommand("ts-small") }
  }
}

// A verbose vitest run: one line per test on stdout, the failure's details on stderr at the end.
// few files: vitest pays a worker start-up per file
const VITEST_FILES = 6
const VITEST_TESTS_PER_FILE = 500
/** The failing test is in the file at 70% of the run. */
const VITEST_DEFECT_AT = 0.7

const vitestFail: CorpusCase = {
  id: "vitest-fail",
  title: "`vitest run --reporter=verbose`: 3,000 tests, one fails",
  kind: "bash",
  needle: {
    describe: "the `AssertionError` line of the failure report",
    pattern: /^AssertionError: /,
    stream: "stderr"
  },
  setup: async ({ workspace }) => {
    const dir = path.join(workspace, "vitest-run")
    const defect = Math.floor(VITEST_FILES * VITEST_DEFECT_AT)
    for (let f = 0; f < VITEST_FILES; f++) {
      const expected = (t: number) => (f === defect && t === VITEST_TESTS_PER_FILE / 2 ? t * 3 + 1 : t * 3)
      const tests = Array.from(
        { length: VITEST_TESTS_PER_FILE },
        (_, t) => `test("total of order ${f}-${t}", () => { expect(total(${t})).toBe(${expected(t)}) })`
      ).join("\n")
      write(
        path.join(dir, `orders${pad(f, 2)}.test.js`),
        `const total = (n) => n * 3\ndescribe("orders ${f}", () => {\n${tests}\n})\n`
      )
    }
    const vitest = path.join(packageDir("vitest"), "vitest.mjs")
    return {
      command: `NO_COLOR=1 node ${JSON.stringify(vitest)} run --root vitest-run --globals --reporter=verbose`
    }
  }
}

// node's own test runner with the spec reporter: every test on stdout, the failure inline and again
// in the "failing tests" list after the summary. The failing test is at 70% of the file.
const NODE_DEFECT_AT = 0.7

const nodeTests = (
  options: Variant & {
    readonly tests: number
  }
): CorpusCase =>
  bashCase(options, {
    needle: {
      describe: "the `actual !== expected` line of the failure (last occurrence: the failing-tests list)",
      pattern: /^\s+\d+ !== \d+$/,
      stream: "stdout",
      pick: "last"
    },
    setup: async ({ workspace }) => {
      const defect = Math.floor(options.tests * NODE_DEFECT_AT)
      write(
        path.join(workspace, options.id, "orders.test.mjs"),
        [
          `import { test } from "node:test"`,
          `import assert from "node:assert/strict"`,
          `const total = (n) => n * 3`,
          `for (let i = 0; i < ${options.tests}; i++)`,
          `  test(\`total of order \${i}\`, () => assert.equal(total(i), i === ${defect} ? i * 3 + 1 : i * 3))`,
          ``
        ].join("\n")
      )
      return { command: `node --test --test-reporter=spec ${options.id}/orders.test.mjs` }
    }
  })

const nodeTestFail = nodeTests({
  id: "node-test-fail",
  title: "`node --test` (spec reporter): 6,000 tests, one fails",
  tests: 6000
})

const nodeTestMedium = nodeTests({
  id: "node-test-medium",
  title: "`node --test` (spec reporter): 1,500 tests, one fails",
  group: "30–96 KB",
  tests: 1500
})

// Python's unittest in verbose mode writes everything to stderr: one line per test, then the
// failure. The failing test is at 70% of the class.
const PY_DEFECT_AT = 0.7

const pythonTests = (
  options: Variant & {
    readonly tests: number
  }
): CorpusCase =>
  bashCase(options, {
    needle: { describe: "the `AssertionError` line", pattern: /^AssertionError: /, stream: "stderr" },
    setup: async ({ workspace }) => {
      const defect = Math.floor(options.tests * PY_DEFECT_AT)
      const methods = Array.from(
        { length: options.tests },
        (_, i) =>
          `    def test_order_${pad(i, 4)}(self):\n        self.assertEqual(total(${i}), ${i === defect ? i * 3 + 1 : i * 3})\n`
      ).join("")
      write(
        path.join(workspace, options.id, "test_orders.py"),
        `import unittest\n\ndef total(n):\n    return n * 3\n\nclass Orders(unittest.TestCase):\n${methods}`
      )
      return { command: `python3 -m unittest discover -v -s ${options.id}` }
    }
  })

const pythonUnittest = pythonTests({
  id: "python-unittest",
  title: "`python3 -m unittest -v`: 3,000 tests, one fails",
  tests: 3000
})

const pythonUnittestMedium = pythonTests({
  id: "python-unittest-medium",
  title: "`python3 -m unittest -v`: 600 tests, one fails",
  group: "30–96 KB",
  tests: 600
})

/** Every `.ts` file under `dir`, sorted, relative to `root`. */
const sourceFiles = (root: string, dir: string): Array<string> =>
  Arr.sort(
    fs.readdirSync(path.join(root, dir), { withFileTypes: true }),
    Order.mapInput(Order.string, (entry: fs.Dirent) => entry.name)
  ).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(root, path.join(dir, entry.name))
      : entry.name.endsWith(".ts")
        ? [path.join(dir, entry.name)]
        : []
  )

/**
 * A git repository of the monorepo's own sources, one commit per file (so the history is real git
 * output of real code, the same for the same sources), built once per workspace.
 */
const history = (workspace: string, repoRoot: string): string => {
  const repo = path.join(workspace, "history")
  if (fs.existsSync(path.join(repo, ".git"))) return "history"
  fs.mkdirSync(repo, { recursive: true })
  const files = Arr.sort(fs.readdirSync(path.join(repoRoot, "packages")), Order.string).flatMap((pkg) =>
    fs.existsSync(path.join(repoRoot, "packages", pkg, "src"))
      ? sourceFiles(repoRoot, path.join("packages", pkg, "src"))
      : []
  )
  // one fast-import stream instead of a process per commit
  const chunks: Array<Buffer> = []
  // each commit continues the branch, so no `from` is needed
  files.forEach((file, i) => {
    const data = fs.readFileSync(path.join(repoRoot, file))
    const message = Buffer.from(`add ${file}\n`)
    const when = 1_750_000_000 + i * 3600
    chunks.push(
      Buffer.from(
        `commit refs/heads/main\ncommitter Toolcap Bench <bench@toolcap.invalid> ${when} +0000\ndata ${message.length}\n`
      ),
      message,
      Buffer.from(`M 100644 inline ${file}\ndata ${data.length}\n`),
      data,
      Buffer.from("\n")
    )
  })
  const init = spawnSync("git", ["init", "-q", "-b", "main", repo])
  if (init.status !== 0) throw new Error(`git init failed: ${init.stderr}`)
  const imported = spawnSync("git", ["-C", repo, "fast-import", "--quiet"], {
    input: Buffer.concat(chunks)
  })
  if (imported.status !== 0) throw new Error(`git fast-import failed: ${imported.stderr}`)
  return "history"
}

const gitLog: CorpusCase = {
  id: "git-log-p",
  title: "`git log -p` of a repository of this monorepo's sources (one commit per file)",
  kind: "bash",
  needle: {
    describe: "the subject of the commit that added `packages/limits/src/Truncate.ts`",
    pattern: /^ {4}add packages\/limits\/src\/Truncate\.ts$/,
    stream: "stdout"
  },
  setup: async ({ repoRoot, workspace }) => ({
    command: `git -C ${history(workspace, repoRoot)} log -p --no-color`
  })
}

// `git grep` of the same repository: ripgrep-like output in path order, the same on every machine
// for the same sources.
const gitGrep = (options: {
  readonly id: string
  readonly group: string
  /** The pattern searched for, as `git grep` takes it. */
  readonly search: string
  readonly needle: NeedleRule
}): CorpusCase =>
  bashCase(
    { ...options, title: `\`git grep -n '${options.search}'\` over this monorepo's sources` },
    {
      needle: options.needle,
      setup: async ({ repoRoot, workspace }) => ({
        command: `git -C ${history(workspace, repoRoot)} grep -n '${options.search}' main`
      })
    }
  )

const gitGrepEffect = gitGrep({
  id: "git-grep-effect",
  group: "30–96 KB",
  search: "Effect\\.",
  needle: {
    describe: "the line declaring `validateSessionId` in `packages/spill/src/Scratch.ts`",
    pattern: /^main:packages\/spill\/src\/Scratch\.ts:\d+:export const validateSessionId = /,
    stream: "stdout"
  }
})

const gitGrepConst = gitGrep({
  id: "git-grep-const",
  group: "needle mid-flood",
  search: "const ",
  needle: {
    describe: "the line declaring `cutBytes` in `packages/limits/src/Truncate.ts`",
    pattern: /^main:packages\/limits\/src\/Truncate\.ts:\d+:export const cutBytes = /,
    stream: "stdout"
  }
})

const findUsr: CorpusCase = {
  id: "find-usr",
  title: "`find /usr`",
  kind: "bash",
  needle: {
    describe: "the line `/usr/include/stdio.h`",
    pattern: /^\/usr\/include\/stdio\.h$/,
    stream: "stdout"
  },
  setup: async () => ({ command: "find /usr" })
}

const grepNodeModules: CorpusCase = {
  id: "grep-node-modules",
  title: "`grep -rn runPromiseExit node_modules/.pnpm` (sources, source maps, bundles)",
  kind: "bash",
  needle: {
    describe: "the declaration in effect's `Effect.d.ts`",
    pattern: /dist\/dts\/Effect\.d\.ts:\d+:export declare const runPromiseExit/,
    stream: "stdout"
  },
  setup: async ({ repoRoot }) => ({
    command: `cd ${JSON.stringify(repoRoot)} && grep -rn runPromiseExit node_modules/.pnpm`
  })
}

// A C build in the shape of `make`: files compiled in order with -Wall; every function has an
// unused variable (a warning and its caret lines on stderr), one function an undeclared name.
const C_FUNCTIONS_PER_FILE = 60

const cBuild = (
  options: Variant & {
    readonly files: number
    /** The file with the error, as a share of the build; the error is in the middle of that file. */
    readonly defectAt: number
    /** `make` stops at the first failure; `make -k` goes on and compiles the rest. */
    readonly keepGoing: boolean
  }
): CorpusCase =>
  bashCase(options, {
    needle: { describe: "the line with `error:`", pattern: /error: /, stream: "stderr" },
    setup: async ({ workspace }) => {
      const defectFile = Math.floor(options.files * options.defectAt)
      for (let f = 0; f < options.files; f++) {
        const functions = Array.from({ length: C_FUNCTIONS_PER_FILE }, (_, g) => {
          const defect = f === defectFile && g === C_FUNCTIONS_PER_FILE / 2
          return `int unit${f}_${g}(int x) {\n  int unused_${g} = x;\n  return ${defect ? "x + missing_rate" : "x"};\n}\n`
        }).join("")
        write(path.join(workspace, options.id, `unit${pad(f, 2)}.c`), functions)
      }
      const compile = `cc -Wall -c "$f" -o /dev/null`
      return {
        command: options.keepGoing
          ? `status=0; for f in ${options.id}/*.c; do ${compile} || status=1; done; exit $status`
          : `set -e; for f in ${options.id}/*.c; do ${compile}; done`
      }
    }
  })

const cBuildWarnings = cBuild({
  id: "cc-build-warnings",
  title: "`cc -Wall` over 40 generated files, warnings flooding stderr, stopping at one error (80%)",
  files: 40,
  defectAt: 0.8,
  keepGoing: false
})

const cBuildMedium = cBuild({
  id: "cc-build-medium",
  title: "`cc -Wall` over 6 generated files, stopping at one error (in the 5th)",
  group: "30–96 KB",
  files: 6,
  defectAt: 0.8,
  keepGoing: false
})

const cBuildKeepGoing = cBuild({
  id: "cc-keep-going",
  title: "`cc -Wall` over 40 generated files, going on past one error at 50% (`make -k`)",
  group: "needle mid-flood",
  files: 40,
  defectAt: 0.5,
  keepGoing: true
})

// A 5 MiB service log of ordinary request lines with one error deep inside.
const LOG_BYTES = 5 * 1024 * 1024
/** The error line sits at 62% of the log's lines. */
const LOG_ERROR_AT = 0.62

const bigLog: CorpusCase = {
  id: "log-5mb",
  title: "a 5 MiB service log with one `ERROR` line at 62% of its lines",
  kind: "read",
  needle: { describe: "the `ERROR` line", pattern: / ERROR /, stream: "stdout" },
  setup: async ({ workspace }) => {
    const lines: Array<string> = []
    let bytes = 0
    const paths = ["/api/orders", "/api/items", "/api/cart", "/health", "/api/users"]
    for (let i = 0; bytes < LOG_BYTES; i++) {
      const at = new Date(Date.UTC(2026, 2, 14, 9) + i * 37).toISOString()
      const d = lineDigest("app.log", i)
      const line = `${at} INFO  worker-${d[0]! % 8} request id=${d.readUInt32BE(1)} path=${paths[d[5]! % paths.length]}/${d.readUInt16BE(6) % 5000} status=200 duration_ms=${d[8]! % 90}\n`
      lines.push(line)
      bytes += line.length
    }
    const errorIndex = Math.floor(lines.length * LOG_ERROR_AT)
    lines[errorIndex] = lines[errorIndex]!.replace(
      / INFO  (worker-\d) request (id=\d+) .*\n$/,
      " ERROR $1 payment declined: upstream timeout after 30000ms $2\n"
    )
    write(path.join(workspace, "logs", "app.log"), lines.join(""))
    return { file: "logs/app.log" }
  }
}

const minifiedBundle: CorpusCase = {
  id: "bundle-min",
  title: "a minified bundle (esbuild) of `@toolcap/limits` with effect",
  kind: "read",
  needle: {
    describe: "the marker text `no complete line fits the` inside the bundle",
    pattern: /no complete line fits the/,
    stream: "stdout"
  },
  setup: async ({ workspace, repoRoot }) => {
    // esbuild as tsx ships it: no dependency of our own
    const esbuild = createRequire(requireHere.resolve("tsx/package.json"))("esbuild") as {
      readonly build: (options: Record<string, unknown>) => Promise<unknown>
    }
    await esbuild.build({
      entryPoints: [path.join(repoRoot, "packages", "limits", "src", "index.ts")],
      bundle: true,
      minify: true,
      format: "esm",
      platform: "node",
      conditions: ["@toolcap/source"],
      outfile: path.join(workspace, "dist", "limits.min.js"),
      logLevel: "error"
    })
    return { file: "dist/limits.min.js" }
  }
}

const lockfile: CorpusCase = {
  id: "lockfile",
  title: "this monorepo's `pnpm-lock.yaml`",
  kind: "read",
  needle: { describe: "the first `vitest@` package entry", pattern: /^ {2}vitest@\d/, stream: "stdout" },
  setup: async ({ workspace, repoRoot }) => {
    fs.copyFileSync(path.join(repoRoot, "pnpm-lock.yaml"), path.join(workspace, "pnpm-lock.yaml"))
    return { file: "pnpm-lock.yaml" }
  }
}

const libDom: CorpusCase = {
  id: "lib-dom",
  title: "TypeScript's `lib.dom.d.ts`",
  kind: "read",
  needle: {
    describe: "the line declaring `interface HTMLCanvasElement`",
    pattern: /^interface HTMLCanvasElement /,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    fs.copyFileSync(
      path.join(packageDir("typescript"), "lib", "lib.dom.d.ts"),
      path.join(workspace, "lib.dom.d.ts")
    )
    return { file: "lib.dom.d.ts" }
  }
}

/**
 * Every case, in report order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cases: ReadonlyArray<CorpusCase> = [
  tscSmall,
  tscFlood,
  vitestFail,
  nodeTestFail,
  pythonUnittest,
  cBuildWarnings,
  gitLog,
  findUsr,
  grepNodeModules,
  bigLog,
  minifiedBundle,
  lockfile,
  libDom,
  tscMedium,
  nodeTestMedium,
  pythonUnittestMedium,
  cBuildMedium,
  gitGrepEffect,
  tscFloodMiddle,
  cBuildKeepGoing,
  gitGrepConst
]
