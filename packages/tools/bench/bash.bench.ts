// The Bash tool under load, each subject against a baseline measured in the same run.
//
// 1. Per-call latency: Bash `echo hi` through one host (its default containment tier) against a
//    bare `child_process.spawn('sh', ['-c', 'echo hi'])` in the same process, interleaved, median
//    per call. Then the same with 2,000 extra idle processes on the machine (the bench starts them
//    and stops them): a call must not cost more with the size of the process table.
//    Targets: ratio <= 2.0, and <= 2.5 with the extra processes. Where the shell enters its cgroup
//    through the launcher (clone3), the same call with the sh prologue entry, and with the launcher
//    started per call by the host instead of by its launcher server (two more runners, interleaved in
//    the same rounds) are printed for information.
// 2. Throughput, CPU and memory: 1 GiB of 100-byte lines from `yes` (a fast producer) through
//    Bash.run (no chunk consumer, as `toolcap call` runs it) against a bare Node drain of the same
//    command (child_process.spawn, counting bytes). Each run is a child process of its own, so its
//    peak RSS and CPU time are its own; the runs are interleaved and the best wall time of each kind
//    compared. The baseline spawns the command the way the tool must (detached: its own session
//    and process group). On Linux a new session is a new scheduler autogroup, which on a loaded
//    machine alone costs 15-35% of wall time against an attached spawn: that is the kernel's
//    fairness between sessions, not toolcap's overhead, so the attached drain is printed for
//    information only. The children run this file bundled to plain JavaScript (esbuild, which tsx
//    ships), as a host would run compiled code: the tsx loader alone holds ~140 MB of RSS.
//    Targets: wall-time ratio <= 1.15, host CPU <= 1.25x the drain's, peak RSS <= 150 MB.
//    Rendering is on in every profile: that run includes the scan for control bytes and the
//    rendered capture (plain output passes as bytes). A second variant renders every line: 1 GiB
//    of 100-byte lines each coloured (`ESC[32m … ESC[0m`) through Bash.run against the bare drain
//    of the same command, target 1.25x wall time and CPU, printed with its ratio to the plain run.
// 3. Stopping: from the deadline to the returned TOOL_TIMEOUT, for a tree that obeys SIGTERM
//    (three sleeps, one orphaned), in a bundled child as well. The deadline is read from the Effect
//    Clock the tool sleeps on (a recording Clock around the default one). Target: median <= 100 ms.
//    The baseline is a bare `kill(-pgid)` of the same tree plus Node's exit event.
//
// Data and spill files live in a temp dir removed at the end.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
// the modules themselves, not the barrel, so the children load what a Bash host loads
import * as Bash from "../src/Bash.js"
import * as Supervisor from "../src/Supervisor.js"
import * as Workspace from "../src/Workspace.js"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Order from "effect/Order"
import { Procfs } from "@toolcap/spill"
import { benchLine, builtLauncher, bundleBench, loadAverage, runBundled } from "./benchFixtures.js"

// 99 characters and a newline per line, cut at exactly 1 GiB
const GIB_COMMAND =
  "yes 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -c 1073741824"
const GIB_OUTPUT_BYTES = 1073741824
// the same 1 GiB, each 100-byte line coloured: 5 + 90 + 4 bytes and a newline, so every line is rendered
const GIB_COLOURED_COMMAND =
  "yes $'\\e[32m012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\\e[0m' | head -c 1073741824"
// rendering (and, later, the digest) may cost at most a quarter more than draining the same bytes
const RENDER_RATIO_TARGET = 1.25
const ROUNDS = 4
const RATIO_TARGET = 1.15
const CPU_RATIO_TARGET = 1.25
const RSS_TARGET_MB = 150
const LATENCY_CALLS = 41
const LATENCY_TARGET = 2.0
const LATENCY_LOADED_TARGET = 2.5
const IDLE_PROCESSES = 2000
const TREE_COMMAND = "sleep 30 & (sleep 30 &); exec sleep 30"
const STOP_ROUNDS = 11
const STOP_TARGET_MS = 100
// the children run a bundle outside the package (as a bundling host would), so they are told where
// the launcher is built
const LAUNCHER_VARIABLE = "TOOLCAP_LAUNCHER"

