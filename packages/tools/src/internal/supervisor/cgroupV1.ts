/**
 * The cgroup v1 hierarchies a call's bounds can use on a hybrid host (cgroup v2 mounted without
 * the memory or pids controller, those on v1 at `/sys/fs/cgroup/memory` and `/sys/fs/cgroup/pids`):
 * a per-call cgroup in each, beside the call's v2 cgroup, under a `toolcap` parent below the
 * host's own v1 cgroup (a delegated subtree) or the hierarchy's root. The call's shell joins them
 * before it runs (the launcher's `--cgroup1`, or a `/bin/sh` prologue without the launcher); what
 * it starts inherits the membership. Removed when the call ends, by the watchdog when the host
 * dies, and by the startup sweep of a later host.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Cgroup from "./cgroup.js"
import * as Proc from "./process.js"

/** The v1 controllers a call's bounds use. */
export type Controller = "memory" | "pids"

/** The parent's name under the host's own v1 cgroup (or the hierarchy's root), as on cgroup v2. */
const PARENT = "toolcap"

/** The file a probe writes to prove a controller's limit can be set below the parent. */
const LIMIT_FILE: Record<Controller, string> = { memory: "memory.limit_in_bytes", pids: "pids.max" }

/** Where the cgroup v1 hierarchy holding `controller` is mounted (from mountinfo), or undefined. */
export const mountOf = (controller: string, mountinfo?: string): string | undefined => {
  let text = mountinfo
  try {
    text ??= fs.readFileSync("/proc/self/mountinfo", "utf8")
  } catch {
    return undefined
  }
  for (const line of text.split("\n")) {
    const fields = line.split(" ")
    const dash = fields.indexOf("-")
    if (
      dash >= 0 &&
      fields[dash + 1] === "cgroup" &&
      (fields[dash + 3] ?? "").split(",").includes(controller)
    )
      return fields[4]
  }
  return undefined
}

/** Where each v1 controller is mounted (from mountinfo), and this process's cgroup in it. */
const mounts = (): Map<Controller, { readonly mount: string; readonly own: string }> => {
  const found = new Map<Controller, { mount: string; own: string }>()
  let mountinfo: string
  let own: string
  try {
    mountinfo = fs.readFileSync("/proc/self/mountinfo", "utf8")
    own = fs.readFileSync("/proc/self/cgroup", "utf8")
  } catch {
    return found
  }
  for (const controller of ["memory", "pids"] as const) {
    const mount = mountOf(controller, mountinfo)
    if (mount === undefined) continue
    const entry = own
      .split("\n")
      .map((row) => row.split(":"))
      .find((row) => row.length >= 3 && row[1]!.split(",").includes(controller))
    found.set(controller, { mount, own: entry?.slice(2).join(":") ?? "/" })
  }
  return found
}

/** For each controller, the parent to make call cgroups in, or why there is none here. */
export type Parents = Record<Controller, { readonly parent: string } | { readonly reason: string }>

/**
 * Finds, for memory and pids, a v1 parent where a child can be made and its limit set (proved by
 * making one, named like a probe so no sweep takes it for a run id): under the host's own v1
 * cgroup first, else under the hierarchy's root.
 */
export const detect = (probeName: string): Parents => {
  const found = mounts()
  const one = (controller: Controller) => {
    const mounted = found.get(controller)
    if (mounted === undefined) return { reason: `no cgroup v1 ${controller} controller is mounted here` }
    const candidates = [
      ...new Set([path.join(mounted.mount, mounted.own, PARENT), path.join(mounted.mount, PARENT)])
    ]
    for (const parent of candidates) {
      if (/[\s,]/.test(parent)) continue
      const dir = path.join(parent, probeName)
      try {
        fs.mkdirSync(parent, { recursive: true })
        fs.mkdirSync(dir)
      } catch {
        continue
      }
      let settable = false
      try {
        fs.writeFileSync(path.join(dir, LIMIT_FILE[controller]), controller === "pids" ? "max" : "-1")
        settable = true
      } catch {
        // not ours to limit
      }
      remove(dir)
      // the parent is made again by the first call (another host may remove it meanwhile anyway)
      remove(parent)
      if (settable) return { parent }
    }
    return {
      reason: `no cgroup v1 ${controller} cgroup could be made and limited under ${candidates.join(" or ")}`
    }
  }
  return { memory: one("memory"), pids: one("pids") }
}

