/**
 * A call's bounds besides its containment: the memory ceiling and the task limit, each on the
 * best mechanism this host offers, decided per layer on the first call that asks:
 *  - memory: cgroup v2 `memory.max` (+ `memory.swap.max` 0) on the call's cgroup where the v2
 *    memory controller is enabled for its parent, else a cgroup v1 memory cgroup of the call
 *    (`memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` where swap is accounted), else
 *    `RLIMIT_AS` of every process (which, unlike `RLIMIT_DATA`, counts shared mappings: memfd,
 *    `MAP_SHARED|MAP_ANONYMOUS`; a file in /dev/shm is bounded only by a controller);
 *  - tasks: cgroup v2 `pids.max`, else a cgroup v1 pids cgroup of the call, else none (no per
 *    call rlimit exists: `RLIMIT_NPROC` counts a user's processes, and root's not at all).
 * Whatever applied is reported with its mechanism, and after the call whether it was reached.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { MemoryCeiling, TaskLimit } from "../../Supervisor.js"
import * as V1 from "./cgroupV1.js"
import * as Shm from "./shm.js"
import type { Watchdog } from "./lifeline.js"

/** What a layer allows its calls' bounds to use. */
export interface LayerOptions {
  /** The cgroup tier's parent (v2), when the layer has the cgroup tier. */
  readonly v2Parent: string | undefined
  /** false: no memory controller (v2 or v1), the fallback `RLIMIT_AS` (Supervisor option `memoryController`). */
  readonly memoryController: boolean
  /** false: no cgroup v1 hierarchy (Supervisor option `cgroupV1`). */
  readonly cgroupV1: boolean
  /** false: a call's `/dev/shm` files are left when it ends (Supervisor option `shmCleanup`). */
  readonly shmCleanup: boolean
  readonly watchdog: Watchdog
  /** Run ids of this layer start with it (one standing lifeline rule per v1 parent). */
  readonly runIdPrefix: string
  readonly probeName: string
}

/** One call's bounds as applied: what its shell runs under, what is reported, and the end. */
export interface CallBounds {
  readonly memoryCeiling: MemoryCeiling | undefined
  readonly taskLimit: TaskLimit | undefined
  /** `RLIMIT_AS` of every process, when the ceiling is per process. */
  readonly addressSpaceBytes: number | undefined
  /** The v1 cgroups the shell joins before it runs. */
  readonly cgroup1: ReadonlyArray<string>
  /** What the kernel counted, read before the cgroups go. */
  readonly counted: () => {
    readonly memory?: { readonly reached: boolean; readonly oomKills: number }
    readonly tasks?: { readonly reached: boolean; readonly forkFailures: number }
  }
  /** Removes the call's v1 cgroups (once its processes are gone), waiting up to `waitMs`. */
  readonly remove: (waitMs: number) => Effect.Effect<void>
  /** Drops what was made when the call could not start. */
  readonly discard: () => void
  /** Removes the files the call left in `/dev/shm` (once its processes are gone): their names. */
  readonly removeShm: () => Array<string>
}

const noop = () => {}

const hasController = (file: string, name: string): boolean => {
  try {
    return new RegExp(`(^|\\s)${name}(\\s|$)`).test(fs.readFileSync(file, "latin1"))
  } catch {
    return false
  }
}

/**
 * Why call cgroups under the v2 `parent` cannot get `<name>.max`, or undefined when they can: the
 * controller must be enabled for `parent` by the cgroup above it (toolcap enables it below
 * `parent` itself, never above: that is the host's own cgroup or the system's).
 */
export const v2Unavailable = (parent: string, name: "memory" | "pids"): string | undefined =>
  hasController(path.join(path.dirname(parent), "cgroup.subtree_control"), name)
    ? undefined
    : `the cgroup v2 ${name} controller is not enabled for ${parent}`

/** Sets `<name>.max` on the v2 call cgroup, enabling the controller below the parent first; why not. */
const limitV2 = (parent: string, dir: string, name: "memory" | "pids", value: number): string | undefined => {
  try {
    const control = path.join(parent, "cgroup.subtree_control")
    if (!hasController(control, name)) fs.writeFileSync(control, `+${name}`)
    fs.writeFileSync(path.join(dir, `${name}.max`), String(value))
  } catch (error) {
    return `${name}.max could not be set on the call's cgroup (${(error as Error).message})`
  }
  if (name === "memory") {
    try {
      fs.writeFileSync(path.join(dir, "memory.swap.max"), "0")
    } catch {
      // no swap accounting here: the ceiling already bounds what the call holds in memory
    }
  }
  return undefined
}

/** What the kernel counted against the v2 call cgroup's memory ceiling (its whole subtree). */
const v2MemoryEvents = (dir: string) => {
  const file = path.join(dir, "memory.events")
  const oomKills = V1.eventCount(file, "oom_kill")
  return {
    reached: V1.eventCount(file, "max") > 0 || V1.eventCount(file, "oom") > 0 || oomKills > 0,
    oomKills
  }
}

/**
 * The layer's decider: `forCall(runId, v2Dir, memoryMaxBytes, tasksMax)` applies a call's bounds
 * (0 or undefined: none of that kind) on the call's v2 cgroup `v2Dir` (undefined in the group
 * tier) or v1 cgroups it makes now.
 */
