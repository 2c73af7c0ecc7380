// Grep where the cost used to follow the size of a line or the number of matches, against the
// plain ripgrep command that answers the same question, in one run:
//
// - a 100 MB single-line file, and a file of 10 million matching lines;
// - in each mode: filesWithMatches vs `rg -l`, count vs `rg -c`, content vs `rg -M 2000 PATTERN`;
// - content mode also through the bundled package's Promise API (`createToolHost(...).call`, the
//   built `packages/toolcap/dist`), the way a host that does not compose Effect calls it;
// - targets: median time <= 2x, and peak memory <= 2x (content on the long line: <= 1.2x, the floor
//   of ripgrep holding the line, issue 32). Peak memory is ripgrep's own high-water mark
//   (VmHWM, polled from /proc every millisecond and on each output chunk while it runs) plus, for
//   Grep, how much this Node process's RSS grew during the call; the baseline is the plain
//   command's VmHWM. A run shorter than a poll can be missed (it then shows 0 MB): the figures
//   are printed so that can be seen.
//
// Files live in a temp dir removed at the end. Rounds are interleaved and medians compared.
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { rgPath } from "@vscode/ripgrep"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Budgets, Marker } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Grep, LineIndex, Supervisor, Workspace } from "@toolcap/tools"
import { benchLine, loadAverage, median, runMain, tempDirRemovedOnExit } from "./benchFixtures.js"

const ROUNDS = Number(process.env["TOOLCAP_BENCH_ROUNDS"] ?? 5)
const PATTERN = "a"

const dir = tempDirRemovedOnExit("toolcap-longline-bench-")

const generate = () => {
  const line = fs.openSync(path.join(dir, "line.txt"), "w")
  const block = Buffer.from("abcdefghij".repeat(1024 * 1024))
  for (let k = 0; k < 10; k++) fs.writeSync(line, block)
  fs.writeSync(line, "\n")
  fs.closeSync(line)
  const lines = fs.openSync(path.join(dir, "lines.txt"), "w")
  const chunk = Buffer.from("a line\n".repeat(1_000_000))
  for (let k = 0; k < 10; k++) fs.writeSync(lines, chunk)
  fs.closeSync(lines)
}

/**
 * The largest VmHWM seen among ripgrep processes that are children of this process (from the
 * kernel's children list of the main thread, polled every millisecond).
 */
const watchRipgrepPeak = () => {
  let peak = 0
  const poll = () => {
    let children: Array<string> = []
    try {
      children = fs
        .readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8")
        .trim()
        .split(" ")
    } catch {
      return
    }
    for (const pid of children) {
      if (pid === "") continue
      try {
        const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
        if (!/^Name:\s+rg$/m.test(status)) continue
        peak = Math.max(peak, Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024)
      } catch {
        // gone meanwhile
      }
    }
  }
  const timer = setInterval(poll, 1)
  return {
    poll,
    stop: () => {
      clearInterval(timer)
      poll()
      return peak
    }
  }
}

const ripgrep = (args: ReadonlyArray<string>): Promise<{ ms: number; peak: number }> =>
  new Promise((resolve, reject) => {
    const watch = watchRipgrepPeak()
    const started = performance.now()
    const child = spawn(rgPath, args as Array<string>, { cwd: dir, stdio: ["ignore", "pipe", "ignore"] })
    child.stdout.on("data", () => watch.poll())
    child.once("error", reject)
    child.once("close", () => {
      const ms = performance.now() - started
      resolve({ ms, peak: watch.stop() })
    })
  })

const host = ManagedRuntime.make(
  Layer.mergeAll(
    Budgets.layer,
    Workspace.layer({ root: dir }).pipe(Layer.orDie),
    LineIndex.layer(),
    Scratch.layerTest().pipe(Layer.orDie),
    Supervisor.layer()
  )
)

type Mode = "filesWithMatches" | "count" | "content"

/** The bundled package as a host loads it (built by `pnpm run build`). */
const bundled = fileURLToPath(new URL("../../toolcap/dist/index.js", import.meta.url))

/** The part of the bundled package's Promise API this bench calls. */
interface PromiseHost {
  readonly call: (
    name: string,
    input: unknown
  ) => Promise<{
    readonly ok: boolean
    readonly result?: { readonly count: number }
    readonly error?: unknown
  }>
  readonly close: () => Promise<void>
}

const startPromiseHost = async (): Promise<PromiseHost> => {
  if (!fs.existsSync(bundled)) throw new Error(`${bundled} is missing: build first (pnpm run build)`)
  const { createToolHost } = (await import(bundled)) as {
    createToolHost: (options: Record<string, unknown>) => Promise<PromiseHost>
  }
  const dataDir = path.join(dir, ".data")
  fs.mkdirSync(dataDir)
  return createToolHost({ workspace: dir, dataDir, sessionId: "longline-bench" })
}

