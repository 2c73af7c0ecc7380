/**
 * A launched process as a scoped resource, the same for every tier and for the fake: its pipes
 * become Streams (or a tap), its exit an Effect, and the scope's release stops it, reads what is
 * left in the pipes for a bounded time, closes them and completes `stopped` with the report.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { ToolError } from "@toolcap/limits"
import type { Containment, Process, Stopped } from "../../Supervisor.js"
import * as Launch from "./launch.js"
import type { Lifeline } from "./lifeline.js"
import * as Pipe from "./pipe.js"
import type { TreeStop } from "./terminate.js"

/** A launched process and how its tier stops it. @internal */
export interface Handle extends Launch.Launched {
  /** A tree's containment, as this call got it (undefined for a plain process). */
  readonly containment?: Containment | undefined
  /** What the lifeline watchdog stops to end this tree (a deadline's backstop); undefined for a plain process. */
  readonly lifeline?: Lifeline | undefined
  /**
   * Stops the whole tree (the plain kind: the process): uninterruptible and bounded. `exited` and
   * `drained` say whether the main process exited and both pipes ended before the stop began.
   */
  readonly stop: (facts: { readonly exited: boolean; readonly drained: boolean }) => Effect.Effect<TreeStop>
}

/** How long a release may read the pipes after the stop (see `TreeOptions`). @internal */
export interface Bounds {
  readonly killGraceMs: number
  readonly drainMs: number
}

/**
 * The least time the pipes are read after the tree is stopped, even when stopping used up the
 * whole bound: a pipe whose last writer just died needs one turn of the event loop to report its end.
 */
const LAST_READ_MS = 20

interface Wired {
  readonly handle: Handle
  readonly stdout: Pipe.Pipe
  readonly stderr: Pipe.Pipe
  readonly drained: Deferred.Deferred<void>
  /** Whether both pipes ended or were closed (`drained` is done). */
  readonly pipesDone: () => boolean
}

const wire = (handle: Handle): Wired => {
  const drained = Deferred.unsafeMake<void>(FiberId.none)
  let open = 2
  const pipeDone = () => {
    if (--open === 0) Deferred.unsafeDone(drained, Exit.void)
  }
  return {
    handle,
    stdout: Pipe.make(handle.stdout, pipeDone),
    stderr: Pipe.make(handle.stderr, pipeDone),
    drained,
    pipesDone: () => open === 0
  }
}

/**
 * Stops the process, then waits for the pipes to end and the main process to exit for the rest of
 * the bound — after an exit that left pipes held and a stop that found nothing to signal, nothing
 * will close them: one last read only — and closes our side of the pipes.
 */
const release = (wired: Wired, bounds: Bounds, stopped: Deferred.Deferred<Stopped>): Effect.Effect<void> =>
  // a plain chain, not a generator: it runs once per process, ripgrep's included
  Effect.clockWith((clock) => {
    const { handle, stderr, stdout } = wired
    const startedAt = clock.unsafeCurrentTimeMillis()
    const exitedBefore = handle.exit.status() !== undefined
    const ended = () => stdout.ended() && stderr.ended()
    return Effect.flatMap(handle.stop({ exited: exitedBefore, drained: ended() }), (stop) => {
      const finish = Effect.suspend(() => {
        const pipesHeld = !ended()
        stdout.close()
        stderr.close()
        return Deferred.succeed(stopped, { ...stop, pipesHeld })
      })
      // a lost process's exit will never be known: only its pipes are waited for
      if (wired.pipesDone() && (handle.exit.status() !== undefined || handle.exit.lost() !== undefined)) {
        return finish
      }
      const rest =
        exitedBefore && stop.signalled.length === 0
          ? LAST_READ_MS
          : Math.max(
              LAST_READ_MS,
              Math.min(
                bounds.drainMs,
                startedAt + bounds.killGraceMs + bounds.drainMs - clock.unsafeCurrentTimeMillis()
              )
            )
      // interruptible inside the release, or the timeout would wait for what it bounds
      return Effect.interruptible(
        Effect.zipRight(Deferred.await(wired.drained), Launch.awaitEnd(handle.exit))
      ).pipe(Effect.timeoutOption(Duration.millis(rest)), Effect.zipRight(finish))
    })
  })

/**
 * The process `launch` starts, in the current scope.
 *
 * @internal
 */
export const scoped = (
  launch: Effect.Effect<Handle, ToolError.ToolSpawnFailed>,
  bounds: Bounds
): Effect.Effect<Process, ToolError.ToolSpawnFailed, Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) => {
    const stopped = Deferred.unsafeMake<Stopped>(FiberId.none)
    // acquired uninterruptibly, its release added to the scope as it is: no fiber-ref diff kept
    // for it (what acquireRelease does), which costs a short process more than its own bookkeeping
    const acquire = Effect.uninterruptible(
      Effect.flatMap(launch, (handle) => {
        const wired = wire(handle)
        return Effect.as(Scope.addFinalizer(scope, release(wired, bounds, stopped)), wired)
      })
    )
    return Effect.map(acquire, ({ drained, handle, stderr, stdout }): Process => ({
      pid: handle.pid,
      containment: handle.containment,
      get stdout() {
        return stdout.stream
      },
      get stderr() {
        return stderr.stream
      },
      tap: (stream, onBytes, onEnd) => (stream === "stdout" ? stdout : stderr).tap(onBytes, onEnd),
      exit: Launch.awaitExit(handle.exit),
      exitStatus: Effect.sync(() => Option.fromNullable(handle.exit.status())),
      drained: Deferred.await(drained),
      isDrained: Deferred.isDone(drained),
      stopped: Deferred.await(stopped)
    }))
  })
