/**
 * The `toolcap` command line: a sidecar for hosts in any language. `toolcap call <Tool> '<json>'`
 * prints exactly one JSON line — `{"ok":true,"result":...}` or `{"ok":false,"error":{"code":...}}`
 * — and exits 0 (ok), 2 (tool error) or 1 (usage error, nothing on stdout). With `--stream`,
 * Bash's chunks come first as NDJSON. Also: `mcp` (MCP server on stdio), `checkpoint build|show`,
 * `session end`, `sweep`, the guided `demo` and `doctor`.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Outcome, ToolDefs, ToolHost } from "@toolcap/adapters"
import { CheckpointStore, Transcript } from "@toolcap/checkpoint"
import { Scratch } from "@toolcap/spill"
import * as Demo from "./Demo.js"
import * as Doctor from "./Doctor.js"
import * as Call from "./internal/call.js"
import * as McpCommand from "./internal/mcp.js"
import { optionsOf } from "./internal/cliOptions.js"
import * as Declared from "./internal/options.js"
import { resolveDataDir } from "./internal/dataDir.js"
import * as Output from "./internal/output.js"
import { serveViewer } from "./internal/viewer.js"
import { ExitCode, printLine, setExitCode } from "./internal/output.js"
import { budgetsLayer, hostConfig, reportUsage, stderrLogger, usage } from "./internal/usage.js"

/**
 * A usage error: the command line itself is wrong. Reported on stderr with exit code 1.
 *
 * @since 0.1.0
 * @category errors
 */
export { UsageError } from "./internal/usage.js"

const call = Command.make(
  "call",
  {
    tool: Args.choice(
      ToolDefs.toolNames.map((name) => [name, name] as const),
      { name: "tool" }
    ).pipe(Args.withDescription("Read, Glob, Grep or Bash.")),
    input: Args.text({ name: "input" }).pipe(Args.withDescription("The tool input as one JSON object.")),
    ...optionsOf(Declared.call)
  },
  (args) => Call.run(args)
).pipe(Command.withDescription("Run one tool call and print its outcome as one JSON line."))

const mcp = Command.make("mcp", optionsOf(Declared.mcp), (args) => McpCommand.serve(args)).pipe(
  Command.withDescription("Serve Read, Glob, Grep and Bash over MCP (stdio).")
)

const sessionEnd = Command.make(
  "end",
  {
    session: Args.text({ name: "id" }).pipe(Args.withDescription("The session id to end.")),
    ...optionsOf(Declared.sessionEnd)
  },
  (args) =>
    Effect.gen(function* () {
      const dataDir = yield* resolveDataDir(args.dataDir)
      const scratch = yield* Scratch.make({ dataDir, sessionId: args.session }).pipe(Effect.mapError(usage))
      const fs = yield* FileSystem.FileSystem
      const existed = yield* fs.exists(scratch.sessionDir).pipe(Effect.orElseSucceed(() => false))
      yield* scratch.removeSession
      yield* printLine(
        Outcome.succeed({ sessionId: scratch.sessionId, sessionDir: scratch.sessionDir, removed: existed })
      )
      yield* setExitCode(ExitCode.ok)
    }).pipe(Effect.provide(Layer.merge(budgetsLayer, NodeFileSystem.layer)))
).pipe(Command.withDescription("End a session: remove its scratch directory (spill files)."))

/** `--store`, else `TOOLCAP_CHECKPOINT_STORE`, else the data dir's SQLite file (the host's default). */
const storeLocation = (store: Option.Option<string>) =>
  Option.isSome(store)
    ? Effect.succeed(store)
    : Config.option(Config.nonEmptyString("TOOLCAP_CHECKPOINT_STORE")).pipe(Effect.mapError(usage))

const checkpointBuild = Command.make(
  "build",
  {
    transcript: Args.file({ name: "transcript.json", exists: "yes" }).pipe(
      Args.withDescription("The transcript: toolcap's neutral shape, or Anthropic / OpenAI messages.")
    ),
    ...optionsOf(Declared.checkpointBuild)
  },
  (args) =>
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const bytes = yield* fs.readFile(args.transcript).pipe(Effect.mapError(usage))
      const config = yield* hostConfig({ ...args, workspace: Option.none(), approve: [] })
      const store = yield* storeLocation(args.store)
      const host = yield* ToolHost.make({ ...config, checkpointFile: Option.getOrUndefined(store) }).pipe(
        Effect.mapError(usage)
      )
      const exit = yield* Transcript.parseJson(bytes).pipe(
        Effect.flatMap((transcript) =>
          host.checkpoint(transcript, {
            summary: Option.getOrUndefined(args.summary),
            format: Option.getOrUndefined(args.format)
          })
        ),
        Effect.exit
      )
      yield* Call.answer("checkpoint", exit, "json")
    }).pipe(Effect.scoped, Effect.provide(budgetsLayer))
).pipe(Command.withDescription("Build a checkpoint of a transcript, persist it, print it as one JSON line."))

