/**
 * The cgroup tier: a child cgroup per call under the parent `detect` found (./cgroup.ts), the shell
 * inside it from its first instruction — created there by the native launcher (through the layer's
 * launcher server from its second launch on, ./launcherServer.ts) or moved in by the prologue.
 * Stopping reads the members from the cgroup and ends with removing it. The parent outlives the
 * layer's last call by a short linger, so calls back to back do not make and remove it each time.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import type { Command, Containment, TreeOptions } from "../../Supervisor.js"
import * as Bounds from "./bounds.js"
import * as Cgroup from "./cgroup.js"
import * as Confine from "./confine.js"
import * as Group from "./group.js"
import * as Launch from "./launch.js"
import * as Launcher from "./launcherServer.js"
import * as Proc from "./process.js"
import type { Watchdog } from "./lifeline.js"
import { nothingStopped, terminate, type TreeStop } from "./terminate.js"
import type { Tier } from "./tier.js"

/**
 * How long the parent outlives this layer's last call: calls back to back reuse it instead of
 * making and removing it around each one (two more cgroup operations per call).
 */
const PARENT_LINGER_MS = 100

/** How often the stop looks whether a lost call's launcher (no longer the host's to wait on) is gone. */
const GONE_POLL_MS = 5

/** @internal */
export interface Options {
  readonly parent: string
  readonly entry: Cgroup.Entry
  /** Run ids starting with it are this layer's: one standing lifeline rule covers all their cgroups. */
  readonly runIdPrefix: string
  readonly launcherServer: boolean
  readonly watchdog: Watchdog
  /** The launcher this layer runs and whether calls get Landlock scopes. */
  readonly guards: Confine.LayerGuards
  /** How calls' memory ceilings and task limits are applied here. */
  readonly bounds: Bounds.Decider
  readonly containment: Containment
}

const noop = () => {}

/**
 * The tier in the layer's scope: closing it ends the launcher server and removes the parent when
 * no call of any host is in it.
 *
 * @internal
 */
