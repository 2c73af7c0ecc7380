/**
 * Who owns a session's scratch directory, so a startup sweep can tell "owner gone" apart from a
 * session that is merely quiet. Node-specific (pid, hostname, /proc start time).
 */
import * as fs from "node:fs"
import * as os from "node:os"

/** @internal */
export interface OwnerRecord {
  readonly pid: number
  readonly hostname: string
  /** Start time of the process in clock ticks since boot (Linux), to tell a reused pid apart. */
  readonly startTime?: string | undefined
}

/** Field 22 of /proc/<pid>/stat, counted after the `(comm)` field, which may hold spaces. */
const startTimeOf = (pid: number): string | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state), so field 22 is fields[19]
    return fields[19]
  } catch {
    return undefined
  }
}

/** @internal */
export const current = (): OwnerRecord => {
  const startTime = startTimeOf(process.pid)
  return {
    pid: process.pid,
    hostname: os.hostname(),
    ...(startTime !== undefined ? { startTime } : {})
  }
}

/**
 * True when the owner may still run: another host cannot be checked, so it counts as alive;
 * on this host the pid must exist and, where /proc tells, have the recorded start time.
 *
 * @internal
 */
export const isAlive = (owner: OwnerRecord): boolean => {
  if (owner.hostname !== os.hostname()) return true
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  if (owner.startTime === undefined) return true
  const startTime = startTimeOf(owner.pid)
  return startTime === undefined || startTime === owner.startTime
}
