/**
 * Whose a member of a call's cgroup is. A process in a call's cgroup got there by a fork inside
 * it — or by a write to `cgroup.procs`: a call that may write to cgroup files (root, or a
 * delegated subtree) can move any process it can name into its own cgroup, the host included.
 * The stop signals only the call's own: a member is the call's when it carries the call's cookie,
 * or descends (through members) from the process the call started, or is an orphan of the call
 * (its chain of members ends at pid 1 or a subreaper above the host — or at the pid 1 of a PID
 * namespace started after the call, the launcher's init of the call's namespace, which every
 * orphan in it is reparented to — and the topmost member of that chain started after the call
 * did). Anything else is foreign: it is moved back to the
 * cgroup it came from (its parent's, which is outside the call) and reported, never signalled.
 *
 * A frozen cgroup is thawed before the stop: a frozen process cannot act on SIGTERM, and a task
 * frozen by the cgroup v1 freezer does not even die of SIGKILL until it is thawed.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import * as V1 from "./cgroupV1.js"
import { cookieVariable } from "./group.js"

/** The call a stop checks members against. */
export interface Call {
  readonly runId: string
  /** The process the host started (the launcher, or the prologue's shell) and its start time. */
  readonly rootPid: number
  readonly rootStartTime: string | undefined
  /** The call's cgroup (v2). */
  readonly dir: string
  /** The cgroup v2 mount, and the cgroup a foreign member goes to when its parent's cannot be read. */
  readonly mount: string
  readonly home: string
}

/** The depth of a chain of parents looked at before giving up (a fork chain deeper than any task limit). */
const MAX_CHAIN = 65_536

type Verdict = { readonly own: true } | { readonly own: false; readonly home: string | undefined }

const OWN: Verdict = { own: true }

/** The cgroup v2 directory of a process (its `0::` line), or undefined. */
export const cgroupOf = (mount: string, pid: number): string | undefined => {
  const line = Procfs.processFile(pid, "cgroup", "latin1")
    ?.split("\n")
    .find((entry) => entry.startsWith("0::"))
  return line === undefined ? undefined : path.join(mount, line.slice(3))
}

/** The host's ancestors (its parent up to pid 1): where an orphan of the call may be reparented. */
const hostAncestors = (): Set<number> => {
  const found = new Set<number>([1])
  let info = Procfs.readProcess(process.pid)
  for (let hops = 0; info !== undefined && info.ppid > 0 && hops < MAX_CHAIN; hops++) {
    found.add(info.ppid)
    info = Procfs.readProcess(info.ppid)
  }
  return found
}

/**
 * Whether a process is pid 1 of a PID namespace below the host's (its `NSpid` ends in 1): the
 * launcher's init of a call run with `--isolate`, which outlives the launcher when the shell exits.
 */
const isNamespaceInit = (pid: number): boolean => {
  const line = Procfs.processFile(pid, "status", "latin1")
    ?.split("\n")
    .find((entry) => entry.startsWith("NSpid:"))
  const ids = line?.slice(6).trim().split(/\s+/) ?? []
  return ids.length > 1 && ids[ids.length - 1] === "1"
}

const ticks = (startTime: string | undefined): number => (startTime === undefined ? NaN : Number(startTime))

/**
 * A checker for one stop: `check(members)` splits the current members of the call's subtree into
 * the call's own and the foreign ones (each verdict kept for the rest of the stop, so a fork bomb
 * of thousands is walked once).
 */
