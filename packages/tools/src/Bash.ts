/**
 * The Bash tool (spec §2, §3, §3a, §6 rules 2, 4, 7; DECISIONS §1, §2, §5, §6).
 *
 * Runs `bash -c <command>` (`sh -c` where bash is missing) in the workspace root with stdin on
 * /dev/null, as the leader of a new process group, with `TOOLCAP_RUN_ID=<runId>` added to its
 * environment. stdout and stderr stream as chunk events (`seq` from 0 per stream, no gaps, UTF-8
 * never split) and are captured per stream: stdout keeps its head, stderr its tail, up to the
 * capture budget, with totals counted past it. The result cuts each capture to the result
 * budget, spills a truncated stream's fuller capture to the session scratch, and marks the cut.
 *
 * The end of a call: when the main process exits, the pipes are drained for `bashDrainGraceMs`,
 * then whatever of the tree still runs is stopped. On timeout, abort or fiber interruption the
 * whole tree is stopped first (SIGTERM, SIGKILL after `bashKillGraceMs`, until none is alive),
 * and only then are the streams closed and the call answered. No chunk follows the end.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Abort, Budgets, InputBounds, ToolError, Truncation } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import * as ProcessRunner from "./ProcessRunner.js"
import * as ProcessTree from "./ProcessTree.js"
import * as Workspace from "./Workspace.js"
import * as Chunk from "./internal/bash/chunk.js"
import * as Proc from "./internal/supervisor/process.js"
import * as Output from "./internal/bash/output.js"
import { buildResult, type Ending, type Termination } from "./internal/bash/result.js"
import * as Wait from "./internal/supervisor/wait.js"

/**
 * The tool's input. `timeout` is in seconds; the accepted range comes from the budgets
 * (1–300 by default) and fractions are accepted (`1.5` is 1500 ms).
 *
 * @since 0.1.0
 * @category models
 */
