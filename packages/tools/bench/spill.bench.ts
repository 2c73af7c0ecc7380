// Host memory while a Bash call's spill copy grows with the output: 1 GiB of 100-byte lines from
// `yes` through Bash.run (no chunk consumer) with SPILL_MAX_BYTES raised to 1 GiB, so the whole
// stream is saved, against the same call with the default spill (512 KB: its head and tail), in
// the same run, interleaved. The copy is written to disk while the command runs, so the host holds
// the capture budgets plus a constant whatever the spill size: the peak RSS of the two must be
// about the same. Target: ratio <= 1.1. Each run is a bundled child of its own (its peak RSS and
// CPU are its own); the wall time and CPU of the large spill, which writes 1 GiB, are printed for
// information. Data and spill files live in a temp dir removed at the end.
import * as fs from "node:fs"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
// the modules themselves, not the barrel, so the children load what a Bash host loads
import * as Bash from "../src/Bash.js"
import * as Supervisor from "../src/Supervisor.js"
import * as Workspace from "../src/Workspace.js"
import {
  benchLine,
  builtLauncher,
  bundleBench,
  loadAverage,
  median,
  runBundled,
  runMain,
  tempDirRemovedOnExit
} from "./benchFixtures.js"

const GIB = 1073741824
// 99 characters and a newline per line, cut at exactly 1 GiB
const GIB_COMMAND = `yes 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -c ${GIB}`
const ROUNDS = 3
const RSS_RATIO_TARGET = 1.1

type Mode = "default" | "gib"

interface ChildReport {
  readonly wallMs: number
  readonly cpuMs: number
  readonly peakRssMb: number
  /** Bytes of the spill file, and whether the marker says it is complete. */
  readonly spillBytes: number
  readonly complete: boolean
}

/** Child: 1 GiB through the Bash tool with the default spill or a 1 GiB one. */
const toolRun = async (mode: Mode, dir: string): Promise<ChildReport> => {
  const workspace = path.join(dir, "workspace")
  fs.mkdirSync(workspace, { recursive: true })
  const budgets = (mode === "gib" ? Budgets.layerWith({ spillMaxBytes: GIB }) : Budgets.layer).pipe(
    Layer.orDie
  )
  const layer = Layer.mergeAll(
    budgets,
    Supervisor.layer(),
    Workspace.layer({ root: workspace }).pipe(Layer.orDie),
    Scratch.layer({ dataDir: path.join(dir, "data"), sessionId: `spill-${mode}` }).pipe(
      Layer.provide(Layer.merge(NodeFileSystem.layer, budgets)),
      Layer.orDie
    )
  )
  const cpu = process.cpuUsage()
  const start = performance.now()
  const result = await Effect.runPromise(
    Bash.run({ command: GIB_COMMAND, timeout: 300 }).pipe(Effect.provide(layer))
  )
  const wallMs = performance.now() - start
  const used = process.cpuUsage(cpu)
  const spill = result.spill.stdout
  const spillBytes = spill === undefined ? 0 : fs.statSync(spill).size
  if (spill !== undefined) fs.rmSync(spill)
  return {
    wallMs,
    cpuMs: (used.user + used.system) / 1000,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    spillBytes,
    complete: result.truncation.stdout?.spillCopy?.complete === true
  }
}

const runChild = (bundle: string, mode: Mode, dir: string): Promise<ChildReport> =>
  runBundled(bundle, [`--child=${mode}`, dir])

const fmt = (n: number, digits = 0) => n.toFixed(digits)

const main = async (): Promise<number> => {
  const dir = tempDirRemovedOnExit("toolcap-spill-bench-")
  // the children run a bundle outside the package, so they are told where the launcher is built
  process.env["TOOLCAP_LAUNCHER"] ??= builtLauncher()
  console.log(`(${loadAverage()})`)
  const bundle = await bundleBench(import.meta.url, dir, "spill-bench-child")
  const runs: Record<Mode, Array<ChildReport>> = { default: [], gib: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of ["default", "gib"] as const) runs[mode].push(await runChild(bundle, mode, dir))
  }
  for (const report of runs.gib) {
    if (report.spillBytes !== GIB || !report.complete)
      throw new Error("the 1 GiB spill did not save the whole stream")
  }
  for (const report of runs.default) {
    if (report.spillBytes > Budgets.defaults.spillMaxBytes || report.complete)
      throw new Error("the default spill did not save a head-and-tail copy")
  }
  const rss = Math.max(...runs.gib.map((r) => r.peakRssMb))
  const baseline = Math.max(...runs.default.map((r) => r.peakRssMb))
  const ratio = rss / baseline
  const met = ratio <= RSS_RATIO_TARGET
  benchLine({
    issue: 22,
    measure: "peak RSS of a Bash-tool run of 1 GiB whose whole stream is spilled (SPILL_MAX_BYTES = 1 GiB)",
    figure: rss,
    baseline,
    unit: "MB",
    baselineName: "the same run with the default 512 KB spill",
    ratio,
    target: `<= ${RSS_RATIO_TARGET}`,
    met
  })
  const capture = (2 * Budgets.defaults.captureMaxBytes) / 1024 / 1024
  console.log(
    `peak RSS, 1 GiB spilled whole: ${fmt(rss, 1)} MB vs ${fmt(baseline, 1)} MB with the default spill — a difference of ${fmt(rss - baseline, 1)} MB (capture budgets of both streams: ${fmt(capture)} MB) — ratio ${fmt(ratio, 2)} (target <= ${RSS_RATIO_TARGET}) ${met ? "OK" : "MISSED"}`
  )
  console.log(
    `(information) wall time ${fmt(median(runs.gib.map((r) => r.wallMs)))} ms vs ${fmt(median(runs.default.map((r) => r.wallMs)))} ms, host CPU ${fmt(median(runs.gib.map((r) => r.cpuMs)))} ms vs ${fmt(median(runs.default.map((r) => r.cpuMs)))} ms (medians; the large spill writes 1 GiB)`
  )
  console.log(`(${loadAverage()})`)
  return met ? 0 : 1
}

const childMode = process.argv.find((arg) => arg.startsWith("--child="))?.slice("--child=".length)
if (childMode === "default" || childMode === "gib") {
  process.stdout.write(JSON.stringify(await toolRun(childMode, process.argv.at(-1)!)))
  process.exit(0)
} else {
  runMain(main)
}
