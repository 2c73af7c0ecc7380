// Glob and Grep on generated trees of 1k, 10k and 100k files (nested directories, mixed
// modification times, a .gitignore), against ripgrep run directly over the same files, in one run:
//
// For a long-lived host with a warm file index, and for the one-shot path (no index: the tree is
// listed on every call, as the CLI's `call` does):
// - capped content Grep (headLimit 200, a common pattern) vs `rg --json PATTERN | head -n 200`
//   (index: <= 3) and vs `rg --json --sortr=modified PATTERN | head -n 200`, ripgrep's own
//   newest-first (index: <= 1.0; one-shot: <= 1.5);
// - from 10k files, a capped content Grep with a sparse pattern (one file in a hundred, then one
//   in twenty, holds five matches) vs `rg --json PATTERN | head -n 200` (index: <= 3);
// - count mode vs `rg -c PATTERN` (index: <= 1.3; one-shot: <= 1.5 x the sorted `rg -c`);
// - a pattern that matches nothing vs `rg PATTERN` (index: <= 1.3; one-shot: <= 1.5 x sorted);
// - Glob `**/*.ts` vs `rg --files -g '*.ts'` (index: <= 1.2; one-shot: <= 1.5 x sorted);
// the first Grep of a fresh long-lived host (its file index not built: it answers with one
// ripgrep and builds the index afterwards) vs `rg --json --sortr=modified PATTERN | head -n 200`
// (<= 1.5; each round a new host, its layers built before the clock starts); and a Grep of a
// 100-file tree vs one `rg --json PATTERN` (<= 1.5), plus the index's build time and memory
// (heap bytes per indexed file).
//
// "The same files": the baselines get the file-selection flags the tools use (hidden files
// included, git rules without a repository, no global excludes, `.git` left out). `| head -n 200`
// is done as head does it: the pipe is closed after the 200th line and ripgrep dies on its next
// write. Rounds are interleaved (baseline, subject, ...) after a warm-up and medians compared,
// because this machine is shared and single runs are noisy. The trees live in a temp dir removed
// at the end. Exits 1 when a target is missed.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { rgPath } from "@vscode/ripgrep"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { FileIndex, Glob, Grep, LineIndex, Supervisor, Workspace } from "@toolcap/tools"
import { benchLine, loadAverage, median, runMain, tempDirRemovedOnExit } from "./benchFixtures.js"

const SIZES = (process.env["TOOLCAP_BENCH_SIZES"] ?? "1000,10000,100000").split(",").map(Number)
const ROUNDS = Number(process.env["TOOLCAP_BENCH_ROUNDS"] ?? 9)
const WARMUP = 2
/** Substrings of case labels (e.g. `one-shot 100000] Glob`) to run alone; all cases when unset. */
const ONLY = (process.env["TOOLCAP_BENCH_CASES"] ?? "").split(",").filter((s) => s !== "")
const COMMON = "function"
const NOTHING = "zq-no-such-text-qz"
/** The function lines of files whose number ends in 00: one file in a hundred, five lines each. */
const SPARSE = "f[0-9]*00_[0-9]+\\("
/** The function lines of files whose number ends in 20, 40, 60, 80 or 00: one file in twenty. */
const LESS_SPARSE = "f[0-9]*[02468]0_[0-9]+\\("

const base = tempDirRemovedOnExit("toolcap-search-bench-")

/** A deterministic tree: ~10 files per directory, three levels, a tenth ignored, mixed mtimes. */
const generate = (dir: string, files: number) => {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, ".gitignore"), "*.log\nbuild/\n")
  const now = Math.floor(Date.now() / 1000)
  for (let k = 0; k < files; k++) {
    const a = k % 31
    const b = Math.floor(k / 31) % 17
    const ignored = k % 10 === 9
    const sub = ignored && k % 20 === 9 ? "build" : `m${b}`
    const ext = ignored ? "log" : ["ts", "js", "md", "ts"][k % 4]!
    const file = path.join(dir, `d${a}`, sub, `f${k}.${ext}`)
    if (k < 31 * 17 || !fs.existsSync(path.dirname(file)))
      fs.mkdirSync(path.dirname(file), { recursive: true })
    const lines: Array<string> = []
    for (let line = 0; line < 20; line++)
      lines.push(
        k % 2 === 0 && line % 4 === 0
          ? `export function f${k}_${line}() { return ${line} }`
          : `const v${line} = ${k * line}`
      )
    fs.writeFileSync(file, lines.join("\n") + "\n")
    // mixed times: a spread of a year, in a scrambled order
    const seconds = now - ((k * 7919) % 31_536_000)
    fs.utimesSync(file, seconds, seconds)
  }
}

const selection = ["--no-config", "--hidden", "--no-require-git", "--no-ignore-global", "--glob", "!.git"]

/** ripgrep run directly; with `headLines`, its stdout is closed after that many lines (`| head -n`). */
const ripgrep = (cwd: string, args: ReadonlyArray<string>, headLines?: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(rgPath, [...selection, ...args], { cwd, stdio: ["ignore", "pipe", "ignore"] })
    let lines = 0
    child.stdout.on("data", (chunk: Buffer) => {
      if (headLines === undefined) return
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++
      if (lines >= headLines) child.stdout.destroy()
    })
    child.once("error", reject)
    child.once("close", () => resolve(performance.now() - started))
  })

