/**
 * The group tier: the tree runs in a session and process group of its own and carries the cookie;
 * stopping finds it by group, cookie and parent links (./group.ts). Where no cgroup can be made.
 * The shell runs through the launcher (exec'd in place, same pid) when it applies Landlock scopes
 * or a memory ceiling to it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Procfs } from "@toolcap/spill"
import type { Containment } from "../../Supervisor.js"
import type * as Bounds from "./bounds.js"
import { ownerOf } from "./cgroup.js"
import * as Confine from "./confine.js"
import * as Group from "./group.js"
import * as Launch from "./launch.js"
import type { Watchdog } from "./lifeline.js"
import * as Proc from "./process.js"
import { nothingStopped, terminate, type TreeStop } from "./terminate.js"
import type { Tier } from "./tier.js"

/** @internal */
export const make = (
  watchdog: Watchdog,
  containment: Containment,
  guards: Confine.LayerGuards,
  decider: Bounds.Decider
): Tier => ({
  containment,
  launch: (command, tree, env) =>
    Effect.gen(function* () {
      // no v2 cgroup: the bounds take v1 cgroups of the call where this host has them, else rlimits
      const bounds = decider.forCall(
        tree.runId,
        undefined,
        tree.memoryMaxBytes ?? 0,
        tree.tasksMax ?? 0,
        yield* Clock.currentTimeMillis
      )
      const call = Confine.forCall(guards, containment, bounds)
      const run = Confine.inPlace(call.guards, command.file, command.args)
      // the cookie is known before the spawn, the process group only after it: until then the
      // cookie alone names the tree (a host killed while the shell already runs)
      const unregisterCookie = watchdog.register({ kind: "pg", pgid: undefined, cookie: tree.runId })
      const launched = yield* Launch.spawn({
        file: run.file,
        args: run.args,
        cwd: command.cwd,
        env,
        stdin: command.stdin,
        detached: true,
        name: command.file
      }).pipe(Effect.tapError(() => Effect.sync(() => (unregisterCookie(), bounds.discard()))))
      // still readable here: the child is reaped only after the spawn event; tells the root from a reused pid
      const rootStartTime = Procfs.startTimeOf(launched.pid)
      const unregisterGroup = watchdog.register({ kind: "pg", pgid: launched.pid, cookie: tree.runId })
      const unregister = () => {
        unregisterGroup()
        unregisterCookie()
      }
      return {
        ...launched,
        containment: call.containment,
        lifeline: { kind: "pg", pgid: launched.pid, cookie: tree.runId },
        stop: (facts) =>
          Effect.suspend(() => {
            // the cheap path: the shell exited, both pipes are closed and its group is empty, so no
            // process of the tree is known to be left and no scan of /proc is needed
            const counted = bounds.counted()
            const withShm = (stopped: TreeStop): TreeStop => {
              const shmRemoved = bounds.removeShm()
              return shmRemoved.length > 0 ? { ...stopped, shmRemoved } : stopped
            }
            if (facts.exited && facts.drained && Proc.probe(-launched.pid) === "gone") {
              unregister()
              return Effect.as(bounds.remove(tree.killWaitMs), withShm({ ...nothingStopped, ...counted }))
            }
            return terminate(
              Group.treeOps({ rootPid: launched.pid, runId: tree.runId, rootStartTime }),
              tree
            ).pipe(
              Effect.tap((stopped) => Effect.sync(() => stopped.survivors.length === 0 && unregister())),
              Effect.tap((stopped) => bounds.remove(stopped.survivors.length > 0 ? 0 : tree.killWaitMs)),
              Effect.map((stopped) => withShm({ ...stopped, ...counted }))
            )
          })
      }
    })
})

/** Processes whose environment is read between two yields of the background cookie sweep. */
const SWEEP_SLICE = 100

/**
 * The group tier's startup sweep: SIGKILL to every process carrying the cookie of a run whose host
 * is gone; the number stopped. It yields between slices so a host's first calls are not held up.
 *
 * @internal
 */
export const sweepCookies: Effect.Effect<number> = Effect.gen(function* () {
  let stopped = 0
  let seen = 0
  const ownerAlive = new Map<string, boolean>()
  for (const info of Procfs.listProcesses()) {
    if (++seen % SWEEP_SLICE === 0) yield* Effect.yieldNow()
    if (info.state === "Z" || info.state === "X") continue
    const runId = Procfs.environValue(info, Group.cookieVariable)
    if (runId === null) continue
    const owner = ownerOf(runId)
    if (owner === undefined) continue
    const key = `${owner.pid}:${owner.startTime}`
    let alive = ownerAlive.get(key)
    if (alive === undefined) {
      alive = Procfs.isRunning(owner.pid, owner.startTime)
      ownerAlive.set(key, alive)
    }
    if (!alive && Proc.sendSignal(info.pid, "SIGKILL") === "sent") stopped++
  }
  return stopped
})
