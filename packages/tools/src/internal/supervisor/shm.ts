/**
 * The call's own `/dev/shm` files, removed when it ends (where no private `/dev/shm` was mounted
 * for it): a file written there is memory that outlives every process of the call — pinned until
 * someone removes it, and charged to no call once the call's memory cgroup is gone. A file is the
 * call's when it appeared in `/dev/shm` after the call started (not in the listing taken then),
 * no process outside the call has it open or mapped at the end, and no other call of this layer
 * that is still running started before it appeared (that one's end decides). The listing at the
 * start is a `readdir` of a directory that is usually nearly empty; the scan of /proc for holders
 * runs only when a new file is there.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** Where POSIX shared memory (`shm_open`) and a host's shared scratch live. */
export const SHM_DIR = "/dev/shm"

const names = (dir: string): Set<string> | undefined => {
  try {
    return new Set(fs.readdirSync(dir))
  } catch {
    return undefined
  }
}

/** The `/dev/shm` paths a live process holds open or mapped (the call's are all gone by then). */
const heldOutside = (dir: string): Set<string> => {
  const held = new Set<string>()
  let pids: Array<string>
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return held
  }
  const prefix = `${dir}/`
  for (const pid of pids) {
    try {
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        try {
          const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`)
          if (target.startsWith(prefix)) held.add(target.replace(/ \(deleted\)$/, ""))
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // gone, or another user's
    }
    try {
      for (const line of fs.readFileSync(`/proc/${pid}/maps`, "latin1").split("\n")) {
        const at = line.indexOf(prefix)
        if (at >= 0) held.add(line.slice(at).replace(/ \(deleted\)$/, ""))
      }
    } catch {
      // gone, or another user's
    }
  }
  return held
}

/** The calls of one layer now running, each with its start, to tell whose a new file may be. */
export interface Registry {
  readonly running: Map<string, number>
}

export const registry = (): Registry => ({ running: new Map() })

/**
 * Takes the listing at a call's start (`startedAt`, from the `Clock`); `end()` removes the files
 * the call left and returns their names. Nothing is done where `/dev/shm` cannot be read.
 */
export const track = (
  calls: Registry,
  runId: string,
  startedAt: number,
  dir: string = SHM_DIR
): { readonly end: () => Array<string> } => {
  const before = names(dir)
  calls.running.set(runId, startedAt)
  return {
    end: () => {
      calls.running.delete(runId)
      if (before === undefined) return []
      const after = names(dir)
      if (after === undefined) return []
      const fresh = [...after].filter((name) => !before.has(name))
      if (fresh.length === 0) return []
      // another running call of this layer that started before this one may own what appeared since
      const earliestOther = Math.min(...calls.running.values())
      const held = heldOutside(dir)
      // the call runs as the host's user: a file of another user is not its
      const uid = process.geteuid?.() ?? -1
      const removed: Array<string> = []
      for (const name of fresh) {
        const file = path.join(dir, name)
        let stat: fs.Stats
        try {
          stat = fs.lstatSync(file)
        } catch {
          continue
        }
        if (!stat.isFile() || stat.uid !== uid || held.has(file)) continue
        // tmpfs reports a birth time; where a kernel does not, the change time stands in
        const born = stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs
        if (born >= earliestOther) continue
        try {
          fs.unlinkSync(file)
          removed.push(name)
        } catch {
          // another's file, or gone
        }
      }
      return removed
    }
  }
}
