/**
 * The cgroup v2 containment tier: one child cgroup per call under a toolcap-owned parent. The
 * call's shell is inside before it runs the command, so every process the command starts (double
 * forks, `setsid`, a scrubbed environment, a changed process group) is a member the kernel tracks:
 * `cgroup.procs` lists them, `cgroup.kill` ends them all at once.
 *
 * The shell enters its cgroup in one of two ways, chosen once per supervisor layer: created inside it by the
 * native launcher (`clone3` with `CLONE_INTO_CGROUP`), or, where the launcher is not built or the
 * kernel refuses that, by a `/bin/sh` prologue that writes its own pid into `cgroup.procs`.
 *
 * The call's cgroup owns its whole subtree: a command may make cgroups inside its own and move
 * into them, so members are read from every cgroup below it, `cgroup.kill` (recursive) ends them
 * all, `cgroup.events` says when none is left, and the subtree is removed depth first.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import * as Confine from "./confine.js"
import * as Membership from "./membership.js"
import * as Proc from "./process.js"
import { MAX_POLL_MS, type Member, type TreeOps } from "./terminate.js"

/** The parent's name under the host's own cgroup (or the hierarchy's root). */
const PARENT = "toolcap"

/**
 * How a call's shell enters its cgroup: `launcher` (created inside it by the native launcher, which
 * stays as its parent outside the cgroup and relays its exit) or `prologue` (the shell moves
 * itself in with `PROLOGUE`).
 */
export type Entry = "launcher" | "prologue"

/** Run by a probe inside the cgroup `$0`: succeeds when its shell is the cgroup's only member. */
const INSIDE = 'read first < "$0/cgroup.procs" && [ "$first" = $$ ]'

const exists = (file: string): boolean => {
  try {
    fs.accessSync(file)
    return true
  } catch {
    return false
  }
}

/** Runs a command to its end: whether it exited 0 (false when it could not start). */
export type RunProbe = (file: string, args: ReadonlyArray<string>) => Effect.Effect<boolean>

/**
 * Runs a shell through `entry` in a fresh child `name` of `parent`: whether it lands inside (and
 * `cgroup.kill` exists) here. The name has dots, not dashes: a probe's name must never read as a
 * run id, or another host's startup sweep would take it for a dead host's cgroup mid-probe.
 */
const probe = (
  run: RunProbe,
  parent: string,
  name: string,
  entry: Entry,
  guards: Confine.Guards
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const dir = path.join(parent, name)
    try {
      fs.mkdirSync(parent, { recursive: true })
      fs.mkdirSync(dir)
    } catch {
      return false
    }
    const launch = Confine.intoCgroup(entry, dir, guards, "/bin/sh", ["-c", INSIDE, dir])
    const moved = yield* run(launch.file, launch.args)
    const killable = exists(path.join(dir, "cgroup.kill"))
    const removed = yield* removeDir(dir, 200)
    return moved && killable && removed
  })

/** Where call cgroups go, and how shells enter them; or why there is no cgroup tier here. */
export type Detected =
  | { readonly parent: string; readonly entry: Entry; readonly fallbackReason: string | undefined }
  | { readonly parent: undefined; readonly fallbackReason: string }

/**
 * The parent cgroup to create call cgroups in and the entry into them, or why this host cannot
 * contain a call in a cgroup (no cgroup v2, not writable, no `cgroup.kill`). Decided by actually
 * creating a child and moving a process into it, through `guards` (the launcher and what it
 * applies, so the probe proves what calls will run): under the host's own cgroup first (a
 * delegated subtree, e.g. a systemd user service), else under the hierarchy's root. The launcher
 * entry is tried first where the layer runs the launcher; `prologue` forces the prologue.
 */
export const detect = (
  run: RunProbe,
  probeName: Effect.Effect<string>,
  forced: Entry | undefined,
  launcher: Confine.LauncherChoice,
  guards: Confine.Guards
): Effect.Effect<Detected> =>
  Effect.gen(function* () {
    const cg = Procfs.cgroup2()
    if (cg === undefined)
      return { parent: undefined, fallbackReason: "no cgroup v2 hierarchy is mounted here" }
    const candidates = [...new Set([path.join(cg.mount, cg.own, PARENT), path.join(cg.mount, PARENT)])]
    const tryLauncher = forced !== "prologue" && launcher.path !== undefined
    for (const parent of candidates) {
      if (tryLauncher && (yield* probe(run, parent, yield* probeName, "launcher", guards))) {
        return { parent, entry: "launcher" as const, fallbackReason: undefined }
      }
      if (yield* probe(run, parent, yield* probeName, "prologue", guards)) {
        const fallbackReason =
          forced === "prologue"
            ? "the prologue entry was asked for"
            : launcher.path === undefined
              ? launcher.reason
              : "the launcher could not start a shell inside a cgroup here (clone3 into a cgroup refused)"
        return { parent, entry: "prologue" as const, fallbackReason }
      }
    }
    return {
      parent: undefined,
      fallbackReason: `no cgroup could be made and entered under ${candidates.join(" or ")}`
    }
  })

