// Grep where the cost used to follow the size of a line or the number of matches, against the
// plain ripgrep command that answers the same question, in one run:
//
// - a 100 MB single-line file, and a file of 10 million matching lines;
// - in each mode: filesWithMatches vs `rg -l`, count vs `rg -c`, content vs `rg -M 2000 PATTERN`;
// - targets: median time <= 2x, and peak memory <= 2x. Peak memory is ripgrep's own high-water mark
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

const grep = async (file: string, outputMode: "filesWithMatches" | "count" | "content") => {
  const watch = watchRipgrepPeak()
  const rssBefore = process.memoryUsage().rss
  let rssPeak = rssBefore
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  }, 2)
  const started = performance.now()
  const result = await host.runPromise(Grep.grep({ pattern: PATTERN, path: file, outputMode }))
  const ms = performance.now() - started
  clearInterval(sampler)
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  if (result.count === 0) throw new Error(`no match in ${file}`)
  return { ms, peak: watch.stop() + (rssPeak - rssBefore) }
}

const main = async () => {
  console.log(loadAverage())
  generate()
  let missed = 0
  const modes = [
    ["filesWithMatches", ["-l"]],
    ["count", ["-c"]],
    ["content", ["-M", "2000"]]
  ] as const
  for (const file of ["line.txt", "lines.txt"]) {
    for (const [mode, flags] of modes) {
      const base: Array<{ ms: number; peak: number }> = []
      const ours: Array<{ ms: number; peak: number }> = []
      for (let round = 0; round < ROUNDS + 1; round++) {
        const b = await ripgrep([...flags, PATTERN, file])
        const s = await grep(file, mode)
        if (round > 0) {
          base.push(b)
          ours.push(s)
        }
      }
      const timeRatio = median(ours.map((r) => r.ms)) / median(base.map((r) => r.ms))
      const basePeak = median(base.map((r) => r.peak))
      // a ripgrep that exits between two polls leaves no sample: its memory is not judged
      const sampled = basePeak > 0 && ours.every((r) => r.peak > 0)
      const memoryRatio = sampled ? median(ours.map((r) => r.peak)) / basePeak : Number.NaN
      const ok = timeRatio <= 2 && (!sampled || memoryRatio <= 2)
      if (!ok) missed++
      benchLine({
        issue: 10,
        measure: `Grep ${mode} on ${file}, time`,
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
          issue: 10,
          measure: `Grep ${mode} on ${file}, peak memory`,
          figure: median(ours.map((r) => r.peak)) / 1024 / 1024,
          baseline: basePeak / 1024 / 1024,
          unit: "MB",
          baselineName: `rg ${flags.join(" ")}`,
          ratio: memoryRatio,
          target: "<= 2",
          met: memoryRatio <= 2
        })
      console.log(
        `${file} ${mode}: ${median(ours.map((r) => r.ms)).toFixed(0)} ms, ${Marker.formatBytes(median(ours.map((r) => r.peak)))} vs rg ${flags.join(" ")} ${median(base.map((r) => r.ms)).toFixed(0)} ms, ${Marker.formatBytes(median(base.map((r) => r.peak)))} — time ${timeRatio.toFixed(2)}, memory ${sampled ? memoryRatio.toFixed(2) : "not sampled (the runs end within a poll)"} (targets <= 2) ${ok ? "OK" : "MISSED"}`
      )
    }
  }
  await host.dispose()
  console.log(loadAverage())
  return missed
}

runMain(main)
