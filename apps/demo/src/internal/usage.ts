/**
 * Usage errors and the pieces of a host configuration every command shares.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as path from "node:path"
import { Budgets, EnvPolicy } from "@toolcap/limits"
import { resolveDataDir } from "./dataDir.js"
import { ExitCode, setExitCode } from "./output.js"

/**
 * A usage error: the command line itself is wrong. Reported on stderr with exit code 1.
 *
 * @internal
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** @internal */
export const usage = (error: { readonly message: string }) => new UsageError({ message: error.message })

/**
 * The budgets: a preset (`profile`, else `TOOLCAP_PROFILE`, else `spec`), overridden by the
 * `TOOLCAP_*` field variables. When none of those variables is set, the preset directly: reading
 * each of them through `Config` is a noticeable part of a one-shot call's start, and answers the
 * preset anyway.
 *
 * @internal
 */
export const budgetsLayerFor = (profile: Budgets.Profile | undefined) =>
  Layer.unwrapEffect(
    Effect.sync(() =>
      process.env[Budgets.profileVariable] !== undefined ||
      Budgets.fieldNames.some((field) => process.env[Budgets.envName(field)] !== undefined)
        ? (profile === undefined ? Budgets.layerConfig : Budgets.layerConfigWith(profile)).pipe(
            Layer.mapError(usage)
          )
        : Budgets.layerProfile(profile ?? "spec")
    )
  )

/** The budgets of `TOOLCAP_PROFILE` and the `TOOLCAP_*` variables. @internal */
export const budgetsLayer = budgetsLayerFor(undefined)

/**
 * A host's configuration from the shared options. Relative directories resolve against the
 * caller's working directory; the workspace defaults to it.
 *
 * @internal
 */
export const hostConfig = (args: {
  readonly workspace: Option.Option<string>
  readonly dataDir: Option.Option<string>
  readonly approve: ReadonlyArray<string>
  readonly session: string
}) =>
  Effect.map(resolveDataDir(args.dataDir), (dataDir) => ({
    workspace: path.resolve(Option.getOrElse(args.workspace, () => process.cwd())),
    dataDir,
    sessionId: args.session,
    approvedExternalRoots: args.approve.map((dir) => path.resolve(dir))
  }))

/** The `--env-*` flags' values. @internal */
export interface EnvironmentArgs {
  readonly envInherit: Option.Option<"all" | "core" | "none">
  readonly envExclude: ReadonlyArray<string>
  readonly envIncludeOnly: ReadonlyArray<string>
  readonly envInclude: ReadonlyArray<string>
  readonly envSet: ReadonlyArray<string>
  readonly envKeepSecrets: boolean
}

/**
 * Bash's environment policy: `$TOOLCAP_ENV_POLICY` (JSON), each field a flag gives replaced by
 * the flag's; undefined (the default policy) when neither says anything. A bad value is a usage
 * error naming the flag or the variable.
 *
 * @internal
 */
export const environmentOf = (
  args: EnvironmentArgs
): Effect.Effect<EnvPolicy.EnvPolicy | undefined, UsageError> =>
  Effect.suspend(() => {
    const fromVariable = EnvPolicy.fromVariable(process.env)
    if (Either.isLeft(fromVariable)) return Effect.fail(usage(fromVariable.left))
    const set: Record<string, string> = {}
    for (const entry of args.envSet) {
      const at = entry.indexOf("=")
      if (at <= 0)
        return Effect.fail(
          new UsageError({
            message: `--env-set ${JSON.stringify(entry)} is not NAME=VALUE; pass e.g. --env-set CI=1`
          })
        )
      set[entry.slice(0, at)] = entry.slice(at + 1)
    }
    const flags: Record<string, unknown> = {
      ...(Option.isSome(args.envInherit) ? { inherit: args.envInherit.value } : {}),
      ...(args.envKeepSecrets ? { ignoreDefaultExcludes: true } : {}),
      ...(args.envExclude.length > 0 ? { exclude: args.envExclude } : {}),
      ...(args.envIncludeOnly.length > 0 ? { includeOnly: args.envIncludeOnly } : {}),
      ...(args.envInclude.length > 0 ? { include: args.envInclude } : {}),
      ...(args.envSet.length > 0 ? { set } : {})
    }
    if (Object.keys(flags).length === 0) return Effect.succeed(fromVariable.right)
    const decoded = EnvPolicy.decode({ ...fromVariable.right, ...flags }, "the --env-* flags")
    return Either.isLeft(decoded) ? Effect.fail(usage(decoded.left)) : Effect.succeed(decoded.right)
  })

/** Reports a usage error on stderr and settles on exit code 1. @internal */
export const reportUsage = (error: { readonly message: string }): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.sync(() => process.stderr.write(`toolcap: ${error.message}\n`)),
    setExitCode(ExitCode.usage)
  )

/** stdout belongs to the JSON contract (and to MCP): Effect's logs go to stderr. @internal */
export const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.stringLogger))
