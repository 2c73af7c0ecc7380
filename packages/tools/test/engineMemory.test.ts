// The engine's memory ceiling, on real processes and a real 2 GiB sparse file of one line: Grep
// (content, and multiline) through a directory, where ripgrep reads the file into its own memory,
// answers TOOL_MEMORY_LIMIT naming the file, and ripgrep's peak RSS (the largest child's
// ru_maxrss, read by a parent process once the Grep's process ended) stays within the ceiling.
// Without the launcher the ceiling still applies (`ulimit -d`) and the result says so. Every
// result reports its guard. Long mode: 100 runs of the attack, 0 failures.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fc from "effect/FastCheck"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Confinement, Glob, Grep } from "@toolcap/tools"
import { isLong, reportReliability } from "@toolcap/bench-report"
import * as Memory from "../src/internal/search/memory.js"
import { searchEnv, tempDir, writeTree } from "./readFixtures.js"

/** The default ceiling (engineMemoryMaxBytes). */
const CEILING_BYTES = 1024 * 1024 * 1024
const HUGE_BYTES = 2 * 1024 * 1024 * 1024
/** Runs of the attack (content and multiline alternately): the long mode's floor is 100. */
const ATTACK_RUNS = isLong() ? 100 : 2

/** Runs its arguments as a child and prints its exit, stdout and its children's peak RSS (KiB). */
const PEAK_OF_CHILDREN = `
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True)
print(json.dumps({"code": done.returncode, "stdout": done.stdout.decode(), "stderr": done.stderr.decode()[-2000:],
                  "maxrssKb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
`

interface Measured {
  readonly outcome: {
    readonly ok: boolean
    readonly result?: { readonly guard: Confinement.Guard }
    readonly error?: Record<string, unknown> & { readonly code: string; readonly message: string }
  }
  readonly maxrssBytes: number
}

/**
 * One Grep in a process of its own (`engineMemoryChild.ts`), with its children's peak RSS; waited
 * for without blocking this process (the test runner's own messages go on meanwhile).
 */
const measuredGrep = (
  workspace: string,
  dataDir: string,
  input: Record<string, unknown>,
  env: Record<string, string> = {}
): Effect.Effect<Measured> =>
  Effect.map(
    Effect.async<{ readonly stdout: string; readonly stderr: string; readonly failed: boolean }>((resume) => {
      execFile(
        "python3",
        [
          "-c",
          PEAK_OF_CHILDREN,
          process.execPath,
          "--conditions=@toolcap/source",
          "--import",
          "tsx",
          path.join(import.meta.dirname, "engineMemoryChild.ts"),
          workspace,
          dataDir,
          JSON.stringify(input)
        ],
        { cwd: import.meta.dirname, encoding: "utf8", env: { ...process.env, ...env } },
        (error, stdout, stderr) => resume(Effect.succeed({ stdout, stderr, failed: error !== null }))
      )
    }),
    (child) => {
      assert.isFalse(child.failed, child.stderr)
      const run = JSON.parse(child.stdout) as {
        code: number
        stdout: string
        stderr: string
        maxrssKb: number
      }
      assert.strictEqual(run.code, 0, run.stderr)
      return { outcome: JSON.parse(run.stdout) as Measured["outcome"], maxrssBytes: run.maxrssKb * 1024 }
    }
  )

/** A workspace holding `logs/big.log` (2 GiB of NUL bytes, sparse, one line) and a small file. */
const hostileWorkspace = Effect.gen(function* () {
  const workspace = yield* tempDir("toolcap-engine-ws-")
  const dataDir = yield* tempDir("toolcap-engine-data-")
  writeTree(workspace, { "src/a.ts": "const needle = 1\n", "logs/.keep": "" })
  const big = path.join(workspace, "logs", "big.log")
  fs.writeFileSync(big, "")
  fs.truncateSync(big, HUGE_BYTES)
  fs.appendFileSync(big, "needle\n")
  return { workspace, dataDir }
})

