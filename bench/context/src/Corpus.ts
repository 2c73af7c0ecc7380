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
  /** The base URL of the loopback HTTP server the run starts (and stops at its end), started on first use. */
  readonly serve: () => Promise<string>
  /**
   * The `DOCKER_HOST` of a Docker daemon the run starts (its own data directory, no network set
   * up) and stops at its end, started on first use; fails naming what to install when `dockerd`
   * is missing or cannot start.
   */
  readonly docker: () => Promise<string>
}

/**
 * The one follow-up an agent could make on a case without knowing the answer: a search term taken
 * from the task or from what a first result shows, never the needle's own pattern. It must read
 * the same as a JavaScript regular expression, an extended `grep -E` one and a ripgrep one (plain
 * words, `|`, `[0-9]`, `^`, `\\.`), since the same term goes to every host's search tool and to `grep -E`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowUp {
  readonly pattern: RegExp
  /** Where an agent gets the term from. */
  readonly from: string
  /**
   * `read`: where the first result names a saved copy, the follow-up is a Read of it at the window
   * its visible text names (the lines a marker says were cut), not a search; `pattern` stays the
   * filter of the re-run for a result that names no copy.
   */
  readonly mode?: "read"
}

/** The Read-at-the-marker follow-up of a flood cut in its middle, with the re-run's filter. */
const readAtMarker = (followUp: FollowUp): FollowUp => ({
  ...followUp,
  mode: "read",
  from: `${followUp.from}; over a saved copy, a Read at the lines its marker says were cut`
})

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
  readonly followUp: FollowUp
  /** Why a user would run the command or read the file. */
  readonly why: string
  /** For a case sized by the size rule (`SIZE_LADDER`): the raw output it aims at, in bytes. */
  readonly targetBytes?: number
}

const requireHere = createRequire(import.meta.url)

/** A dev dependency's directory (typescript, vitest), resolved from this package. */
const packageDir = (name: string): string => path.dirname(requireHere.resolve(`${name}/package.json`))

const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** Any run of SGR colour codes (`ESC[31m`, `ESC[1;33m`), for needles of coloured output. */
const COLOUR = `(?:${String.fromCharCode(0x1b)}\\[[0-9;]*m)*`

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

const tscCommand = (project: string, pretty = false): string =>
  `node ${JSON.stringify(path.join(packageDir("typescript"), "bin", "tsc"))} -p ${project} --pretty ${pretty}`

/** What a factory of generated cases is given: the case's id, its title, the group it was added for. */
interface Variant {
  readonly id: string
  readonly title: string
  readonly group?: string
  readonly why: string
}

/** A Bash case of a variant. */
const bashCase = (
  variant: Variant,
  rest: Pick<CorpusCase, "needle" | "setup" | "followUp"> & { readonly targetBytes?: number }
): CorpusCase => ({
  id: variant.id,
  title: variant.title,
  why: variant.why,
  kind: "bash",
  ...(variant.group === undefined ? {} : { group: variant.group }),
  ...rest
})

// A flood of unused-variable errors (noUnusedLocals) with one real type error among them: the
// common shape of a strict build in a codebase that let warnings pile up.
const TSC_UNUSED_PER_FILE = 5

/** A failing build: the agent looks for the compiler's errors by the word every one of them carries. */
const TSC_FOLLOW_UP: FollowUp = {
  pattern: /error TS/,
  from: "the task (the build fails) and tsc's `error TS` prefix"
}
const TSC_WHY = "the build fails and the agent must fix the type error"

/** `tsc` over `files` generated modules, the one with the type error at `defectAt` of them in file order. */
const tscProject = (
  options: Variant & {
    readonly files: number
    readonly defectAt: number
    /** `--pretty`: colour and code frames, as on a terminal. */
    readonly pretty?: boolean
  }
): CorpusCase =>
  bashCase(options, {
    needle: {
      describe: "the line with `error TS2322`",
      pattern: options.pretty === true ? new RegExp(`error${COLOUR} TS2322`) : /error TS2322/,
      stream: "stdout"
    },
    // colour codes split `error TS`: the agent searches the word alone
    followUp:
      options.pretty === true
        ? { pattern: /error/, from: "the task (the build fails)" }
        : options.group === "needle mid-flood"
          ? readAtMarker(TSC_FOLLOW_UP)
          : TSC_FOLLOW_UP,
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
      return { command: tscCommand(options.id, options.pretty === true) }
    }
  })

const tscFlood = tscProject({
  id: "tsc-flood",
  title: "`tsc` on a generated project: 2,000 unused-variable errors and one type error at 70%",
  why: TSC_WHY,
  files: 400,
  defectAt: 0.7
})

