/**
 * The cgroup v2 containment tier: one child cgroup per call under a toolcap-owned parent. The
 * call's shell is inside before it runs the command, so every process the command starts (double
 * forks, `setsid`, a scrubbed environment, a changed process group) is a member the kernel tracks:
 * `cgroup.procs` lists them, `cgroup.kill` ends them all at once.
 *
 * The shell enters its cgroup in one of two ways, chosen once per host: created inside it by the
 * native launcher (`clone3` with `CLONE_INTO_CGROUP`), or, where the launcher is not built or the
 * kernel refuses that, by a `/bin/sh` prologue that writes its own pid into `cgroup.procs`.
 */
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import { launcherPath } from "./launcherPath.js"
import * as Proc from "./process.js"
import type { Termination } from "../../ProcessTree.js"

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

/**
 * Runs a shell through `entry` in a fresh child of `parent`: whether it lands inside (and
 * `cgroup.kill` exists) here.
 */
const probe = (parent: string, entry: Entry): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    // dots, not dashes: a probe's name must never read as a run id, or another host's startup
    // sweep would take it for a dead host's cgroup and remove it mid-probe
    const dir = path.join(parent, `probe.${process.pid}.${Math.random().toString(36).slice(2)}`)
    try {
      fs.mkdirSync(parent, { recursive: true })
      fs.mkdirSync(dir)
    } catch {
      return false
    }
    const moved = yield* Effect.async<boolean>((resume) => {
      try {
        const run = command(entry, dir, "/bin/sh", ["-c", INSIDE, dir])
        const child = Proc.spawnChild(run.file, run.args, {
          stdio: "ignore",
          lifeline: "none"
        })
        child.once("error", () => resume(Effect.succeed(false)))
        child.once("exit", (code) => resume(Effect.succeed(code === 0)))
      } catch {
        resume(Effect.succeed(false))
      }
    })
    const killable = exists(path.join(dir, "cgroup.kill"))
    const removed = yield* removeDir(dir, 200)
    return moved && killable && removed
  })

/**
 * The parent cgroup to create call cgroups in, or undefined when this host cannot contain a call
 * in a cgroup (no cgroup v2, not writable, no `cgroup.kill`). Decided by actually creating a
 * child and moving a process into it: under the host's own cgroup first (a delegated subtree,
 * e.g. a systemd user service), else under the hierarchy's root.
 */
export const detect: Effect.Effect<string | undefined> = Effect.suspend(() => {
  // once per host: every runner of this process shares the answer
  detected ??= Effect.runSync(
    Effect.cached(
      Effect.gen(function* () {
        const cg = Procfs.cgroup2()
        if (cg === undefined) return undefined
        const candidates = [...new Set([path.join(cg.mount, cg.own, PARENT), path.join(cg.mount, PARENT)])]
        for (const parent of candidates) {
          // the launcher's probe, where it is built, also answers `entry` (one probe, not two)
          if (launcherBuilt() && (yield* probe(parent, "launcher"))) {
            launcherLanded = parent
            return parent
          }
          if (yield* probe(parent, "prologue")) return parent
        }
        return undefined
      })
    )
  )
  return detected
})

let detected: Effect.Effect<string | undefined> | undefined

/** The parent a launcher probe of `detect` landed in, if one did. */
let launcherLanded: string | undefined

const launcherBuilt = (): boolean => process.platform === "linux" && exists(launcherPath)

/**
 * How shells enter their cgroup under `parent` (a parent `detect` found): through the launcher
 * where it is built and a probe shell it started landed in its cgroup, else the prologue. Decided
 * once per host.
 */
export const entry = (parent: string): Effect.Effect<Entry> =>
  Effect.suspend(() => {
    entryDetected ??= Effect.runSync(
      Effect.cached(
        Effect.suspend(() =>
          launcherLanded === parent
            ? Effect.succeed<Entry>("launcher")
            : launcherBuilt()
              ? Effect.map(probe(parent, "launcher"), (works): Entry => (works ? "launcher" : "prologue"))
              : Effect.succeed<Entry>("prologue")
        )
      )
    )
    return entryDetected
  })

