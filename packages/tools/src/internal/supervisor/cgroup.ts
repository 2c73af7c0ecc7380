/**
 * The cgroup v2 containment tier: one child cgroup per call under a toolcap-owned parent. The
 * call's shell is inside before it runs the command, so every process the command starts (double
 * forks, `setsid`, a scrubbed environment, a changed process group) is a member the kernel tracks:
 * `cgroup.procs` lists them, `cgroup.kill` ends them all at once.
 *
 * The shell enters its cgroup in one of two ways, chosen once per supervisor layer: created inside it by the
 * native launcher (`clone3` with `CLONE_INTO_CGROUP`), or, where the launcher is not built or the
 * kernel refuses that, by a `/bin/sh` prologue that writes its own pid into `cgroup.procs`.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import { launcher, launcherPath } from "./launcherPath.js"
import * as Proc from "./process.js"
import { MAX_POLL_MS, type Member, type TreeOps } from "./terminate.js"

/** The parent's name under the host's own cgroup (or the hierarchy's root). */
const PARENT = "toolcap"

/**
 * A prologue run by /bin/sh: it writes its own pid into the call's cgroup, then execs the real
 * command with the same pid. The command runs only once the move succeeded (exit 125 otherwise,
 * the code `env` and `timeout` use for "could not run").
 */
export const PROLOGUE = 'echo $$ > "$0/cgroup.procs" || exit 125; exec "$@"'

/**
 * How a call's shell enters its cgroup: `launcher` (created inside it by the native launcher, which
 * stays as its parent outside the cgroup and relays its exit) or `prologue` (the shell moves
 * itself in with `PROLOGUE`).
 */
export type Entry = "launcher" | "prologue"

/**
 * The command that runs `file` with `args` inside the cgroup `dir`. Either way the command runs
 * only once inside, and exit status 125 means it could not get there (nothing ran).
 */
export const command = (
  entry: Entry,
  dir: string,
  file: string,
  args: ReadonlyArray<string>
): { readonly file: string; readonly args: ReadonlyArray<string> } =>
  entry === "launcher"
    ? { file: launcherPath, args: ["--cgroup", dir, "--", file, ...args] }
    : { file: "/bin/sh", args: ["-c", PROLOGUE, dir, file, ...args] }

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
const probe = (run: RunProbe, parent: string, name: string, entry: Entry): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const dir = path.join(parent, name)
    try {
      fs.mkdirSync(parent, { recursive: true })
      fs.mkdirSync(dir)
    } catch {
      return false
    }
    const launch = command(entry, dir, "/bin/sh", ["-c", INSIDE, dir])
    const moved = yield* run(launch.file, launch.args)
    const killable = exists(path.join(dir, "cgroup.kill"))
    const removed = yield* removeDir(dir, 200)
    return moved && killable && removed
  })

/** Where call cgroups go, and how shells enter them; or why there is no cgroup tier here. */
export type Detected =
  | { readonly parent: string; readonly entry: Entry; readonly fallbackReason: string | undefined }
  | { readonly parent: undefined; readonly fallbackReason: string }

const launcherBuilt = (): boolean => launcher.kind === "found"

/**
 * The parent cgroup to create call cgroups in and the entry into them, or why this host cannot
 * contain a call in a cgroup (no cgroup v2, not writable, no `cgroup.kill`). Decided by actually
 * creating a child and moving a process into it: under the host's own cgroup first (a delegated
 * subtree, e.g. a systemd user service), else under the hierarchy's root. The launcher is tried
 * first where it is built (its probe also answers the entry); `prologue` forces the prologue.
 */
export const detect = (
  run: RunProbe,
  probeName: Effect.Effect<string>,
  forced: Entry | undefined
): Effect.Effect<Detected> =>
  Effect.gen(function* () {
    const cg = Procfs.cgroup2()
    if (cg === undefined)
      return { parent: undefined, fallbackReason: "no cgroup v2 hierarchy is mounted here" }
    const candidates = [...new Set([path.join(cg.mount, cg.own, PARENT), path.join(cg.mount, PARENT)])]
    const tryLauncher = forced !== "prologue" && launcherBuilt()
    for (const parent of candidates) {
      if (tryLauncher && (yield* probe(run, parent, yield* probeName, "launcher"))) {
        return { parent, entry: "launcher" as const, fallbackReason: undefined }
      }
      if (yield* probe(run, parent, yield* probeName, "prologue")) {
        const fallbackReason =
          forced === "prologue"
            ? "the prologue entry was asked for"
            : launcher.kind !== "found"
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

/** The pids in the cgroup now (exited processes are not listed). */
export const members = (dir: string): Array<number> => {
  let text: string
  try {
    text = fs.readFileSync(path.join(dir, "cgroup.procs"), "latin1")
  } catch {
    return []
  }
  const out: Array<number> = []
  for (const line of text.split("\n")) if (line.length > 0) out.push(Number(line))
  return out
}

/** SIGKILL to every process in the cgroup at once (nothing when it is gone already). */
export const kill = (dir: string): void => {
  try {
    fs.writeFileSync(path.join(dir, "cgroup.kill"), "1")
  } catch {
    // gone already
  }
}

/**
 * Removes the cgroup if it is empty (or gone already); false when a member is still inside. The
 * parent is left for the tier to release (`releaseParent`).
 */
export const removeIfEmpty = (dir: string): boolean => {
  try {
    fs.rmdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return false
  }
  return true
}

/**
 * Removes the cgroup once empty, trying for up to `waitMs`, and then its parent if nothing else is
 * in it (so no toolcap cgroup outlives the calls); false when the cgroup is still there.
 */
export const removeDir = (dir: string, waitMs: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const deadline = (yield* Clock.currentTimeMillis) + waitMs
    let delay = 1
    for (;;) {
      if (removeIfEmpty(dir)) {
        releaseParent(path.dirname(dir))
        return true
      }
      if ((yield* Clock.currentTimeMillis) >= deadline) return false
      yield* Effect.sleep(Duration.millis(delay))
      delay = Math.min(delay * 2, MAX_POLL_MS)
    }
  })

/**
 * The members of the call cgroup `dir`, for the shared stop: `cgroup.procs` lists them (no scan of
 * /proc), `cgroup.kill` ends them all at once whoever owns them, and those forked meanwhile. A
 * member already on its way out (its pipes closed, say, a moment before it leaves the cgroup) is
 * neither signalled nor reported: removing the cgroup waits for it to go.
 */
export const treeOps = (dir: string): TreeOps<Member> => {
  const live = Effect.sync(() =>
    members(dir)
      .filter((pid) => Procfs.readProcess(pid)?.exiting !== true)
      .map((pid) => ({ pid, key: String(pid) }))
  )
  return {
    scan: live,
    poll: () => Effect.map(live, (alive) => ({ live: alive, full: true })),
    term: (alive) => alive.map((member) => Proc.sendSignal(member.pid, "SIGTERM")),
    kill: (alive) => {
      kill(dir)
      return alive.map(() => "sent" as const)
    },
    killReachesAll: true,
    wait: (stepMs) => Effect.sleep(Duration.millis(stepMs))
  }
}

/**
 * The startup sweep: every call cgroup under `parent` whose owning host (pid and start time, from
 * its name `<pid36>-<start36>-<random>`) no longer runs is killed and removed.
 */
export const sweep = (parent: string): Effect.Effect<number> =>
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
      const dir = path.join(parent, name)
      kill(dir)
      if (yield* removeDir(dir, 500)) swept++
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