const remove = (dir: string): boolean => {
  try {
    fs.rmdirSync(dir)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT"
  }
  return true
}

const write = (file: string, value: string): boolean => {
  try {
    fs.writeFileSync(file, value)
    return true
  } catch {
    return false
  }
}

const read = (file: string): string => {
  try {
    return fs.readFileSync(file, "latin1")
  } catch {
    return ""
  }
}

/** Tries to make the parent again when another host's last call removed it between our mkdirs. */
const CREATE_ATTEMPTS = 3

/** A call's cgroup in `parent` with its limit set; why not when it cannot be. */
export const create = (
  controller: Controller,
  parent: string,
  runId: string,
  limit: number
): { readonly dir: string } | { readonly reason: string } => {
  const dir = path.join(parent, runId)
  // the parent exists only while a call (of any host) is in it: made again when another removed it
  for (let attempt = 0; ; attempt++) {
    try {
      fs.mkdirSync(dir)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= CREATE_ATTEMPTS) {
        return {
          reason: `the call's cgroup v1 ${controller} cgroup could not be made (${(error as Error).message})`
        }
      }
    }
    try {
      fs.mkdirSync(parent, { recursive: true })
    } catch {
      // made meanwhile, or refused: the next mkdir says which
    }
  }
  if (!write(path.join(dir, LIMIT_FILE[controller]), String(limit))) {
    remove(dir)
    return {
      reason: `${LIMIT_FILE[controller]} could not be set on the call's cgroup v1 ${controller} cgroup`
    }
  }
  // no swap beyond the ceiling where swap is accounted (memsw must be at least the limit)
  if (controller === "memory") write(path.join(dir, "memory.memsw.limit_in_bytes"), String(limit))
  return { dir }
}

/** The count on the line `<name> <count>` of a cgroup file (`memory.events`, `pids.events`, ...); 0 without one. */
export const eventCount = (file: string, name: string): number =>
  Number(new RegExp(`^${name} (\\d+)$`, "m").exec(read(file))?.[1] ?? 0)

/** What the kernel counted against a v1 memory cgroup's ceiling. */
export const memoryEvents = (dir: string): { readonly reached: boolean; readonly oomKills: number } => {
  const oomKills = eventCount(path.join(dir, "memory.oom_control"), "oom_kill")
  const failures =
    Number(read(path.join(dir, "memory.failcnt")).trim() || 0) +
    Number(read(path.join(dir, "memory.memsw.failcnt")).trim() || 0)
  return { reached: failures > 0 || oomKills > 0, oomKills }
}

/** How many forks a pids cgroup refused (`pids.events` max; v1 and v2 name it the same). */
export const forkFailures = (dir: string): number => eventCount(path.join(dir, "pids.events"), "max")

/** The pids in a v1 cgroup now. */
const procs = (dir: string): Array<number> =>
  read(path.join(dir, "cgroup.procs"))
    .split("\n")
    .filter((line) => line.length > 0)
    .map(Number)

/**
 * Removes the call's v1 cgroup once its processes are gone (they are the call's v2 cgroup's, or
 * its group's, stopped by the tier), trying for up to `waitMs`; then the parent if it is empty.
 */
export const removeDir = (dir: string, waitMs: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const deadline = (yield* Clock.currentTimeMillis) + waitMs
    let delay = 1
    for (;;) {
      if (remove(dir)) {
        remove(path.dirname(dir))
        return true
      }
      if ((yield* Clock.currentTimeMillis) >= deadline) return false
      yield* Effect.sleep(Duration.millis(delay))
      delay = Math.min(delay * 2, 5)
    }
  })

/**
 * The startup sweep of one v1 parent: every call cgroup of a host that no longer runs has its
 * processes killed and is removed; how many were.
 */
export const sweep = (parent: string): Effect.Effect<number> =>
  Cgroup.sweep(parent, (dir) =>
    Effect.suspend(() => {
      for (const pid of procs(dir)) Proc.sendSignal(pid, "SIGKILL")
      return removeDir(dir, 500)
    })
  )