const checkpointShow = Command.make("show", optionsOf(Declared.checkpointShow), (args) =>
  Effect.gen(function* () {
    const config = yield* hostConfig({ ...args, workspace: Option.none(), approve: [] })
    const store = yield* storeLocation(args.store)
    const host = yield* ToolHost.make({ ...config, checkpointFile: Option.getOrUndefined(store) }).pipe(
      Effect.mapError(usage)
    )
    const exit = yield* Effect.exit(host.latestCheckpoint)
    if (Exit.isSuccess(exit) && Option.isNone(exit.value)) {
      yield* printLine(
        Outcome.fail({
          code: "CHECKPOINT_NOT_FOUND",
          message: `No checkpoint is stored for session "${args.session}" in ${Option.isSome(store) && !CheckpointStore.isPostgresUrl(store.value) ? store.value : Option.isSome(store) ? "the PostgreSQL store" : ToolHost.checkpointFileOf(config.dataDir)}. Build one with: toolcap checkpoint build <transcript.json> --session ${args.session}`,
          sessionId: args.session
        })
      )
      return yield* setExitCode(ExitCode.toolError)
    }
    yield* Call.answer("checkpoint", Exit.map(exit, Option.getOrNull), "json")
  }).pipe(Effect.scoped, Effect.provide(budgetsLayer))
).pipe(Command.withDescription("Print the session's latest checkpoint as one JSON line."))

const checkpoint = Command.make("checkpoint").pipe(
  Command.withDescription("Checkpoint (context compaction) commands."),
  Command.withSubcommands([checkpointBuild, checkpointShow])
)

const session = Command.make("session").pipe(
  Command.withDescription("Session commands."),
  Command.withSubcommands([sessionEnd])
)

const sweep = Command.make("sweep", optionsOf(Declared.sweep), (args) =>
  Effect.gen(function* () {
    const dataDir = yield* resolveDataDir(args.dataDir)
    const swept = yield* Scratch.sweep(dataDir, {
      staleAfterMs: Duration.toMillis(Duration.seconds(args.staleAfter))
    })
    yield* printLine(Outcome.succeed({ scratchRoot: Scratch.scratchRoot(dataDir), removed: swept.removed }))
    yield* setExitCode(ExitCode.ok)
  }).pipe(Effect.provide(NodeFileSystem.layer))
).pipe(Command.withDescription("Remove stale session directories whose owner process is gone."))

const ui = Command.make("ui", optionsOf(Declared.ui), (args) =>
  Effect.gen(function* () {
    const config = yield* hostConfig({ ...args, session: "default" })
    // on this command's budgets (TOOLCAP_* variables), like every other command
    yield* serveViewer({ ...config, live: false })
    // serves until the process is stopped (Ctrl-C); the scope then closes the server
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(budgetsLayer))
).pipe(
  Command.withDescription(
    "Serve the viewer of a data dir (spill files, workspace files, checkpoints) on 127.0.0.1; the URL is printed on stderr. Live calls: toolcap mcp --ui."
  )
)

const demo = Command.make("demo", optionsOf(Declared.demo), (args) =>
  Demo.run({ keep: args.keep }).pipe(Effect.zipRight(setExitCode(ExitCode.ok)), Effect.provide(budgetsLayer))
).pipe(Command.withDescription("A guided tour of every bounded behaviour, on generated data."))

const doctor = Command.make("doctor", {}, () => Doctor.run.pipe(Effect.provide(budgetsLayer))).pipe(
  Command.withDescription(
    "Check what this machine gives toolcap: launcher, cgroup, Landlock, ripgrep, SQLite; exits 1 when a part is broken."
  )
)

const toolcap = Command.make("toolcap").pipe(
  Command.withDescription("Bounded Read, Glob, Grep and Bash for AI agents."),
  Command.withSubcommands([call, mcp, checkpoint, session, sweep, ui, demo, doctor])
)

const cli = Command.run(toolcap, { name: "toolcap", version: "0.1.0" })

/** ANSI style sequences (colour, bold), which @effect/cli puts into its help and errors. */
// oxlint-disable-next-line no-control-regex -- the escape character is what is being removed
const ansiStyle = /\u001b\[[0-9;]*m/g

const withoutStyle = (args: ReadonlyArray<unknown>): Array<unknown> =>
  args.map((arg) => (typeof arg === "string" ? arg.replace(ansiStyle, "") : arg))

/** Whether a stream is a terminal that may be styled (never with NO_COLOR set). */
const styled = (stream: NodeJS.WriteStream) => stream.isTTY === true && process.env["NO_COLOR"] === undefined

/** A console that styles only what goes to a terminal (and never with NO_COLOR set). */
const terminalAware = (console: Console.Console): Console.Console => {
  const out = styled(process.stdout)
  const err = styled(process.stderr)
  return {
    ...console,
    log: (...args) => console.log(...(out ? args : withoutStyle(args))),
    error: (...args) => console.error(...(err ? args : withoutStyle(args))),
    unsafe: {
      ...console.unsafe,
      log: (...args) => console.unsafe.log(...(out ? args : withoutStyle(args))),
      error: (...args) => console.unsafe.error(...(err ? args : withoutStyle(args)))
    }
  }
}

/**
 * Runs the CLI on `process.argv`-style arguments. Usage errors are reported on stderr and set exit
 * code 1; the exit code a command settled on is read with `exitCode()`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (argv: ReadonlyArray<string>): Effect.Effect<void> =>
  Effect.consoleWith((console) => Effect.withConsole(cli(argv), terminalAware(console))).pipe(
    // @effect/cli already printed its own validation errors with the help text.
    Effect.catchAll((error) =>
      ValidationError.isValidationError(error) ? setExitCode(ExitCode.usage) : reportUsage(error)
    ),
    Effect.provide(stderrLogger),
    Effect.provide(NodeContext.layer)
  )

/**
 * Runs the CLI as the process's main program on the arguments after the script path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const main = (argv: ReadonlyArray<string>): void => Output.runMain(run(["node", "toolcap", ...argv]))

/**
 * The exit code the last command settled on (0 ok, 2 tool error, 1 usage error), if any.
 *
 * @since 0.1.0
 * @category constructors
 */
export const exitCode = (): number | undefined => Output.exitCode()
