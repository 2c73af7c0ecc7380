/**
 * The Bash tool (rules B1–B12, with its limits L5, L7 and spill copies F3–F5).
 *
 * Runs `bash -c <command>` (`sh -c` where bash is missing) in the workspace root with stdin on
 * /dev/null, as a tree of the `Supervisor` (in its containment tier, with `TOOLCAP_RUN_ID=<runId>`
 * added to its environment); the call's machinery is `internal/bash/call.ts`. stdout and stderr stream as chunk events (`seq` from 0 per stream, no gaps, UTF-8
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
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Budgets, EnvPolicy, InputBounds, ToolError, Truncation } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Supervisor from "./Supervisor.js"
import type * as Workspace from "./Workspace.js"
import * as Call from "./internal/bash/call.js"
import * as Chunk from "./internal/bash/chunk.js"
import { BashEnvironment } from "./internal/bash/environment.js"

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
  timeout: Schema.optional(Schema.Number),
  /**
   * Digest the output for the model (fold passing tests, progress and repeats, keep every
   * failure; the raw output stays in the spill copy). Default: the budgets' `digest` (rules G1).
   */
  digest: Schema.optional(Schema.Boolean)
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

const RenderCounts = Schema.Struct({
  progressFrames: Schema.Number,
  colourCodes: Schema.Number,
  otherSequences: Schema.Number,
  linesErased: Schema.Number,
  controls: Schema.Number,
  clippedChars: Schema.Number
})

/**
 * The answer of a call (also the `partial` of a timeout or abort).
 *
 * `output` is the bounded combined text for the model:
 * ```
 * exit code: 0 · duration: 0.42s          (or "terminated by signal: SIGKILL", "timed out after 5s", "aborted")
 * <one line naming stopped processes, only when some were>
 * <per stream, what rendering changed, only when it changed something (tools README)>
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
  /** From the call's start (after any wait for a slot, `admission.waitedMs`) to its answer. */
  durationMs: Schema.Number,
  /**
   * The host's admission control: how long the call waited for one of its `limit` slots before it
   * started (its timeout counts from the start). Absent when the call never asked for a slot (aborted before).
   */
  admission: Schema.optional(Schema.Struct({ waitedMs: Schema.Number, limit: Schema.Number })),
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
  /**
   * What rendering changed per stream (`output` is rendered text; `stdout`/`stderr` keep the
   * bytes), present when it changed anything.
   */
  rendering: Schema.optional(Schema.Struct({ stdout: RenderCounts, stderr: RenderCounts })),
  /** Every pid this call signalled: leftovers after the exit, or the tree on timeout or abort. */
  killedPids: Schema.Array(Schema.Number),
  /** How the tree was contained (`Supervisor.Containment`) and what could not be stopped. */
  termination: Schema.Struct({
    ...Supervisor.Containment.fields,
    /** Pids of the tree still alive when the call returned (another user's, or stuck after SIGKILL). */
    survivors: Schema.Array(Schema.Number),
    /** True when a process outside the tree still held the output pipes open at the end. */
    pipesHeld: Schema.Boolean,
    /** Processes the call did not start found in its cgroup: moved back, never signalled. */
    foreign: Schema.optional(Schema.Array(Supervisor.ForeignMember)),
    /** Frozen cgroups the stop thawed before stopping the call. */
    thawed: Schema.optional(Schema.Number),
    /** Files the call left in /dev/shm, removed when it ended (their names). */
    shmRemoved: Schema.optional(Schema.Array(Schema.String))
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
export type BashError =
  | ToolError.ToolInvalidInput
  | ToolTimeout
  | ToolAborted
  | ToolError.ToolSpawnFailed
  | ToolError.ToolLauncherLost

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
  readonly digest: boolean
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
        reason: `${issue?.message ?? "invalid"}; expected { command: string, timeout?: number (seconds), digest?: boolean }`
      })
    }
    const { command, digest, timeout } = decoded.right
    if (command.trim().length === 0) {
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field: "command",
        reason: "the command is empty; pass the shell command to run"
      })
    }
    const commandMax = budgets.bashCommandMaxBytes
    if (InputBounds.utf8LengthUpTo(command, commandMax) > commandMax) {
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field: "command",
        reason: `the command is longer than ${commandMax} bytes (bashCommandMaxBytes); write the data to a file and pass a command that reads it`
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
    return {
      command,
      timeoutSeconds: timeout ?? budgets.bashTimeoutDefaultSeconds,
      digest: digest ?? budgets.digest === 1
    }
  })

/**
 * What Bash runs with: the budgets, the workspace, the session's scratch and the supervisor.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Budgets.Budgets | Scratch.Scratch | Workspace.Workspace | Supervisor.Supervisor

/**
 * The environment policy calls run under (`EnvPolicy`): a context reference whose default is the
 * default policy (the host's variables without `*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`,
 * `*CREDENTIAL*`); `layerEnvironment` provides another. The cookie `TOOLCAP_RUN_ID` is added to
 * whatever the policy gives.
 *
 * @since 0.1.0
 * @category services
 */
export const Environment = BashEnvironment

/**
 * Validates a policy and compiles it; fails with `EnvPolicyInvalid` naming the field.
 *
 * @since 0.1.0
 * @category constructors
 */
export const environment = (
  policy: unknown,
  source?: string
): Either.Either<Context.Tag.Service<typeof BashEnvironment>, EnvPolicy.EnvPolicyInvalid> =>
  Either.map(EnvPolicy.decode(policy, source), (decoded) => ({
    policy: decoded,
    apply: EnvPolicy.compile(decoded)
  }))

/**
 * The Bash calls of the context run under `policy` (validated here: a bad one fails the layer
 * with `EnvPolicyInvalid`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEnvironment = (policy: unknown): Layer.Layer<BashEnvironment, EnvPolicy.EnvPolicyInvalid> =>
  Layer.effect(BashEnvironment, environment(policy))

/** Decodes the input, runs the call and answers its ending: a result, or the typed error with the partial one. */
const execute = (
  input: unknown,
  options: Call.CallOptions
): Effect.Effect<BashResult, BashError, Requirements> =>
  Effect.flatMap(decodeInput(input), ({ command, digest, timeoutSeconds }) =>
    Effect.flatMap(
      Call.call(command, timeoutSeconds, { ...options, digest }),
      ({ ending, result }): Effect.Effect<BashResult, BashError> => {
        switch (ending.kind) {
          case "Exited":
            return Effect.succeed(result)
          case "TimedOut":
            return Effect.fail(
              new ToolTimeout({ timeoutSeconds, killedPids: result.killedPids, partial: result })
            )
          case "Aborted":
            return Effect.fail(new ToolAborted({ killedPids: result.killedPids, partial: result }))
        }
      }
    )
  )

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
): Effect.Effect<BashResult, BashError, Requirements> =>
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
): Stream.Stream<BashEvent, BashError, Requirements> =>
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
