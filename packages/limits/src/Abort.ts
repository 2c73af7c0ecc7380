/**
 * One adapter from a host's `AbortSignal` to Effect: every tool and host that honours a signal
 * goes through it, so "already aborted" and listener clean-up behave the same everywhere.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

const nothingToRemove = (): void => {}

/**
 * Calls `callback` when the signal aborts (at once when it already has; never without a signal)
 * and returns the listener's removal: the plain-callback form of `aborted`, for a caller that
 * waits on several things in one callback.
 *
 * @since 0.1.0
 * @category constructors
 */
export const onAbort = (signal: AbortSignal | undefined, callback: () => void): (() => void) => {
  if (signal === undefined) return nothingToRemove
  if (signal.aborted) {
    callback()
    return nothingToRemove
  }
  signal.addEventListener("abort", callback, { once: true })
  return () => signal.removeEventListener("abort", callback)
}

/**
 * Completes when the signal aborts (at once when it already has); never without a signal. The
 * listener is removed when the waiting fiber is interrupted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const aborted = (signal: AbortSignal | undefined): Effect.Effect<void> =>
  signal === undefined
    ? Effect.never
    : Effect.async<void>((resume) => Effect.sync(onAbort(signal, () => resume(Effect.void))))

/**
 * Interrupts `effect` when `signal` aborts (an already aborted signal interrupts at once).
 *
 * @since 0.1.0
 * @category constructors
 */
export const interruptOnAbort = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  signal: AbortSignal | undefined
): Effect.Effect<A, E, R> => {
  if (signal === undefined) return effect
  if (signal.aborted) return Effect.interrupt
  return Effect.raceFirst(effect, Effect.zipRight(aborted(signal), Effect.interrupt))
}
