/**
 * Every read of /proc toolcap makes, and its one parser of `/proc/<pid>/stat`. The scratch sweep
 * (owner start times) and the tools' process supervision (trees, cgroups, the startup sweep) both
 * read processes through this module. Linux only: elsewhere every read answers "unknown".
 *
 * It lives in `spill`, the lowest package that reads processes, so that `tools` above it shares
 * the same parser instead of keeping a second one.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"

/**
 * One process as /proc/<pid>/stat describes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly pgid: number
  /** Single-letter state: R S D Z T X ... */
  readonly state: string
  /** Start time in clock ticks since boot (field 22): a pid with another start time is another process. */
  readonly startTime: string
  /**
   * The process is exiting (PF_EXITING in the flags, field 9): it has closed its files and is on
   * its way out, but is still listed (in its cgroup, say) for a moment.
   */
  readonly exiting: boolean
}

/** PF_EXITING in the kernel's per-process flags (include/linux/sched.h). */
const PF_EXITING = 0x4

/**
 * Parses the text of /proc/<pid>/stat. The `(comm)` field may contain spaces and parentheses, so
 * the fields are counted after its LAST closing parenthesis.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseStat = (pid: number, stat: string): ProcessInfo | undefined => {
  const close = stat.lastIndexOf(")")
  if (close === -1) return undefined
  const fields = stat.slice(close + 2).split(" ")
  // fields[0] is field 3 (state): ppid is field 4, pgrp field 5, flags field 9, starttime field 22
  const state = fields[0]
  const ppid = Number(fields[1])
  const pgid = Number(fields[2])
  const flags = Number(fields[6])
  const startTime = fields[19]
  if (state === undefined || startTime === undefined || !Number.isInteger(ppid) || !Number.isInteger(pgid)) {
    return undefined
  }
  return { pid, ppid, pgid, state, startTime, exiting: Number.isInteger(flags) && (flags & PF_EXITING) !== 0 }
}

/**
 * One buffer for every /proc/<pid>/stat read (a stat line is well under 1 KB): open, read, close
 * is about six times faster than readFileSync on /proc, which is most of a process-table scan.
 */
const statBuffer = Buffer.alloc(4096)

/**
 * The process with this pid now, or undefined when there is none (or /proc is missing).
 *
 * @since 0.1.0
 * @category constructors
 */
