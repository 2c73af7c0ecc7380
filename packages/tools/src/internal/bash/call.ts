/**
 * One Bash call over the supervisor: the shell started as a tree in a scope, its output into the
 * captures and the chunk events, then two waits — for the exit under the deadline, then for the
 * output under the drain grace — and the end, which is closing the scope: the supervisor stops
 * whatever of the tree is left, reads the pipes for a bounded time and closes them. A timeout, an
 * abort and a consumer that throws end the waits early; an interruption closes the scope too.
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Abort, Budgets, ToolError } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import type { BashChunk, BashResult } from "../../Bash.js"
import * as Supervisor from "../../Supervisor.js"
import * as Workspace from "../../Workspace.js"
import * as Chunk from "./chunk.js"
import * as Handover from "./command.js"
import { BashEnvironment } from "./environment.js"
import * as Output from "./output.js"
import { buildResult, type Ending, type Termination } from "./result.js"

/** @internal */
export interface CallOptions {
  readonly callId?: string | undefined
  readonly onChunk?: ((chunk: BashChunk) => void) | undefined
  readonly signal?: AbortSignal | undefined
  /** Delivers a chunk to a `stream` consumer; suspends while its bounded queue is full. */
  readonly offer?: ((chunk: BashChunk) => Effect.Effect<void>) | undefined
  /** Digest each stream for the model (rules G1). */
  readonly digest?: boolean | undefined
}

/** How a call ended, with its (partial) result and the pids it signalled. @internal */
export interface Ended {
  readonly ending: Ending
  readonly result: BashResult
}

/**
 * How long a `stream` consumer gets to take the chunks of the last reads once the pipes are
 * closed; chunks it did not take by then are not delivered (the capture has them).
 */
const LAST_DELIVERY_MS = 20

const STREAMS = ["stdout", "stderr"] as const

type Outcome = Ending | { readonly kind: "ConsumerFailed"; readonly error: unknown }

const EXITED: Outcome = { kind: "Exited" }
const ABORTED: Outcome = { kind: "Aborted" }
/** The wait for a slot ended with one (not an outcome of the call: it goes on). */
const ADMITTED: Outcome = { kind: "Exited" }

/** @internal */
export const call = (
  command: string,
  timeoutSeconds: number,
  options: CallOptions
): Effect.Effect<
  Ended,
  ToolError.ToolSpawnFailed | ToolError.ToolLauncherLost,
  Budgets.Budgets | Scratch.Scratch | Workspace.Workspace | Supervisor.Supervisor
> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    const workspace = yield* Workspace.Workspace
    const supervisor = yield* Supervisor.Supervisor
    const environment = yield* BashEnvironment
    const runId = yield* supervisor.runId
    const callId = options.callId ?? runId
    // from the start, after the wait for a slot: set when the call is admitted
    let startedAt = yield* Clock.currentTimeNanos
    let admitted: Supervisor.Admitted | undefined
    const elapsedMs = Effect.map(Clock.currentTimeNanos, (now) => Number(now - startedAt) / 1e6)
    const timedOut: Outcome = { kind: "TimedOut", timeoutSeconds }
    const timeoutMs = Math.round(timeoutSeconds * 1000)

    // chunks are decoded only when someone consumes them
    const decode = options.onChunk !== undefined || options.offer !== undefined
    const scratch = yield* Scratch.Scratch
    const outputs = {
      stdout: Output.forStream("stdout", budgets, scratch, decode, options.digest === true),
      stderr: Output.forStream("stderr", budgets, scratch, decode, options.digest === true)
    }
    // a call that ends without its result (interrupted, a consumer that threw) removes a spill
    // file it began; this runs after the scope, so after the tree stopped
    const discardSpills = <A, E>(exit: Exit.Exit<A, E>) =>
      Exit.isSuccess(exit)
        ? Effect.void
        : Effect.sync(() => STREAMS.forEach((stream) => outputs[stream].spill?.discard()))
    // a consumer that throws ends the call with that defect, after the tree stopped
    const consumerFailed = yield* Deferred.make<unknown>()
    let consumerBroken = false
    /** Hands a chunk to `onChunk`; the chunk, or undefined when there is none to deliver. */
    const deliverNow = (
      stream: "stdout" | "stderr",
      data: Chunk.Payload | undefined
    ): BashChunk | undefined => {
      if (data === undefined || consumerBroken) return undefined
      const chunk: BashChunk = Chunk.make(callId, stream, outputs[stream].lastSeq()!, data)
      if (options.onChunk !== undefined) {
        try {
          options.onChunk(chunk)
        } catch (error) {
          consumerBroken = true
          Deferred.unsafeDone(consumerFailed, Effect.succeed(error))
        }
      }
      return chunk
    }
    const deliver = (stream: "stdout" | "stderr", data: Chunk.Payload | undefined): Effect.Effect<void> => {
      const chunk = deliverNow(stream, data)
      if (chunk === undefined || options.offer === undefined) return Effect.void
      return options.offer(chunk).pipe(Effect.onInterrupt(() => Effect.sync(outputs[stream].undeliver)))
    }
    const finishOutputs = Effect.forEach(STREAMS, (stream) => deliver(stream, outputs[stream].finish()))
    const finish = (ending: Ending, status: Supervisor.ExitStatus | undefined, termination: Termination) =>
      Effect.flatMap(elapsedMs, (durationMs) =>
        Effect.map(
          buildResult({
            callId,
            runId,
            ending,
            status,
            durationMs,
            admission: admitted,
            termination,
            ...outputs
          }),
          (result) => ({
            ending,
            result
          })
        )
      )

    /** The answer of a call that started nothing (aborted before it started, or while it waited). */
    const endedUnstarted = (outcome: Outcome) =>
      Effect.gen(function* () {
        if (outcome.kind === "ConsumerFailed") return yield* Effect.die(outcome.error)
        yield* finishOutputs
        const containment = yield* supervisor.containment
        const nothing = { signalled: [], killed: [], unstoppable: [], survivors: [], pipesHeld: false }
        return yield* finish(outcome, undefined, { ...containment, ...nothing })
      })
    if (options.signal?.aborted === true) return yield* endedUnstarted(ABORTED)

    // only an abort signal or a chunk consumer that throws ends a wait early
    const stopRequests = [
      ...(options.signal === undefined ? [] : [Effect.as(Abort.aborted(options.signal), ABORTED)]),
      ...(options.onChunk === undefined
        ? []
        : [
            Effect.map(Deferred.await(consumerFailed), (error): Outcome => ({
              kind: "ConsumerFailed",
              error
            }))
          ])
    ]
    const orStopRequest = <E, R>(wait: Effect.Effect<Outcome, E, R>): Effect.Effect<Outcome, E, R> =>
      stopRequests.length === 0 ? wait : Effect.raceAll([wait, ...stopRequests])
    const shell = yield* supervisor.shell

    /** The call in its scope; `pumps`, the scope a `stream` consumer's readers run in (they outlive the stop). */
    const run = (pumps: Scope.Scope | undefined) =>
      Effect.gen(function* () {
        const ran = yield* Effect.scoped(
          Effect.gen(function* () {
            // a slot of the host's, held until the scope closes (after the stop); an abort ends the wait
            const slot = yield* orStopRequest(
              Effect.as(
                Effect.tap(supervisor.admit, (got) => (admitted = got)),
                ADMITTED
              )
            )
            if (slot !== ADMITTED) return { outcome: slot, proc: undefined, readers: undefined }
            startedAt = yield* Clock.currentTimeNanos
            const args = yield* Handover.shellArgs(command, shell.file, scratch)
            const proc = yield* supervisor
              .start({
                file: shell.file,
                args,
                cwd: workspace.root,
                // the host's variables under the policy; the supervisor adds the cookie after them
                env: environment.apply(process.env),
                tree: {
                  runId,
                  killGraceMs: budgets.bashKillGraceMs,
                  // the drain grace bounds both the wait for SIGKILLed members and the pipes after it:
                  // the end of a call takes at most kill grace + drain grace (plus one short read)
                  killWaitMs: budgets.bashDrainGraceMs,
                  drainMs: budgets.bashDrainGraceMs,
                  memoryMaxBytes: budgets.bashMemoryMaxBytes,
                  deadlineMs: timeoutMs,
                  tasksMax: budgets.bashTasksMax
                }
              })
              .pipe(
                Effect.mapError(
                  (error) =>
                    new ToolError.ToolSpawnFailed({ command: `${shell.file} -c`, reason: error.reason })
                )
              )
            // the output is done once every read reached the capture (and a `stream` consumer's queue)
            let readers: Fiber.RuntimeFiber<void> | undefined
            if (pumps === undefined) {
              // nobody waits on the chunks: every read goes to the capture in the pipe's own callback
              for (const stream of STREAMS) {
                proc.tap(stream, (bytes) => deliverNow(stream, outputs[stream].push(bytes)))
              }
            } else {
              const pump = (stream: "stdout" | "stderr") =>
                Stream.runForEachChunk(proc[stream], (reads) =>
                  Effect.forEach(reads, (bytes) => deliver(stream, outputs[stream].push(bytes)), {
                    discard: true
                  })
                )
              readers = yield* Effect.forkIn(
                Effect.all([pump("stdout"), pump("stderr")], { concurrency: 2, discard: true }),
                pumps
              )
            }
            const outputDone = readers === undefined ? proc.drained : Effect.asVoid(Fiber.await(readers))
            const isOutputDone =
              readers === undefined ? proc.isDrained : Effect.map(Fiber.poll(readers), Option.isSome)

            const waited = yield* orStopRequest(
              Effect.timeoutTo(proc.exit, {
                duration: Duration.millis(timeoutMs),
                onSuccess: () => EXITED,
                onTimeout: () => timedOut
              })
            )
            // an exit seen only after the deadline (the host's loop was blocked past it) is a
            // timeout: the watchdog's backstop may be what ended the process
            const first = waited === EXITED && (yield* elapsedMs) > timeoutMs ? timedOut : waited
            // the deadline covers the main process; after its exit the output gets the drain grace
            const outcome =
              first !== EXITED || (yield* isOutputDone)
                ? first
                : yield* orStopRequest(
                    Effect.timeoutTo(outputDone, {
                      duration: Duration.millis(budgets.bashDrainGraceMs),
                      onSuccess: () => first,
                      onTimeout: () => first
                    })
                  )
            return { outcome, proc, readers }
          })
        )
        // aborted while it waited for a slot: nothing started
        if (ran.proc === undefined) return yield* endedUnstarted(ran.outcome)
        // the scope is closed: the tree is stopped and the pipes are closed
        if (ran.readers !== undefined) {
          yield* Effect.timeoutOption(Fiber.await(ran.readers), Duration.millis(LAST_DELIVERY_MS))
          yield* Fiber.interrupt(ran.readers)
        }
        yield* finishOutputs
        const stopped = yield* ran.proc.stopped
        const status = Option.getOrUndefined(yield* ran.proc.exitStatus)
        const termination: Termination = { ...ran.proc.containment!, ...stopped }
        if (ran.outcome.kind === "ConsumerFailed") return yield* Effect.die(ran.outcome.error)
        return yield* finish(ran.outcome, status, termination)
      })
    const called =
      options.offer === undefined ? run(undefined) : Effect.scoped(Effect.flatMap(Effect.scope, run))
    return yield* Effect.onExit(called, discardSpills)
  })