interface ChildReport {
  readonly wallMs: number
  readonly cpuMs: number
  readonly peakRssMb: number
  readonly bytes: number
}

const peakRssMb = () => process.resourceUsage().maxRSS / 1024
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}

const layerIn = (dir: string, supervisor: Supervisor.Options = {}) => {
  const workspace = path.join(dir, "workspace")
  fs.mkdirSync(workspace, { recursive: true })
  return Layer.mergeAll(
    Budgets.layer,
    Supervisor.layer(supervisor),
    Workspace.layer({ root: workspace }).pipe(Layer.orDie),
    Scratch.layer({ dataDir: path.join(dir, "data"), sessionId: "bench" }).pipe(
      Layer.provide(Layer.merge(NodeFileSystem.layer, Budgets.layer)),
      Layer.orDie
    )
  )
}

/** Child: 1 GiB through the Bash tool, no chunk consumer (the capture counts every byte). */
const toolRun = async (dir: string, command = GIB_COMMAND): Promise<ChildReport> => {
  const layer = layerIn(dir)
  const cpu = process.cpuUsage()
  const start = performance.now()
  const result = await Effect.runPromise(Bash.run({ command, timeout: 300 }).pipe(Effect.provide(layer)))
  const wallMs = performance.now() - start
  const bytes = result.truncation.stdout?.totalBytes ?? 0
  return { wallMs, cpuMs: cpuMs(cpu), peakRssMb: peakRssMb(), bytes }
}

/** Child: the same command drained by bare Node, spawned detached like the tool does, or not. */
const drainRun = (detached: boolean, command = GIB_COMMAND): Promise<ChildReport> =>
  new Promise((resolve, reject) => {
    let bytes = 0
    const cpu = process.cpuUsage()
    const start = performance.now()
    const child = spawn("bash", ["-c", command], { stdio: ["ignore", "pipe", "pipe"], detached })
    child.stdout.on("data", (chunk: Buffer) => void (bytes += chunk.length))
    child.stderr.resume()
    child.on("error", reject)
    child.on("close", () =>
      resolve({ wallMs: performance.now() - start, cpuMs: cpuMs(cpu), peakRssMb: peakRssMb(), bytes })
    )
  })

/** Bundles this file into `dir` for the children. */
const bundleChild = (dir: string): Promise<string> => bundleBench(import.meta.url, dir, "bash-bench-child")

interface LatencyReport {
  /** Milliseconds per Bash `echo hi` call, per round. */
  readonly tool: ReadonlyArray<number>
  /** Milliseconds per bare spawn of `sh -c 'echo hi'` to its close, per round. */
  readonly bare: ReadonlyArray<number>
  readonly containment: string
  /** How the shell entered its cgroup (cgroup tier only). */
  readonly entry: string | undefined
  /** Milliseconds per call through a runner forced to the prologue entry, when `entry` is `launcher`. */
  readonly prologue: ReadonlyArray<number>
  /**
   * Milliseconds per call through a launcher-entry runner that starts the launcher per call (no
   * launcher server), when `entry` is `launcher`.
   */
  readonly perCall: ReadonlyArray<number>
  /** The floor of any supervised call, for information: `bash -c 'echo hi'` in a session of its own. */
  readonly detachedBash: ReadonlyArray<number>
  /**
   * The floor of the launcher entry, for information: a bare spawn of the launcher running
   * `bash -c 'echo hi'` in a fresh cgroup (mkdir, spawn, wait, rmdir), no toolcap code.
   */
  readonly launcherFloor: ReadonlyArray<number>
}

const bareEcho = (shell = "sh", detached = false, launcher?: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const args = ["-c", "echo hi"]
    const child =
      launcher === undefined
        ? spawn(shell, args, { stdio: ["ignore", "pipe", "pipe"], detached })
        : spawn(process.env[LAUNCHER_VARIABLE]!, ["--cgroup", launcher, "--", shell, ...args], {
            stdio: ["ignore", "pipe", "pipe"]
          })
    child.stdout.resume()
    child.stderr.resume()
    child.on("error", reject)
    child.on("close", () => resolve(performance.now() - start))
  })

