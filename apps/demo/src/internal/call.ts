/**
 * `toolcap call <Tool> '<json>'`: one tool call, one JSON answer line (or, with `--text`, the
 * text the model reads of it). Also reachable without the command-line framework (`parseArgv`,
 * over the same option declarations), which the executable uses for `call` so a call does not pay
 * for loading it.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import { ModelOutput, Outcome, ToolDefs, ToolHost } from "@toolcap/adapters"
import { type Confinement, Supervisor } from "@toolcap/tools"
import * as Argv from "./argv.js"
import * as Options from "./options.js"
import { ExitCode, printLine, printText, runMain, setExitCode, streamLine } from "./output.js"
import {
  budgetsLayerFor,
  environmentOf,
  hostConfig,
  reportUsage,
  stderrLogger,
  UsageError,
  usage
} from "./usage.js"

/** The arguments of `call`: the tool, its input, and the values of `Options.call`. @internal */
export interface CallArgs extends Argv.Values<typeof Options.call> {
  readonly tool: ToolDefs.ToolName
  readonly input: string
}

const parseInput = (text: string): Effect.Effect<unknown, UsageError> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) =>
      new UsageError({
        message: `the tool input is not valid JSON (${error instanceof Error ? error.message : String(error)}); pass one JSON object, e.g. '{"path":"README.md"}'`
      })
  })

/** The guards a Bash, Grep or Glob result reports, as one line for a person; undefined for Read. @internal */
export const guardLine = (tool: string, result: unknown): string | undefined => {
  const termination = (result as { readonly termination?: Supervisor.Containment }).termination
  if (tool === "Bash" && termination !== undefined)
    return `toolcap: Bash: ${Supervisor.describeContainment(termination)}`
  const guard = (result as { readonly guard?: Confinement.Guard }).guard
  if ((tool !== "Grep" && tool !== "Glob") || guard === undefined) return undefined
  const reads = guard.landlockRead
    ? "reads confined to the roots by Landlock"
    : `reads not confined by the kernel (${guard.landlockReadReason ?? "no reason given"})`
  const ceiling = guard.memoryCeiling
  const memory =
    ceiling === undefined
      ? "no memory ceiling"
      : `memory ceiling ${Math.round(ceiling.maxBytes / 1024 / 1024)} MiB (RLIMIT_DATA${ceiling.reason === undefined ? "" : `, ${ceiling.reason}`})`
  return `toolcap: ${tool}: ${guard.launcher ? "ripgrep started by the launcher" : "no launcher"}; ${reads}; ${memory}`
}

/** How an answer is printed: one JSON line, the stream's last NDJSON line, or the model's text. @internal */
export type AnswerFormat = "json" | "stream" | "text"

/** Prints the answer of a settled call in the chosen format and records the exit code. @internal */
export const answer = (tool: string, exit: Exit.Exit<unknown, unknown>, format: AnswerFormat) =>
  Effect.gen(function* () {
    const settled = Outcome.fromExit(tool, exit)
    // A defect is a bug, not a tool error: it is reported on stderr and exits 1.
    if (Either.isLeft(settled)) return yield* Effect.die(Cause.squash(settled.left))
    const outcome = settled.right
    if (format === "text") {
      yield* printText(ModelOutput.text(tool, outcome))
      // for the person reading: which guards applied (on stderr: stdout is the model's text)
      const guard = outcome.ok ? guardLine(tool, outcome.result) : undefined
      if (guard !== undefined) yield* Effect.sync(() => process.stderr.write(`${guard}\n`))
    } else if (format === "stream") {
      yield* printLine(
        outcome.ok ? { type: "result", result: outcome.result } : { type: "error", error: outcome.error }
      )
    } else {
      yield* printLine(outcome)
    }
    yield* setExitCode(outcome.ok ? ExitCode.ok : ExitCode.toolError)
  })

/**
 * Runs the call and prints its answer. A signal (interruption) before the call started still
 * answers `TOOL_ABORTED`; during the call, the call is aborted and answers itself (with Bash's
 * partial output) once its process tree is gone.
 *
 * @internal
 */
