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
import * as Argv from "./argv.js"
import { runMain } from "./output.js"
import { budgetsLayerFor, hostConfig, reportUsage, stderrLogger, UsageError, usage } from "./usage.js"

/**
 * Default age before `sweep` (and `mcp` at startup) removes a dead session's scratch directory:
 * a day, so spill files of a `toolcap call` session stay readable for the rest of the agent's
 * work, while crashed sessions do not pile up. Only directories whose owner process is gone are
 * ever removed, whatever the age.
 *
 * @internal
 */
export const defaultStaleAfterSeconds = 24 * 60 * 60

/** The arguments of `mcp`. @internal */
export interface McpArgs {
  readonly workspace: Option.Option<string>
  readonly dataDir: Option.Option<string>
  readonly session: Option.Option<string>
  readonly approve: ReadonlyArray<string>
  readonly staleAfter: number
  readonly ui: boolean
  /** The preset of budgets, over `TOOLCAP_PROFILE`. */
  readonly profile: Option.Option<Budgets.Profile>
}

/** Serves until stdin closes (or a signal); the session's scratch directory is removed then. @internal */
export const serve = (args: McpArgs) =>
  Effect.gen(function* () {
    if (args.staleAfter < 0)
      return yield* new UsageError({ message: "--stale-after must be 0 or more seconds" })
    const budgets = yield* Budgets.Budgets
    const config = yield* hostConfig({
      ...args,
      session: Option.getOrElse(args.session, () => `mcp-${process.pid}`)
    })
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
          endSessionOnClose: true,
          sweepStaleAfterMs: Duration.toMillis(Duration.seconds(args.staleAfter))
        }).pipe(Layer.provide(Layer.succeed(Budgets.Budgets, budgets)), Layer.mapError(usage))
      )
    )
  }).pipe(Effect.scoped, Effect.provide(budgetsLayerFor(Option.getOrUndefined(args.profile))))

const spec: Argv.Spec = {
  values: new Set(["--workspace", "--data-dir", "--session", "--approve", "--stale-after", "--profile"]),
  flags: new Set(["--ui"])
}

/** Options the framework takes once (`--approve` is repeatable). */
const single = ["--workspace", "--data-dir", "--session", "--stale-after", "--profile"]

/** Whether the framework would take `dir` for a directory option: absent, or a directory. */
const directoryOrAbsent = (dir: string) => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? true

/**
 * The arguments after `mcp`, or `undefined` when the command line is anything but plain.
 *
 * @internal
 */
export const parseArgv = (argv: ReadonlyArray<string>): McpArgs | undefined => {
  const scanned = Argv.scan(argv, spec)
  if (scanned.kind !== "Scanned" || scanned.positional.length > 0) return undefined
  if (single.some((name) => (scanned.values.get(name)?.length ?? 0) > 1)) return undefined
  const staleAfter = Argv.last(scanned, "--stale-after")
  if (staleAfter !== undefined && !/^[0-9]{1,15}$/.test(staleAfter)) return undefined
  const profile = Argv.last(scanned, "--profile")
  if (profile !== undefined && !Budgets.isProfile(profile)) return undefined
  const directories = ["--workspace", "--data-dir", "--approve"].flatMap(
    (name) => scanned.values.get(name) ?? []
  )
  if (!directories.every(directoryOrAbsent)) return undefined
  const value = (name: string) => Option.fromNullable(Argv.last(scanned, name))
  return {
    workspace: value("--workspace"),
    dataDir: value("--data-dir"),
    session: value("--session"),
    approve: scanned.values.get("--approve") ?? [],
    staleAfter: staleAfter === undefined ? defaultStaleAfterSeconds : Number(staleAfter),
    ui: scanned.flags.has("--ui"),
    profile: Option.filter(Option.fromNullable(profile), Budgets.isProfile)
  }
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
