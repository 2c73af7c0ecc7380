/**
 * Fixtures of the Bash, torture and process-tree tests: real temp workspaces and data dirs, a real
 * read-only directory, an independent /proc scan for processes that carry a run's cookie, a Bash
 * deadline that starts once the command's tree is fully started, and scripts bundled to plain
 * JavaScript for children that cannot load the repository.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { Budgets } from "@toolcap/limits"
import { Procfs, Scratch } from "@toolcap/spill"
import { Bash, Confinement, Supervisor, Workspace } from "@toolcap/tools"

export const tempDir = (prefix = "toolcap-bash-") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

export type Env = Budgets.Budgets | Scratch.Scratch | Workspace.Workspace | Supervisor.Supervisor

export interface TestEnv {
  readonly workspace: string
  readonly dataDir: string
  readonly layer: Layer.Layer<Env>
}

/**
 * A real workspace and a real scratch in temp dirs (removed afterwards), with budget overrides,
 * and a supervisor (with `supervisor`'s options) for the test's scope, as a host has one.
 * `dataDir` replaces the scratch's data dir (e.g. a read-only one).
 */
export const testEnv = (
  overrides: Partial<Record<Budgets.BudgetField, number>> = {},
  dataDir?: string,
  supervisor: Supervisor.Options = {}
) =>
  Effect.gen(function* () {
    const workspace = yield* tempDir("toolcap-ws-")
    const data = dataDir ?? (yield* tempDir("toolcap-data-"))
    const budgets = Budgets.layerWith(overrides).pipe(Layer.orDie)
    const layer = Layer.mergeAll(
      budgets,
      Layer.succeed(Supervisor.Supervisor, yield* Supervisor.make(supervisor)),
      Workspace.layer({ root: workspace }).pipe(Layer.orDie),
      Scratch.layer({ dataDir: data, sessionId: "test-session" }).pipe(
        Layer.provide(Layer.mergeAll(NodeFileSystem.layer, budgets)),
        Layer.orDie
      )
    )
    return { workspace, dataDir: data, layer } satisfies TestEnv
  })

/** Grace periods short enough for a fast suite; the laws do not depend on their length. */
export const fastGraces = { bashKillGraceMs: 300, bashDrainGraceMs: 200 } as const

interface LiveProcess {
  readonly pid: number
  readonly state: string
  readonly cmdline: string
}

const readLive = (pid: number): LiveProcess | undefined => {
  try {
    const state = Procfs.readProcess(pid)?.state
    if (state === undefined || state === "Z" || state === "X") return undefined
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim()
    return { pid, state, cmdline }
  } catch {
    return undefined
  }
}

const allPids = (): Array<number> =>
  fs
    .readdirSync("/proc")
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid)

/** Live (non-zombie) processes whose environment holds `TOOLCAP_RUN_ID=<value>` for a value accepted by `match`. */
export const cookieCarriers = (match: (runId: string) => boolean): Array<LiveProcess> =>
  allPids().flatMap((pid) => {
    let environ: string
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1")
    } catch {
      return []
    }
    const entry = environ.split("\0").find((e) => e.startsWith("TOOLCAP_RUN_ID="))
    if (entry === undefined || !match(entry.slice("TOOLCAP_RUN_ID=".length))) return []
    const live = readLive(pid)
    return live === undefined ? [] : [live]
  })

/** Live processes carrying exactly this run's cookie. */
export const carriersOf = (runId: string | undefined): Array<LiveProcess> => {
  if (runId === undefined) throw new Error("no run id: the call has no result or partial result")
  return cookieCarriers((value) => value === runId)
}

/**
 * Run ids start with this worker's pid in base 36 (`<hostPid36>-<random>`), so this finds every
 * process left by any call this test worker made.
 */
export const leftoversOfThisWorker = (): Array<LiveProcess> => {
  const prefix = `${process.pid.toString(36)}-`
  return cookieCarriers((runId) => runId.startsWith(prefix))
}

/**
 * Where the runner makes its call cgroups on this machine (`toolcap` under the cgroup2 mount, as
 * the runner creates it), or undefined when this machine cannot have one (then only the group tier
 * runs). The parent exists only while some call lives in it, so this tries to make it, then
 * removes it again unless a call of another test holds it.
 */
