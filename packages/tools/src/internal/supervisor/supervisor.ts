/**
 * The real supervisor: every piece of state in the layer's scope (the watchdog, the tier and its
 * launcher server and cgroup parent, the host's identity, the shell, Landlock), each decided on
 * first use so that a host that never runs a command starts nothing.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ToolError } from "@toolcap/limits"
import type {
  Command,
  TreeOptions,
  Containment,
  Landlock as LandlockSupport,
  Options,
  Process,
  Shell,
  SupervisorService
} from "../../Supervisor.js"
import * as Admission from "./admission.js"
import * as CallBounds from "./bounds.js"
import * as Cgroup from "./cgroup.js"
import * as V1 from "./cgroupV1.js"
import * as Confine from "./confine.js"
import { cookieVariable } from "./group.js"
import * as Landlock from "./landlock.js"
import * as Launch from "./launch.js"
import * as LauncherPath from "./launcherPath.js"
import * as Lifeline from "./lifeline.js"
import * as Proc from "./process.js"
import * as Settings from "./settings.js"
import { scoped, type Bounds, type Handle } from "./scoped.js"
import { nothingStopped, type TreeStop } from "./terminate.js"
import * as TierCgroup from "./tierCgroup.js"
import * as TierGroup from "./tierGroup.js"
import type { Tier } from "./tier.js"

/** The environment variables that force a tier or an entry, or turn scopes off (see `Supervisor`). */
const CONTAINMENT_VARIABLE = Settings.variables.containment.name
const SCOPES_VARIABLE = Settings.variables.scopes.name
const NAMESPACES_VARIABLE = Settings.variables.namespaces.name
const CGROUPFS_VARIABLE = Settings.variables.cgroupfs.name

/** The first Landlock ABI that can grant renames and links across directories: write rules need it (Linux 5.19). */
const ABI_REFER = 2

/** The `/dev/shm` the namespaces probe mounts: it only proves the mounts work. */
const PROBE_SHM_BYTES = 1024 * 1024

/** The first Landlock ABI with scopes (Linux 6.12). */
const ABI_SCOPES = 6

const LAUNCHER_OFF = "the launcher was turned off (Supervisor option launcher: false)"

/**
 * A plain process is killed at once (no grace) and its pipes read for up to this long after:
 * ripgrep and the probes end within milliseconds of SIGKILL.
 */
const PLAIN_BOUNDS: Bounds = { killGraceMs: 0, drainMs: 1000 }

/**
 * Base-36 characters of a layer's part of its run ids: fixed, so no layer's prefix is a prefix of
 * another's (each layer's lifeline rule covers its own call cgroups only).
 */
const LAYER_TAG_CHARS = 6

const noop = () => {}

const ascending = (pids: Set<number>): Array<number> => [...pids].toSorted((a, b) => a - b)

/** A stop joined with what the watchdog's backstop reported signalling (`T <pid>`, `K <pid>` lines); the report is removed. */
const withReported = (stopped: TreeStop, report: string): TreeStop => {
  let text: string
  try {
    text = fs.readFileSync(report, "latin1")
    fs.rmSync(report, { force: true })
  } catch {
    return stopped
  }
  const termed = new Set(stopped.signalled)
  const killed = new Set(stopped.killed)
  for (const line of text.split("\n")) {
    const [tag, pid] = line.split(" ")
    const number = Number(pid)
    if (!Number.isSafeInteger(number) || number <= 0) continue
    termed.add(number)
    if (tag === "K") killed.add(number)
  }
  return { ...stopped, signalled: ascending(termed), killed: ascending(killed) }
}

/** See `Options.deadlineBackstopMs`. */
const DEADLINE_BACKSTOP_MS = 250

/** Whether a guard (Landlock scopes, write rules, namespaces) applies to calls, or why not. */
type Scopes = { readonly apply: true } | { readonly apply: false; readonly reason: string }

const envWithCookie = (command: Command, runId: string): Readonly<Record<string, string | undefined>> =>
  command.env === undefined
    ? Proc.hostEnvWith(cookieVariable, runId)
    : { ...command.env, [cookieVariable]: runId }