/** The call's time and peak memory (ripgrep's high-water mark plus this process's RSS growth). */
const measured = async (call: () => Promise<number>) => {
  const watch = watchRipgrepPeak()
  const rssBefore = process.memoryUsage().rss
  let rssPeak = rssBefore
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  }, 2)
  const started = performance.now()
  const count = await call()
  const ms = performance.now() - started
  clearInterval(sampler)
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  if (count === 0) throw new Error("no match")
  return { ms, peak: watch.stop() + (rssPeak - rssBefore) }
}

const grep = (file: string, outputMode: Mode) =>
  measured(async () => (await host.runPromise(Grep.grep({ pattern: PATTERN, path: file, outputMode }))).count)

const hostGrep = (promiseHost: PromiseHost, file: string, outputMode: Mode) =>
  measured(async () => {
    const outcome = await promiseHost.call("Grep", { pattern: PATTERN, path: file, outputMode })
    if (!outcome.ok || outcome.result === undefined)
      throw new Error(`Grep failed: ${JSON.stringify(outcome.error)}`)
    return outcome.result.count
  })

const main = async () => {
  console.log(loadAverage())
  generate()
  const promiseHost = await startPromiseHost()
  let missed = 0
  const cases: ReadonlyArray<readonly [string, Mode, ReadonlyArray<string>, "layer" | "createToolHost"]> = [
    "line.txt",
    "lines.txt"
  ].flatMap((file) => [
    [file, "filesWithMatches", ["-l"], "layer"] as const,
    [file, "count", ["-c"], "layer"] as const,
    [file, "content", ["-M", "2000"], "layer"] as const,
    [file, "content", ["-M", "2000"], "createToolHost"] as const
  ])
  for (const [file, mode, flags, through] of cases) {
    const base: Array<{ ms: number; peak: number }> = []
    const ours: Array<{ ms: number; peak: number }> = []
    for (let round = 0; round < ROUNDS + 1; round++) {
      const b = await ripgrep([...flags, PATTERN, file])
      const s = through === "layer" ? await grep(file, mode) : await hostGrep(promiseHost, file, mode)
      if (round > 0) {
        base.push(b)
        ours.push(s)
      }
    }
    const name = `Grep ${mode}${through === "layer" ? "" : " through createToolHost"} on ${file}`
    const memoryTarget = mode === "content" && file === "line.txt" ? 1.2 : 2
    const timeRatio = median(ours.map((r) => r.ms)) / median(base.map((r) => r.ms))
    const basePeak = median(base.map((r) => r.peak))
    // a ripgrep that exits between two polls leaves no sample: its memory is not judged
    const sampled = basePeak > 0 && ours.every((r) => r.peak > 0)
    const memoryRatio = sampled ? median(ours.map((r) => r.peak)) / basePeak : Number.NaN
    const ok = timeRatio <= 2 && (!sampled || memoryRatio <= memoryTarget)
    if (!ok) missed++
    benchLine({
      issue: through === "layer" ? 10 : 32,
      measure: `${name}, time`,
      figure: median(ours.map((r) => r.ms)),
      baseline: median(base.map((r) => r.ms)),
      unit: "ms",
      baselineName: `rg ${flags.join(" ")}`,
      ratio: timeRatio,
      target: "<= 2",
      met: timeRatio <= 2
    })
    if (sampled)
      benchLine({
        issue: memoryTarget === 2 ? 10 : 32,
        measure: `${name}, peak memory`,
        figure: median(ours.map((r) => r.peak)) / 1024 / 1024,
        baseline: basePeak / 1024 / 1024,
        unit: "MB",
        baselineName: `rg ${flags.join(" ")}`,
        ratio: memoryRatio,
        target: `<= ${memoryTarget}`,
        met: memoryRatio <= memoryTarget
      })
    console.log(
      `${name}: ${median(ours.map((r) => r.ms)).toFixed(0)} ms, ${Marker.formatBytes(median(ours.map((r) => r.peak)))} vs rg ${flags.join(" ")} ${median(base.map((r) => r.ms)).toFixed(0)} ms, ${Marker.formatBytes(median(base.map((r) => r.peak)))} — time ${timeRatio.toFixed(2)}, memory ${sampled ? memoryRatio.toFixed(2) : "not sampled (the runs end within a poll)"} (targets <= 2, <= ${memoryTarget}) ${ok ? "OK" : "MISSED"}`
    )
  }
  await promiseHost.close()
  await host.dispose()
  console.log(loadAverage())
  return missed
}

runMain(main)
