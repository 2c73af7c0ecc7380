/**
 * Admission control: at most `limit` Bash calls of one host (one supervisor layer) run at once;
 * the others wait, first come first served, for a slot. A call holds its slot in its own scope,
 * from before its shell starts until its tree is stopped and its pipes are closed, so what a host
 * spends on calls (spawns, stops, pipe reads on one event loop) is bounded by the limit, not by
 * how many calls a model or a client sends at once. The wait is measured and reported; a call's
 * deadline counts from when it was admitted.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as os from "node:os"
import * as Settings from "./settings.js"

/** The environment variable that sets the limit when the layer option does not. */
export const variable: "TOOLCAP_MAX_CONCURRENT_CALLS" = Settings.variables.maxConcurrentCalls.name

/**
 * Calls admitted at once per core when neither the option nor the variable says. A Bash call
 * mostly waits on its command, so more calls than cores can run; what the host itself spends per
 * call (a synchronous spawn of several milliseconds, the stop's polling, the pipes' reads) is what
 * saturates its one event loop: on a loaded 2-core machine 100 concurrent calls kept their
 * deadlines and 200 did not (issue 33). 8 per core (16 on 2 cores, 64 on 8) stays well below that
 * and above what agent hosts run at once (Claude Code runs up to 10 tool calls concurrently).
 */
export const PER_CORE = 8

/** What admitting a call did: how long it waited for a slot, and the host's limit. */
export interface Admitted {
  readonly waitedMs: number
  readonly limit: number
}

/** @internal */
export interface Admission {
  readonly limit: number
  /** Waits for a slot (interruptible while waiting), held until the current scope closes. */
  readonly admit: Effect.Effect<Admitted, never, Scope.Scope>
}

/** Why a limit given to a host is unusable, or undefined when it is a whole number of at least 1. */
export const invalid = (value: unknown): string | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 1
    ? undefined
    : `must be a whole number of at least 1, got ${String(value)}`

/**
 * The limit a host gets: the option, else `raw` (the variable as read through `Config`), else
 * `PER_CORE` per core. An unusable
 * option or variable is an error naming it (a host that asked for a bound must not run without it).
 */
export const resolveLimit = (option: number | undefined, raw: string | undefined): number => {
  if (option !== undefined) {
    const reason = invalid(option)
    if (reason !== undefined) throw new RangeError(`Supervisor option maxConcurrentCalls ${reason}`)
    return option
  }
  if (raw !== undefined && raw.trim() !== "") {
    const parsed = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN
    const reason = invalid(parsed)
    if (reason !== undefined) {
      throw new RangeError(`${variable} ${reason.replace(String(parsed), JSON.stringify(raw))}`)
    }
    return parsed
  }
  return PER_CORE * Math.max(1, os.availableParallelism())
}

/**
 * @internal
 * A first-come-first-served queue of slots. A slot free when asked is taken at once and reports no
 * wait (a wait is only ever a queue's, never a turn of the scheduler); a waiting call gets the slot
 * of the call that ends before it, handed over directly, so no later call can overtake it.
 */
export const make = (limit: number): Effect.Effect<Admission> =>
  Effect.sync(() => {
    let running = 0
    const queue: Array<Deferred.Deferred<void>> = []
    // a slot given back goes to the first waiter, else it is free again
    const release = Effect.sync(() => {
      const next = queue.shift()
      if (next === undefined) running--
      else Deferred.unsafeDone(next, Exit.void)
    })
    const admit: Effect.Effect<Admitted, never, Scope.Scope> = Effect.flatMap(Effect.scope, (scope) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const asked = yield* Clock.currentTimeMillis
          const free = yield* Effect.sync(() => running < limit && (running++, true))
          if (!free) {
            const turn = yield* Deferred.make<void>()
            queue.push(turn)
            yield* restore(Deferred.await(turn)).pipe(
              Effect.onInterrupt(() =>
                Effect.suspend(() => {
                  const at = queue.indexOf(turn)
                  if (at >= 0) return Effect.sync(() => queue.splice(at, 1))
                  // handed the slot as the wait was interrupted: it goes on to the next
                  return release
                })
              )
            )
          }
          yield* Scope.addFinalizer(scope, release)
          const now = yield* Clock.currentTimeMillis
          return { waitedMs: free ? 0 : now - asked, limit }
        })
      )
    )
    return { limit, admit }
  })