describe("the engine's memory ceiling", () => {
  it.scopedLive(
    "Grep on a 2 GiB single-line file: TOOL_MEMORY_LIMIT naming it, ripgrep's peak RSS within the ceiling",
    () =>
      Effect.gen(function* () {
        const { workspace, dataDir } = yield* hostileWorkspace
        let failures = 0
        let peak = 0
        for (let run = 0; run < ATTACK_RUNS; run++) {
          const multiline = run % 2 === 1
          const { outcome, maxrssBytes } = yield* measuredGrep(workspace, dataDir, {
            pattern: multiline ? "needle\\n" : "needle",
            outputMode: "content",
            ...(multiline ? { multiline: true } : {})
          })
          peak = Math.max(peak, maxrssBytes)
          const error = outcome.error
          const ok =
            error?.code === "TOOL_MEMORY_LIMIT" &&
            error["path"] === "logs/big.log" &&
            error["certainty"] === "likely" &&
            error["limitBytes"] === CEILING_BYTES &&
            maxrssBytes <= CEILING_BYTES
          if (!ok) failures++
          assert.isTrue(ok, `run ${run}: peak ${maxrssBytes} bytes, ${JSON.stringify(outcome).slice(0, 600)}`)
          assert.include(error!.message, "Read logs/big.log with offset/limit")
          assert.include(error!.message, 'glob "!big.log"')
        }
        reportReliability(
          "hostile engine memory",
          { inputs: ATTACK_RUNS, failures },
          `Grep content and multiline on a 2 GiB sparse single-line file through its directory, ${ATTACK_RUNS} runs; ripgrep's peak RSS ${Math.round(peak / 1024 / 1024)} MiB at most (ceiling ${CEILING_BYTES / 1024 / 1024} MiB)`
        )
        // the way round the message names works, under the same ceiling
        const around = yield* measuredGrep(workspace, dataDir, {
          pattern: "needle",
          glob: "!big.log",
          outputMode: "content"
        })
        assert.isTrue(around.outcome.ok, JSON.stringify(around.outcome).slice(0, 600))
        assert.strictEqual(around.outcome.result?.guard.memoryCeiling?.maxBytes, CEILING_BYTES)
      }),
    { timeout: isLong() ? 900_000 : 120_000 }
  )

  it.scopedLive("without the launcher the ceiling is set by ulimit -d, and the result says so", () =>
    Effect.gen(function* () {
      const { workspace, dataDir } = yield* hostileWorkspace
      const missing = path.join(dataDir, "no-launcher")
      const { outcome, maxrssBytes } = yield* measuredGrep(
        workspace,
        dataDir,
        { pattern: "needle", outputMode: "content" },
        { TOOLCAP_LAUNCHER: missing }
      )
      assert.strictEqual(outcome.error?.code, "TOOL_MEMORY_LIMIT", JSON.stringify(outcome).slice(0, 600))
      assert.isAtMost(maxrssBytes, CEILING_BYTES)
      const around = yield* measuredGrep(
        workspace,
        dataDir,
        { pattern: "needle", glob: "*.ts" },
        { TOOLCAP_LAUNCHER: missing }
      )
      const guard = around.outcome.result?.guard
      assert.deepInclude(guard, { launcher: false, landlockRead: false })
      assert.strictEqual(guard?.memoryCeiling?.maxBytes, CEILING_BYTES)
      assert.include(guard?.memoryCeiling?.reason ?? "", "ulimit -d")
      assert.include(guard?.memoryCeiling?.reason ?? "", missing)
      assert.include(guard?.landlockReadReason ?? "", missing)
    })
  )
})

describe("every Grep and Glob result reports its guard", () => {
  it.scopedLive("the launcher, Landlock's read confinement and the memory ceiling, or why not", () =>
    Effect.gen(function* () {
      const support = yield* Effect.provide(Confinement.support, (yield* searchEnv()).context)
      const launcherFound = Effect.runSync(Confinement.launcher).kind === "found"
      for (const [overrides, ceiling] of [
        [{}, CEILING_BYTES],
        [{ engineMemoryMaxBytes: 0 }, undefined]
      ] as const) {
        const env = yield* searchEnv(overrides)
        writeTree(env.workspace, { "a.ts": "needle\n", "b/c.ts": "needle\n" })
        const grepped = yield* Grep.grep({ pattern: "needle" }).pipe(Effect.provide(env.context))
        const globbed = yield* Glob.glob({ pattern: "**/*.ts" }).pipe(Effect.provide(env.context))
        for (const guard of [grepped.guard, globbed.guard]) {
          if (support.kind === "landlock") {
            assert.deepInclude(guard, { launcher: true, landlockRead: true })
            assert.isUndefined(guard.landlockReadReason)
          } else {
            assert.isFalse(guard.landlockRead)
            assert.isString(guard.landlockReadReason)
          }
        }
        // Glob lists through ripgrep only where it is confined; its own walk has no engine to bound
        const engines = support.kind === "landlock" ? [grepped.guard, globbed.guard] : [grepped.guard]
        for (const guard of engines) {
          assert.strictEqual(guard.memoryCeiling?.maxBytes, ceiling)
          if (ceiling !== undefined) {
            assert.strictEqual(guard.memoryCeiling?.enforcedBy, "rlimit")
            assert.strictEqual(guard.launcher, launcherFound)
          }
        }
      }
    })
  )
})

describe("the file a memory error names", () => {
  const MIB = 1024 * 1024
  it.prop(
    "the largest file that can fill the ceiling, the others as large listed largest first, and how sure",
    { sizes: fc.array(fc.integer({ min: 0, max: 1024 }), { minLength: 1, maxLength: 8 }) },
    ({ sizes }) => {
      // sparse files of 0 to 1024 MiB against the 1 GiB ceiling: a quarter of it (256 MiB) can fill it
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-suspects-"))
      try {
        const files = sizes.map((mib, at) => {
          const absolute = path.join(dir, `f${at}.log`)
          fs.writeFileSync(absolute, "")
          fs.truncateSync(absolute, mib * MIB)
          return { display: `f${at}.log`, absolute }
        })
        const error = Memory.limitError("Grep", CEILING_BYTES, files)
        const suspects = sizes
          .map((mib, at) => ({ mib, name: `f${at}.log` }))
          .filter((file) => file.mib * MIB * 4 >= CEILING_BYTES)
          .toSorted((a, b) => b.mib - a.mib || (a.name < b.name ? -1 : 1))
        if (sizes.length === 1) {
          assert.deepInclude(error, { certainty: "certain", path: "f0.log", fileBytes: sizes[0]! * MIB })
        } else if (suspects.length === 0) {
          assert.strictEqual(error.certainty, "unknown")
          assert.isUndefined(error.path)
        } else {
          assert.strictEqual(error.certainty, suspects.length === 1 ? "likely" : "possible")
          assert.strictEqual(error.path, suspects[0]!.name)
          assert.deepStrictEqual(
            error.others,
            suspects.slice(1, 6).map((file) => file.name)
          )
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    { fastCheck: { numRuns: 100 } }
  )
})
