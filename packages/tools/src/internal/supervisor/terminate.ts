/**
 * Stopping a tree, once for every tier: SIGTERM to each live member (once: a second SIGTERM makes
 * some programs skip their cleanup), SIGTERM to members that appear while waiting, SIGKILL to
 * what is alive after the kill grace, then a bounded wait. The tiers differ only in how members
 * are found and signalled (`TreeOps`); time comes from the `Clock`.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import type { SignalOutcome } from "./process.js"

/** A process of a tree; `key` tells a reused pid apart (pid and start time, where known). */
export interface Member {
  readonly pid: number
  readonly key: string
}

/** How one tier finds and signals the members of one tree (made per stop: it may keep state). */
export interface TreeOps<M extends Member> {
  /** Every live member now, new ones included. */
  readonly scan: Effect.Effect<ReadonlyArray<M>>
  /**
   * The live members after a wait: `known` re-checked cheaply, or everything (`full`) when the
   * tier looked for new members too.
   */
  readonly poll: (
    known: ReadonlyArray<M>
  ) => Effect.Effect<{ readonly live: ReadonlyArray<M>; readonly full: boolean }>
  /** SIGTERM to these members (none was sent one before); the outcome per member. */
  readonly term: (members: ReadonlyArray<M>) => ReadonlyArray<SignalOutcome>
  /** SIGKILL to these members; the outcome per member. */
  readonly kill: (members: ReadonlyArray<M>) => ReadonlyArray<SignalOutcome>
  /** SIGKILL reaches every member whoever owns it (`cgroup.kill`): none is unstoppable. */
  readonly killReachesAll: boolean
  /** Waits before the next poll: `stepMs` at most (a real tier), or until something changes. */
  readonly wait: (stepMs: number, untilMs: number) => Effect.Effect<void>
}

/** What stopping a tree did; pids ascending. */
export interface TreeStop {
  /** Every pid sent a signal. Empty when nothing of the tree was alive. */
  readonly signalled: ReadonlyArray<number>
  /** The pids alive after the kill grace, sent SIGKILL. */
  readonly killed: ReadonlyArray<number>
  /** Members this host may not signal (another user's): not stopped, not waited for. */
  readonly unstoppable: ReadonlyArray<number>
  /** Members still alive when the wait after SIGKILL ran out (e.g. in uninterruptible sleep). */
  readonly survivors: ReadonlyArray<number>
  /** What the kernel counted against a `cgroup` memory ceiling (none otherwise). */
  readonly memory?: { readonly reached: boolean; readonly oomKills: number } | undefined
  /** What the kernel counted against a `cgroup` task limit (none otherwise). */
  readonly tasks?: { readonly reached: boolean; readonly forkFailures: number } | undefined
  /** Members the call did not start (moved into its cgroup from outside): moved back, never signalled. */
  readonly foreign?: ReadonlyArray<{ readonly pid: number; readonly movedTo?: string }> | undefined
  /** Files the call left in /dev/shm, removed when it ended. */
  readonly shmRemoved?: ReadonlyArray<string> | undefined
  /** Frozen cgroups (v2 `cgroup.freeze`, v1 freezer) thawed before the stop. */
  readonly thawed?: number | undefined
}

/** @internal */
export const nothingStopped: TreeStop = { signalled: [], killed: [], unstoppable: [], survivors: [] }

/**
 * Polling steps while waiting for members to go: 1, 2, 4, then every 5 ms — often enough that a
 * tree obeying SIGTERM is seen gone within a few milliseconds (the bench target from deadline to
 * TOOL_TIMEOUT is 100 ms), rarely enough to cost little CPU.
 */
export const MAX_POLL_MS = 5

const sorted = (pids: Iterable<number>): Array<number> => Arr.sort(new Set(pids), Order.number)

/**
 * Stops the tree `ops` sees: completes once no member is alive (unstoppable ones aside) or
 * `killWaitMs` after the SIGKILL. Uninterruptible: once started it runs to the end.
 *
 * @internal
 */
export const terminate = <M extends Member>(
  ops: TreeOps<M>,
  options: { readonly killGraceMs: number; readonly killWaitMs: number }
): Effect.Effect<TreeStop> =>
  Effect.gen(function* () {
    const termed = new Set<string>()
    const killedKeys = new Set<string>()
    const signalled = new Set<number>()
    const killed = new Set<number>()
    const denied = new Map<string, number>()
    const record = (members: ReadonlyArray<M>, outcomes: ReadonlyArray<SignalOutcome>, kill: boolean) => {
      members.forEach((member, index) => {
        const outcome = outcomes[index]
        if (outcome === "denied" && !ops.killReachesAll) denied.set(member.key, member.pid)
        if (outcome !== "sent") return
        signalled.add(member.pid)
        if (kill) killed.add(member.pid)
      })
    }
    const termNew = (alive: ReadonlyArray<M>) => {
      const fresh = alive.filter((member) => !termed.has(member.key))
      for (const member of fresh) termed.add(member.key)
      if (fresh.length > 0) record(fresh, ops.term(fresh), false)
    }
    const killNew = (alive: ReadonlyArray<M>) => {
      const fresh = alive.filter((member) => !killedKeys.has(member.key))
      for (const member of fresh) killedKeys.add(member.key)
      if (fresh.length > 0) record(fresh, ops.kill(fresh), true)
    }
    // members this host may not signal are not waited for
    const stoppable = (alive: ReadonlyArray<M>) => alive.filter((member) => !denied.has(member.key))

    let live = yield* ops.scan
    if (live.length === 0) return nothingStopped
    termNew(live)
    live = stoppable(live)

    let delay = 1
    const waitUntil = (until: number, onNew: (alive: ReadonlyArray<M>) => void) =>
      Effect.gen(function* () {
        for (let now = yield* Clock.currentTimeMillis; live.length > 0 && now < until;) {
          yield* ops.wait(Math.min(delay, until - now), until)
          delay = Math.min(delay * 2, MAX_POLL_MS)
          const polled = yield* ops.poll(live)
          if (polled.full) onNew(polled.live)
          live = stoppable(polled.live)
          now = yield* Clock.currentTimeMillis
        }
      })
    yield* waitUntil((yield* Clock.currentTimeMillis) + options.killGraceMs, termNew)
    delay = 1
    if (live.length > 0) {
      killNew(live)
      live = stoppable(live)
    }
    yield* waitUntil((yield* Clock.currentTimeMillis) + options.killWaitMs, killNew)
    // the last look: a member the SIGKILL ended since the last poll (all of them, with no wait
    // after it) is no survivor
    if (live.length > 0) live = stoppable((yield* ops.poll(live)).live)
    return {
      signalled: sorted(signalled),
      killed: sorted(killed),
      unstoppable: sorted(denied.values()),
      survivors: sorted(live.map((member) => member.pid))
    }
  }).pipe(Effect.uninterruptible)