/**
 * Tries to create the parent again when it is missing: it exists only while a call (or a probe)
 * of some host lives in it, and another host may remove it between our two mkdirs.
 */
const CREATE_ATTEMPTS = 3

/** Creates the call's cgroup (and the parent, when no call holds it now); undefined when it cannot be made. */
export const create = (parent: string, name: string): string | undefined => {
  const dir = path.join(parent, name)
  for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
    try {
      fs.mkdirSync(dir)
      return dir
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") return undefined
    }
    try {
      fs.mkdirSync(parent, { recursive: true })
    } catch {
      return undefined
    }
  }
  return undefined
}

/** Removes a parent when no cgroup is left in it; the kernel refuses while one is, so this is safe. */
export const releaseParent = (parent: string): void => {
  try {
    fs.rmdirSync(parent)
  } catch {
    // another call (of any host) still lives there, or it is gone already
  }
}

/**
 * The cgroup `dir` and every cgroup below it, parents before children (the command may make
 * cgroups inside its own and move into them); only `dir` when it has none.
 */
const subtree = (dir: string): Array<string> => {
  const dirs = [dir]
  for (let at = 0; at < dirs.length; at++) {
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dirs[at]!, { withFileTypes: true })
    } catch {
      continue
    }
    for (const entry of entries) if (entry.isDirectory()) dirs.push(path.join(dirs[at]!, entry.name))
  }
  return dirs
}

const numbersIn = (text: string, into: Set<number>): void => {
  for (const line of text.split("\n")) if (line.length > 0) into.add(Number(line))
}

/**
 * The pids in the cgroup `dir` and every cgroup below it now (exited processes are not listed).
 * A threaded cgroup refuses to list processes: its threads are listed instead (a signal to any
 * thread reaches its process).
 */
export const members = (dir: string): Array<number> => {
  const found = new Set<number>()
  for (const cgroup of subtree(dir)) {
    try {
      numbersIn(fs.readFileSync(path.join(cgroup, "cgroup.procs"), "latin1"), found)
    } catch {
      try {
        numbersIn(fs.readFileSync(path.join(cgroup, "cgroup.threads"), "latin1"), found)
      } catch {
        // gone meanwhile
      }
    }
  }
  return [...found]
}

/**
 * Whether a process is left in the cgroup or any cgroup below it (`cgroup.events` counts the whole
 * subtree in one read); false when the cgroup is gone.
 */
export const populated = (dir: string): boolean => {
  try {
    return fs.readFileSync(path.join(dir, "cgroup.events"), "latin1").includes("populated 1")
  } catch {
    return false
  }
}

/**
 * SIGKILL to every process in the cgroup and below it at once (`cgroup.kill` is recursive); false
 * when the kernel refused (a cgroup the command made threaded refuses it), true when it is gone.
 */
export const kill = (dir: string): boolean => {
  try {
    fs.writeFileSync(path.join(dir, "cgroup.kill"), "1")
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT"
  }
  return true
}

/**
 * Removes the cgroup if it is empty (or gone already); false when a member or a cgroup is still
 * inside. The parent is left for the tier to release (`releaseParent`).
 */
export const removeIfEmpty = (dir: string): boolean => {
  try {
    fs.rmdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return false
  }
  return true
}

/** Removes the cgroup and every cgroup below it, children first; false when any is still there. */
const removeSubtree = (dir: string): boolean => {
  const dirs = subtree(dir)
  for (let at = dirs.length - 1; at > 0; at--) removeIfEmpty(dirs[at]!)
  return removeIfEmpty(dir)
}

/**
 * Removes the cgroup and the cgroups the command made below it once empty, trying for up to
 * `waitMs`, and then its parent if nothing else is in it (so no toolcap cgroup outlives the
 * calls); false when the cgroup is still there.
 */
export const removeDir = (dir: string, waitMs: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const deadline = (yield* Clock.currentTimeMillis) + waitMs
    let delay = 1
    for (;;) {
      if (removeSubtree(dir)) {
        releaseParent(path.dirname(dir))
        return true
      }
      if ((yield* Clock.currentTimeMillis) >= deadline) return false
      yield* Effect.sleep(Duration.millis(delay))
      delay = Math.min(delay * 2, MAX_POLL_MS)
    }
  })

