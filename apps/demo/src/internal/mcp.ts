/**
 * `toolcap mcp`: serves Read, Glob, Grep and Bash over MCP on stdio. The framework's `mcp` command
 * runs `serve`; the executable runs a plain command line through `main` without loading the
 * framework at all, because a server lives long and everything it loads stays resident (the
 * framework and its parsers are ~20 MB of an idle server's memory). Any other command line (help,
 * an unknown or repeated option, a malformed number, a path that is not a directory) goes through
 * the framework, which words what is wrong.
 */
import * as fs from "node:fs"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ToolHost } from "@toolcap/adapters"
import * as Mcp from "@toolcap/adapters/Mcp"
import { Budgets } from "@toolcap/limits"
import { Supervisor } from "@toolcap/tools"
import * as Argv from "./argv.js"
import * as Options from "./options.js"
import { runMain } from "./output.js"
import { budgetsLayerFor, environmentOf, hostConfig, reportUsage, stderrLogger, usage } from "./usage.js"

/** The arguments of `mcp`: the values of `Options.mcp`. @internal */
export type McpArgs = Argv.Values<typeof Options.mcp>

/** Serves until stdin closes (or a signal); the session's scratch directory is removed then. @internal */
export const serve = (args: McpArgs) =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    const limit = Option.getOrUndefined(args.maxConcurrentCalls)
    const limitInvalid = limit === undefined ? undefined : Supervisor.maxConcurrentCallsInvalid(limit)
    if (limitInvalid !== undefined) {
      return yield* Effect.fail(usage({ message: `--max-concurrent-calls ${limitInvalid}` }))
    }
    const config = yield* hostConfig({
      ...args,
      session: Option.getOrElse(args.session, () => `mcp-${process.pid}`)
    })
    const environment = yield* environmentOf(args)
    // the viewer is loaded only when asked for
    const viewer = args.ui
      ? yield* Effect.flatMap(
          Effect.promise(() => import("./viewer.js")),
          (module) => module.serveViewer({ ...config, live: true })
        )
      : undefined
    yield* Mcp.serve({ name: "toolcap", version: "0.1.0" }).pipe(
      Effect.provide(
        ToolHost.layer({
          ...config,
          observer: viewer?.observer,
          environment,
          endSessionOnClose: true,
          sweepStaleAfterMs: Duration.toMillis(Duration.seconds(args.staleAfter)),
          maxConcurrentCalls: limit
        }).pipe(Layer.provide(Layer.succeed(Budgets.Budgets, budgets)), Layer.mapError(usage))
      )
    )
  }).pipe(Effect.scoped, Effect.provide(budgetsLayerFor(Option.getOrUndefined(args.profile))))

/** Whether the framework would take `dir` for a directory option: absent, or a directory. */
const directoryOrAbsent = (dir: string) => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? true

/**
 * The arguments after `mcp`, or `undefined` when the command line is anything but plain.
 *
 * @internal
 */
export const parseArgv = (argv: ReadonlyArray<string>): McpArgs | undefined => {
  const parsed = Argv.parse(argv, Options.mcp)
  if (parsed.kind !== "Parsed" || parsed.positional.length > 0 || parsed.repeated.length > 0) return undefined
  if (!parsed.directories.every(directoryOrAbsent)) return undefined
  return parsed.values
}

/**
 * Runs `toolcap mcp ...` (`argv` without the node and script paths) as the process's main
 * program; `false` when the command line is not plain and the framework must take it.
 *
 * @internal
 */
export const main = (argv: ReadonlyArray<string>): boolean => {
  const args = parseArgv(argv.slice(1))
  if (args === undefined) return false
  runMain(serve(args).pipe(Effect.catchAll(reportUsage), Effect.provide(stderrLogger)))
  return true
}
