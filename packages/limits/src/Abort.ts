/**
 * One adapter from a host's `AbortSignal` to Effect: every tool and host that honours a signal
 * goes through it, so "already aborted" and listener clean-up behave the same everywhere.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

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
    : Effect.async<void>((resume) => {
        if (signal.aborted) return resume(Effect.void)
        const onAbort = () => resume(Effect.void)
        signal.addEventListener("abort", onAbort, { once: true })
        return Effect.sync(() => signal.removeEventListener("abort", onAbort))
      })

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