/**
 * The members of the call cgroup `dir` and of every cgroup below it, for the shared stop: read
 * from the cgroups (no scan of /proc) once `cgroup.events` says one is left, each checked against
 * the call (./membership.ts): a foreign one (the host, or any process the call moved in) is moved
 * back to the cgroup it came from and reported in `foreign()`, never signalled. Frozen cgroups are
 * thawed first. The call's own are ended all at once by `cgroup.kill` whoever owns them, those
 * forked meanwhile too, once a last check found no foreign member left (else, or where the kernel
 * refuses it, one by one). A member already on its way out (its pipes closed, say, a moment
 * before it leaves the cgroup) is neither signalled nor reported: removing the cgroup waits for
 * it to go.
 */
export const treeOps = (
  dir: string,
  call: Membership.Call
): TreeOps<Member> & {
  readonly foreign: () => Array<{ readonly pid: number; readonly movedTo?: string }>
  readonly thawed: () => number
} => {
  const checker = Membership.checker(call)
  const foreign = new Map<number, string | undefined>()
  let thawed = -1
  /** The call's own live members now; foreign ones moved out (true when every one could be). */
  const own = (): { readonly pids: Array<number>; readonly allMoved: boolean } => {
    if (!populated(dir)) return { pids: [], allMoved: true }
    if (thawed < 0) thawed = Membership.thawV2(subtree(dir))
    const split = checker.check(members(dir).filter((pid) => Procfs.readProcess(pid)?.exiting !== true))
    let allMoved = true
    for (const stranger of split.foreign) {
      // the cgroup it came from, else the host's (this user may not write to the first, e.g. the
      // root cgroup from a delegated subtree); the host itself goes back to its own first
      const homes = stranger.pid === process.pid ? [call.home, stranger.home] : [stranger.home, call.home]
      const movedTo = homes.find((home) => Membership.moveTo(home, stranger.pid))
      allMoved &&= movedTo !== undefined
      if (movedTo !== undefined || !foreign.has(stranger.pid)) foreign.set(stranger.pid, movedTo)
    }
    thawed += Membership.thawV1(split.own)
    return { pids: split.own, allMoved }
  }
  const live = Effect.sync(() => own().pids.map((pid) => ({ pid, key: String(pid) })))
  return {
    scan: live,
    poll: () => Effect.map(live, (alive) => ({ live: alive, full: true })),
    term: (alive) => alive.map((member) => Proc.sendSignal(member.pid, "SIGTERM")),
    kill: (alive) => {
      // the last check right before the kill: cgroup.kill only when no foreign member is left
      const last = own()
      return last.allMoved && kill(dir)
        ? alive.map(() => "sent" as const)
        : alive.map((member) => Proc.sendSignal(member.pid, "SIGKILL"))
    },
    killReachesAll: true,
    wait: (stepMs) => Effect.sleep(Duration.millis(stepMs)),
    foreign: () => [...foreign].map(([pid, movedTo]) => (movedTo === undefined ? { pid } : { pid, movedTo })),
    thawed: () => Math.max(0, thawed)
  }
}

/**
 * The startup sweep: every call cgroup under `parent` whose owning host (pid and start time, from
 * its name `<pid36>-<start36>-<random>`) no longer runs is ended by `end` (default: killed and
 * removed); how many were removed. The v1 hierarchies sweep their call cgroups the same way.
 */
export const sweep = (
  parent: string,
  end: (dir: string) => Effect.Effect<boolean> = (dir) =>
    Effect.suspend(() => (kill(dir), removeDir(dir, 500)))
): Effect.Effect<number> =>
  Effect.gen(function* () {
    let names: Array<string>
    try {
      names = fs.readdirSync(parent)
    } catch {
      return 0
    }
    let swept = 0
    for (const name of names) {
      const owner = ownerOf(name)
      if (owner === undefined || Procfs.isRunning(owner.pid, owner.startTime)) continue
      if (yield* end(path.join(parent, name))) swept++
    }
    return swept
  })

/**
 * The host a run id (also a call cgroup's name) belongs to: `<pid36>-<start36>-<random>`.
 * Undefined for names of another form (e.g. a probe, or ids of older versions).
 */
export const ownerOf = (runId: string): { readonly pid: number; readonly startTime: string } | undefined => {
  const parts = runId.split("-")
  if (parts.length !== 3 || parts.some((part) => !/^[0-9a-z]+$/.test(part))) return undefined
  const pid = parseInt(parts[0]!, 36)
  const start = parseInt(parts[1]!, 36)
  if (!Number.isSafeInteger(pid) || !Number.isSafeInteger(start) || pid <= 0) return undefined
  return { pid, startTime: String(start) }
}