export const BashInput = Schema.Struct({
  /** The shell command, run with `bash -c` in the workspace directory. */
  command: Schema.String,
  /** Seconds before the process tree is stopped; the allowed range comes from the budgets. */
  timeout: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type BashInput = typeof BashInput.Type

/**
 * One piece of output while the command runs. `seq` counts from 0 per (call, stream) without
 * gaps; `data` never ends inside a UTF-8 sequence. Bash's chunks may decode `data` on first
 * read (see `chunkBytes`); it is an enumerable property like the others.
 *
 * @since 0.1.0
 * @category models
 */
export const BashChunk = Schema.Struct({
  callId: Schema.String,
  stream: Schema.Literal("stdout", "stderr"),
  seq: Schema.Number,
  data: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type BashChunk = typeof BashChunk.Type

/**
 * The UTF-8 bytes of a chunk's `data`, when Bash still holds them undecoded: a chunk made from a
 * pipe read that was whole UTF-8 keeps the read and decodes `data` only when it is first read
 * (then lets the bytes go). A host that only passes chunks on (such as the MCP server escaping
 * them into JSON) can use the bytes and never make the string; undefined once `data` was read,
 * or for a chunk Bash made as text.
 *
 * @since 0.1.0
 * @category accessors
 */
export const chunkBytes = (chunk: BashChunk): Uint8Array | undefined => Chunk.bytesOf(chunk)

const Omitted = Schema.Struct({ bytes: Schema.Number, lines: Schema.Number })

/**
 * The answer of a call (also the `partial` of a timeout or abort).
 *
 * `output` is the bounded combined text for the model:
 * ```
 * exit code: 0 · duration: 0.42s          (or "terminated by signal: SIGKILL", "timed out after 5s", "aborted")
 * <one line naming stopped processes, only when some were>
 * --- stdout ---                           (only when stdout is not empty)
 * <stdout excerpt, marker appended when cut>
 * --- stderr ---                           (only when stderr is not empty)
 * <stderr excerpt, marker prepended when cut>
 * ```
 * and `(no output)` in place of both sections when neither stream wrote anything.
 *
 * @since 0.1.0
 * @category models
 */
export const BashResult = Schema.Struct({
  callId: Schema.String,
  /** The cookie value: every process of this call's tree had `TOOLCAP_RUN_ID=<runId>` in its environment. */
  runId: Schema.String,
  /** The stdout excerpt (head) with its marker when cut. */
  stdout: Schema.String,
  /** The stderr excerpt (tail) with its marker when cut. */
  stderr: Schema.String,
  /** Exit code of the main process; null when it ended by a signal (or never reported). */
  exitCode: Schema.NullOr(Schema.Number),
  /** Signal that ended the main process, e.g. "SIGTERM"; null when it exited. */
  signal: Schema.NullOr(Schema.String),
  durationMs: Schema.Number,
  /** True when either stream was cut to the result budget. */
  truncated: Schema.Boolean,
  truncation: Schema.Struct({
    stdout: Schema.optional(Truncation.Truncation),
    stderr: Schema.optional(Truncation.Truncation)
  }),
  /** What the capture did not retain (beyond 512KB / 200000 lines per stream by default). */
  omitted: Schema.Struct({ stdout: Omitted, stderr: Omitted }),
  /** Spill files written, per truncated stream. */
  spill: Schema.Struct({ stdout: Schema.optional(Schema.String), stderr: Schema.optional(Schema.String) }),
  /** The `seq` of the last chunk of each stream; null when the stream emitted none. */
  lastSeq: Schema.Struct({ stdout: Schema.NullOr(Schema.Number), stderr: Schema.NullOr(Schema.Number) }),
  /** Every pid this call signalled: leftovers after the exit, or the tree on timeout or abort. */
  killedPids: Schema.Array(Schema.Number),
  /** How the tree was contained and what could not be stopped. */
  termination: Schema.Struct({
    /** `cgroup` (a cgroup v2 per call) or `group` (process group, cookie, parent links). */
    containment: Schema.Literal("cgroup", "group"),
    /** Pids of the tree still alive when the call returned (another user's, or stuck after SIGKILL). */
    survivors: Schema.Array(Schema.Number),
    /** True when a process outside the tree still held the output pipes open at the end. */
    pipesHeld: Schema.Boolean
  }),
  /** The bounded combined text for the model (layout above). */
  output: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type BashResult = typeof BashResult.Type

/** "1 process", "2 processes". */
const processCount = (count: number): string => `${count} ${count === 1 ? "process" : "processes"}`

/**
 * The command ran out of time; its whole tree was stopped before this was answered.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolTimeout extends Schema.TaggedError<ToolTimeout>()("ToolTimeout", {
  timeoutSeconds: Schema.Number,
  killedPids: Schema.Array(Schema.Number),
  partial: BashResult
}) {
  readonly code = "TOOL_TIMEOUT" as const
  override get message(): string {
    return `The command timed out after ${this.timeoutSeconds}s and its process tree was stopped (${processCount(this.killedPids.length)} signalled); the output so far is attached. Make the command do less per call (narrow it, add a limit) or pass a larger timeout within the allowed range.`
  }
}

/**
 * The call was aborted; its whole tree was stopped before this was answered.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolAborted extends Schema.TaggedError<ToolAborted>()("ToolAborted", {
  killedPids: Schema.Array(Schema.Number),
  partial: BashResult
}) {
  readonly code = "TOOL_ABORTED" as const
  override get message(): string {
    return `The command was aborted and its process tree was stopped (${processCount(this.killedPids.length)} signalled); the output so far is attached. Run it again only if it is still wanted.`
  }
}

/**
 * What the Bash tool can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type BashError = ToolError.ToolInvalidInput | ToolTimeout | ToolAborted | ToolError.ToolSpawnFailed

/**
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /** Id put on every chunk and the result; default: the run id (also the env cookie value). */
  readonly callId?: string | undefined
  /** Receives every chunk, in order, synchronously from the pipe reader; keep it quick. */
  readonly onChunk?: ((chunk: BashChunk) => void) | undefined
  /** Aborting it stops the tree and fails the call with `ToolAborted`. */
  readonly signal?: AbortSignal | undefined
}

/**
 * An event of `stream`: the chunks in order, then the result.
 *
 * @since 0.1.0
 * @category models
 */
export type BashEvent =
  | { readonly _tag: "Chunk"; readonly chunk: BashChunk }
  | { readonly _tag: "Result"; readonly result: BashResult }

const TOOL = "Bash"

interface Decoded {
  readonly command: string
  readonly timeoutSeconds: number
}

// the published schema says additionalProperties: false; an unknown field is refused, not ignored
const decodeBashInput = Schema.decodeUnknownEither(BashInput, { errors: "first", onExcessProperty: "error" })

/**
 * Validates the input against the schema and the budgets' timeout range, before anything runs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeInput = (
  input: unknown
): Effect.Effect<Decoded, ToolError.ToolInvalidInput, Budgets.Budgets> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    // before any decoding: the schema's checks and messages recurse into the value
    yield* InputBounds.checkDepth(TOOL, input, budgets)
    const decoded = decodeBashInput(input)
    if (Either.isLeft(decoded)) {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
      const field = issue === undefined || issue.path.length === 0 ? "input" : issue.path.join(".")
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field,
        reason: `${issue?.message ?? "invalid"}; expected { command: string, timeout?: number (seconds) }`
      })
    }
    const { command, timeout } = decoded.right
    if (command.trim().length === 0) {
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field: "command",
        reason: "the command is empty; pass the shell command to run"
      })
    }
    if (command.includes("\0")) {
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field: "command",
        reason: "the command contains a NUL character, which no shell command can hold"
      })
    }
    const min = budgets.bashTimeoutMinSeconds
    const max = budgets.bashTimeoutMaxSeconds
    if (timeout !== undefined && !(timeout >= min && timeout <= max)) {
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field: "timeout",
        reason: `${timeout} is outside the accepted range; pass seconds from ${min} to ${max} (default ${budgets.bashTimeoutDefaultSeconds})`
      })
    }
    return { command, timeoutSeconds: timeout ?? budgets.bashTimeoutDefaultSeconds }
  })

/**
 * A run id unique across hosts and calls: `<host pid>-<host start time>-<62 random bits>`, base
 * 36. The host part lets a later host tell that a leftover's owner is gone (the startup sweep).
 */
const makeRunId = Effect.gen(function* () {
  const high = yield* Random.nextIntBetween(0, 0x7fffffff)
  const low = yield* Random.nextIntBetween(0, 0x7fffffff)
  return `${Proc.hostRunPrefix()}${high.toString(36)}${low.toString(36)}`
})

/**
 * The least time the pipes are read after the tree is stopped, even when stopping used up the
 * whole bound: a pipe whose last writer just died needs one turn of the event loop to report its end.
 */
const LAST_READ_MS = 20

interface ExecuteOptions extends RunOptions {
  /** Delivers a chunk to a `stream` consumer; suspends while its bounded queue is full. */
  readonly offer?: ((chunk: BashChunk) => Effect.Effect<void>) | undefined
}

const STREAMS = ["stdout", "stderr"] as const

/** What ends the wait for a call's main process. */
type Outcome =
  | { readonly kind: "Exited" }
  | { readonly kind: "TimedOut" }
  | { readonly kind: "Aborted" }
  | { readonly kind: "ConsumerFailed"; readonly error: unknown }

const EXITED: Outcome = { kind: "Exited" }
const TIMED_OUT: Outcome = { kind: "TimedOut" }
const ABORTED: Outcome = { kind: "Aborted" }

const noop = () => {}

/** One unregister for two. */
const both = (first: () => void, second: () => void) => (): void => {
  first()
  second()
}

const noTermination = (containment: ProcessRunner.Containment): ProcessRunner.Termination => ({
  containment,
  signalled: [],
  killed: [],
  unstoppable: [],
  survivors: []
})

const execute = (
  input: unknown,
  options: ExecuteOptions
): Effect.Effect<BashResult, BashError, Budgets.Budgets | Scratch.Scratch | Workspace.Workspace> =>
  Effect.gen(function* () {
    const { command, timeoutSeconds } = yield* decodeInput(input)
    const budgets = yield* Budgets.Budgets
    const workspace = yield* Workspace.Workspace
    const runner = yield* ProcessRunner.current
    const runId = yield* makeRunId
    const callId = options.callId ?? runId
    const startedAt = yield* Clock.currentTimeNanos
    const elapsedMs = Clock.currentTimeNanos.pipe(Effect.map((now) => Number(now - startedAt) / 1e6))

    // chunks are decoded only when someone consumes them
    const decode = options.onChunk !== undefined || options.offer !== undefined
    const scratch = yield* Scratch.Scratch
    const outputs = {
      stdout: Output.forStream("stdout", budgets, scratch, decode),
      stderr: Output.forStream("stderr", budgets, scratch, decode)
    }
    // a consumer that throws ends the call with that defect, after the tree stopped
    const consumerFailed = Wait.once<unknown>()
    let consumerBroken = false
    /** Hands a chunk to `onChunk`; the chunk, or undefined when there is none to deliver. */
    const deliverNow = (stream: Proc.StreamName, data: Chunk.Payload | undefined): BashChunk | undefined => {
      if (data === undefined || consumerBroken) return undefined
      const chunk: BashChunk = Chunk.make(callId, stream, outputs[stream].lastSeq()!, data)
      if (options.onChunk !== undefined) {
        try {
          options.onChunk(chunk)
        } catch (error) {
          consumerBroken = true
          consumerFailed.happen(error)
        }
      }
      return chunk
    }
    const deliver = (stream: Proc.StreamName, data: Chunk.Payload | undefined): Effect.Effect<void> => {
      const chunk = deliverNow(stream, data)
      if (chunk === undefined || options.offer === undefined) return Effect.void
      return options.offer(chunk).pipe(Effect.onInterrupt(() => Effect.sync(outputs[stream].undeliver)))
    }
    const finishOutputs = Effect.forEach(STREAMS, (stream) => deliver(stream, outputs[stream].finish()))
    const finish = (ending: Ending, status: Proc.ExitStatus | undefined, termination: Termination) =>
      Effect.flatMap(elapsedMs, (durationMs) =>
        buildResult({ callId, runId, ending, status, durationMs, termination, ...outputs })
      )

    if (options.signal?.aborted === true) {
      yield* finishOutputs
      const partial = yield* finish({ kind: "Aborted" }, undefined, {
        ...noTermination(runner.containment),
        pipesHeld: false
      })
      return yield* new ToolAborted({ killedPids: [], partial })
    }

    return yield* Effect.scoped(
      Effect.gen(function* () {
        // interrupted before its result, a call removes a spill file it began (after the tree stopped)
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => STREAMS.forEach((name) => outputs[name].spill?.discard()))
        )
        // closing this scope (fiber interruption included) stops the whole tree, bounded
        const proc = yield* runner
          .spawn({
            file: Proc.shell().file,
            args: ["-c", command],
            cwd: workspace.root,
            env: Proc.hostEnvWith(ProcessTree.cookieVariable, runId),
            tree: {
              runId,
              cookie: runId,
              killGraceMs: budgets.bashKillGraceMs,
              // the drain grace bounds both the wait for SIGKILLed members and the pipes after it:
              // the end of a call takes at most kill grace + drain grace (plus one short read)
              killWaitMs: budgets.bashDrainGraceMs
            }
          })
          .pipe(
            Effect.mapError(
              (error) =>
                new ToolError.ToolSpawnFailed({ command: `${Proc.shell().file} -c`, reason: error.reason })
            )
          )
        // the outputs are done once every read reached the capture (and a `stream` consumer's queue)
        const outputsDone = Wait.once<void>()
        let pumps: Fiber.RuntimeFiber<void> | undefined
        if (options.offer === undefined) {
          // nobody waits on the chunks: every read goes to the capture in the pipe's own callback
          for (const stream of STREAMS) {
            proc.read[stream]((bytes) => deliverNow(stream, outputs[stream].push(bytes)))
          }
          proc.onPipesDone(() => outputsDone.happen())
        } else {
          // for a `stream` consumer a batch of reads at a time, pulled straight from the pipe,
          // waiting while its queue is full
          const pump = (stream: Proc.StreamName): Effect.Effect<void> => {
            const loop: Effect.Effect<void> = Effect.matchEffect(proc.pull[stream], {
              onFailure: () => Effect.void,
              onSuccess: (reads) =>
                Effect.zipRight(
                  Effect.forEach(reads, (bytes) => deliver(stream, outputs[stream].push(bytes)), {
                    discard: true
                  }),
                  loop
                )
            })
            return loop
          }
          pumps = yield* Effect.all([pump("stdout"), pump("stderr")], { concurrency: 2, discard: true }).pipe(
            Effect.ensuring(Effect.sync(() => outputsDone.happen())),
            Effect.forkScoped
          )
        }

        // only an abort signal or a chunk consumer that throws can end the call early
        const onStopRequest = (settle: (outcome: Outcome) => void): (() => void) =>
          both(
            consumerFailed.on((error) => settle({ kind: "ConsumerFailed", error })),
            Abort.onAbort(options.signal, () => settle(ABORTED))
          )
        const first = yield* Wait.firstOf<Outcome>(
          (settle) =>
            both(
              proc.onExit(() => settle(EXITED)),
              onStopRequest(settle)
            ),
          { after: Duration.millis(Math.round(timeoutSeconds * 1000)), value: TIMED_OUT }
        )
        // the deadline covers the main process; after its exit the pipes get the drain grace
        const outcome =
          first.kind !== "Exited" || outputsDone.happened()
            ? first
            : yield* Wait.firstOf<Outcome>(
                (settle) =>
                  both(
                    outputsDone.on(() => settle(first)),
                    onStopRequest(settle)
                  ),
                { after: Duration.millis(budgets.bashDrainGraceMs), value: first }
              )
        // from here the call ends within kill grace + drain grace, whatever the tree does
        const stopStartedMs = yield* elapsedMs
        const stopped = yield* proc.stop
        // the tree is stopped: what is left in the pipes is read for the rest of that bound, then
        // our side of the pipes is closed whoever still holds them open
        // (after an exit whose drain grace already ran out and a stop that found nothing to
        // signal, nothing will close them: one last read only)
        const drained = first.kind === "Exited" && proc.pipesEnded()
        const rest =
          first.kind === "Exited" && !drained && stopped.signalled.length === 0
            ? LAST_READ_MS
            : Math.max(
                LAST_READ_MS,
                Math.min(
                  budgets.bashDrainGraceMs,
                  stopStartedMs + budgets.bashKillGraceMs + budgets.bashDrainGraceMs - (yield* elapsedMs)
                )
              )
        if (!outputsDone.happened() || proc.exitStatus() === undefined) {
          yield* Wait.firstOf<void>(
            (settle) => {
              let offExit = noop
              const offDone = outputsDone.on(() => {
                offExit = proc.onExit(() => settle())
              })
              return () => both(offDone, offExit)()
            },
            { after: Duration.millis(rest), value: undefined }
          )
        }
        const pipesHeld = !proc.pipesEnded()
        yield* proc.closePipes
        if (pumps !== undefined) yield* Fiber.interrupt(pumps)
        yield* finishOutputs
        const status = proc.exitStatus()
        const termination: Termination = { ...stopped, pipesHeld }
        switch (outcome.kind) {
          case "Exited":
            return yield* finish({ kind: "Exited" }, status, termination)
          case "TimedOut": {
            const partial = yield* finish({ kind: "TimedOut", timeoutSeconds }, status, termination)
            return yield* new ToolTimeout({ timeoutSeconds, killedPids: [...stopped.signalled], partial })
          }
          case "Aborted": {
            const partial = yield* finish({ kind: "Aborted" }, status, termination)
            return yield* new ToolAborted({ killedPids: [...stopped.signalled], partial })
          }
          case "ConsumerFailed":
            return yield* Effect.die(outcome.error)
        }
      })
    )
  })

/**
 * The span of a call names the tool only: capturing the caller's stack trace for it (an `Error`
 * per call) would cost about as much as the rest of a short call's bookkeeping.
 */
const SPAN_OPTIONS = { captureStackTrace: false } as const

/**
 * Runs a command. `input` is decoded here (bad input fails with `ToolInvalidInput` naming the
 * field, before anything is spawned). Chunks go to `onChunk` while it runs; the result arrives
 * after the main process exited, the pipes drained and any leftover of the tree was stopped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (
  input: unknown,
  options: RunOptions = {}
): Effect.Effect<BashResult, BashError, Budgets.Budgets | Scratch.Scratch | Workspace.Workspace> =>
  execute(input, options).pipe(Effect.withSpan("Bash.run", SPAN_OPTIONS))

/**
 * Chunk events buffered ahead of a slow `stream` consumer. When the queue is full the pipe reader
 * waits, the pipes fill and the command blocks on its next write. Each chunk is at most one pipe
 * read (64KB), so this bounds the host's memory whatever the command writes.
 */
const STREAM_BUFFER = 32

type Item =
  | { readonly kind: "Event"; readonly event: BashEvent }
  | { readonly kind: "Done"; readonly exit: Exit.Exit<BashResult, BashError> }

/**
 * Runs a command as an effect `Stream`: `Chunk` events in order, then one `Result`, then the end;
 * a timeout or abort fails the stream with the typed error (carrying the partial result). When
 * the consumer stops early, the tree is stopped before the stream's scope closes. A slow consumer
 * pauses the pipes (backpressure from a bounded queue) instead of growing a buffer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stream = (
  input: unknown,
  options: RunOptions = {}
): Stream.Stream<BashEvent, BashError, Budgets.Budgets | Scratch.Scratch | Workspace.Workspace> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const queue = yield* Effect.acquireRelease(Queue.bounded<Item>(STREAM_BUFFER), Queue.shutdown)
      const offer = (chunk: BashChunk) =>
        Queue.offer(queue, { kind: "Event", event: { _tag: "Chunk", chunk } }).pipe(Effect.asVoid)
      yield* execute(input, { ...options, offer }).pipe(
        Effect.withSpan("Bash.stream", SPAN_OPTIONS),
        Effect.exit,
        Effect.flatMap((exit) => Queue.offer(queue, { kind: "Done", exit })),
        Effect.forkScoped
      )
      let done = false
      const next: Effect.Effect<BashEvent, Option.Option<BashError>> = Effect.suspend(() =>
        done
          ? Effect.fail(Option.none())
          : Queue.take(queue).pipe(
              Effect.flatMap((item): Effect.Effect<BashEvent, Option.Option<BashError>> => {
                if (item.kind === "Event") return Effect.succeed(item.event)
                done = true
                return Exit.isSuccess(item.exit)
                  ? Effect.succeed({ _tag: "Result", result: item.exit.value })
                  : Effect.failCause(Cause.map(item.exit.cause, Option.some))
              })
            )
      )
      return Stream.repeatEffectOption(next)
    })
  )
