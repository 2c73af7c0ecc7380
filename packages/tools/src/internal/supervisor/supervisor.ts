/**
 * The real supervisor: every piece of state in the layer's scope (the watchdog, the tier and its
 * launcher server and cgroup parent, the host's identity, the shell, Landlock), each decided on
 * first use so that a host that never runs a command starts nothing.
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ToolError } from "@toolcap/limits"
import type { Command, Options, Process, Shell, SupervisorService } from "../../Supervisor.js"
import * as Cgroup from "./cgroup.js"
import { cookieVariable } from "./group.js"
import * as Landlock from "./landlock.js"
import * as Launch from "./launch.js"
import * as Lifeline from "./lifeline.js"
import * as Proc from "./process.js"
import { scoped, type Bounds } from "./scoped.js"
import { nothingStopped } from "./terminate.js"
import * as TierCgroup from "./tierCgroup.js"
import * as TierGroup from "./tierGroup.js"
import type { Tier } from "./tier.js"

/** The environment variables that force a tier or an entry (see `Supervisor`). */
const CONTAINMENT_VARIABLE = "TOOLCAP_CONTAINMENT"
const CGROUP_ENTRY_VARIABLE = "TOOLCAP_CGROUP_ENTRY"

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

const envWithCookie = (command: Command, runId: string): Readonly<Record<string, string | undefined>> =>
  command.env === undefined
    ? Proc.hostEnvWith(cookieVariable, runId)
    : { ...command.env, [cookieVariable]: runId }

/** @internal */
export const make = (options: Options = {}): Effect.Effect<SupervisorService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const layerScope = yield* Effect.scope
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
        PLAIN_BOUNDS,
        undefined
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

    const forkSweep = Effect.asVoid(Effect.forkIn(Effect.interruptible(TierGroup.sweepCookies), layerScope))
    /** The tier, and the startup sweep of what dead hosts left behind (cookies: in the background). */
    const decide: Effect.Effect<Tier> = Effect.gen(function* () {
      const forcedGroup =
        options.containment === "group" ||
        (options.containment === undefined && process.env[CONTAINMENT_VARIABLE] === "group")
      if (forcedGroup) {
        yield* forkSweep
        return TierGroup.make(watchdog, {
          containment: "group",
          fallbackReason:
            options.containment === "group" ? "the group tier was asked for" : `${CONTAINMENT_VARIABLE}=group`
        })
      }
      const forcedEntry =
        options.cgroupEntry ?? (process.env[CGROUP_ENTRY_VARIABLE] === "prologue" ? "prologue" : undefined)
      const detected = yield* Cgroup.detect(exitsZero, probeName, forcedEntry)
      if (detected.parent === undefined) {
        yield* forkSweep
        return TierGroup.make(watchdog, { containment: "group", fallbackReason: detected.fallbackReason })
      }
      yield* Cgroup.sweep(detected.parent)
      return yield* TierCgroup.make({
        parent: detected.parent,
        entry: detected.entry,
        runIdPrefix: yield* runIdPrefix,
        launcherServer: options.launcherServer ?? true,
        watchdog,
        containment: {
          containment: "cgroup",
          cgroupEntry: detected.entry,
          ...(detected.fallbackReason === undefined ? {} : { fallbackReason: detected.fallbackReason })
        }
      }).pipe(Scope.extend(layerScope))
    })
    const decideOnce = yield* Effect.cached(decide)
    let decided: Tier | undefined
    const tier = Effect.suspend(() =>
      decided !== undefined ? Effect.succeed(decided) : Effect.tap(decideOnce, (chosen) => (decided = chosen))
    )

    const landlock = yield* Effect.cached(
      Landlock.detect((file, args) =>
        runToEnd(file, args).pipe(Effect.mapError((error) => new Error(error.reason)))
      )
    )
    let found: Shell | undefined
    const shell = Effect.sync(() => (found ??= Proc.findShell()))

    return {
      containment: Effect.map(tier, (chosen) => chosen.containment),
      landlock,
      shell,
      runId,
      start: (command) => {
        const tree = command.tree
        if (tree === undefined) return startPlain(command, true)
        return Effect.flatMap(tier, (chosen) =>
          scoped(chosen.launch(command, tree, envWithCookie(command, tree.runId)), tree, chosen.containment)
        )
      }
    } satisfies SupervisorService
  })
