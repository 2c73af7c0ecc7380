// Grep and Glob on a large real tree, the workspace's node_modules given explicitly, against
// ripgrep run directly over the same files, side by side in one run:
//
// - Grep content mode, default headLimit, a common pattern vs `rg PATTERN DIR`: ratio <= 1.0
// - Grep count mode, default headLimit vs `rg --count PATTERN DIR`: ratio <= 1.3
// - Glob `**/*.ts` (mtime order, default limit) vs `rg --files -g '*.ts' DIR`: ratio <= 1.5
//
// "The same files": the baselines get the file-selection flags the tools use (hidden files
// included, no ignore file above DIR, git rules without a repository, no global excludes, `.git`
// left out). Without them ripgrep would skip node_modules/.pnpm (hidden) and search almost
// nothing. Baseline output is read through a pipe and discarded, as a host would consume it.
// Runs are interleaved (baseline, subject, ...) after a warm-up and medians are compared,
// because this machine is shared and single runs are noisy. Exits 1 when a target is missed.
import * as Arr from "effect/Array"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Order from "effect/Order"
import { rgPath } from "@vscode/ripgrep"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Glob, Grep, Workspace } from "@toolcap/tools"

const ROUNDS = 15
const WARMUP = 2
const PATTERN = "function"
const TREE = "node_modules"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
if (!fs.existsSync(path.join(repoRoot, TREE, ".pnpm")))
  throw new Error(`no installed ${TREE} under ${repoRoot}`)

const selection = ["--no-config", "--hidden", "--no-require-git", "--no-ignore-parent", "--no-ignore-global"]
const excludeGit = ["--glob", "!.git"]

const runtime = ManagedRuntime.make(
  Layer.mergeAll(
    Budgets.layer,
    Workspace.layer({ root: repoRoot }).pipe(Layer.orDie),
    Scratch.layerTest().pipe(Layer.orDie)
  )
)

/** ripgrep run directly, its stdout drained through a pipe. */
const ripgrep = (args: ReadonlyArray<string>): Promise<{ ms: number; bytes: number }> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(rgPath, args as Array<string>, { cwd: repoRoot, stdio: ["ignore", "pipe", "ignore"] })
    let bytes = 0
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length
    })
    child.once("error", reject)
    child.once("close", () => resolve({ ms: performance.now() - started, bytes }))
  })

const timed = async <A>(run: () => Promise<A>): Promise<{ ms: number; value: A }> => {
  const started = performance.now()
  const value = await run()
  return { ms: performance.now() - started, value }
}

const median = (values: ReadonlyArray<number>) =>
  Arr.sort(values, Order.number)[Math.floor(values.length / 2)]!

interface Case {
  readonly name: string
  readonly target: number
  readonly baselineName: string
  readonly baseline: ReadonlyArray<string>
  readonly subject: () => Promise<unknown>
  /** Checks the subject's result, so a fast wrong answer cannot pass. */
  readonly check: (result: unknown) => string | undefined
}

const grepContent: Case = {
  name: `Grep content "${PATTERN}" ${TREE} (headLimit 200)`,
  target: 1.0,
  baselineName: `rg ${PATTERN} ${TREE}`,
  baseline: [...selection, ...excludeGit, "--regexp", PATTERN, TREE],
  subject: () => runtime.runPromise(Grep.grep({ pattern: PATTERN, path: TREE, outputMode: "content" })),
  check: (result) => {
    const r = result as Grep.GrepResult
    // 200 matches, or fewer when the 48KB budget fills first (minified lines are long)
    return "matches" in r && r.matches.length > 0 && r.matches.length <= 200 && r.truncated
      ? undefined
      : "expected a capped list of matches"
  }
}

const grepCount: Case = {
  name: `Grep count "${PATTERN}" ${TREE} (headLimit 200)`,
  target: 1.3,
  baselineName: `rg --count ${PATTERN} ${TREE}`,
  baseline: [...selection, ...excludeGit, "--count", "--regexp", PATTERN, TREE],
  subject: () => runtime.runPromise(Grep.grep({ pattern: PATTERN, path: TREE, outputMode: "count" })),
  check: (result) => {
    const r = result as Grep.GrepResult
    return "counts" in r && r.counts.length > 0 && r.counts.length <= 200 && r.truncated
      ? undefined
      : "expected a capped list of counts"
  }
}

const globTs: Case = {
  name: `Glob **/*.ts ${TREE} (mtime order, limit 100)`,
  target: 1.5,
  baselineName: `rg --files -g '*.ts' ${TREE}`,
  baseline: [...selection, "--files", "--glob", "*.ts", ...excludeGit, TREE],
  subject: () => runtime.runPromise(Glob.glob({ pattern: "**/*.ts", path: TREE })),
  check: (result) => {
    const r = result as Glob.GlobResult
    return r.matches.length === 100 && r.truncated && r.matches.every((m) => m.endsWith(".ts"))
      ? undefined
      : "expected 100 capped .ts files"
  }
}

const main = async () => {
  let missed = 0
  for (const c of [grepContent, grepCount, globTs]) {
    const baseline: Array<number> = []
    const subject: Array<number> = []
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const base = await ripgrep(c.baseline)
      const ours = await timed(c.subject)
      const problem = c.check(ours.value)
      if (problem !== undefined) throw new Error(`${c.name}: ${problem}`)
      if (round >= WARMUP) {
        baseline.push(base.ms)
        subject.push(ours.ms)
      }
    }
    const ratio = median(subject) / median(baseline)
    const ok = ratio <= c.target
    if (!ok) missed++
    console.log(
      `${c.name}: ${median(subject).toFixed(0)} ms vs baseline ${c.baselineName} ${median(baseline).toFixed(0)} ms — ratio ${ratio.toFixed(2)} (target <= ${c.target}) ${ok ? "OK" : "MISSED"}`
    )
  }
  await runtime.dispose()
  if (missed > 0) process.exitCode = 1
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