/** @internal */
export const make = (options: Options = {}): Effect.Effect<SupervisorService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const layerScope = yield* Effect.scope
    // every TOOLCAP_* variable, read once from the host's ConfigProvider; a bad value fails the layer
    const settings = yield* Effect.orDie(Settings.read)
    // an unusable limit fails the layer with a message naming the option or the variable
    const admission = yield* Effect.flatMap(
      Effect.sync(() => Admission.resolveLimit(options.maxConcurrentCalls, settings.maxConcurrentCalls)),
      Admission.make
    )
    const backstopMs = options.deadlineBackstopMs ?? DEADLINE_BACKSTOP_MS
    if (!(Number.isFinite(backstopMs) && backstopMs >= 0)) {
      return yield* Effect.die(
        new RangeError(
          `Supervisor option deadlineBackstopMs must be a number of at least 0, got ${backstopMs}`
        )
      )
    }
    const watchdog = yield* Lifeline.make
    const layerTag = (yield* Random.nextIntBetween(0, 36 ** LAYER_TAG_CHARS))
      .toString(36)
      .padStart(LAYER_TAG_CHARS, "0")
    // read on first use, then kept: a plain value per call, no memoised effect to run
    let hostPrefix: string | undefined
    const runIdPrefix = Effect.sync(() => {
      if (hostPrefix === undefined) {
        const host = Proc.hostIdentity()
        hostPrefix = `${host.pid.toString(36)}-${Number(host.startTime ?? 0).toString(36)}-${layerTag}`
      }
      return hostPrefix
    })
    const runId = Effect.flatMap(runIdPrefix, (prefix) =>
      Effect.zipWith(
        Random.nextIntBetween(0, 0x7fffffff),
        Random.nextIntBetween(0, 0x7fffffff),
        (high, low) => `${prefix}${high.toString(36)}${low.toString(36)}`
      )
    )

    /** A plain process, on the lifeline (a host that dies does not leave it running) unless `lifeline` is false. */
    const startPlain = (
      command: Command,
      lifeline: boolean
    ): Effect.Effect<Process, ToolError.ToolSpawnFailed, Scope.Scope> =>
      scoped(
        Effect.map(
          Launch.spawn({
            file: command.file,
            args: command.args,
            cwd: command.cwd,
            env: command.env ?? process.env,
            stdin: command.stdin,
            detached: false,
            name: command.file
          }),
          (launched) => {
            launched.exit.onExit(lifeline ? watchdog.register({ kind: "pid", pid: launched.pid }) : noop)
            return {
              ...launched,
              stop: () =>
                Effect.sync(() =>
                  launched.exit.status() === undefined && Proc.sendSignal(launched.pid, "SIGKILL") === "sent"
                    ? { ...nothingStopped, signalled: [launched.pid], killed: [launched.pid] }
                    : nothingStopped
                )
            }
          }
        ),
        PLAIN_BOUNDS
      )

    /** Runs a command to its end: its stdout and exit code (the probes). */
    const runToEnd = (file: string, args: ReadonlyArray<string>) =>
      Effect.scoped(
        Effect.gen(function* () {
          const proc = yield* startPlain({ file, args, cwd: "/" }, false)
          const stdout = yield* Stream.runFold(
            proc.stdout,
            "",
            (text, bytes) => text + Buffer.from(bytes).toString("utf8")
          )
          const status = yield* proc.exit
          return { stdout, code: status.code }
        })
      )
    const exitsZero = (file: string, args: ReadonlyArray<string>) =>
      runToEnd(file, args).pipe(
        Effect.map((run) => run.code === 0),
        Effect.orElseSucceed(() => false)
      )
    const probeName = Effect.map(
      Random.nextIntBetween(0, 0x7fffffff),
      (random) => `probe.${process.pid}.${random.toString(36)}`
    )

    // the launcher is found here, once per layer (never when the module loads), unless turned off
    const resolvedLauncher = yield* Effect.cached(Effect.sync(() => LauncherPath.here(settings.launcher)))
    const landlock = yield* Effect.cached(
      options.launcher === false
        ? Effect.succeed<LandlockSupport>({ kind: "none", reason: LAUNCHER_OFF, cause: "launcher-off" })
        : Effect.flatMap(resolvedLauncher, (launcher) =>
            Landlock.detect(
              (file, args) => runToEnd(file, args).pipe(Effect.mapError((error) => new Error(error.reason))),
              { launcher, disabled: settings.confinement === "off" }
            )
          )
    )

    /** Whether calls get Landlock scopes: asked for, and offered by the launcher and the kernel. */
    const scopesFor = (launcher: Confine.LauncherChoice): Effect.Effect<Scopes> =>
      Effect.gen(function* () {
        if (options.landlockScopes === false) {
          return {
            apply: false,
            reason: "Landlock scopes were turned off (Supervisor option landlockScopes: false)"
          }
        }
        if (options.landlockScopes === undefined && settings.scopes === "off") {
          return { apply: false, reason: `${SCOPES_VARIABLE}=off` }
        }
        if (launcher.path === undefined) return { apply: false, reason: launcher.reason }
        const offered = yield* landlock
        if (offered.kind === "none") return { apply: false, reason: `no Landlock here: ${offered.reason}` }
        if (offered.abi < ABI_SCOPES) {
          return {
            apply: false,
            reason: `the kernel's Landlock ABI ${offered.abi} has no scopes (ABI ${ABI_SCOPES}, Linux 6.12, needed)`
          }
        }
        return { apply: true }
      })

    /** Whether calls get the launcher's Landlock write rules that leave every cgroup mount out. */
    const cgroupfsFor = (launcher: Confine.LauncherChoice): Effect.Effect<Scopes> =>
      Effect.gen(function* () {
        if (options.cgroupfsWritable === true) {
          return {
            apply: false,
            reason: "cgroup files were left writable (Supervisor option cgroupfsWritable: true)"
          }
        }
        if (options.cgroupfsWritable === undefined && settings.cgroupfs === "writable") {
          return { apply: false, reason: `${CGROUPFS_VARIABLE}=writable` }
        }
        if (launcher.path === undefined) return { apply: false, reason: launcher.reason }
        const offered = yield* landlock
        if (offered.kind === "none") return { apply: false, reason: `no Landlock here: ${offered.reason}` }
        if (offered.abi < ABI_REFER) {
          return {
            apply: false,
            reason: `the kernel's Landlock ABI ${offered.abi} cannot grant renames across directories (ABI ${ABI_REFER}, Linux 5.19, needed)`
          }
        }
        const ran = yield* exitsZero(launcher.path, ["--deny-cgroupfs", "--", "/bin/sh", "-c", "exit 0"])
        return ran
          ? { apply: true }
          : { apply: false, reason: "the launcher could not apply its Landlock write rules here" }
      })

    /** Whether calls get PID and mount namespaces (the launcher entry only: the launcher stays their parent). */
    const namespacesFor = (
      launcher: Confine.LauncherChoice,
      entry: "launcher" | "prologue" | undefined
    ): Effect.Effect<Scopes> =>
      Effect.gen(function* () {
        if (options.namespaces === false) {
          return {
            apply: false,
            reason: "PID and mount namespaces were turned off (Supervisor option namespaces: false)"
          }
        }
        if (options.namespaces === undefined && settings.namespaces === "off") {
          return { apply: false, reason: `${NAMESPACES_VARIABLE}=off` }
        }
        if (launcher.path === undefined) return { apply: false, reason: launcher.reason }
        if (entry !== "launcher") {
          return {
            apply: false,
            reason: `the ${entry === undefined ? "group tier" : "prologue entry"} runs the shell in place, and namespaces need the launcher as its parent`
          }
        }
        const ran = yield* exitsZero(launcher.path, [
          "--isolate",
          String(PROBE_SHM_BYTES),
          "--",
          "/bin/sh",
          "-c",
          "exit 0"
        ])
        return ran
          ? { apply: true }
          : {
              apply: false,
              reason:
                "the kernel refused PID and mount namespaces here (not root and no unprivileged user namespaces, or a /proc that cannot be mounted again)"
            }
      })

    const forkSweep = Effect.asVoid(Effect.forkIn(Effect.interruptible(TierGroup.sweepCookies), layerScope))
    /**
     * The tier, the launcher and the scopes calls run under, and the startup sweep of what dead
     * hosts left behind (cookies: in the background).
     */
    const decide: Effect.Effect<Tier> = Effect.gen(function* () {
      const found = options.launcher === false ? undefined : yield* resolvedLauncher
      const launcherChoice: Confine.LauncherChoice =
        found === undefined
          ? { path: undefined, reason: LAUNCHER_OFF }
          : found.kind === "found"
            ? { path: found.path }
            : { path: undefined, reason: found.reason }
      let scopes = yield* scopesFor(launcherChoice)
      const cgroupfs = yield* cgroupfsFor(launcherChoice)
      let guards: Confine.LayerGuards = {
        launcher: launcherChoice.path,
        scope: scopes.apply,
        denyCgroupfs: cgroupfs.apply,
        shmMaxBytes: options.shmMaxBytes
      }
      const forcedGroup =
        options.containment === "group" ||
        (options.containment === undefined && settings.containment === "group")
      const forcedEntry =
        options.cgroupEntry ?? (settings.cgroupEntry === "prologue" ? "prologue" : undefined)
      const detectCgroup = () =>
        Cgroup.detect(exitsZero, probeName, forcedEntry, launcherChoice, {
          ...guards,
          memoryBytes: undefined
        })
      let detected = forcedGroup ? undefined : yield* detectCgroup()
      if (scopes.apply && detected?.parent === undefined) {
        // no cgroup entry proved the scoped launcher: prove the scopes on their own
        const scopesRun = yield* exitsZero(launcherChoice.path!, ["--scope", "--", "/bin/sh", "-c", "exit 0"])
        if (!scopesRun) {
          scopes = { apply: false, reason: "the launcher could not apply Landlock scopes here" }
          guards = { ...guards, scope: false }
          if (detected !== undefined) detected = yield* detectCgroup()
        }
      }
      const root = process.getuid?.() === 0
      const base = (
        tier: Pick<Containment, "containment" | "cgroupEntry" | "fallbackReason">,
        namespaces: Scopes
      ): Containment => ({
        ...tier,
        launcher: Confine.usesLauncher({ ...guards, memoryBytes: undefined }, tier.cgroupEntry),
        landlockScopes: scopes.apply,
        ...(scopes.apply ? {} : { landlockScopesReason: scopes.reason }),
        cgroupfs: cgroupfs.apply ? "landlock" : namespaces.apply ? "read-only mount" : "none",
        ...(cgroupfs.apply ? {} : { cgroupfsReason: cgroupfs.reason }),
        // Landlock's ptrace check refuses environ and maps to a call of a host that is not root only
        proc: namespaces.apply ? "pid namespace" : scopes.apply && !root ? "landlock" : "none",
        ...(namespaces.apply
          ? {}
          : {
              procReason:
                namespaces.reason +
                (scopes.apply && root
                  ? " (and Landlock scopes do not refuse environ and maps to a root call)"
                  : "")
            }),
        shm: namespaces.apply ? "private" : "shared",
        ...(namespaces.apply ? {} : { shmReason: namespaces.reason })
      })
      const decider = CallBounds.make({
        v2Parent: detected?.parent,
        memoryController: options.memoryController ?? true,
        cgroupV1: options.cgroupV1 ?? true,
        shmCleanup: options.shmCleanup ?? true,
        watchdog,
        runIdPrefix: yield* runIdPrefix,
        probeName: yield* probeName
      })
      // what dead hosts left in the v1 hierarchies, after their v2 cgroups below
      const sweepV1 = Effect.forEach(decider.v1Parents(), (parent) => V1.sweep(parent), {
        discard: true
      })
      if (detected === undefined || detected.parent === undefined) {
        yield* forkSweep
        yield* sweepV1
        const fallbackReason =
          detected?.fallbackReason ??
          (options.containment === "group" ? "the group tier was asked for" : `${CONTAINMENT_VARIABLE}=group`)
        const namespaces = yield* namespacesFor(launcherChoice, undefined)
        return TierGroup.make(
          watchdog,
          base({ containment: "group", fallbackReason }, namespaces),
          guards,
          decider
        )
      }
      yield* Cgroup.sweep(detected.parent)
      yield* sweepV1
      const namespaces = yield* namespacesFor(launcherChoice, detected.entry)
      if (namespaces.apply) guards = { ...guards, isolate: true }
      return yield* TierCgroup.make({
        parent: detected.parent,
        entry: detected.entry,
        runIdPrefix: yield* runIdPrefix,
        launcherServer: options.launcherServer ?? true,
        watchdog,
        guards,
        bounds: decider,
        containment: base(
          {
            containment: "cgroup",
            cgroupEntry: detected.entry,
            ...(detected.fallbackReason === undefined ? {} : { fallbackReason: detected.fallbackReason })
          },
          namespaces
        )
      }).pipe(Scope.extend(layerScope))
    })
    const decideOnce = yield* Effect.cached(decide)
    let decided: Tier | undefined
    const tier = Effect.suspend(() =>
      decided !== undefined ? Effect.succeed(decided) : Effect.tap(decideOnce, (chosen) => (decided = chosen))
    )

    /**
     * A tree with a deadline gets its backstop in the watchdog, outside the host's event loop:
     * disarmed when the main process exits or the host begins the stop, whichever comes first.
     */
    // where the watchdog reports what a backstop signalled: a private directory, made on first use
    let reports: string | undefined
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => reports !== undefined && fs.rmSync(reports, { recursive: true, force: true }))
    )
    const reportFile = (callRunId: string): string | undefined => {
      try {
        reports ??= fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-deadlines-"))
        return path.join(reports, callRunId)
      } catch {
        return undefined
      }
    }
    const withBackstop = (handle: Handle, tree: TreeOptions): Handle => {
      if (tree.deadlineMs === undefined || handle.containment === undefined) return handle
      const without = (reason: string): Handle => ({
        ...handle,
        containment: { ...handle.containment!, deadlineBackstop: false, deadlineBackstopReason: reason }
      })
      if (options.deadlineBackstop === false) {
        return without("the deadline backstop was turned off (Supervisor option deadlineBackstop: false)")
      }
      if (handle.lifeline === undefined) return without("this tier names nothing the watchdog can stop")
      const report = reportFile(tree.runId)
      if (report === undefined) return without("no private directory for the watchdog's report could be made")
      const backstop = watchdog.arm(
        handle.lifeline,
        tree.deadlineMs + backstopMs,
        tree.killGraceMs,
        report,
        tree.runId
      )
      if (!backstop.armed) {
        backstop.disarm()
        return without("the lifeline watchdog could not be started")
      }
      handle.exit.onExit(backstop.disarm)
      return {
        ...handle,
        containment: { ...handle.containment, deadlineBackstop: true },
        stop: (facts) =>
          Effect.suspend(() => {
            backstop.disarm()
            // what the watchdog signalled, if it stepped in, is the call's too
            return Effect.map(handle.stop(facts), (stopped) => withReported(stopped, report))
          })
      }
    }

    let found: Shell | undefined
    const shell = Effect.sync(() => (found ??= Proc.findShell()))

    return {
      containment: Effect.map(tier, (chosen) => chosen.containment),
      landlock,
      shell,
      runId,
      admit: admission.admit,
      start: (command) => {
        const tree = command.tree
        if (tree === undefined) return startPlain(command, true)
        return Effect.flatMap(tier, (chosen) =>
          scoped(
            Effect.map(chosen.launch(command, tree, envWithCookie(command, tree.runId)), (handle) =>
              withBackstop(handle, tree)
            ),
            tree
          )
        )
      }
    } satisfies SupervisorService
  })