export const run = (args: CallArgs): Effect.Effect<void, UsageError> => {
  let answered = false
  const respond = (exit: Exit.Exit<unknown, unknown>) =>
    Effect.zipRight(
      Effect.sync(() => (answered = true)),
      answer(args.tool, exit, args.text ? "text" : args.stream ? "stream" : "json")
    )
  return Effect.gen(function* () {
    if (args.text && args.stream)
      return yield* new UsageError({ message: "--text and --stream cannot be combined; pass one of them" })
    const input = yield* parseInput(args.input)
    const config = yield* hostConfig(args)
    const environment = yield* environmentOf(args)
    // one call per process: a watched file index would be built for a single search
    const host = yield* ToolHost.make({ ...config, environment, fileIndex: false }).pipe(
      Effect.mapError(usage)
    )
    const controller = new AbortController()
    const onChunk = args.stream
      ? (chunk: { readonly stream: string; readonly seq: number; readonly data: string }) =>
          streamLine({ type: "chunk", stream: chunk.stream, seq: chunk.seq, data: chunk.data })
      : undefined
    // Daemon: a signal interrupting this command must not interrupt the call itself; the call is
    // aborted instead, so it still answers (TOOL_ABORTED with its partial output) once its
    // process tree is gone. Forked uninterruptibly, so no signal lands between the fork and the
    // watch that aborts it.
    const exit = yield* Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        Effect.forkDaemon(host.call(args.tool, input, { signal: controller.signal, onChunk })),
        (running) =>
          restore(Fiber.await(running)).pipe(
            Effect.onInterrupt(() =>
              Effect.sync(() => controller.abort()).pipe(
                Effect.zipRight(Fiber.await(running)),
                Effect.flatMap(respond),
                Effect.orDie
              )
            )
          )
      )
    )
    yield* respond(exit)
  }).pipe(
    Effect.scoped,
    Effect.provide(budgetsLayerFor(Option.getOrUndefined(args.profile))),
    // inside the answer on interruption: a signal while even the logger is being set up still answers
    Effect.provide(stderrLogger),
    Effect.onInterrupt(() =>
      answered ? Effect.void : respond(Exit.interrupt(FiberId.none)).pipe(Effect.orDie)
    )
  )
}

/** The usage error of a command line the scan could not read. */
const refusal = (refused: Argv.Refused | Argv.Invalid): UsageError => {
  switch (refused.kind) {
    case "Unknown":
      return new UsageError({ message: `unknown option ${refused.name} for call` })
    case "MissingValue":
      return new UsageError({ message: `${refused.name} needs a value` })
    case "Missing":
      return new UsageError({ message: `${refused.name} is required` })
    case "Invalid":
      return new UsageError({
        message: `${refused.name} must be ${refused.expected}, got ${JSON.stringify(refused.value)}`
      })
  }
}

/**
 * Parses the arguments after `call` (`<tool> <input>` and the options of `Options.call`, anywhere,
 * `--name=value` too), checking the tool name and the preset; the host checks the directories
 * when it starts.
 *
 * @internal
 */
export const parseArgv = (argv: ReadonlyArray<string>): Either.Either<CallArgs, UsageError> => {
  const parsed = Argv.parse(argv, Options.call)
  if (parsed.kind !== "Parsed") return Either.left(refusal(parsed))
  const [tool, input, ...extra] = parsed.positional
  if (tool === undefined || input === undefined || extra.length > 0) {
    return Either.left(
      new UsageError({
        message: `usage: toolcap call <${ToolDefs.toolNames.join("|")}> '<json input>' [options]`
      })
    )
  }
  if (!ToolDefs.isToolName(tool)) {
    return Either.left(
      new UsageError({ message: `no such tool ${tool}; use one of ${ToolDefs.toolNames.join(", ")}` })
    )
  }
  return Either.right({ tool, input, ...parsed.values })
}

/**
 * Runs `toolcap call ...` (`argv` without the node and script paths) as the process's main program.
 *
 * @internal
 */
export const main = (argv: ReadonlyArray<string>): void =>
  runMain(
    Either.match(parseArgv(argv.slice(1)), { onLeft: reportUsage, onRight: run }).pipe(
      Effect.catchAll(reportUsage)
    )
  )