const tscMedium = tscProject({
  id: "tsc-medium",
  title: "`tsc` on a generated project: 600 unused-variable errors and one type error at 70%",
  why: TSC_WHY,
  files: 120,
  defectAt: 0.7
})

const tscFloodMiddle = tscProject({
  id: "tsc-flood-mid",
  title: "`tsc` on a generated project: 3,000 unused-variable errors and one type error at 50%",
  group: "needle mid-flood",
  why: TSC_WHY,
  files: 600,
  defectAt: 0.5
})

const tscSmall: CorpusCase = {
  id: "tsc-small",
  title: "`tsc` on a small project with one error (nothing to cut)",
  kind: "bash",
  why: TSC_WHY,
  followUp: TSC_FOLLOW_UP,
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

const TEST_WHY = "the test run fails and the agent must see which assertion"
/** A failing test run: the agent searches for the runner's failure words. */
const TEST_FOLLOW_UP: FollowUp = { pattern: /FAIL|Error/, from: "the task (a failing test run)" }

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
  why: TEST_WHY,
  followUp: TEST_FOLLOW_UP,
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

/** `orders.test.mjs` in `dir`: `tests` tests of node's runner, the one at `NODE_DEFECT_AT` failing. */
const nodeTestFile = (dir: string, tests: number): void => {
  const defect = Math.floor(tests * NODE_DEFECT_AT)
  write(
    path.join(dir, "orders.test.mjs"),
    [
      `import { test } from "node:test"`,
      `import assert from "node:assert/strict"`,
      `const total = (n) => n * 3`,
      `for (let i = 0; i < ${tests}; i++)`,
      `  test(\`total of order \${i}\`, () => assert.equal(total(i), i === ${defect} ? i * 3 + 1 : i * 3))`,
      ``
    ].join("\n")
  )
}

const nodeTests = (
  options: Variant & {
    readonly tests: number
  }
): CorpusCase =>
  bashCase(options, {
    needle: {
      describe: "the `✖` line naming the failing test (last occurrence: the failing-tests list)",
      pattern: /^\s*✖ total of order \d+ /,
      stream: "stdout",
      pick: "last"
    },
    followUp: {
      pattern: /✖|fail|Error/,
      from: "the task (a failing test run) and the spec reporter's `✖` mark"
    },
    setup: async ({ workspace }) => {
      nodeTestFile(path.join(workspace, options.id), options.tests)
      return { command: `node --test --test-reporter=spec ${options.id}/orders.test.mjs` }
    }
  })

const nodeTestFail = nodeTests({
  id: "node-test-fail",
  title: "`node --test` (spec reporter): 6,000 tests, one fails",
  why: TEST_WHY,
  tests: 6000
})

const nodeTestMedium = nodeTests({
  id: "node-test-medium",
  title: "`node --test` (spec reporter): 1,500 tests, one fails",
  why: TEST_WHY,
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
    followUp: TEST_FOLLOW_UP,
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
  why: TEST_WHY,
  tests: 3000
})

const pythonUnittestMedium = pythonTests({
  id: "python-unittest-medium",
  title: "`python3 -m unittest -v`: 600 tests, one fails",
  why: TEST_WHY,
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

/** effect's sources (the pinned dev dependency): real code that is not this repository's. */
const EFFECT_SOURCES = "src"

/**
 * A git repository of effect's published sources (the pinned dev dependency), one commit per file
 * in path order (so the history is real git output of real code, the same for the same version),
 * built once per workspace.
 */
const history = (workspace: string): string => {
  const repo = path.join(workspace, "history")
  if (fs.existsSync(path.join(repo, ".git"))) return "history"
  fs.mkdirSync(repo, { recursive: true })
  const root = packageDir("effect")
  const files = sourceFiles(root, EFFECT_SOURCES)
  // one fast-import stream instead of a process per commit
  const chunks: Array<Buffer> = []
  // each commit continues the branch, so no `from` is needed
  files.forEach((file, i) => {
    const data = fs.readFileSync(path.join(root, file))
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
  fastImport(repo, Buffer.concat(chunks))
  return "history"
}

/** A new repository at `repo` with `stream` imported (`git fast-import`). */
const fastImport = (repo: string, stream: Buffer): void => {
  const init = spawnSync("git", ["init", "-q", "-b", "main", repo])
  if (init.status !== 0) throw new Error(`git init failed: ${init.stderr}`)
  const imported = spawnSync("git", ["-C", repo, "fast-import", "--quiet"], { input: stream })
  if (imported.status !== 0) throw new Error(`git fast-import failed: ${imported.stderr}`)
}

const gitLog: CorpusCase = {
  id: "git-log-p",
  title: "`git log -p` of a repository of effect's sources (one commit per file)",
  kind: "bash",
  why: "the agent looks for when a file came in and what it held",
  followUp: { pattern: /Schedule\.ts/, from: "the task (when did `src/Schedule.ts` come in)" },
  needle: {
    describe: "the subject of the commit that added `src/Schedule.ts`",
    pattern: /^ {4}add src\/Schedule\.ts$/,
    stream: "stdout"
  },
  setup: async ({ workspace }) => ({ command: `git -C ${history(workspace)} log -p --no-color` })
}

// `git grep` of the same repository: ripgrep-like output in path order, the same on every machine
// for the same sources.
const gitGrep = (options: {
  readonly id: string
  readonly group?: string
  /** The pattern searched for, as `git grep` takes it. */
  readonly search: string
  readonly needle: NeedleRule
  readonly followUp: FollowUp
}): CorpusCase =>
  bashCase(
    {
      ...options,
      title: `\`git grep -n '${options.search}'\` over effect's sources`,
      why: "the agent looks for where a function is defined"
    },
    {
      needle: options.needle,
      followUp: options.followUp,
      setup: async ({ workspace }) => ({
        command: `git -C ${history(workspace)} grep -n '${options.search}' main`
      })
    }
  )

const gitGrepEffect = gitGrep({
  id: "git-grep-effect",
  search: "dual(",
  needle: {
    describe: "the `dual(` line of `src/Chunk.ts` that splits a chunk at `n`",
    pattern:
      /^main:src\/Chunk\.ts:\d+:\} = dual\(2, <A>\(self: Chunk<A>, n: number\): \[Chunk<A>, Chunk<A>\]/,
    stream: "stdout"
  },
  followUp: { pattern: /Chunk\.ts/, from: "the task (how `Chunk` splits)" }
})

const gitGrepConst = gitGrep({
  id: "git-grep-const",
  group: "needle mid-flood",
  search: "export const ",
  needle: {
    describe: "the line declaring `retryOrElse` in `src/Effect.ts`",
    pattern: /^main:src\/Effect\.ts:\d+:export const retryOrElse: /,
    stream: "stdout"
  },
  followUp: readAtMarker({ pattern: /retryOrElse/, from: "the task (where is `retryOrElse`)" })
})

const findUsr: CorpusCase = {
  id: "find-usr",
  title: "`find /usr`",
  kind: "bash",
  why: "the agent looks for where a header is installed",
  followUp: { pattern: /stdio/, from: "the task (where is `stdio.h`)" },
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
  why: "the agent looks for a function's declared type",
  followUp: { pattern: /declare/, from: "the task (the declaration's type)" },
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
const BUILD_WHY = "the build fails and the agent must fix the error"
/** A failing build: the agent searches for the compiler's word for what stopped it. */
const BUILD_FOLLOW_UP: FollowUp = { pattern: /error/, from: "the task (the build fails)" }

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
    followUp: options.group === "needle mid-flood" ? readAtMarker(BUILD_FOLLOW_UP) : BUILD_FOLLOW_UP,
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
  why: BUILD_WHY,
  files: 40,
  defectAt: 0.8,
  keepGoing: false
})

const cBuildMedium = cBuild({
  id: "cc-build-medium",
  title: "`cc -Wall` over 6 generated files, stopping at one error (in the 5th)",
  why: BUILD_WHY,
  files: 6,
  defectAt: 0.8,
  keepGoing: false
})

const cBuildKeepGoing = cBuild({
  id: "cc-keep-going",
  title: "`cc -Wall` over 40 generated files, going on past one error at 50% (`make -k`)",
  group: "needle mid-flood",
  why: BUILD_WHY,
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
  why: "a payment failed in production and the agent reads the service log",
  followUp: { pattern: /ERROR|FATAL|WARN/, from: "the task (find the failure) and the log's level column" },
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
  why: "a user pasted an error message and the agent looks for where the bundle builds it",
  followUp: { pattern: /no complete line/, from: "the task (the message the user pasted)" },
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
  why: "the agent checks which vitest the lockfile pins",
  followUp: { pattern: /vitest/, from: "the task (which vitest is locked)" },
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
  why: "the agent looks up a DOM type's declaration",
  followUp: { pattern: /HTMLCanvasElement/, from: "the task (the type it uses)" },
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

// ---------------------------------------------------------------------------------------------
// Corpus v2: default reporters beside verbose ones, colour, carriage-return progress, installers,
// git mid-merge, diffs, and commands that succeed with the needle a fact in their output.

/** The rungs of the size rule: log-uniform from 2 KB to 10 MB (2 KB × 5000^(k/6), k = 0…6). */
export const SIZE_RUNGS = 7
const SIZE_MIN_BYTES = 2 * 1024
const SIZE_RANGE = 5000

/**
 * The raw output size a sized case aims at: rung `k` of the ladder. The sized cases take the rungs
 * in corpus order; no policy's budget enters the rule. A generator turns the target into a count of
 * its units (files, tests, commits) with the bytes one unit prints, measured once and stated
 * beside it, so the real size lands near the target, not on it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ladderBytes = (k: number): number =>
  Math.round(SIZE_MIN_BYTES * SIZE_RANGE ** (k / (SIZE_RUNGS - 1)))

/** A case with the size it aims at. */
const withTarget = (targetBytes: number, corpusCase: CorpusCase): CorpusCase => ({
  ...corpusCase,
  targetBytes
})

/** Runs a command in `cwd` and throws with its stderr when it fails (setup only, never a case's output). */
const run = (cwd: string, command: string, args: ReadonlyArray<string>, input?: string): string => {
  const done = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Toolcap Bench",
      GIT_AUTHOR_EMAIL: "bench@toolcap.invalid",
      GIT_COMMITTER_NAME: "Toolcap Bench",
      GIT_COMMITTER_EMAIL: "bench@toolcap.invalid",
      GIT_AUTHOR_DATE: "2026-03-14T09:00:00Z",
      GIT_COMMITTER_DATE: "2026-03-14T09:00:00Z"
    }
  })
  if (done.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${done.stderr}`)
  return done.stdout
}

/** `git status` per modified file (`\tmodified:   src/file-00000.txt` and its share of the rest): ~45 bytes. */
const GIT_STATUS_BYTES_PER_FILE = 45

const gitStatusMerge: CorpusCase = {
  id: "git-status-merge",
  title: "`git status` in the middle of a merge: one conflict among modified files",
  kind: "bash",
  targetBytes: ladderBytes(0),
  why: "a merge stopped and the agent must see which file conflicts",
  followUp: {
    pattern: /Unmerged|both|conflict/,
    from: "the task (finish the merge) and git's merge vocabulary"
  },
  needle: {
    describe: "the `both modified:` line",
    pattern: /^\tboth modified: +config\.yml$/,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    const dir = path.join(workspace, "merge-status")
    const files = Math.max(Math.round(ladderBytes(0) / GIT_STATUS_BYTES_PER_FILE), 1)
    run(workspace, "git", ["init", "-q", "-b", "main", dir])
    for (let f = 0; f < files; f++) write(path.join(dir, "src", `file-${pad(f, 5)}.txt`), `line ${f}\n`)
    write(path.join(dir, "config.yml"), "port: 8080\n")
    run(dir, "git", ["add", "-A"])
    run(dir, "git", ["commit", "-q", "-m", "base"])
    run(dir, "git", ["checkout", "-q", "-b", "feature"])
    write(path.join(dir, "config.yml"), "port: 9090\n")
    run(dir, "git", ["commit", "-q", "-am", "feature: port 9090"])
    run(dir, "git", ["checkout", "-q", "main"])
    write(path.join(dir, "config.yml"), "port: 8443\n")
    run(dir, "git", ["commit", "-q", "-am", "main: port 8443"])
    spawnSync("git", ["-C", dir, "merge", "-q", "feature"], { encoding: "utf8" })
    // work in progress beside the conflict: every source file edited
    for (let f = 0; f < files; f++)
      write(path.join(dir, "src", `file-${pad(f, 5)}.txt`), `line ${f} edited\n`)
    return { command: "git -C merge-status status" }
  }
}

/** `tsc --pretty` prints each error in ~5 lines with its code frame and colour codes: ~220 bytes an error. */
const TSC_PRETTY_BYTES_PER_ERROR = 220

const tscPretty: CorpusCase = withTarget(
  ladderBytes(3),
  tscProject({
    id: "tsc-pretty",
    title:
      "`tsc --pretty` (colour, code frames) on a generated project: unused variables and one type error at 70%",
    why: TSC_WHY,
    files: Math.max(Math.round(ladderBytes(3) / (TSC_PRETTY_BYTES_PER_ERROR * TSC_UNUSED_PER_FILE)), 1),
    defectAt: 0.7,
    pretty: true
  })
)

/** A line of `pytest -v` per test (`pytest-v/test_orders.py::test_order_00001 PASSED   [  0%]`): ~80 bytes. */
const PYTEST_V_BYTES_PER_TEST = 80

const pytestCase = (
  options: Variant & {
    readonly tests: number
    readonly flags: string
    readonly targetBytes?: number
  }
): CorpusCase =>
  bashCase(options, {
    ...(options.targetBytes === undefined ? {} : { targetBytes: options.targetBytes }),
    needle: {
      describe: "pytest's `E       assert` line (the values compared)",
      pattern: new RegExp(`^${COLOUR}E +${COLOUR}assert `),
      stream: "stdout"
    },
    followUp: {
      pattern: /FAILED|Error|assert/,
      from: "the task (a failing test run) and pytest's `assert` report"
    },
    setup: async ({ workspace }) => {
      const defect = Math.floor(options.tests * PY_DEFECT_AT)
      const tests = Array.from(
        { length: options.tests },
        (_, i) =>
          `def test_order_${pad(i, 5)}():\n    assert total(${i}) == ${i === defect ? i * 3 + 1 : i * 3}\n`
      ).join("\n")
      write(path.join(workspace, options.id, "test_orders.py"), `def total(n):\n    return n * 3\n\n${tests}`)
      return { command: `pytest -p no:cacheprovider ${options.flags} ${options.id}` }
    }
  })

const pytestVerbose = pytestCase({
  id: "pytest-v",
  title: "`pytest -v`: one line per test, one fails at 70%",
  why: TEST_WHY,
  tests: Math.max(Math.round(ladderBytes(2) / PYTEST_V_BYTES_PER_TEST), 1),
  flags: "-v",
  targetBytes: ladderBytes(2)
})

const pytestQuiet = pytestCase({
  id: "pytest-q",
  title: "`pytest -q` (a dot per test): 1,500 tests, one fails",
  why: TEST_WHY,
  tests: 1500,
  flags: "-q"
})

const pytestColour = pytestCase({
  id: "pytest-color",
  title: "`pytest -q --color=yes`: 600 tests, one fails, in colour",
  why: TEST_WHY,
  tests: 600,
  flags: "-q --color=yes"
})

const pytestCollectError: CorpusCase = {
  id: "pytest-collect-error",
  title: "`pytest -q` stopping at a collection error (a missing module; exit 2)",
  kind: "bash",
  why: "the test run fails before any test runs and the agent must see why",
  followUp: { pattern: /ERROR|Error/, from: "the task (the test run fails)" },
  needle: {
    describe: "the `ModuleNotFoundError` line",
    pattern: /^E +ModuleNotFoundError: No module named 'pricing'$/,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    write(
      path.join(workspace, "pytest-collect", "test_cart.py"),
      "from pricing import total\n\ndef test_total():\n    assert total(2) == 6\n"
    )
    return { command: "pytest -p no:cacheprovider -q pytest-collect" }
  }
}

/** A tree line of `npm ls` (`├── pkg-00001@1.0.0`, UTF-8 box drawing): ~26 bytes. */
const NPM_LS_BYTES_PER_PACKAGE = 26
/** The package installed at a version its range refuses sits at 60% of the dependencies. */
const NPM_LS_INVALID_AT = 0.6

const npmLs: CorpusCase = {
  id: "npm-ls",
  title: "`npm ls` of a generated project: one dependency installed at a version its range refuses",
  kind: "bash",
  targetBytes: ladderBytes(1),
  why: "the install looks wrong and the agent checks the dependency tree",
  followUp: { pattern: /invalid|UNMET|ERR/, from: "the task (the tree is broken) and npm's problem words" },
  needle: {
    describe: "the tree line marked `invalid`",
    pattern: /── pkg-\d+@1\.0\.0 invalid: /,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    const dir = path.join(workspace, "npm-ls")
    const count = Math.max(Math.round(ladderBytes(1) / NPM_LS_BYTES_PER_PACKAGE), 2)
    const invalid = Math.floor(count * NPM_LS_INVALID_AT)
    const dependencies: Record<string, string> = {}
    for (let i = 0; i < count; i++) {
      const name = `pkg-${pad(i, 5)}`
      dependencies[name] = i === invalid ? "^2.0.0" : "^1.0.0"
      write(path.join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, version: "1.0.0" }))
    }
    write(path.join(dir, "package.json"), JSON.stringify({ name: "shop", version: "1.0.0", dependencies }))
    return { command: "cd npm-ls && npm ls --offline" }
  }
}

/** `node --test`'s default reporter off a terminal is TAP: ~96 bytes a passing test. */
const NODE_TAP_BYTES_PER_TEST = 96

const nodeTestTap: CorpusCase = {
  id: "node-test-tap",
  title: "`node --test` with its default reporter (TAP off a terminal), one test fails at 70%",
  kind: "bash",
  targetBytes: ladderBytes(4),
  why: TEST_WHY,
  followUp: { pattern: /not ok|fail|Error/, from: "the task (a failing test run) and TAP's `not ok`" },
  needle: { describe: "the `not ok` line", pattern: /^not ok \d+ - total of order \d+$/, stream: "stdout" },
  setup: async ({ workspace }) => {
    nodeTestFile(
      path.join(workspace, "node-tap"),
      Math.max(Math.round(ladderBytes(4) / NODE_TAP_BYTES_PER_TEST), 1)
    )
    return { command: "node --test node-tap/orders.test.mjs" }
  }
}

/** A line of `ls -la` (`-rw-r--r-- 1 root root 12345 Dec  7 03:00 export-00001.csv`): ~60 bytes. */
const LS_BYTES_PER_FILE = 60
/** The file asked about sits at 60% of the listing. */
const LS_NEEDLE_AT = 0.6
const LS_FILES = Math.max(Math.round(ladderBytes(5) / LS_BYTES_PER_FILE), 1)
const LS_NEEDLE_NAME = `export-${pad(Math.floor(LS_FILES * LS_NEEDLE_AT), 6)}`

const lsLa: CorpusCase = {
  id: "ls-la",
  title: "`ls -la` of a directory of exports; the needle is one file's size",
  kind: "bash",
  targetBytes: ladderBytes(5),
  why: "the agent checks how big one export is",
  followUp: { pattern: new RegExp(LS_NEEDLE_NAME), from: "the task (how big is that export)" },
  needle: {
    describe: `the line of \`${LS_NEEDLE_NAME}.csv\``,
    pattern: new RegExp(`^-.* ${LS_NEEDLE_NAME}\\.csv$`),
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    const dir = path.join(workspace, "exports")
    fs.mkdirSync(dir, { recursive: true })
    for (let i = 0; i < LS_FILES; i++) {
      const file = path.join(dir, `export-${pad(i, 6)}.csv`)
      fs.writeFileSync(file, "")
      // sparse sizes from the index's digest: no data written
      fs.truncateSync(file, lineDigest("exports", i).readUInt32BE(0) % 5_000_000)
    }
    return { command: "LC_ALL=C ls -la exports" }
  }
}

/** A `git log` entry (commit, author, date, subject): ~150 bytes. */
const GIT_LOG_BYTES_PER_COMMIT = 150

const gitLogMerge: CorpusCase = {
  id: "git-log-merge",
  title: "`git log` of a long history whose HEAD is a merge commit",
  kind: "bash",
  targetBytes: ladderBytes(6),
  why: "the agent looks at what the last merge brought in",
  followUp: { pattern: /Merge/, from: "the task (the last merge)" },
  needle: {
    describe: "the merge's `Merge:` line (its two parents)",
    pattern: /^Merge: [0-9a-f]+ [0-9a-f]+$/,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    const repo = path.join(workspace, "merge-log")
    const commits = Math.max(Math.round(ladderBytes(6) / GIT_LOG_BYTES_PER_COMMIT), 3)
    const chunks: Array<string> = []
    const commit = (ref: string, mark: number, when: number, subject: string, extra: string) =>
      chunks.push(
        `commit ${ref}\nmark :${mark}\ncommitter Toolcap Bench <bench@toolcap.invalid> ${when} +0000\ndata ${Buffer.byteLength(subject)}\n${subject}\n${extra}M 100644 inline log.txt\ndata ${Buffer.byteLength(subject)}\n${subject}\n`
      )
    const base = 1_750_000_000
    for (let i = 1; i < commits - 1; i++) commit("refs/heads/main", i, base + i * 60, `change ${i}`, "")
    commit(
      "refs/heads/feature",
      commits - 1,
      base + commits * 60,
      "feature: retry uploads",
      `from :${commits - 2}\n`
    )
    commit(
      "refs/heads/main",
      commits,
      base + commits * 60 + 60,
      "Merge branch 'feature'",
      `from :${commits - 2}\nmerge :${commits - 1}\n`
    )
    fastImport(repo, Buffer.from(chunks.join("")))
    return { command: "git -C merge-log log main" }
  }
}

// A vitest run with its default reporter: a line per file, the failure's report, the summary.
const vitestDefault = (options: Variant & { readonly colour: boolean }): CorpusCase =>
  bashCase(options, {
    needle: {
      describe: "the `AssertionError` line of the failure report",
      // colour codes wrap the error's name: `ESC[31mESC[1mAssertionErrorESC[22m: expected …`
      pattern: new RegExp(`^${COLOUR}AssertionError${COLOUR}: `),
      stream: "stderr"
    },
    followUp: TEST_FOLLOW_UP,
    setup: async (context) => {
      const made = await vitestFail.setup(context)
      return {
        command: (made.command ?? "")
          .replace(" --reporter=verbose", "")
          .replace("NO_COLOR=1", options.colour ? "FORCE_COLOR=1" : "NO_COLOR=1")
      }
    }
  })

const vitestQuiet = vitestDefault({
  id: "vitest-default",
  title: "`vitest run` (default reporter): 3,000 tests, one fails",
  why: TEST_WHY,
  colour: false
})

const vitestColour = vitestDefault({
  id: "vitest-color",
  title: "`FORCE_COLOR=1 vitest run` (default reporter, colour): 3,000 tests, one fails",
  why: TEST_WHY,
  colour: true
})

const gitClone: CorpusCase = {
  id: "git-clone-progress",
  title: "`git clone --progress` of a local repository (carriage-return progress on stderr)",
  kind: "bash",
  why: "the agent clones a repository and checks that it finished",
  followUp: { pattern: /done|fatal|error/, from: "the task (did the clone finish)" },
  needle: {
    describe: "git's `Resolving deltas: 100% …, done.` progress line",
    pattern: /Resolving deltas: 100% \(\d+\/\d+\), done\./,
    stream: "stderr"
  },
  setup: async ({ workspace }) => {
    const from = path.join(workspace, history(workspace))
    return { command: `rm -rf cloned && git clone --progress ${JSON.stringify(`file://${from}`)} cloned` }
  }
}

/** The download's pace: slow enough that the meters redraw several times (about two seconds). */
const DOWNLOAD_RATE = "1m"

const curlProgress: CorpusCase = {
  id: "curl-progress",
  title: "`curl -o` from a loopback server that closes the transfer early (progress meter, exit 18)",
  kind: "bash",
  why: "a download fails and the agent must see why",
  followUp: { pattern: /curl|error/, from: "the task (the download fails) and the tool's name" },
  needle: {
    describe: "curl's `(18) transfer closed` error",
    pattern: /curl: \(18\) transfer closed/,
    stream: "stderr"
  },
  setup: async ({ serve }) => ({
    command: `curl --limit-rate ${DOWNLOAD_RATE} -o /dev/null ${await serve()}/cut/release.tar.gz`
  })
}

const wgetProgress: CorpusCase = {
  id: "wget-progress",
  title: "`wget --progress=bar:force` of two files from a loopback server, the second missing (404)",
  kind: "bash",
  why: "a download script fails and the agent must see which file",
  followUp: { pattern: /ERROR|error|failed/, from: "the task (the download fails)" },
  needle: {
    describe: "wget's `ERROR 404: Not Found.` line",
    pattern: /ERROR 404: Not Found\./,
    stream: "stderr"
  },
  setup: async ({ serve }) => {
    const base = await serve()
    return {
      command: `wget --progress=bar:force:noscroll --limit-rate=${DOWNLOAD_RATE} -O /dev/null ${base}/whole/release.tar.gz ${base}/missing/checksums.txt`
    }
  }
}

const npmInstall: CorpusCase = {
  id: "npm-install-local",
  title: "`npm install` of a local tarball, offline",
  kind: "bash",
  why: "the agent installs a dependency and checks it was added",
  followUp: { pattern: /added|ERR|error/, from: "the task (was it installed)" },
  needle: {
    describe: "npm's `added N packages` line",
    pattern: /^added \d+ packages? in /,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    const pkg = path.join(workspace, "npm-pkg")
    write(
      path.join(pkg, "package.json"),
      JSON.stringify({ name: "left-pad-local", version: "1.2.3", main: "index.js" })
    )
    write(path.join(pkg, "index.js"), "module.exports = (s, n) => String(s).padStart(n)\n")
    run(pkg, "npm", ["pack", "--silent", "--offline"])
    write(path.join(workspace, "npm-app", "package.json"), JSON.stringify({ name: "app", version: "1.0.0" }))
    return {
      command:
        "cd npm-app && npm install --offline --no-audit --no-fund --progress ../npm-pkg/left-pad-local-1.2.3.tgz"
    }
  }
}

/** Rows of the generated price lists the comma case compares. */
const DIFF_ROWS = 4000
/** The row that lost its comma, as a share of the file. */
const DIFF_DEFECT_AT = 0.55

const diffComma: CorpusCase = {
  id: "diff-comma",
  title: "`diff` of two 4,000-row CSV files that differ by one comma (exit 1)",
  kind: "bash",
  why: "an import rejects one file and the agent compares it with the last good one",
  followUp: { pattern: /^[<>]/, from: "`diff`'s change markers" },
  needle: { describe: "the `>` line of the changed row", pattern: /^> /, stream: "stdout" },
  setup: async ({ workspace }) => {
    const rows = Array.from(
      { length: DIFF_ROWS },
      (_, i) => `sku-${pad(i, 5)},widget ${i},${(i * 7) % 1000}.99`
    )
    write(path.join(workspace, "prices", "good.csv"), rows.join("\n") + "\n")
    const defect = Math.floor(DIFF_ROWS * DIFF_DEFECT_AT)
    rows[defect] = rows[defect]!.replace(/,([0-9]+\.99)$/, "$1")
    write(path.join(workspace, "prices", "new.csv"), rows.join("\n") + "\n")
    return { command: "diff prices/good.csv prices/new.csv" }
  }
}

/** Lines of the hunk every line of which changed, the real change in its middle. */
const HUNK_LINES = 300

/** The hunk's lines: every one names a setting with `name`, the middle one sets the timeout. */
const hunkBody = (name: string, timeout: string): string =>
  Array.from({ length: HUNK_LINES }, (_, i) =>
    i === HUNK_LINES / 2 ? `    request_timeout = ${timeout}` : `    ${name}_${pad(i, 3)} = load(${i})`
  ).join("\n")

const diffHunk: CorpusCase = {
  id: "diff-hunk-300",
  title: "`diff -u` with one 300-line hunk (every line renamed), the one behaviour change in its middle",
  kind: "bash",
  why: "the agent reviews a refactor for a change of behaviour",
  followUp: { pattern: /timeout/, from: "the task (did the refactor change the timeout)" },
  needle: {
    describe: "the `+` line that changes the timeout",
    pattern: /^\+ +request_timeout = 3$/,
    stream: "stdout"
  },
  setup: async ({ workspace }) => {
    write(path.join(workspace, "refactor", "old.py"), `def setup():\n${hunkBody("cfg", "30")}\n`)
    write(path.join(workspace, "refactor", "new.py"), `def setup():\n${hunkBody("config", "3")}\n`)
    return { command: "diff -u refactor/old.py refactor/new.py" }
  }
}

/** `COPY` steps of the generated Dockerfile, and the one whose source is missing, as a share of them. */
const DOCKER_STEPS = 30
const DOCKER_DEFECT_AT = 0.7

const dockerBuild: CorpusCase = {
  id: "docker-build",
  title:
    "`docker build` (the classic builder) of a `FROM scratch` image whose 21st of 30 `COPY` steps names a missing file",
  kind: "bash",
  why: "the image build fails and the agent must see which step and why",
  followUp: { pattern: /failed|error|ERROR/, from: "the task (the image build fails)" },
  needle: {
    describe: "the `COPY failed: file not found` line",
    pattern: /^COPY failed: file not found in build context/,
    stream: "stderr"
  },
  setup: async ({ docker, workspace }) => {
    const dir = path.join(workspace, "image")
    const defect = Math.floor(DOCKER_STEPS * DOCKER_DEFECT_AT)
    const steps = Array.from({ length: DOCKER_STEPS }, (_, i) => {
      if (i === defect) return "COPY config/app.yml /etc/shop/app.yml"
      write(path.join(dir, "assets", `bundle-${pad(i, 2)}.js`), `export const part = ${i}\n`)
      return `COPY assets/bundle-${pad(i, 2)}.js /srv/shop/assets/`
    })
    write(path.join(dir, "Dockerfile"), ["FROM scratch", ...steps, 'CMD ["/srv/shop/server"]', ""].join("\n"))
    // BuildKit needs the buildx plugin, which Debian's docker.io does not ship: the classic builder
    return { command: `DOCKER_HOST=${await docker()} DOCKER_BUILDKIT=0 docker build -t shop image` }
  }
}

const gitLogStat: CorpusCase = {
  id: "git-log-stat",
  title: "`git log --stat` of the repository of effect's sources",
  kind: "bash",
  why: "the agent checks how big a file was when it came in",
  followUp: { pattern: /Schedule/, from: "the task (how big was `Schedule.ts`)" },
  needle: {
    describe: "the stat line of `src/Schedule.ts`",
    pattern: /^ src\/Schedule\.ts \| +\d+ \+/,
    stream: "stdout"
  },
  setup: async ({ workspace }) => ({ command: `git -C ${history(workspace)} log --stat --no-color` })
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
  gitGrepConst,
  gitStatusMerge,
  npmLs,
  pytestVerbose,
  tscPretty,
  nodeTestTap,
  lsLa,
  gitLogMerge,
  vitestQuiet,
  vitestColour,
  pytestQuiet,
  pytestColour,
  pytestCollectError,
  gitClone,
  curlProgress,
  wgetProgress,
  npmInstall,
  diffComma,
  diffHunk,
  gitLogStat,
  dockerBuild
]