/** Child: `echo hi` through one host, interleaved with its bare baseline (one warm-up of each). */
const latencyRun = async (dir: string): Promise<LatencyReport> => {
  const layer = layerIn(dir)
  const runtime = ManagedRuntime.make(layer)
  const caller =
    (on: ManagedRuntime.ManagedRuntime<Layer.Layer.Success<typeof layer>, never>) => async () => {
      const start = performance.now()
      const result = await on.runPromise(Bash.run({ command: "echo hi" }))
      if (result.stdout !== "hi\n") throw new Error("the tool saw a different output")
      return { ms: performance.now() - start, containment: result.termination.containment }
    }
  const call = caller(runtime)
  await bareEcho()
  const { containment } = await call()
  const entry = (await runtime.runPromise(Effect.flatMap(Supervisor.Supervisor, (s) => s.containment)))
    .cgroupEntry
  const prologueRuntime =
    entry === "launcher" ? ManagedRuntime.make(layerIn(dir, { cgroupEntry: "prologue" })) : undefined
  const callPrologue = prologueRuntime === undefined ? undefined : caller(prologueRuntime)
  await callPrologue?.()
  const perCallRuntime =
    entry === "launcher" ? ManagedRuntime.make(layerIn(dir, { launcherServer: false })) : undefined
  const callPerCall = perCallRuntime === undefined ? undefined : caller(perCallRuntime)
  await callPerCall?.()
  const tool: Array<number> = []
  const bare: Array<number> = []
  const prologue: Array<number> = []
  const perCall: Array<number> = []
  const detachedBash: Array<number> = []
  const launcherFloor: Array<number> = []
  // the launcher floor's cgroups live in a parent of their own beside the runner's
  const cg = entry === "launcher" ? Procfs.cgroup2() : undefined
  const floorParent =
    cg === undefined ? undefined : path.join(cg.mount, cg.own, `toolcap-bench-floor-${process.pid}`)
  const launcherEcho = async (round: number) => {
    const cgroupDir = path.join(floorParent!, `c${round}`)
    const start = performance.now()
    fs.mkdirSync(cgroupDir, { recursive: true })
    await bareEcho("bash", false, cgroupDir)
    fs.rmdirSync(cgroupDir)
    return performance.now() - start
  }
  for (let round = 0; round < LATENCY_CALLS; round++) {
    bare.push(await bareEcho())
    tool.push((await call()).ms)
    if (callPrologue !== undefined) prologue.push((await callPrologue()).ms)
    if (callPerCall !== undefined) perCall.push((await callPerCall()).ms)
    detachedBash.push(await bareEcho("bash", true))
    if (floorParent !== undefined) launcherFloor.push(await launcherEcho(round))
  }
  if (floorParent !== undefined) fs.rmdirSync(floorParent)
  await runtime.dispose()
  await prologueRuntime?.dispose()
  await perCallRuntime?.dispose()
  return { tool, bare, containment, entry, prologue, perCall, detachedBash, launcherFloor }
}

/** Starts `count` idle processes (sleeps under one shell, in a group of their own); resolves once all run. */
const startIdleProcesses = (count: number): Promise<{ readonly stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      "sh",
      ["-c", `i=0; while [ $i -lt ${count} ]; do sleep 3600 & i=$((i + 1)); done; echo ready; wait`],
      {
        stdio: ["ignore", "pipe", "ignore"],
        detached: true
      }
    )
    child.on("error", reject)
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready"))
        resolve({
          stop: () => {
            try {
              process.kill(-child.pid!, "SIGKILL")
            } catch {
              // gone
            }
          }
        })
    })
  })

const runLatencyChild = (bundle: string, dir: string, containment?: "group"): Promise<LatencyReport> =>
  runBundled(
    bundle,
    ["--child=latency", dir],
    containment === undefined ? process.env : { ...process.env, TOOLCAP_CONTAINMENT: containment }
  )

