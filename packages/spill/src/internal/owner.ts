/**
 * Who owns a session's scratch directory, so a startup sweep can tell "owner gone" apart from a
 * session that is merely quiet. Node-specific (pid, hostname, /proc start time).
 */
import * as os from "node:os"
import * as Procfs from "../Procfs.js"

/** @internal */
export interface OwnerRecord {
  readonly pid: number
  readonly hostname: string
  /** Start time of the process in clock ticks since boot (Linux), to tell a reused pid apart. */
  readonly startTime?: string | undefined
}

/** @internal */
export const current = (): OwnerRecord => {
  const startTime = Procfs.startTimeOf(process.pid)
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
  // without /proc the start time cannot be checked: only the pid is
  return Procfs.isRunning(owner.pid, owner.startTime)
}