export const make = (options: Options): Effect.Effect<Tier, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { entry, parent, watchdog } = options
    // where a foreign member goes back to when the cgroup it came from cannot be read: the host's
    // own cgroup, read now (a call may move the host into its cgroup later)
    const home = homeCgroup(parent)
    const layerScope = yield* Effect.scope
    yield* Effect.addFinalizer(() => Effect.sync(() => Cgroup.releaseParent(parent)))
    // the launcher server, in the layer's scope (closed before the parent is released), used from
    // the layer's second launch on: a host that makes one call starts none
    const launcher = options.guards.launcher
    const server =
      options.launcherServer && entry === "launcher" && launcher !== undefined
        ? yield* Launcher.make(launcher)
        : undefined
    let launches = 0

    // the parent's linger: one fiber per burst of calls, not one per call
    let lastEnd = 0
    let lingering = false
    const linger: Effect.Effect<void> = Effect.gen(function* () {
      for (;;) {
        const due = lastEnd + PARENT_LINGER_MS
        const now = yield* Clock.currentTimeMillis
        if (now >= due) break
        yield* Effect.sleep(Duration.millis(due - now))
      }
      lingering = false
      Cgroup.releaseParent(parent)
    })
    const releaseParentSoon = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      lastEnd = now
      if (lingering) return Effect.void
      lingering = true
      // interruptible, though forked from a release: closing the layer must not wait the linger out
      return Effect.asVoid(Effect.forkIn(Effect.interruptible(linger), layerScope))
    })

    /** The fields of this call when the server takes it, else undefined. */
    const serve = (
      dir: string,
      command: Command,
      env: Readonly<Record<string, string | undefined>>,
      guards: Confine.Guards
    ) => {
      if (server === undefined || command.stdin !== undefined || ++launches < 2) return undefined
      return Launcher.request(
        dir,
        command.cwd,
        command.file,
        command.args,
        env,
        Confine.serverOptions(guards)
      )
    }

    const tier: Tier = {
      containment: options.containment,
      launch: (command, tree, env) =>
        Effect.gen(function* () {
          const dir = Cgroup.create(parent, tree.runId)
          if (dir === undefined) {
            return yield* Launch.spawnFailed(command.file, command.cwd, "could not create the call's cgroup")
          }
          // the memory ceiling and the task limit on the best mechanism here (./bounds.ts)
          const bounds = options.bounds.forCall(
            tree.runId,
            dir,
            tree.memoryMaxBytes ?? 0,
            tree.tasksMax ?? 0,
            yield* Clock.currentTimeMillis,
            options.guards.isolate === true
          )
          const call = Confine.forCall(options.guards, options.containment, bounds)
          // registered before the spawn: a host that dies right after it still has its lifeline. A run
          // id of this layer is covered by one standing registration of all its call cgroups (no
          // message to the watchdog per call); any other is registered for the call's life.
          const unregisterCgroup = tree.runId.startsWith(options.runIdPrefix)
            ? (watchdog.registerStanding({ kind: "cgs", parent, prefix: options.runIdPrefix }), noop)
            : watchdog.register({ kind: "cg", dir })
          const removeCgroup = (waitMs: number) =>
            Effect.flatMap(Cgroup.removeDir(dir, waitMs), (removed) =>
              Effect.sync(() => removed && unregisterCgroup())
            )
          // through the launcher, the pid Node sees is the launcher's (outside the cgroup, exiting with
          // the shell's status); the members, stopping and the report come from the cgroup either way
          const launched = entry === "launcher"
          const run = Confine.intoCgroup(entry, dir, call.guards, command.file, command.args)
          const spawnHere = Launch.spawn({
            file: run.file,
            args: run.args,
            cwd: command.cwd,
            env,
            stdin: command.stdin,
            // through the launcher the command gets its session from the launcher (one new
            // session per call, not two)
            detached: !launched,
            name: command.file
          })
          // a floor for the start of everything the call forks: the launcher may be gone (the shell
          // done, the launcher exited) before its own start time can be read under load, and its
          // orphans must still count as the call's own
          const launchFloor = Procfs.ticksNowFloor()
          const fields = serve(dir, command, env, call.guards)
          // a call the server lost before it answered may have started: it comes back lost (pid 0),
          // and its cgroup is stopped like any call's when its scope closes
          const started = yield* (
            fields === undefined
              ? spawnHere
              : Effect.flatMap(server!.call(fields, command.file), (answer) =>
                  answer === "not started" ? spawnHere : Effect.succeed(answer)
                )
          ).pipe(Effect.tapError(() => Effect.zipRight(removeCgroup(0), Effect.sync(bounds.discard))))
          // to tell the process Node started from a later one with its pid (a server reaps its launcher)
          const startedAt = Procfs.startTimeOf(started.pid) ?? launchFloor
          return {
            ...started,
            containment: call.containment,
            lifeline: { kind: "cg", dir },
            stop: () =>
              Effect.gen(function* () {
                // read before the cgroups go: what the kernel counted against the call's bounds
                const counted = bounds.counted()
                // the common end, every member gone: the kernel removes only an empty cgroup, so one
                // successful removal is the whole stop (no listing of members)
                let stopped = nothingStopped
                if (Cgroup.removeIfEmpty(dir)) {
                  unregisterCgroup()
                  yield* releaseParentSoon
                } else {
                  const ops = Cgroup.treeOps(dir, {
                    runId: tree.runId,
                    rootPid: started.pid,
                    rootStartTime: startedAt,
                    dir,
                    mount: home.mount,
                    home: home.dir
                  })
                  stopped = yield* terminate(ops, tree)
                  const foreign = ops.foreign()
                  const thawed = ops.thawed()
                  if (foreign.length > 0) stopped = { ...stopped, foreign }
                  if (thawed > 0) stopped = { ...stopped, thawed }
                  // an emptied cgroup goes at once; one with survivors cannot go, so it is not waited
                  // for (the lifeline keeps it registered, the watchdog retries when the host ends)
                  yield* removeCgroup(stopped.survivors.length > 0 ? 0 : tree.killWaitMs)
                }
                // the launcher (outside the cgroup) ends right after its child, the prologue's shell is
                // a member: waited for, so closing the scope leaves no process of the call behind
                if (started.exit.status() === undefined) {
                  const running = () =>
                    started.exit.status() === undefined &&
                    startedAt !== undefined &&
                    alive(Procfs.readProcess(started.pid))?.startTime === startedAt
                  // its exit as the host learns it; a lost launcher's is never told (the server that
                  // reaped it is gone): it is looked for until it is gone
                  const exit = Effect.interruptible(
                    Effect.zipRight(
                      Launch.awaitEnd(started.exit),
                      Effect.suspend(() =>
                        started.exit.lost() === undefined ? Effect.void : untilGone(running)
                      )
                    )
                  ).pipe(Effect.timeoutOption(Duration.millis(tree.killWaitMs)))
                  if (Option.isNone(yield* exit)) {
                    const escaped = yield* stopEscapedShell(started.pid, launched, running, tree)
                    if (escaped !== undefined) {
                      stopped = joinStops(stopped, escaped)
                      yield* exit
                    }
                    // a lost launcher still there: toolcap's own process, what it ran already stopped
                    if (started.pid > 0 && running() && Proc.sendSignal(started.pid, "SIGKILL") === "sent") {
                      stopped = joinStops(stopped, {
                        ...nothingStopped,
                        signalled: [started.pid],
                        killed: [started.pid]
                      })
                      yield* exit
                    }
                  }
                }
                // the v1 cgroups empty with the call's processes (the launcher never joins them)
                yield* bounds.remove(stopped.survivors.length > 0 ? 0 : tree.killWaitMs)
                const shmRemoved = bounds.removeShm()
                return { ...stopped, ...counted, ...(shmRemoved.length > 0 ? { shmRemoved } : {}) }
              })
          }
        })
    }
    return tier
  })

