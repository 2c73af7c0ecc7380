/**
 * The process tree of one Bash call, and how it is stopped (DECISIONS §5, spec §6 rule 7).
 *
 * "The tree" is every live process that is
 *  - in the call's process group (the shell is spawned as a group and session leader), or
 *  - carries the call's environment cookie `TOOLCAP_RUN_ID=<runId>` in /proc/<pid>/environ,
 *    which catches children that left the group with `setsid` or double-forked away, or
 *  - a descendant, by parent link, of any of those.
 *
 * Stopping it: SIGTERM to the group and to every member, SIGTERM to members that appear while
 * waiting, SIGKILL to whatever is still alive after the kill grace, and return only once no
 * member is alive. Zombies (state Z) and exiting processes count as gone: they run no code and
 * hold no pipe.
 *
 * Linux only (it reads /proc). A process that both leaves the group and scrubs its environment
 * (`env -i setsid ...`) and is reparented away from the tree cannot be found.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import { Procfs } from "@toolcap/spill"
import * as Proc from "./internal/supervisor/process.js"

/**
 * The environment variable that carries a call's cookie.
 *
 * @since 0.1.0
 * @category models
 */
export const cookieVariable = "TOOLCAP_RUN_ID"

/**
 * One call's tree: the pid of the shell (also its process group id) and the cookie value.
 *
 * @since 0.1.0
 * @category models
 */
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
 * While a tree is being stopped, its known members are checked after 1, 2, 4, then every 5 ms:
 * often enough that a tree which obeys SIGTERM is seen gone within a few milliseconds (the bench
 * target from deadline to the returned TOOL_TIMEOUT is 100 ms), rarely enough to cost little CPU.
 */
const MAX_POLL_MS = 5

/**
 * A full scan of /proc (which finds members forked since the last one) costs a few ms on a busy
 * host, so between full scans only the known members are checked; a full scan runs at least this
 * often, and always before the tree is declared gone.
 */
const FULL_SCAN_MS = 25

const keyOf = (info: Procfs.ProcessInfo): string => `${info.pid}:${info.startTime}`

// an exiting process (its files already closed) runs no more code of its own either
const isGone = (info: Procfs.ProcessInfo): boolean => info.state === "Z" || info.state === "X" || info.exiting

/** A scanner for one tree: the live members now, by group, cookie and parent link. */
const makeScanner = (tree: Tree) => (): Array<Procfs.ProcessInfo> => {
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
  return [...found.values()]
}

/** Whether a process found by a scan still runs (same pid and start time, not a zombie). */
const stillRunning = (info: Procfs.ProcessInfo): boolean => {
  const now = Procfs.readProcess(info.pid)
  return now !== undefined && now.startTime === info.startTime && !isGone(now)
}

/**
 * The live (non-zombie) processes of the tree now.
 *
 * @since 0.1.0
 * @category constructors
 */
export const members = (tree: Tree): Effect.Effect<ReadonlyArray<number>> =>
  Effect.sync(() => makeScanner(tree)().map((info) => info.pid))

/**
 * What stopping a tree did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Termination {
  /** Every pid that was sent a signal, ascending. Empty when nothing of the tree was alive. */
  readonly signalled: ReadonlyArray<number>
  /** The pids that outlived the kill grace and were sent SIGKILL, ascending. */
  readonly killed: ReadonlyArray<number>
  /** Members this host may not signal (another user's, e.g. run through sudo): not stopped, not waited for. */
  readonly unstoppable: ReadonlyArray<number>
  /** Members still alive when the wait after SIGKILL ran out (e.g. stuck in uninterruptible sleep). */
  readonly survivors: ReadonlyArray<number>
}

const sorted = (pids: Iterable<number>): Array<number> => Arr.sort(new Set(pids), Order.number)

/**
 * Stops the whole tree: SIGTERM, then SIGKILL after `killGraceMs`, and completes once no member
 * is alive (except members this host may not signal, listed as `unstoppable`) or `killWaitMs`
 * after the SIGKILL (what still lives then is listed as `survivors`).
 * Uninterruptible: once started it runs to the end.
 *
 * @since 0.1.0
 * @category constructors
 */