export const make = (options: LayerOptions) => {
  let v2Refused: { memory?: string | undefined; pids?: string | undefined } | undefined
  let v1: V1.Parents | undefined
  const v1Parents = (): V1.Parents => {
    if (v1 !== undefined) return v1
    if (!options.cgroupV1) {
      const reason = "cgroup v1 was turned off (Supervisor option cgroupV1: false)"
      v1 = { memory: { reason }, pids: { reason } }
    } else v1 = V1.detect(options.probeName)
    return v1
  }
  const v2Reason = (name: "memory" | "pids"): string | undefined => {
    if (options.v2Parent === undefined) return "the group tier has no cgroup v2 of the call"
    v2Refused ??= {
      memory: v2Unavailable(options.v2Parent, "memory"),
      pids: v2Unavailable(options.v2Parent, "pids")
    }
    return v2Refused[name]
  }
  const registered = new Set<string>()
  const shmCalls = Shm.registry()
  /** The lifeline for a v1 call cgroup: one standing rule per parent for this layer's run ids. */
  const register = (parent: string, dir: string, runId: string): (() => void) => {
    if (runId.startsWith(options.runIdPrefix)) {
      if (!registered.has(parent)) {
        registered.add(parent)
        options.watchdog.registerStanding({ kind: "cgs", parent, prefix: options.runIdPrefix })
      }
      return noop
    }
    return options.watchdog.register({ kind: "cg", dir })
  }

  return {
    /** The v1 parents found (for the startup sweep). */
    v1Parents: (): ReadonlyArray<string> =>
      Object.values(v1Parents()).flatMap((found) => ("parent" in found ? [found.parent] : [])),
    forCall: (
      runId: string,
      v2Dir: string | undefined,
      memoryMaxBytes: number,
      tasksMax: number,
      startedAt: number
    ): CallBounds => {
      const shm = options.shmCleanup ? Shm.track(shmCalls, runId, startedAt) : undefined
      const v1Dirs: Array<{ readonly dir: string; readonly unregister: () => void }> = []
      const reasons: Array<string> = []
      const onV1 = (controller: V1.Controller, limit: number): string | undefined => {
        const found = v1Parents()[controller]
        if ("reason" in found) {
          reasons.push(found.reason)
          return undefined
        }
        const made = V1.create(controller, found.parent, runId, limit)
        if ("reason" in made) {
          reasons.push(made.reason)
          return undefined
        }
        v1Dirs.push({ dir: made.dir, unregister: register(found.parent, made.dir, runId) })
        return made.dir
      }

      let memoryCeiling: MemoryCeiling | undefined
      let addressSpaceBytes: number | undefined
      let memoryCounted: (() => { readonly reached: boolean; readonly oomKills: number }) | undefined
      if (memoryMaxBytes > 0) {
        const refused: Array<string> = []
        if (!options.memoryController) {
          refused.push("no memory controller was to be used (Supervisor option memoryController: false)")
        } else {
          const v2 = v2Reason("memory") ?? limitV2(options.v2Parent!, v2Dir!, "memory", memoryMaxBytes)
          if (v2 === undefined) {
            memoryCeiling = {
              maxBytes: memoryMaxBytes,
              enforcedBy: "cgroup",
              mechanism: "cgroup v2 memory.max"
            }
            memoryCounted = () => v2MemoryEvents(v2Dir!)
          } else {
            refused.push(v2)
            const dir = onV1("memory", memoryMaxBytes)
            if (dir !== undefined) {
              memoryCeiling = {
                maxBytes: memoryMaxBytes,
                enforcedBy: "cgroup",
                mechanism: "cgroup v1 memory.limit_in_bytes"
              }
              memoryCounted = () => V1.memoryEvents(dir)
            } else refused.push(reasons[reasons.length - 1]!)
          }
        }
        if (memoryCeiling === undefined) {
          addressSpaceBytes = memoryMaxBytes
          memoryCeiling = {
            maxBytes: memoryMaxBytes,
            enforcedBy: "rlimit",
            mechanism: "RLIMIT_AS",
            reason: refused.join("; ")
          }
        }
      }

      let taskLimit: TaskLimit | undefined
      let tasksCounted: (() => number) | undefined
      if (tasksMax > 0) {
        const v2 = v2Reason("pids") ?? limitV2(options.v2Parent!, v2Dir!, "pids", tasksMax)
        if (v2 === undefined) {
          taskLimit = { maxTasks: tasksMax, enforcedBy: "cgroup", mechanism: "cgroup v2 pids.max" }
          tasksCounted = () => V1.forkFailures(v2Dir!)
        } else {
          const dir = onV1("pids", tasksMax)
          if (dir !== undefined) {
            taskLimit = { maxTasks: tasksMax, enforcedBy: "cgroup", mechanism: "cgroup v1 pids.max" }
            tasksCounted = () => V1.forkFailures(dir)
          } else {
            taskLimit = {
              maxTasks: tasksMax,
              enforcedBy: "none",
              reason: `${v2}; ${reasons[reasons.length - 1]!}`
            }
          }
        }
      }

      return {
        memoryCeiling,
        taskLimit,
        addressSpaceBytes,
        cgroup1: v1Dirs.map((made) => made.dir),
        counted: () => {
          const memory = memoryCounted?.()
          const failures = tasksCounted?.()
          return {
            ...(memory === undefined ? {} : { memory }),
            ...(failures === undefined ? {} : { tasks: { reached: failures > 0, forkFailures: failures } })
          }
        },
        remove: (waitMs) =>
          Effect.forEach(
            v1Dirs,
            (made) => Effect.map(V1.removeDir(made.dir, waitMs), (removed) => removed && made.unregister()),
            { discard: true }
          ),
        removeShm: () => shm?.end() ?? [],
        discard: () => {
          shm?.end()
          for (const made of v1Dirs) {
            try {
              fs.rmdirSync(made.dir)
              made.unregister()
            } catch {
              // a process joined it after all: the lifeline and the sweep remove it
            }
          }
        }
      }
    }
  }
}

/** A layer's decider. */
export type Decider = ReturnType<typeof make>