export const checker = (call: Call) => {
  const verdicts = new Map<string, Verdict>()
  let ancestors: Set<number> | undefined
  const callStart = ticks(call.rootStartTime)
  const outsideCall = (dir: string | undefined): dir is string =>
    dir !== undefined && dir !== call.dir && !dir.startsWith(`${call.dir}/`)
  const verdictOf = (pid: number, members: ReadonlySet<number>): Verdict | undefined => {
    const first = Procfs.readProcess(pid)
    if (first === undefined) return undefined
    const chain: Array<Procfs.ProcessInfo> = []
    let verdict: Verdict | undefined
    let info: Procfs.ProcessInfo | undefined = first
    for (let hops = 0; verdict === undefined && hops < MAX_CHAIN; hops++) {
      if (info === undefined) {
        // the chain ends (pid 1 itself was moved in, or a parent went meanwhile): the topmost member decides
        const top = chain[chain.length - 1]
        verdict =
          top !== undefined && ticks(top.startTime) >= callStart ? OWN : { own: false, home: undefined }
        break
      }
      const known = verdicts.get(`${info.pid}:${info.startTime}`)
      if (known !== undefined) {
        verdict = known
        break
      }
      if (info.pid === call.rootPid && info.startTime === call.rootStartTime) {
        verdict = OWN
        break
      }
      if (Procfs.environValue(info, cookieVariable) === call.runId) {
        verdict = OWN
        break
      }
      if (!members.has(info.pid)) {
        // the first process of the chain outside the call's cgroup
        ancestors ??= hostAncestors()
        const top = chain[chain.length - 1]
        const callInit = ticks(info.startTime) >= callStart && isNamespaceInit(info.pid)
        if (ancestors.has(info.pid) || callInit) {
          // an orphan reparented to pid 1, a subreaper or the init of a PID namespace started for
          // the call: the call's when its topmost member started after the call
          verdict =
            top !== undefined && ticks(top.startTime) >= callStart
              ? OWN
              : { own: false, home: cgroupOf(call.mount, info.pid) }
        } else {
          verdict = { own: false, home: cgroupOf(call.mount, info.pid) }
        }
        break
      }
      chain.push(info)
      info = Procfs.readProcess(info.ppid)
    }
    const decided = verdict ?? { own: false, home: undefined }
    for (const link of chain) verdicts.set(`${link.pid}:${link.startTime}`, decided)
    return decided
  }
  return {
    /**
     * The call's own members among `pids` (the members of the call's subtree now), and the
     * foreign ones with the cgroup each came from (undefined: not known; the host's is used).
     */
    check: (
      pids: ReadonlyArray<number>
    ): { readonly own: Array<number>; readonly foreign: Array<{ pid: number; home: string }> } => {
      const members = new Set(pids)
      const own: Array<number> = []
      const foreign: Array<{ pid: number; home: string }> = []
      for (const pid of pids) {
        const verdict = verdictOf(pid, members)
        if (verdict === undefined) continue
        if (verdict.own) own.push(pid)
        else {
          const home = outsideCall(verdict.home) ? verdict.home : call.home
          foreign.push({ pid, home })
        }
      }
      return { own, foreign }
    }
  }
}

/** Moves a process into the cgroup `dir`; false when the kernel refused (or it is gone). */
export const moveTo = (dir: string, pid: number): boolean => {
  try {
    fs.writeFileSync(path.join(dir, "cgroup.procs"), String(pid))
    return true
  } catch {
    return false
  }
}

/**
 * Thaws every frozen cgroup v2 of the call's subtree (`cgroup.freeze`); how many were frozen.
 * The call may have frozen its own cgroup or one it made below it.
 */
export const thawV2 = (dirs: ReadonlyArray<string>): number => {
  let thawed = 0
  for (const dir of dirs) {
    const file = path.join(dir, "cgroup.freeze")
    try {
      if (fs.readFileSync(file, "latin1").trim() !== "1") continue
      fs.writeFileSync(file, "0")
      thawed++
    } catch {
      // no freezer here (before Linux 5.2), or gone
    }
  }
  return thawed
}

/**
 * Thaws the cgroup v1 freezer cgroups the call's own members are in (a call that may write to
 * cgroup files can move its processes into a freezer cgroup and freeze it); how many were thawed.
 */
export const thawV1 = (pids: ReadonlyArray<number>): number => {
  let mount: string | null | undefined = null
  const seen = new Set<string>()
  let thawed = 0
  for (const pid of pids) {
    const line = Procfs.processFile(pid, "cgroup", "latin1")
      ?.split("\n")
      .find((entry) => /^\d+:([^:]*,)?freezer(,[^:]*)?:/.test(entry))
    const own = line?.slice(line.indexOf(":", line.indexOf(":") + 1) + 1)
    if (own === undefined || own === "/" || seen.has(own)) continue
    seen.add(own)
    if (mount === null) mount = V1.mountOf("freezer")
    if (mount === undefined) return thawed
    const file = path.join(mount, own, "freezer.state")
    try {
      if (fs.readFileSync(file, "latin1").trim() === "THAWED") continue
      fs.writeFileSync(file, "THAWED")
      thawed++
    } catch {
      // gone, or not ours to thaw
    }
  }
  return thawed
}
