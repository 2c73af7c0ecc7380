/**
 * `toolcap checkpoint build <transcript.json> --session <id> [--summary s] [--format f]
 * [--data-dir d] [--store s]` without the command-line framework and without the tools: the
 * executable loads this module (the checkpoint package and SQLite) for a well-formed command line
 * naming an existing file, so a build pays for reading, parsing and saving the transcript rather
 * than for loading every command. Any other command line (help, an unknown or repeated option, a
 * missing file) goes through the framework, which words the usage errors.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Outcome from "@toolcap/adapters/Outcome"
import { Checkpoint, CheckpointStore, TokenEstimator, Transcript } from "@toolcap/checkpoint"
import { Scratch } from "@toolcap/spill"
import * as Argv from "./argv.js"
import * as Options from "./options.js"
import { resolveDataDir } from "./dataDir.js"
import { ExitCode, printLine, runMain, setExitCode } from "./output.js"
import { budgetsLayer, reportUsage, stderrLogger, type UsageError, usage } from "./usage.js"

/** The arguments of `checkpoint build`: the transcript file and the values of `Options.checkpointBuild`. @internal */
export interface BuildArgs extends Argv.Values<typeof Options.checkpointBuild> {
  readonly transcript: string
}

/**
 * The arguments after `checkpoint build`, or `undefined` when the command line is anything but
 * plain (the framework then parses it and words what is wrong).
 *
 * @internal
 */
export const parseArgv = (argv: ReadonlyArray<string>): BuildArgs | undefined => {
  const parsed = Argv.parse(argv, Options.checkpointBuild)
  // an unknown, missing, repeated, valueless or invalid option is the framework's to word
  if (parsed.kind !== "Parsed" || parsed.repeated.length > 0) return undefined
  // an empty store variable is the framework's to refuse
  if (process.env["TOOLCAP_CHECKPOINT_STORE"] === "") return undefined
  const [transcript, ...extra] = parsed.positional
  if (transcript === undefined || extra.length > 0) return undefined
  if (!fs.statSync(transcript, { throwIfNoEntry: false })?.isFile()) return undefined
  return { transcript, ...parsed.values }
}

/** Builds and saves the checkpoint, and prints its answer line (as the framework's command does). @internal */
export const run = (args: BuildArgs): Effect.Effect<void, UsageError> =>
  Effect.gen(function* () {
    const bytes = fs.readFileSync(args.transcript)
    const dataDir = yield* resolveDataDir(args.dataDir)
    const location =
      Option.getOrUndefined(args.store) ??
      process.env["TOOLCAP_CHECKPOINT_STORE"] ??
      path.join(dataDir, CheckpointStore.defaultFileName)
    // a host refuses an unusable data dir before anything else; so does this command
    yield* Scratch.checkDataDir(dataDir).pipe(Effect.mapError(usage))
    const exit = yield* Effect.gen(function* () {
      const neutral = yield* Transcript.parseJson(bytes).pipe(
        Effect.flatMap((input) => Transcript.fromAny(input, Option.getOrUndefined(args.format)))
      )
      const built = yield* Checkpoint.build(neutral, { summary: Option.getOrUndefined(args.summary) }).pipe(
        Effect.provide(TokenEstimator.layer)
      )
      // the store is opened only for a transcript that was built: a refused one writes nothing
      return yield* Effect.flatMap(CheckpointStore.CheckpointStore, (store) =>
        store.save(args.session, neutral, built)
      ).pipe(Effect.provide(CheckpointStore.layerFromLocation(location)))
    }).pipe(Effect.exit)
    const settled = Outcome.fromExit("checkpoint", exit)
    // a defect is a bug, not a refused transcript: reported on stderr, exit 1
    if (Either.isLeft(settled)) return yield* Effect.die(Cause.squash(settled.left))
    yield* printLine(settled.right)
    yield* setExitCode(settled.right.ok ? ExitCode.ok : ExitCode.toolError)
  }).pipe(Effect.provide(budgetsLayer), Effect.provide(stderrLogger))

/**
 * Runs `toolcap checkpoint build ...` (`argv` without the node and script paths) as the process's
 * main program; `false` when the command line is not plain and the framework must take it.
 *
 * @internal
 */
export const main = (argv: ReadonlyArray<string>): boolean => {
  const args = parseArgv(argv.slice(2))
  if (args === undefined) return false
  runMain(run(args).pipe(Effect.catchAll(reportUsage), Effect.asVoid))
  return true
}