const hostOf = (root: string, fileIndex: boolean) =>
  ManagedRuntime.make(
    Layer.mergeAll(
      Budgets.layer,
      Workspace.layer({ root }).pipe(Layer.orDie),
      LineIndex.layer(),
      fileIndex ? FileIndex.layer({ maxWatches: 1_000_000 }) : Layer.empty,
      Scratch.layerTest().pipe(Layer.orDie),
      Supervisor.layer()
    )
  )

type Host = ReturnType<typeof hostOf>

/** Waits until the host's file index of `dir` is built (searches list the tree until then). */
const indexReady = (host: Host, dir: string) =>
  host.runPromise(
    Effect.flatMap(Effect.serviceOption(FileIndex.FileIndex), (index) =>
      Option.isSome(index) ? index.value.ready(fs.realpathSync(dir)) : Effect.succeed(false)
    )
  )

interface Case {
  readonly name: string
  readonly baselineName: string
  readonly baseline: (cwd: string) => Promise<number>
  readonly subject: (host: Host) => Promise<unknown>
  readonly check: (result: unknown) => boolean
  readonly target: number
}

const timed = async (run: () => Promise<unknown>, check: (result: unknown) => boolean) => {
  const started = performance.now()
  const result = await run()
  const ms = performance.now() - started
  if (!check(result)) throw new Error(`unexpected result: ${JSON.stringify(result).slice(0, 300)}`)
  return ms
}

const contentCapped = (r: unknown) => {
  const result = r as Grep.GrepResult
  return "matches" in result && result.matches.length === 200 && result.truncated
}
const grepContent = (host: Host) => host.runPromise(Grep.grep({ pattern: COMMON, outputMode: "content" }))
const grepCount = (host: Host) => host.runPromise(Grep.grep({ pattern: COMMON, outputMode: "count" }))
const grepNothing = (host: Host) => host.runPromise(Grep.grep({ pattern: NOTHING, outputMode: "content" }))
const globTs = (host: Host) => host.runPromise(Glob.glob({ pattern: "**/*.ts" }))
const countCapped = (r: unknown) =>
  "counts" in (r as object) && (r as { counts: Array<unknown> }).counts.length === 200
const nothing = (r: unknown) =>
  "matches" in (r as object) && (r as { matches: Array<unknown> }).matches.length === 0
const globCapped = (r: unknown) =>
  (r as Glob.GlobResult).matches.length === 100 && (r as Glob.GlobResult).truncated

/** A capped content Grep of a sparse pattern through a warm index, against `rg --json | head`. */
const sparseCase = (name: string, pattern: string): Case => ({
  name,
  baselineName: `rg --json '${pattern}' | head -n 200`,
  baseline: (cwd) => ripgrep(cwd, ["--json", pattern], 200),
  subject: (host) => host.runPromise(Grep.grep({ pattern, outputMode: "content" })),
  check: contentCapped,
  target: 3
})

const cases = (indexed: boolean, size: number): ReadonlyArray<Case> => {
  const sorted = indexed ? [] : ["--sortr=modified"]
  const oneShot = 1.5
  return [
    ...(indexed && size >= 10_000
      ? [
          sparseCase("capped content Grep, sparse pattern", SPARSE),
          sparseCase("capped content Grep, sparse pattern (1 file in 20)", LESS_SPARSE)
        ]
      : []),
    ...(indexed
      ? [
          {
            name: "capped content Grep",
            baselineName: `rg --json ${COMMON} | head -n 200`,
            baseline: (cwd: string) => ripgrep(cwd, ["--json", COMMON], 200),
            subject: grepContent,
            check: contentCapped,
            target: 3
          }
        ]
      : []),
    {
      name: "capped content Grep",
      baselineName: `rg --json --sortr=modified ${COMMON} | head -n 200`,
      baseline: (cwd) => ripgrep(cwd, ["--json", "--sortr=modified", COMMON], 200),
      subject: grepContent,
      check: contentCapped,
      target: indexed ? 1.0 : oneShot
    },
    {
      name: "count Grep",
      baselineName: `rg -c ${sorted.join(" ")} ${COMMON}`,
      baseline: (cwd) => ripgrep(cwd, ["-c", ...sorted, COMMON]),
      subject: grepCount,
      check: countCapped,
      target: indexed ? 1.3 : oneShot
    },
    {
      name: "no-match Grep",
      baselineName: `rg ${sorted.join(" ")} ${NOTHING}`,
      baseline: (cwd) => ripgrep(cwd, [...sorted, NOTHING]),
      subject: grepNothing,
      check: nothing,
      target: indexed ? 1.3 : oneShot
    },
    {
      name: "Glob **/*.ts",
      baselineName: `rg --files ${sorted.join(" ")} -g '*.ts'`,
      baseline: (cwd) => ripgrep(cwd, ["--files", ...sorted, "-g", "*.ts"]),
      subject: globTs,
      check: globCapped,
      target: indexed ? 1.2 : oneShot
    }
  ]
}