const cgroupParentUsable = (dir: string): boolean => {
  try {
    fs.mkdirSync(dir, { recursive: true })
    return fs.existsSync(path.join(dir, "cgroup.procs")) && fs.existsSync(path.join(dir, "cgroup.kill"))
  } catch {
    return false
  } finally {
    try {
      fs.rmdirSync(dir)
    } catch {
      // in use, or never made
    }
  }
}

export const cgroupParent = (): string | undefined => {
  const mount = fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" "))
    .find((fields) => fields[fields.indexOf("-") + 1] === "cgroup2")?.[4]
  if (mount === undefined) return undefined
  const own = fs
    .readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .find((line) => line.startsWith("0::"))
    ?.slice(3)
  return [path.join(mount, own ?? "/", "toolcap"), path.join(mount, "toolcap")].find(cgroupParentUsable)
}

/**
 * Whether Bash calls here run under Landlock scopes by default: the launcher is built and the
 * kernel's Landlock ABI has scopes (6 or later), as its own `--probe` answers.
 */
export const scopesOffered = (): boolean => {
  const launcher = Effect.runSync(Confinement.launcherPath)
  if (!fs.existsSync(launcher)) return false
  return Number(spawnSync(launcher, ["--probe"], { encoding: "utf8" }).stdout.trim()) >= 6
}

/** Call cgroups (named by run id, `<hostPid36>-...`) of this test worker still present. */
export const cgroupsOfThisWorker = (): Array<string> => {
  const parent = cgroupParent()
  if (parent === undefined) return []
  const prefix = `${process.pid.toString(36)}-`
  if (!fs.existsSync(parent)) return []
  return fs
    .readdirSync(parent)
    .filter((name) => name.startsWith(prefix) && fs.statSync(path.join(parent, name)).isDirectory())
}

/** Whether `pid` is a live process (a zombie counts as gone: it runs no code and holds no pipe). */
export const isLive = (pid: number): boolean => readLive(pid) !== undefined

/** Live processes whose command line contains `needle` (e.g. a unique `sleep 101.37`). */
export const processesNamed = (needle: string): Array<LiveProcess> =>
  allPids().flatMap((pid) => {
    const live = readLive(pid)
    return live !== undefined && live.cmdline.includes(needle) ? [live] : []
  })

/**
 * Blocks the host's event loop for `ms` (a busy wait: no timer, no I/O, no fiber runs meanwhile),
 * as a host saturated by its own work would; answers the time it thawed (the Clock's millis).
 */
export const blockEventLoop = (ms: number) =>
  Effect.clockWith((clock) =>
    Effect.sync(() => {
      const thawAt = clock.unsafeCurrentTimeMillis() + ms
      while (clock.unsafeCurrentTimeMillis() < thawAt) {
        // busy
      }
      return thawAt
    })
  )

/** SIGKILL to every live process whose command line contains `tag` (what a test could not stop). */
export const killNamed = (tag: string) =>
  Effect.sync(() => {
    for (const p of processesNamed(tag)) {
      try {
        process.kill(p.pid, "SIGKILL")
      } catch {
        // gone
      }
    }
  })

export interface Recorded {
  readonly result: Either.Either<Bash.BashResult, Bash.BashError>
  readonly chunks: ReadonlyArray<Bash.BashChunk>
  /** Characters of chunk data per stream. */
  readonly chars: { readonly stdout: number; readonly stderr: number }
  /** Chunks delivered after the call returned (must stay 0). */
  readonly lateChunks: () => number
  /** The cookie value, from the result or the partial result of a timeout or abort. */
  readonly runId: string | undefined
  /** With `ready`: whether its line arrived, and whether the call's deadline waited for it. */
  readonly ready: { readonly seen: boolean; readonly deadlineWaited: boolean }
}

/**
 * A command's signal that its whole tree is started: it prints `line` on stdout once every process
 * it starts exists. The call's deadline (the input's `timeout`) then starts only at that line, so
 * what the timeout stops does not depend on how fast a loaded machine forks.
 */
export interface Readiness {
  readonly line: string
  /** Runs synchronously in the chunk consumer when the line arrives, before the deadline starts. */
  readonly onReady?: () => void
}

/**
 * The default Clock, except that the first sleep of `deadlineMs` (the Bash call's deadline; the
 * bench finds it the same way) starts only once `ready` completed.
 */