export const readProcess = (pid: number): ProcessInfo | undefined => {
  let fd: number
  try {
    fd = fs.openSync(`/proc/${pid}/stat`, "r")
  } catch {
    return undefined
  }
  try {
    const length = fs.readSync(fd, statBuffer, 0, statBuffer.length, null)
    return parseStat(pid, statBuffer.toString("latin1", 0, length))
  } catch {
    return undefined
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The start time of a process (clock ticks since boot), or undefined when it is gone or unknown.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startTimeOf = (pid: number): string | undefined => readProcess(pid)?.startTime

/**
 * The clock ticks since boot now, one tick early (`/proc/uptime` in the unit of a process's start
 * time: USER_HZ, 100 on Linux for every architecture's /proc ABI), or undefined without /proc. A
 * floor for the start time of anything forked after it is read: the stand-in for a launched
 * process's own start time when that process is already gone by the time it could be read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ticksNowFloor = (): string | undefined => {
  try {
    const seconds = Number(fs.readFileSync("/proc/uptime", "latin1").split(" ")[0])
    return Number.isFinite(seconds) ? String(Math.max(0, Math.floor(seconds * USER_HZ) - 1)) : undefined
  } catch {
    return undefined
  }
}

/** The unit of a process's start time in /proc (USER_HZ): fixed at 100 by the Linux /proc ABI. */
const USER_HZ = 100

/**
 * Whether a process that had `startTime` still runs: same pid, same start time, not a zombie.
 * Without /proc (or without a recorded start time) only the pid is checked.
 *
 * @since 0.1.0
 * @category constructors
 */
export const isRunning = (pid: number, startTime: string | undefined): boolean => {
  const info = readProcess(pid)
  if (info === undefined) {
    if (fs.existsSync("/proc/self/stat")) return false
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM"
    }
  }
  if (info.state === "Z" || info.state === "X") return false
  return startTime === undefined || info.startTime === startTime
}

/**
 * Every process visible in /proc except this one. Processes that vanish mid-scan are skipped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listProcesses = (): Array<ProcessInfo> => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const self = process.pid
  const out: Array<ProcessInfo> = []
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid <= 0 || pid === self) continue
    const info = readProcess(pid)
    if (info !== undefined) out.push(info)
  }
  return out
}

/** The value of `name=` in a NUL-separated environment block, or null when absent. */
const entryValue = (environ: Buffer, name: string): string | null => {
  const key = Buffer.from(`${name}=`)
  for (let at = environ.indexOf(key); at !== -1; at = environ.indexOf(key, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue
    const start = at + key.length
    const end = environ.indexOf(0, start)
    return environ.toString("latin1", start, end === -1 ? environ.length : end)
  }
  return null
}

/**
 * What the environment of a process held for a variable, per (pid, start time). A process's
 * /proc/<pid>/environ is fixed at exec; cached so each process is read once per host, not once per
 * scan (reading every environment is most of a scan's cost).
 */
const environCache = new Map<string, string | null>()

/**
 * The value of `name` in the initial environment of a process (/proc/<pid>/environ), or null
 * when it has none or it cannot be read (another user's, gone).
 *
 * @since 0.1.0
 * @category constructors
 */
export const environValue = (info: ProcessInfo, name: string): string | null => {
  const key = `${name}\0${info.pid}:${info.startTime}`
  const cached = environCache.get(key)
  if (cached !== undefined) return cached
  let environ: Buffer
  try {
    environ = fs.readFileSync(`/proc/${info.pid}/environ`)
  } catch {
    return null
  }
  // while a process execs, its environ reads empty until the new image's is set up: not cached, or
  // a cookie carrier caught mid-exec would never be seen as one again
  if (environ.length === 0) return null
  const value = entryValue(environ, name)
  environCache.set(key, value)
  return value
}

/**
 * Drops cached environments of processes that no longer exist, so the cache stays as large as
 * the process table.
 *
 * @since 0.1.0
 * @category constructors
 */
export const forgetGoneProcesses = (present: ReadonlyArray<ProcessInfo>): void => {
  if (environCache.size <= present.length * 2) return
  const alive = new Set(present.map((info) => `${info.pid}:${info.startTime}`))
  for (const key of environCache.keys()) {
    if (!alive.has(key.slice(key.indexOf("\0") + 1))) environCache.delete(key)
  }
}

/**
 * The path that names descriptor `fd` of process `pid` (this one by default): opening it opens
 * the same file, and its link is the file's real path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const descriptorPath = (fd: number, pid: number | "self" = "self"): string => `/proc/${pid}/fd/${fd}`

/** Whether /proc/self/fd names descriptors: a fact of the machine, so checked once. */
let descriptorPathsKnown: boolean | undefined

/**
 * Whether `descriptorPath` names descriptors here (Linux with /proc mounted).
 *
 * @since 0.1.0
 * @category constructors
 */
export const hasDescriptorPaths = (): boolean =>
  (descriptorPathsKnown ??= process.platform === "linux" && fs.existsSync(descriptorPath(0)))

/**
 * The real path of this process's open descriptor `fd` (its /proc/self/fd link), or undefined
 * without /proc or when the descriptor is not open.
 *
 * @since 0.1.0
 * @category constructors
 */
export const descriptorTarget = (fd: number): string | undefined => {
  try {
    return fs.readlinkSync(descriptorPath(fd))
  } catch {
    return undefined
  }
}

/**
 * A file of process `pid`'s /proc directory (`cgroup`, `maps`, `mountinfo` of `self`), or
 * undefined when it cannot be read (the process is gone, another user's, or there is no /proc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const processFile = (
  pid: number | "self",
  name: string,
  encoding: "utf8" | "latin1" = "utf8"
): string | undefined => {
  try {
    return fs.readFileSync(`/proc/${pid}/${name}`, encoding)
  } catch {
    return undefined
  }
}

/**
 * The pids /proc lists now (empty without /proc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const processIds = (): Array<number> => {
  try {
    return fs
      .readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
  } catch {
    return []
  }
}

/**
 * The real paths of every open descriptor of process `pid` (its /proc/<pid>/fd links); empty when
 * they cannot be read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const descriptorTargets = (pid: number): Array<string> => {
  let fds: Array<string>
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`)
  } catch {
    return []
  }
  const targets: Array<string> = []
  for (const fd of fds) {
    try {
      targets.push(fs.readlinkSync(descriptorPath(Number(fd), pid)))
    } catch {
      // closed meanwhile
    }
  }
  return targets
}

/**
 * A kernel setting under /proc/sys (`fs/inotify/max_queued_events`) as a whole number, or
 * undefined where it cannot be read or is not one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const kernelSetting = (name: string): number | undefined => {
  try {
    const value = Number.parseInt(fs.readFileSync(`/proc/sys/${name}`, "utf8"), 10)
    return Number.isInteger(value) ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * Where the cgroup v2 hierarchy is mounted (from /proc/self/mountinfo), and this process's
 * cgroup in it (from /proc/self/cgroup, the `0::` line); undefined without cgroup v2.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cgroup2 = (): { readonly mount: string; readonly own: string } | undefined => {
  let mountinfo: string
  let own: string
  try {
    mountinfo = fs.readFileSync("/proc/self/mountinfo", "utf8")
    own = fs.readFileSync("/proc/self/cgroup", "utf8")
  } catch {
    return undefined
  }
  // mountinfo: "id parent major:minor root mountpoint options [optional...] - fstype source superopts"
  const mount = mountinfo
    .split("\n")
    .map((line) => line.split(" "))
    .find((fields) => fields[fields.indexOf("-") + 1] === "cgroup2")?.[4]
  const path = own
    .split("\n")
    .find((line) => line.startsWith("0::"))
    ?.slice(3)
  if (mount === undefined || path === undefined) return undefined
  // mount points escape spaces and the like as octal (\040)
  const unescaped = mount.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(parseInt(octal, 8))
  )
  return { mount: unescaped, own: path }
}
