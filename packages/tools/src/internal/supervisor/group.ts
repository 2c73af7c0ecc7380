/**
 * The tree of one call in the group tier, where no cgroup can be made. "The tree" is every live
 * process that is
 *  - in the call's process group (the shell is spawned as a group and session leader), or
 *  - carries the call's environment cookie `TOOLCAP_RUN_ID=<runId>` in /proc/<pid>/environ,
 *    which catches children that left the group with `setsid` or double-forked away, or
 *  - a descendant, by parent link, of any of those.
 * Zombies (state Z) and exiting processes count as gone: they run no code and hold no pipe.
 *
 * Linux only (it reads /proc). A process that both leaves the group and scrubs its environment
 * (`env -i setsid ...`) and is reparented away from the tree cannot be found.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Procfs } from "@toolcap/spill"
import * as Proc from "./process.js"
import type { TreeOps } from "./terminate.js"

/** The environment variable that carries a call's cookie. @internal */
export const cookieVariable = "TOOLCAP_RUN_ID"

/** One call's tree: the pid of the shell (also its process group id) and the cookie value. @internal */
export interface Tree {
  readonly rootPid: number
  readonly runId: string
  /**
   * Start time of the root process (/proc/<pid>/stat field 22) read right after spawning. When a
   * process with the root's pid but another start time exists, the pid was reused: the group
   * criterion then no longer applies (a group id stays reserved while the group has members).
   */
  readonly rootStartTime?: string | undefined
}

/**
 * A full scan of /proc (which finds members forked since the last one) costs a few ms on a busy
 * host, so between full scans only the known members are checked; a full scan runs at least this
 * often, and always before the tree is declared gone.
 */
const FULL_SCAN_MS = 25

type Info = Procfs.ProcessInfo & { readonly key: string }

const withKey = (info: Procfs.ProcessInfo): Info => ({ ...info, key: `${info.pid}:${info.startTime}` })

// an exiting process (its files already closed) runs no more code of its own either
const isGone = (info: Procfs.ProcessInfo): boolean => info.state === "Z" || info.state === "X" || info.exiting

/** The live members of `tree` now, by group, cookie and parent link. */
const scan = (tree: Tree): Array<Info> => {
  const all = Procfs.listProcesses()
  Procfs.forgetGoneProcesses(all)
  const found = new Map<number, Procfs.ProcessInfo>()
  const rootStart = tree.rootStartTime === undefined ? undefined : Number(tree.rootStartTime)
  const startedAfterRoot = (info: Procfs.ProcessInfo) =>
    rootStart === undefined || !(Number(info.startTime) < rootStart)
  const reused = all.some(
    (info) =>
      info.pid === tree.rootPid && tree.rootStartTime !== undefined && info.startTime !== tree.rootStartTime
  )
  for (const info of all) {
    if (isGone(info)) continue
    if (!reused && (info.pid === tree.rootPid || info.pgid === tree.rootPid)) found.set(info.pid, info)
    // a cookie carrier started after the root: older processes cannot carry this call's cookie,
    // so their environments are never read (they are most of the table on a busy machine)
    else if (startedAfterRoot(info) && Procfs.environValue(info, cookieVariable) === tree.runId) {
      found.set(info.pid, info)
    }
  }
  // descendants by parent link, to a fixed point (a child may be listed before its parent)
  let grew = true
  while (grew) {
    grew = false
    for (const info of all) {
      if (!found.has(info.pid) && !isGone(info) && found.has(info.ppid)) {
        found.set(info.pid, info)
        grew = true
      }
    }
  }
  return [...found.values()].map(withKey)
}

/** Whether a process found by a scan still runs (same pid and start time, not a zombie). */
const stillRunning = (info: Info): boolean => {
  const now = Procfs.readProcess(info.pid)
  return now !== undefined && now.startTime === info.startTime && !isGone(now)
}

/**
 * The live (non-zombie) pids of the tree now.
 *
 * @internal
 */
export const members = (tree: Tree): Effect.Effect<ReadonlyArray<number>> =>
  Effect.sync(() => scan(tree).map((info) => info.pid))

/**
 * The tree's members for the shared stop. The group is signalled once for all its members, and
 * which of them this host may signal is probed BEFORE that signal: a member it kills can be reaped
 * within microseconds, and a probe after it would report a process it just stopped as never
 * signalled.
 *
 * @internal
 */
export const treeOps = (tree: Tree): TreeOps<Info> => {
  let lastFullScan = -Infinity
  let groupTermed = false
  const now = Clock.currentTimeMillis
  const full = Effect.flatMap(now, (at) =>
    Effect.sync(() => {
      lastFullScan = at
      return scan(tree)
    })
  )
  const viaGroup = (
    targets: ReadonlyArray<Info>,
    signal: Proc.SignalName
  ): ReadonlyArray<Proc.SignalOutcome> => {
    const inGroup = targets.map((info) => (info.pgid === tree.rootPid ? Proc.probe(info.pid) : undefined))
    const reached =
      inGroup.some((outcome) => outcome !== undefined) && Proc.sendSignal(-tree.rootPid, signal) === "sent"
    return targets.map((info, index) =>
      reached && inGroup[index] !== undefined ? inGroup[index]! : Proc.sendSignal(info.pid, signal)
    )
  }
  return {
    scan: full,
    poll: (known) =>
      Effect.flatMap(now, (at) => {
        const running = known.filter(stillRunning)
        if (running.length > 0 && at - lastFullScan < FULL_SCAN_MS) {
          return Effect.succeed({ live: running, full: false as boolean })
        }
        return Effect.map(full, (live) => ({ live, full: true as boolean }))
      }),
    // SIGTERM to the group once, with the members found then; members found later one by one
    term: (targets) => {
      if (groupTermed) return targets.map((info) => Proc.sendSignal(info.pid, "SIGTERM"))
      groupTermed = true
      return viaGroup(targets, "SIGTERM")
    },
    kill: (targets) => viaGroup(targets, "SIGKILL"),
    killReachesAll: false,
    wait: (stepMs) => Effect.sleep(Duration.millis(stepMs))
  }
}