const deadlineAfter = (ready: Effect.Effect<void>, deadlineMs: number, onWait: () => void): Clock.Clock => {
  const base = Clock.make()
  let waited = false
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis(),
    currentTimeMillis: base.currentTimeMillis,
    unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos(),
    currentTimeNanos: base.currentTimeNanos,
    sleep: (duration) => {
      if (waited || Duration.toMillis(duration) !== deadlineMs) return base.sleep(duration)
      waited = true
      onWait()
      return Effect.zipRight(ready, base.sleep(duration))
    }
  }
}

/**
 * Runs the Bash tool, recording every chunk and any chunk delivered after the call returned.
 * With `keepData: false` chunks are recorded with empty `data` (only `chars` counts it), for
 * commands writing hundreds of MiB. With `ready`, the deadline of the input's `timeout` (which
 * it must then give) starts once the command printed `ready.line`.
 */
export const runRecorded = (
  input: unknown,
  options: Omit<Bash.RunOptions, "onChunk"> & { readonly keepData?: boolean; readonly ready?: Readiness } = {}
) =>
  Effect.gen(function* () {
    const chunks: Array<Bash.BashChunk> = []
    const chars = { stdout: 0, stderr: 0 }
    let returned = false
    let late = 0
    const { keepData = true, ready, ...runOptions } = options
    const timeoutSeconds = (input as { readonly timeout?: unknown }).timeout
    if (ready !== undefined && typeof timeoutSeconds !== "number") {
      throw new Error("runRecorded: `ready` needs an input with a timeout, the deadline it delays")
    }
    const readyLine = yield* Deferred.make<void>()
    const readiness = { seen: false, deadlineWaited: false }
    let stdoutSoFar = "\n"
    const call = Bash.run(input, {
      ...runOptions,
      onChunk: (chunk) => {
        if (returned) late++
        chars[chunk.stream] += chunk.data.length
        chunks.push(keepData ? chunk : { ...chunk, data: "" })
        if (ready === undefined || readiness.seen || chunk.stream !== "stdout") return
        stdoutSoFar += chunk.data
        if (!stdoutSoFar.includes(`\n${ready.line}\n`)) return
        readiness.seen = true
        ready.onReady?.()
        Deferred.unsafeDone(readyLine, Exit.void)
      }
    })
    const result = yield* (
      ready === undefined
        ? call
        : call.pipe(
            Effect.withClock(
              deadlineAfter(Deferred.await(readyLine), Number(timeoutSeconds) * 1000, () => {
                readiness.deadlineWaited = true
              })
            )
          )
    ).pipe(Effect.either)
    returned = true
    const runId = Either.match(result, {
      onLeft: (error) => ("partial" in error ? error.partial.runId : undefined),
      onRight: (r) => r.runId
    })
    return { result, chunks, chars, lateChunks: () => late, runId, ready: readiness } satisfies Recorded
  })

/** Concatenated chunk data of one stream, checking seq runs 0, 1, 2, ... in delivery order. */
export const streamText = (chunks: ReadonlyArray<Bash.BashChunk>, stream: "stdout" | "stderr"): string => {
  const own = chunks.filter((c) => c.stream === stream)
  own.forEach((c, i) => {
    if (c.seq !== i) throw new Error(`${stream} chunk ${i} has seq ${c.seq}`)
  })
  return own.map((c) => c.data).join("")
}

const run = (cmd: string, args: Array<string>): boolean =>
  spawnSync(cmd, args, { stdio: "ignore" }).status === 0

const refusesWrites = (dir: string): boolean => {
  try {
    fs.writeFileSync(path.join(dir, ".probe"), "x")
    fs.rmSync(path.join(dir, ".probe"))
    return false
  } catch {
    return true
  }
}

/**
 * A real directory that refuses writes, even for root (tests run as root in CI, and root ignores
 * permission bits): `chmod 0500` when not root, else a read-only tmpfs mount, else `chattr +i`.
 * Verified with a probe write; fails the test when no mechanism works.
 */