/** The host's cgroup v2 now, and the mount; the parent's parent when it cannot be read. */
const homeCgroup = (parent: string): { readonly mount: string; readonly dir: string } => {
  const cg = Procfs.cgroup2()
  if (cg === undefined) return { mount: path.dirname(path.dirname(parent)), dir: path.dirname(parent) }
  return { mount: cg.mount, dir: path.join(cg.mount, cg.own) }
}

/** The process when it runs (not a zombie). */
const alive = (info: Procfs.ProcessInfo | undefined): Procfs.ProcessInfo | undefined =>
  info !== undefined && info.state !== "Z" && info.state !== "X" ? info : undefined

/** Completes once `running` says the process is gone, looking every few milliseconds (Clock). */
const untilGone = (running: () => boolean): Effect.Effect<void> =>
  Effect.suspend(() =>
    running() ? Effect.zipRight(Effect.sleep(Duration.millis(GONE_POLL_MS)), untilGone(running)) : Effect.void
  )

/** Pids of both lists, once each, ascending. */
const joinPids = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): Array<number> =>
  Arr.sort(Arr.dedupe([...a, ...b]), Order.number)

/**
 * A shell still alive after its cgroup was stopped (the prologue's `pid`, or the child its launcher
 * `pid` still waits on) left the call's cgroup: a command that may write to a cgroup outside
 * toolcap's (root) can move itself there. It, its group, its cookie carriers and their descendants
 * are ended at once, as the group tier finds them; undefined when no such shell is alive.
 */
const stopEscapedShell = (
  pid: number,
  launched: boolean,
  running: () => boolean,
  tree: TreeOptions
): Effect.Effect<TreeStop | undefined> =>
  Effect.suspend(() => {
    // still the process Node started (not reaped, not a reused pid)
    if (!running()) return Effect.succeed(undefined)
    const shell = launched
      ? Procfs.listProcesses().find((info) => info.ppid === pid && alive(info) !== undefined)
      : alive(Procfs.readProcess(pid))
    if (shell === undefined) return Effect.succeed(undefined)
    const ops = Group.treeOps({ rootPid: shell.pid, runId: tree.runId, rootStartTime: shell.startTime })
    // past the deadline and its grace already: no second grace
    return terminate(ops, { killGraceMs: 0, killWaitMs: tree.killWaitMs })
  })

/** Two stops' pids together, ascending. */
const joinStops = (first: TreeStop, second: TreeStop): TreeStop => ({
  ...first,
  signalled: joinPids(first.signalled, second.signalled),
  killed: joinPids(first.killed, second.killed),
  unstoppable: joinPids(first.unstoppable, second.unstoppable),
  survivors: joinPids(first.survivors, second.survivors)
})
