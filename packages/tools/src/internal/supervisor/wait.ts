/**
 * Waiting on a process the cheap way. A call waits for the first of a few things (its exit, the
 * pipes' end, a stop request, a deadline) several times per call; racing an Effect per source
 * forks, joins and interrupts a fiber each time, which costs more CPU than a short command itself.
 * Here every source but the deadline is a plain callback in one `Effect.async`, and the deadline
 * is the `Clock`'s sleep (so a test Clock still governs it).
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"

/**
 * Something that happens at most once (an exit, the end of the pipes), with its value. `on` calls
 * the callback at once when it already happened, else when it happens; it returns the unregister.
 *
 * @internal
 */
export interface Once<A> {
  readonly happened: () => boolean
  readonly value: () => A | undefined
  readonly happen: (value: A) => void
  readonly on: (callback: (value: A) => void) => () => void
}

const nothingToUnregister = () => {}

/** @internal */
export const once = <A>(): Once<A> => {
  let value: A | undefined
  let happened = false
  const callbacks = new Set<(value: A) => void>()
  return {
    happened: () => happened,
    value: () => value,
    happen: (a) => {
      if (happened) return
      happened = true
      value = a
      for (const callback of callbacks) callback(a)
      callbacks.clear()
    },
    on: (callback) => {
      if (happened) {
        callback(value as A)
        return nothingToUnregister
      }
      callbacks.add(callback)
      return () => callbacks.delete(callback)
    }
  }
}

/**
 * The first value settled by a source `register` hooks up (it gets `settle` and returns its
 * unregister), or `deadline.value` once `deadline.after` passed on the Clock. Sources are
 * unregistered and the deadline's sleep stopped however the wait ends (interruption included).
 *
 * The deadline is the Clock's own `sleep`, run as a root fiber of its own: no child fiber to
 * supervise, join and interrupt, so a wait costs about as much as the sleep's timer.
 *
 * @internal
 */
export const firstOf = <A>(
  register: (settle: (value: A) => void) => () => void,
  deadline?: { readonly after: Duration.Duration; readonly value: A } | undefined
): Effect.Effect<A> =>
  Effect.clockWith((clock) =>
    Effect.async<A>((resume) => {
      let settled = false
      let unregister = nothingToUnregister
      let sleeper: Fiber.RuntimeFiber<void> | undefined
      const stop = () => {
        unregister()
        sleeper?.unsafeInterruptAsFork(FiberId.none)
      }
      const settle = (value: A) => {
        if (settled) return
        settled = true
        stop()
        resume(Effect.succeed(value))
      }
      unregister = register(settle)
      if (settled) {
        unregister()
        return
      }
      if (deadline !== undefined) {
        sleeper = Effect.runFork(clock.sleep(deadline.after))
        sleeper.addObserver((exit) => {
          if (Exit.isSuccess(exit)) settle(deadline.value)
        })
      }
      return Effect.sync(() => {
        settled = true
        stop()
      })
    })
  )