export const readOnlyDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-ro-"))
    if ((process.getuid?.() ?? 0) !== 0) {
      fs.chmodSync(dir, 0o500)
      if (refusesWrites(dir)) return { path: dir, mechanism: "chmod", undo: () => fs.chmodSync(dir, 0o700) }
      fs.chmodSync(dir, 0o700)
    }
    if (run("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", dir]) && refusesWrites(dir)) {
      return { path: dir, mechanism: "tmpfs-ro", undo: () => void run("umount", [dir]) }
    }
    if (run("chattr", ["+i", dir]) && refusesWrites(dir)) {
      return { path: dir, mechanism: "chattr+i", undo: () => void run("chattr", ["-i", dir]) }
    }
    fs.rmSync(dir, { recursive: true, force: true })
    throw new Error("no mechanism made a read-only directory here (tried chmod, tmpfs ro mount, chattr +i)")
  }),
  (ro) =>
    Effect.sync(() => {
      ro.undo()
      fs.rmSync(ro.path, { recursive: true, force: true })
    })
)

interface Esbuild {
  readonly build: (options: Record<string, unknown>) => Promise<unknown>
}

/**
 * Bundles an ES module given as source text into one self-contained plain-JavaScript file, with
 * the esbuild that tsx depends on (as the Bash bench does; no dependency of our own). Imports
 * resolve from `resolveDir`; the bundle then runs with bare `node`, needing nothing of the
 * repository (e.g. as another user who cannot enter the checkout).
 */
export const bundleModule = (options: {
  readonly contents: string
  readonly resolveDir: string
  readonly outfile: string
}): Effect.Effect<void> =>
  Effect.promise(() => {
    const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"))
    const esbuild = fromTsx("esbuild") as Esbuild
    return esbuild.build({
      stdin: { contents: options.contents, resolveDir: options.resolveDir, loader: "js" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["@toolcap/source"],
      outfile: options.outfile,
      logLevel: "error"
    })
  }).pipe(Effect.asVoid)

/**
 * What the tests of the supervisor's own stop give calls: cgroupfs writable and no namespaces, so a call can move into
 * cgroups and its pids are the host's. The supervisor's own stop is what they prove, as on a host
 * without the launcher's guards (those guards' own attacks: reliability.isolation.test.ts).
 */
export const withHostReach = { cgroupfsWritable: true, namespaces: false } as const

/**
 * The model's text of one stream: its section of `output` (rendered, digested or cut), without the
 * `--- stdout ---` line; "" when the stream has no section.
 */
export const modelSection = (result: Bash.BashResult, stream: "stdout" | "stderr"): string => {
  const start = result.output.indexOf(`--- ${stream} ---\n`)
  if (start === -1) return ""
  const body = result.output.slice(start + `--- ${stream} ---\n`.length)
  const next = stream === "stdout" ? body.indexOf("\n--- stderr ---\n") : -1
  return next === -1 ? body : body.slice(0, next)
}

/** The result, or the partial result a timeout or an abort carries. */
export const partialOf = (exit: Exit.Exit<Bash.BashResult, Bash.BashError>): Bash.BashResult | undefined => {
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
  return failure !== undefined && "partial" in failure ? failure.partial : undefined
}

/** The typed failure of a Bash call, if it failed with one. */
export const failureOf = (exit: Exit.Exit<Bash.BashResult, Bash.BashError>): Bash.BashError | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

/** Fake-script times: whole milliseconds plus a half, so none ties with a deadline (whole). */
export const scriptTime = (max: number) => FastCheck.integer({ min: 0, max }).map((ms) => ms + 0.5)

/** Cgroups at and below `at`, children first. */
const cgroupsBelow = (at: string): Array<string> => {
  try {
    return [
      ...fs
        .readdirSync(at, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .flatMap((entry) => cgroupsBelow(path.join(at, entry.name))),
      at
    ]
  } catch {
    return []
  }
}

/**
 * Removes a cgroup a test made and what a run made below it: processes still dying in it (a fork
 * loop's last children) are killed through `cgroup.kill` and the removal is tried again until it
 * holds, for up to 10 s, so no run leaves a cgroup behind.
 */
export const removeCgroupTree = (root: string) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 200 && fs.existsSync(root); attempt++) {
      for (const cgroup of cgroupsBelow(root)) {
        try {
          fs.writeFileSync(path.join(cgroup, "cgroup.kill"), "1")
        } catch {
          // no cgroup.kill on this kernel: the processes were killed by name
        }
        try {
          fs.rmdirSync(cgroup)
        } catch {
          // still populated: tried again
        }
      }
      if (fs.existsSync(root)) yield* Effect.sleep("50 millis")
    }
  })
