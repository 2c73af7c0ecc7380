/**
 * The `TOOLCAP_*` variables the supervisor and its tiers read: each name and its allowed values
 * declared here once, read once per layer through Effect `Config` (so from the host's
 * `ConfigProvider`, the process environment by default). A value outside the allowed ones fails the
 * layer with a message naming the variable and the values it takes; an unset or empty variable
 * means the default. The child's environment (`process.env` handed to a call) is not configuration
 * and is not read here.
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { ToolError } from "@toolcap/limits"

/** Each variable with its allowed values; `[]` takes any text (a path, a number checked later). @internal */
export const variables = {
  containment: { name: "TOOLCAP_CONTAINMENT", values: ["cgroup", "group"] },
  cgroupEntry: { name: "TOOLCAP_CGROUP_ENTRY", values: ["launcher", "prologue"] },
  scopes: { name: "TOOLCAP_SCOPES", values: ["on", "off"] },
  namespaces: { name: "TOOLCAP_NAMESPACES", values: ["on", "off"] },
  cgroupfs: { name: "TOOLCAP_CGROUPFS", values: ["denied", "writable"] },
  confinement: { name: "TOOLCAP_CONFINEMENT", values: ["on", "off"] },
  maxConcurrentCalls: { name: "TOOLCAP_MAX_CONCURRENT_CALLS", values: [] },
  launcher: { name: "TOOLCAP_LAUNCHER", values: [] }
} as const

type Variables = typeof variables

/** The message for a value a variable does not take. @internal */
export const refusal = (name: string, values: ReadonlyArray<string>, raw: string): string =>
  `${name} must be one of ${values.join(", ")}, got ${JSON.stringify(raw)} (unset it for the default)`

/** A variable's text, undefined when unset or empty. */
const text = (name: string): Config.Config<string | undefined> =>
  Config.string(name).pipe(
    Config.option,
    Config.map((value) => Option.getOrUndefined(Option.filter(value, (raw) => raw.trim() !== "")))
  )

/** A variable that takes one of `values` (surrounding blanks ignored). */
const choice = <const V extends string>(
  name: string,
  values: ReadonlyArray<V>
): Config.Config<V | undefined> =>
  Config.mapOrFail(text(name), (raw) => {
    if (raw === undefined) return Either.right(undefined)
    const value = raw.trim()
    return (values as ReadonlyArray<string>).includes(value)
      ? Either.right(value as V)
      : Either.left(ConfigError.InvalidData([], refusal(name, values, raw)))
  })

/** What the variables say, each undefined when unset. @internal */
export type Settings = {
  readonly [K in keyof Variables]: Variables[K]["values"] extends readonly []
    ? string | undefined
    : Variables[K]["values"][number] | undefined
}

/** The settings as a `Config`, read from whatever `ConfigProvider` the layer is built under. @internal */
export const config: Config.Config<Settings> = Config.all({
  containment: choice(variables.containment.name, variables.containment.values),
  cgroupEntry: choice(variables.cgroupEntry.name, variables.cgroupEntry.values),
  scopes: choice(variables.scopes.name, variables.scopes.values),
  namespaces: choice(variables.namespaces.name, variables.namespaces.values),
  cgroupfs: choice(variables.cgroupfs.name, variables.cgroupfs.values),
  confinement: choice(variables.confinement.name, variables.confinement.values),
  maxConcurrentCalls: text(variables.maxConcurrentCalls.name),
  launcher: text(variables.launcher.name)
})

/**
 * The settings, read once; a bad value is a `ToolInvalidInput` naming the variable (the layer dies
 * with it: a host that asked for a setting must not run without it).
 *
 * @internal
 */
export const read: Effect.Effect<Settings, ToolError.ToolInvalidInput> = Effect.mapError(
  config,
  (error) =>
    new ToolError.ToolInvalidInput({
      tool: "Supervisor",
      field: "configuration",
      reason: ConfigError.reduceWithContext(error, undefined, {
        andCase: (_, left, right) => `${left}; ${right}`,
        orCase: (_, left, right) => `${left}; ${right}`,
        invalidDataCase: (_, __, message) => message,
        missingDataCase: (_, __, message) => message,
        sourceUnavailableCase: (_, path, message) => `${path.join(".")}: ${message}`,
        unsupportedCase: (_, path, message) => `${path.join(".")}: ${message}`
      })
    })
)