let entryDetected: Effect.Effect<Entry> | undefined

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
const releaseParent = (parent: string): void => {
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

const sorted = (pids: Iterable<number>): Array<number> => Arr.sort(new Set(pids), Order.number)

/** Polling steps while waiting for members to exit: 1, 2, 4, then every 5 ms (as ProcessTree). */
const MAX_POLL_MS = 5

/**
 * Removes the cgroup if it is empty (or gone already); false when a member is still inside. The
 * parent is left for `releaseParentSoon`.
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
 * How long the parent outlives this host's last call: calls back to back reuse it instead of
 * making and removing it around each one (two more cgroup operations per call).
 */
const PARENT_LINGER_MS = 100

let parentRelease: ReturnType<typeof setTimeout> | undefined
const parentsToRelease = new Set<string>()

/**
 * Removes the parent of `dir` once `PARENT_LINGER_MS` passed without another call of this host
 * ending, or when the host exits, whichever comes first (the kernel refuses while any call of any
 * host lives in it, so this is safe). Neither the timer nor the exit hook keeps the host alive.
 */
export const releaseParentSoon = (dir: string): void => {
  if (!parentsToRelease.has(path.dirname(dir))) {
    if (parentsToRelease.size === 0) process.once("exit", releaseParents)
    parentsToRelease.add(path.dirname(dir))
  }
  if (parentRelease !== undefined) clearTimeout(parentRelease)
  parentRelease = setTimeout(releaseParents, PARENT_LINGER_MS)
  parentRelease.unref()
}

const releaseParents = (): void => {
  parentRelease = undefined
  for (const parent of parentsToRelease) releaseParent(parent)
}

/**
 * Removes the cgroup once empty, trying for up to `waitMs`, and then its parent if nothing else is
 * in it (so no toolcap cgroup outlives the calls); false when the cgroup is still there.
 */
export const removeDir = (dir: string, waitMs: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const deadline = Date.now() + waitMs
    let delay = 1
    for (;;) {
      if (removeIfEmpty(dir)) {
        releaseParent(path.dirname(dir))
        return true
      }
      if (Date.now() >= deadline) return false
      yield* Effect.sleep(Duration.millis(delay))
      delay = Math.min(delay * 2, MAX_POLL_MS)
    }
  })

/**
 * Stops every member: SIGTERM to each (once, and to members that appear while waiting), then
 * `cgroup.kill` after `killGraceMs`, then waits up to `killWaitMs` for the cgroup to empty.
 */
export const terminate = (
  dir: string,
  options: { readonly killGraceMs: number; readonly killWaitMs: number }
): Effect.Effect<Termination> =>
  Effect.gen(function* () {
    // a member already on its way out (its pipes closed, say, a moment before it leaves the
    // cgroup) is not signalled or reported: removing the cgroup waits for it to go
    let live = members(dir).filter((pid) => Procfs.readProcess(pid)?.exiting !== true)
    if (live.length === 0) return { signalled: [], killed: [], unstoppable: [], survivors: [] }
    const signalled = new Set<number>()
    const denied = new Set<number>()
    const term = (pids: ReadonlyArray<number>) => {
      for (const pid of pids) {
        if (signalled.has(pid) || denied.has(pid)) continue
        const outcome = Proc.sendSignal(pid, "SIGTERM")
        if (outcome === "sent") signalled.add(pid)
        else if (outcome === "denied") denied.add(pid)
      }
    }
    term(live)
    const wait = (until: number, onNew: (pids: ReadonlyArray<number>) => void) =>
      Effect.gen(function* () {
        let delay = 1
        while (live.length > 0 && Date.now() < until) {
          yield* Effect.sleep(Duration.millis(Math.min(delay, Math.max(0, until - Date.now()))))
          delay = Math.min(delay * 2, MAX_POLL_MS)
          live = members(dir)
          onNew(live)
        }
      })
    yield* wait(Date.now() + options.killGraceMs, term)
    const killed = [...live]
    if (live.length > 0) {
      // the kernel signals every member, whoever owns it, and those forked meanwhile
      kill(dir)
      for (const pid of live) if (!denied.has(pid)) signalled.add(pid)
      yield* wait(Date.now() + options.killWaitMs, () => {})
    }
    return {
      signalled: sorted(signalled),
      killed: sorted(killed),
      unstoppable: [],
      survivors: sorted(live)
    }
  })

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