/** Processes on the machine, this one included. */
const processCount = () => Procfs.listProcesses().length + 1

type Mode = "tool" | "drain" | "drain-attached" | "tool-coloured" | "drain-coloured"

const runChild = (bundle: string, mode: Mode, dir: string): Promise<ChildReport> =>
  runBundled(bundle, [`--child=${mode}`, dir])

const median = (xs: ReadonlyArray<number>): number => Arr.sort(xs, Order.number)[Math.floor(xs.length / 2)]!
const best = (xs: ReadonlyArray<number>): number => Math.min(...xs)
const fmt = (n: number, digits = 0) => n.toFixed(digits)

/** The default Clock, telling `onSleep` the length of every sleep as it starts. */
const recordingClock = (onSleep: (ms: number) => void): Clock.Clock => {
  const base = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis(),
    currentTimeMillis: base.currentTimeMillis,
    unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos(),
    currentTimeNanos: base.currentTimeNanos,
    sleep: (duration) => {
      onSleep(Duration.toMillis(duration))
      return base.sleep(duration)
    }
  }
}

/** Bare baseline of stopping: spawn the tree, kill its group, wait for Node's exit event. */
const bareStop = (): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn("bash", ["-c", TREE_COMMAND], { stdio: "ignore", detached: true })
    child.once("spawn", () =>
      setTimeout(() => {
        const start = performance.now()
        child.once("exit", () => resolve(performance.now() - start))
        process.kill(-child.pid!, "SIGTERM")
      }, 200)
    )
  })

interface StopReport {
  /** Milliseconds from the deadline to the returned TOOL_TIMEOUT, per round. */
  readonly stops: ReadonlyArray<number>
  /** Milliseconds from a bare kill(-pgid) of the same tree to Node's exit event, per round. */
  readonly bare: ReadonlyArray<number>
}

/** Child: stop a SIGTERM-respecting tree by timeout, STOP_ROUNDS times, with its bare baseline. */
const stopRun = async (dir: string): Promise<StopReport> => {
  const layer = layerIn(dir)
  const stops: Array<number> = []
  const bare: Array<number> = []
  for (let round = 0; round < STOP_ROUNDS; round++) {
    bare.push(await bareStop())
    let deadline = Number.NaN
    const clock = recordingClock((ms) => {
      // the first sleep of the timeout's length is the deadline (the drain grace may sleep as long later)
      if (ms === 1000 && Number.isNaN(deadline)) deadline = performance.now() + ms
    })
    const outcome = await Effect.runPromise(
      Bash.run({ command: TREE_COMMAND, timeout: 1 }).pipe(
        Effect.provide(layer),
        Effect.either,
        Effect.withClock(clock)
      )
    )
    const returned = performance.now()
    if (Either.isRight(outcome) || outcome.left.code !== "TOOL_TIMEOUT")
      throw new Error("expected TOOL_TIMEOUT")
    if (outcome.left.killedPids.length < 3) throw new Error("expected the whole tree to be signalled")
    stops.push(returned - deadline)
  }
  return { stops, bare }
}

const runStopChild = (bundle: string, dir: string): Promise<StopReport> =>
  runBundled(bundle, ["--child=stop", dir])