export const terminate = (
  tree: Tree,
  options: {
    readonly killGraceMs: number
    /** How long to wait for members to die after SIGKILL before reporting them as survivors. */
    readonly killWaitMs: number
  }
): Effect.Effect<Termination> =>
  Effect.gen(function* () {
    const scan = makeScanner(tree)
    // SIGTERM once per process; repeating it would make programs that treat a second SIGTERM as
    // "force quit now" skip their cleanup
    const termed = new Set<string>()
    const signalled = new Set<number>()
    const killed = new Set<number>()
    // members this host may not signal (another user's, e.g. a command run through sudo) cannot be
    // stopped: they are reported as `unstoppable` and not waited for
    const denied = new Map<string, number>()
    const stoppable = (alive: ReadonlyArray<Procfs.ProcessInfo>) =>
      alive.filter((info) => !denied.has(keyOf(info)))
    const record = (info: Procfs.ProcessInfo, outcome: Proc.SignalOutcome, kill: boolean) => {
      if (outcome === "denied") denied.set(keyOf(info), info.pid)
      if (outcome !== "sent") return
      signalled.add(info.pid)
      if (kill) killed.add(info.pid)
    }
    /**
     * Signals the group once for all its members. Which members it may signal is probed BEFORE
     * the signal: a member the signal kills can be reaped within microseconds, and a probe after
     * it would then report a process it just stopped as never signalled.
     */
    const signalGroup = (alive: ReadonlyArray<Procfs.ProcessInfo>, signal: Proc.SignalName) => {
      const inGroup = alive
        .filter((info) => info.pgid === tree.rootPid)
        .map((info) => ({ info, outcome: Proc.probe(info.pid) }))
      if (inGroup.length === 0 || !Proc.signalGroup(tree.rootPid, signal)) return new Set<string>()
      for (const { info, outcome } of inGroup) record(info, outcome, signal === "SIGKILL")
      return new Set(inGroup.map(({ info }) => keyOf(info)))
    }
    const termNew = (alive: ReadonlyArray<Procfs.ProcessInfo>) => {
      for (const info of alive) {
        if (termed.has(keyOf(info))) continue
        termed.add(keyOf(info))
        record(info, Proc.sendSignal(info.pid, "SIGTERM"), false)
      }
    }
    const killAll = (alive: ReadonlyArray<Procfs.ProcessInfo>) => {
      const reached = signalGroup(alive, "SIGKILL")
      for (const info of alive) {
        if (!reached.has(keyOf(info))) record(info, Proc.sendSignal(info.pid, "SIGKILL"), true)
      }
    }

    const now = Effect.clockWith((clock) => clock.currentTimeMillis)
    let live = scan()
    if (live.length === 0) return { signalled: [], killed: [], unstoppable: [], survivors: [] }
    for (const key of signalGroup(live, "SIGTERM")) termed.add(key)
    termNew(live)
    live = stoppable(live)

    /** Waits a poll step, then updates `live`: known members cheaply, everything when due. */
    let lastFullScan = yield* now
    let delay = 1
    const step = (onNew: (alive: ReadonlyArray<Procfs.ProcessInfo>) => void, maxWait: number) =>
      Effect.gen(function* () {
        yield* Effect.sleep(Duration.millis(Math.max(0, Math.min(delay, maxWait))))
        delay = Math.min(delay * 2, MAX_POLL_MS)
        const at = yield* now
        const known = live.filter(stillRunning)
        if (known.length > 0 && at - lastFullScan < FULL_SCAN_MS) {
          live = known
          return
        }
        live = scan()
        lastFullScan = at
        onNew(live)
        live = stoppable(live)
      })

    const deadline = (yield* now) + options.killGraceMs
    while (live.length > 0) {
      const at = yield* now
      if (at >= deadline) break
      yield* step(termNew, deadline - at)
    }

    delay = 1
    if (live.length > 0) {
      killAll(live)
      live = stoppable(live)
    }
    const killDeadline = (yield* now) + options.killWaitMs
    while (live.length > 0 && (yield* now) < killDeadline) yield* step(killAll, MAX_POLL_MS)
    return {
      signalled: sorted(signalled),
      killed: sorted(killed),
      unstoppable: sorted(denied.values()),
      survivors: sorted(live.map((info) => info.pid))
    }
  }).pipe(Effect.uninterruptible, Effect.withSpan("ProcessTree.terminate"))