let missed = 0
const report = (
  label: string,
  subject: ReadonlyArray<number>,
  baseline: ReadonlyArray<number>,
  baselineName: string,
  target: number
) => {
  const ratio = median(subject) / median(baseline)
  const ok = ratio <= target
  if (!ok) missed++
  benchLine({
    issue: 10,
    measure: label,
    figure: median(subject),
    baseline: median(baseline),
    unit: "ms",
    baselineName,
    ratio,
    target: `<= ${target}`,
    met: ok
  })
  console.log(
    `${label}: ${median(subject).toFixed(1)} ms vs ${baselineName} ${median(baseline).toFixed(1)} ms — ratio ${ratio.toFixed(2)} (target <= ${target}) ${ok ? "OK" : "MISSED"}`
  )
}

const measure = async (label: string, c: Case, host: Host, cwd: string, rounds: number) => {
  if (ONLY.length > 0 && !ONLY.some((only) => `${label} ${c.name}`.includes(only))) return
  const baseline: Array<number> = []
  const subject: Array<number> = []
  for (let round = 0; round < WARMUP + rounds; round++) {
    const b = await c.baseline(cwd)
    const s = await timed(() => c.subject(host), c.check)
    if (round >= WARMUP) {
      baseline.push(b)
      subject.push(s)
    }
  }
  report(`${label} ${c.name}`, subject, baseline, c.baselineName, c.target)
}

/** The tree size the first Grep of a fresh host is measured on. */
const FIRST_GREP_SIZE = 10_000

/**
 * The first call of a fresh long-lived host: each round builds a new host's layers (not timed),
 * then times its first capped content Grep, interleaved with ripgrep's own newest-first search.
 */
const measureFirstGrep = async (dir: string, rounds: number) => {
  const label = `[fresh host ${FIRST_GREP_SIZE}] first capped content Grep`
  if (ONLY.length > 0 && !ONLY.some((only) => label.includes(only))) return
  const baseline: Array<number> = []
  const subject: Array<number> = []
  for (let round = 0; round < WARMUP + rounds; round++) {
    const b = await ripgrep(dir, ["--json", "--sortr=modified", COMMON], 200)
    const host = hostOf(dir, true)
    await host.runtime()
    const s = await timed(() => grepContent(host), contentCapped)
    await host.dispose()
    if (round >= WARMUP) {
      baseline.push(b)
      subject.push(s)
    }
  }
  report(label, subject, baseline, `rg --json --sortr=modified ${COMMON} | head -n 200`, 1.5)
}

const main = async () => {
  console.log(loadAverage())
  for (const size of SIZES) {
    const dir = path.join(base, `tree-${size}`)
    const started = performance.now()
    generate(dir, size)
    console.log(`\n-- ${size} files (generated in ${((performance.now() - started) / 1000).toFixed(1)} s)`)
    const rounds = size >= 100_000 ? Math.max(5, Math.ceil(ROUNDS / 2)) : ROUNDS
    if (size === FIRST_GREP_SIZE) await measureFirstGrep(dir, rounds)
    const indexed = hostOf(dir, true)
    await indexed.runtime()
    ;(globalThis as { gc?: () => void }).gc?.()
    const heapBefore = process.memoryUsage().heapUsed
    const buildStarted = performance.now()
    const built = await indexReady(indexed, dir)
    const buildMs = performance.now() - buildStarted
    if (!built) throw new Error(`the index of ${dir} was not built`)
    ;(globalThis as { gc?: () => void }).gc?.()
    const heapAfter = process.memoryUsage().heapUsed
    const index = await indexed.runPromise(Effect.serviceOption(FileIndex.FileIndex))
    const files = Option.isSome(index) ? index.value.sizes().reduce((sum, entry) => sum + entry.files, 0) : 0
    console.log(
      `index: ${files} files built in ${buildMs.toFixed(0)} ms (in the background), heap ${((heapAfter - heapBefore) / Math.max(1, files)) | 0} bytes per file`
    )
    for (const c of cases(true, size)) await measure(`[index ${size}]`, c, indexed, dir, rounds)
    await indexed.dispose()
    const oneShot = hostOf(dir, false)
    for (const c of cases(false, size)) await measure(`[one-shot ${size}]`, c, oneShot, dir, rounds)
    await oneShot.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  }

  // a 100-file tree: one Grep call against one ripgrep process
  const small = path.join(base, "tree-100")
  generate(small, 100)
  const host = hostOf(small, true)
  await indexReady(host, small)
  await measure(
    "[index 100]",
    {
      name: "content Grep (headLimit 200)",
      baselineName: `rg --json ${COMMON}`,
      baseline: (cwd) => ripgrep(cwd, ["--json", COMMON]),
      subject: grepContent,
      check: (r) => "matches" in (r as object),
      target: 1.5
    },
    host,
    small,
    ROUNDS * 2
  )
  await host.dispose()
  console.log(loadAverage())
  return missed
}

runMain(main)