/** A 1 GiB figure against the bare drain, as a BENCH line. */
const gibLine = (measure: string, figure: number, baseline: number, target: number) =>
  benchLine({
    issue: 9,
    measure: `1 GiB of 100-byte yes lines through Bash.run, ${measure}`,
    figure,
    baseline,
    unit: "ms",
    baselineName: "bare Node drain, detached spawn",
    ratio: figure / baseline,
    target: `<= ${target}`,
    met: figure / baseline <= target
  })

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-bash-bench-"))
  process.env[LAUNCHER_VARIABLE] ??= builtLauncher()
  console.log(`(${loadAverage()} at the start)`)
  let failed = false
  try {
    const bundle = await bundleChild(dir)

    // 1. per-call latency, then the same with 2,000 extra idle processes
    const latency = (label: string, report: LatencyReport, target: number, measure: string) => {
      const ratio = median(report.tool) / median(report.bare)
      const ok = ratio <= target
      benchLine({
        issue: 9,
        measure: `${measure} (${report.containment} tier${report.entry === undefined ? "" : `, ${report.entry} entry`})`,
        figure: median(report.tool),
        baseline: median(report.bare),
        unit: "ms",
        baselineName: "bare spawn(sh -c echo hi), same process",
        ratio,
        target: `<= ${target}`,
        met: ok
      })
      console.log(
        `Bash echo hi per call${label} (${report.containment} tier${report.entry === undefined ? "" : `, ${report.entry} entry`}): median ${fmt(median(report.tool), 2)} ms vs baseline bare spawn(sh -c echo hi) median ${fmt(median(report.bare), 2)} ms — ratio ${fmt(ratio, 2)} (target <= ${target}) ${ok ? "OK" : "MISSED"}`
      )
      if (report.prologue.length > 0) {
        console.log(
          `(information) the same call with the sh prologue entry, same rounds: median ${fmt(median(report.prologue), 2)} ms — ratio ${fmt(median(report.prologue) / median(report.bare), 2)} to the baseline, launcher/prologue ${fmt(median(report.tool) / median(report.prologue), 2)}`
        )
      }
      if (report.perCall.length > 0) {
        console.log(
          `(information) the same call with the launcher started per call (no launcher server), same rounds: median ${fmt(median(report.perCall), 2)} ms — ratio ${fmt(median(report.perCall) / median(report.bare), 2)} to the baseline`
        )
      }
      console.log(
        `(information) floor: bare spawn(bash -c echo hi) in a session of its own (as the tool must run it): median ${fmt(median(report.detachedBash), 2)} ms — ratio ${fmt(median(report.detachedBash) / median(report.bare), 2)} to the baseline`
      )
      if (report.launcherFloor.length > 0) {
        console.log(
          `(information) floor of the launcher entry: mkdir cgroup + bare spawn(launcher --cgroup … bash -c echo hi) + rmdir, no toolcap code: median ${fmt(median(report.launcherFloor), 2)} ms — ratio ${fmt(median(report.launcherFloor) / median(report.bare), 2)} to the baseline; toolcap's own share ${fmt(median(report.tool) - median(report.launcherFloor), 2)} ms per call`
        )
      }
      return ok
    }
    const unloaded = await runLatencyChild(bundle, dir)
    const unloadedTier = unloaded.containment
    const unloadedOk = latency(
      ` (${processCount()} processes on the machine)`,
      unloaded,
      LATENCY_TARGET,
      "Bash echo hi per call"
    )
    failed ||= !unloadedOk
    const forced = await runLatencyChild(bundle, dir, "group")
    if (forced.containment !== unloadedTier) {
      console.log(
        `(information) the same with TOOLCAP_CONTAINMENT=group: median ${fmt(median(forced.tool), 2)} ms vs bare ${fmt(median(forced.bare), 2)} ms — ratio ${fmt(median(forced.tool) / median(forced.bare), 2)}`
      )
    }
    const idle = await startIdleProcesses(IDLE_PROCESSES)
    try {
      const processes = processCount()
      const loadedOk = latency(
        ` with ${IDLE_PROCESSES} extra idle processes (${processes} on the machine)`,
        await runLatencyChild(bundle, dir),
        LATENCY_LOADED_TARGET,
        `Bash echo hi per call with ${IDLE_PROCESSES} extra idle processes`
      )
      failed ||= !loadedOk
    } finally {
      idle.stop()
    }

    // 2. throughput, CPU and memory, interleaved
    const tool: Array<ChildReport> = []
    const drain: Array<ChildReport> = []
    const attached: Array<ChildReport> = []
    const colouredTool: Array<ChildReport> = []
    const colouredDrain: Array<ChildReport> = []
    for (let round = 0; round < ROUNDS; round++) {
      drain.push(await runChild(bundle, "drain", dir))
      tool.push(await runChild(bundle, "tool", dir))
      attached.push(await runChild(bundle, "drain-attached", dir))
      colouredDrain.push(await runChild(bundle, "drain-coloured", dir))
      colouredTool.push(await runChild(bundle, "tool-coloured", dir))
    }
    // the coloured tool run counts rendered bytes (its SGR codes removed), so it is only checked to have rendered
    for (const report of colouredTool) {
      if (report.bytes <= 0) throw new Error("a coloured run rendered nothing")
    }
    for (const report of [...tool, ...drain, ...attached, ...colouredDrain]) {
      if (report.bytes !== GIB_OUTPUT_BYTES)
        throw new Error(`a run saw ${report.bytes} bytes, not ${GIB_OUTPUT_BYTES}`)
    }
    const ratio = best(tool.map((r) => r.wallMs)) / best(drain.map((r) => r.wallMs))
    const ratioOk = ratio <= RATIO_TARGET
    gibLine(
      "wall time (best of rounds)",
      best(tool.map((r) => r.wallMs)),
      best(drain.map((r) => r.wallMs)),
      RATIO_TARGET
    )
    console.log(
      `1 GiB of 100-byte yes lines through Bash.run: ${fmt(best(tool.map((r) => r.wallMs)))} ms (median ${fmt(median(tool.map((r) => r.wallMs)))}) vs baseline bare Node drain ${fmt(best(drain.map((r) => r.wallMs)))} ms (median ${fmt(median(drain.map((r) => r.wallMs)))}) — ratio ${fmt(ratio, 2)} (target <= ${RATIO_TARGET}) ${ratioOk ? "OK" : "MISSED"}`
    )
    const cpuRatio = median(tool.map((r) => r.cpuMs)) / median(drain.map((r) => r.cpuMs))
    const cpuOk = cpuRatio <= CPU_RATIO_TARGET
    gibLine(
      "host CPU (median)",
      median(tool.map((r) => r.cpuMs)),
      median(drain.map((r) => r.cpuMs)),
      CPU_RATIO_TARGET
    )
    console.log(
      `host CPU for that 1 GiB: median ${fmt(median(tool.map((r) => r.cpuMs)))} ms vs baseline bare Node drain median ${fmt(median(drain.map((r) => r.cpuMs)))} ms — ratio ${fmt(cpuRatio, 2)} (target <= ${CPU_RATIO_TARGET}) ${cpuOk ? "OK" : "MISSED"}`
    )
    console.log(
      `(information) bare Node drain spawned attached, in the bench's own session: ${fmt(best(attached.map((r) => r.wallMs)))} ms (median ${fmt(median(attached.map((r) => r.wallMs)))})`
    )
    const rss = Math.max(...tool.map((r) => r.peakRssMb))
    const rssOk = rss <= RSS_TARGET_MB
    const drainRss = Math.max(...drain.map((r) => r.peakRssMb))
    benchLine({
      issue: 9,
      measure: "peak RSS of a Bash-tool run of 1 GiB",
      figure: rss,
      baseline: drainRss,
      unit: "MB",
      baselineName: "bare Node drain, same bundle",
      ratio: rss / drainRss,
      target: `<= ${RSS_TARGET_MB} MB`,
      met: rssOk
    })
    console.log(
      `peak RSS of a Bash-tool run: ${fmt(rss)} MB vs baseline bare Node drain ${fmt(Math.max(...drain.map((r) => r.peakRssMb)))} MB (same bundle) — target <= ${RSS_TARGET_MB} MB ${rssOk ? "OK" : "MISSED"}`
    )
    failed ||= !ratioOk || !cpuOk || !rssOk

    // 2b. every line rendered: coloured lines through Bash.run against the bare drain of them
    const renderWall = best(colouredTool.map((r) => r.wallMs)) / best(colouredDrain.map((r) => r.wallMs))
    const renderCpu = median(colouredTool.map((r) => r.cpuMs)) / median(colouredDrain.map((r) => r.cpuMs))
    for (const [what, figure, baseline, ratioOf] of [
      [
        "wall time (best of rounds)",
        best(colouredTool.map((r) => r.wallMs)),
        best(colouredDrain.map((r) => r.wallMs)),
        renderWall
      ],
      [
        "host CPU (median)",
        median(colouredTool.map((r) => r.cpuMs)),
        median(colouredDrain.map((r) => r.cpuMs)),
        renderCpu
      ]
    ] as const) {
      benchLine({
        issue: 31,
        measure: `1 GiB of coloured 100-byte lines through Bash.run, every line rendered, ${what}`,
        figure,
        baseline,
        unit: "ms",
        baselineName: "bare Node drain of the same command",
        ratio: ratioOf,
        target: `<= ${RENDER_RATIO_TARGET}`,
        met: ratioOf <= RENDER_RATIO_TARGET
      })
      console.log(
        `1 GiB of coloured lines through Bash.run (every line rendered), ${what}: ${fmt(figure)} ms vs bare Node drain ${fmt(baseline)} ms — ratio ${fmt(ratioOf, 2)} (target <= ${RENDER_RATIO_TARGET}) ${ratioOf <= RENDER_RATIO_TARGET ? "OK" : "MISSED"}`
      )
    }
    console.log(
      `(information) coloured against plain through Bash.run: wall ${fmt(best(colouredTool.map((r) => r.wallMs)) / best(tool.map((r) => r.wallMs)), 2)}x, CPU ${fmt(median(colouredTool.map((r) => r.cpuMs)) / median(tool.map((r) => r.cpuMs)), 2)}x; peak RSS ${fmt(Math.max(...colouredTool.map((r) => r.peakRssMb)))} MB`
    )
    failed ||= renderWall > RENDER_RATIO_TARGET || renderCpu > RENDER_RATIO_TARGET

    // 3. from the deadline to TOOL_TIMEOUT, in a bundled child too
    const { stops, bare } = await runStopChild(bundle, dir)
    const stopMedian = median(stops)
    const stopOk = stopMedian <= STOP_TARGET_MS
    benchLine({
      issue: 9,
      measure: "deadline -> TOOL_TIMEOUT, SIGTERM-respecting tree of 3 (median)",
      figure: stopMedian,
      baseline: median(bare),
      unit: "ms",
      baselineName: "bare kill(-pgid) + exit event",
      ratio: stopMedian / median(bare),
      target: `<= ${STOP_TARGET_MS} ms`,
      met: stopOk
    })
    console.log(
      `deadline -> TOOL_TIMEOUT (SIGTERM-respecting tree of 3): median ${fmt(stopMedian)} ms (all: ${stops.map((ms) => fmt(ms)).join(", ")}) vs baseline bare kill(-pgid)+exit median ${fmt(median(bare), 1)} ms — target <= ${STOP_TARGET_MS} ms ${stopOk ? "OK" : "MISSED"}`
    )
    failed ||= !stopOk
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  console.log(`(${loadAverage()} at the end)`)
  process.exit(failed ? 1 : 0)
}

const childMode = process.argv.find((arg) => arg.startsWith("--child="))?.slice("--child=".length)
if (childMode === "latency") {
  process.stdout.write(JSON.stringify(await latencyRun(process.argv.at(-1)!)))
  process.exit(0)
} else if (childMode === "stop") {
  process.stdout.write(JSON.stringify(await stopRun(process.argv.at(-1)!)))
  process.exit(0)
} else if (
  childMode === "tool" ||
  childMode === "drain" ||
  childMode === "drain-attached" ||
  childMode === "tool-coloured" ||
  childMode === "drain-coloured"
) {
  const dir = process.argv.at(-1)!
  const report =
    childMode === "tool"
      ? await toolRun(dir)
      : childMode === "tool-coloured"
        ? await toolRun(dir, GIB_COLOURED_COMMAND)
        : childMode === "drain-coloured"
          ? await drainRun(true, GIB_COLOURED_COMMAND)
          : await drainRun(childMode === "drain")
  process.stdout.write(JSON.stringify(report))
  process.exit(0)
} else {
  await main()
}
