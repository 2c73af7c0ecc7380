/**
 * The environment policy of Bash (rules B14): which of the host's variables a call's shell
 * gets. Pure: `compile` turns a validated policy into a function from the host's environment to
 * the call's; the supervisor adds the call's cookie (`TOOLCAP_RUN_ID`) after it, always.
 *
 * The steps, in order (the shape of Codex's `shell_environment_policy`):
 * 1. `inherit`: `all` of the host's variables (the default), the `core` ones (`coreNames`,
 *    `LC_*` included) or `none`;
 * 2. unless `ignoreDefaultExcludes`, drop names matching `defaultExcludes` (`*KEY*`, `*SECRET*`,
 *    `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`): a host's API keys never reach a model's command
 *    unless asked for;
 * 3. drop names matching `exclude`;
 * 4. when `includeOnly` is given, keep only names matching one of its patterns;
 * 5. add the host's variables whose names match `include`, whatever steps 1–4 dropped (the
 *    explicit way to pass one secret, e.g. `ANTHROPIC_API_KEY`);
 * 6. set the variables of `set` (a value the host chose, not the host's own).
 *
 * Patterns are globs over the whole name, case-insensitive: `*` any run of characters, `?` one
 * character, everything else literal.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * The names `inherit: "core"` keeps (and every `LC_*`): what a shell and the common tools need to
 * find programs, the user's home and temp dir, and to print text in the user's language.
 *
 * @since 0.1.0
 * @category models
 */
export const coreNames: ReadonlyArray<string> = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "USER",
  "USERNAME",
  "TMPDIR",
  "TEMP",
  "TMP",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ"
]

/** `LC_ALL`, `LC_CTYPE`, ...: the locale, part of `core`. */
const CORE_PATTERNS: ReadonlyArray<string> = [...coreNames, "LC_*"]

/**
 * Names never passed unless `ignoreDefaultExcludes` or an `include` pattern says so: the words
 * the secrets of agent hosts' environments carry (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
 * `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`).
 *
 * @since 0.1.0
 * @category models
 */
export const defaultExcludes: ReadonlyArray<string> = [
  "*KEY*",
  "*SECRET*",
  "*TOKEN*",
  "*PASSWORD*",
  "*CREDENTIAL*"
]

/**
 * The variable the call's cookie goes in; the supervisor sets it last, so no policy can drop or
 * forge it (`set` of it is refused).
 */
const COOKIE = "TOOLCAP_RUN_ID"

/**
 * The environment variable the `toolcap` CLI reads a policy from (as JSON, e.g.
 * `{"inherit":"core","include":["ANTHROPIC_API_KEY"]}`) when no `--env-*` flag is given.
 *
 * @since 0.1.0
 * @category models
 */
export const variable = "TOOLCAP_ENV_POLICY"

/**
 * The most patterns (or `set` entries) a policy holds: far more than any real one, and it bounds
 * the work per call (every host variable is matched against every pattern).
 */
const MAX_ENTRIES = 256

/** A name the kernel can put in an environment: not empty, no `=`, no NUL. */
const NAME = /^[^=\0]+$/

const pattern = Schema.String.pipe(
  Schema.filter(
    (value) =>
      (value.length > 0 && !value.includes("=") && !value.includes("\0")) ||
      `must be a non-empty glob over variable names (no "=" or NUL), got ${JSON.stringify(value)}`
  )
)

const patterns = Schema.Array(pattern).pipe(
  Schema.filter((values) => values.length <= MAX_ENTRIES || `holds more than ${MAX_ENTRIES} patterns`)
)

const setEntries = Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
  Schema.filter((record) => {
    const names = Object.keys(record)
    if (names.length > MAX_ENTRIES) return `holds more than ${MAX_ENTRIES} variables`
    for (const name of names) {
      if (!NAME.test(name))
        return `${JSON.stringify(name)} is not a variable name (empty, or holds "=" or NUL)`
      if (name === COOKIE) return `${COOKIE} is the call's cookie, set by toolcap; it cannot be set`
      if (record[name]!.includes("\0")) return `the value of ${name} holds a NUL, which no environment can`
    }
    return true
  })
)

/**
 * A policy as hosts give it; every field is optional (the empty policy is the default one).
 *
 * @since 0.1.0
 * @category models
 */
export const EnvPolicy = Schema.Struct({
  /** Which of the host's variables start the call's environment: `all` (default), `core`, `none`. */
  inherit: Schema.optional(Schema.Literal("all", "core", "none")),
  /** Pass names matching `defaultExcludes` too (default false). */
  ignoreDefaultExcludes: Schema.optional(Schema.Boolean),
  /** More names to drop. */
  exclude: Schema.optional(patterns),
  /** When given: keep only the names matching one of these. */
  includeOnly: Schema.optional(patterns),
  /** Host variables passed whatever `inherit`, the excludes and `includeOnly` say. */
  include: Schema.optional(patterns),
  /** Variables set to these values. */
  set: Schema.optional(setEntries)
})

/**
 * @since 0.1.0
 * @category models
 */
export type EnvPolicy = typeof EnvPolicy.Type

/**
 * A policy was refused; the message names the field and what to pass instead.
 *
 * @since 0.1.0
 * @category errors
 */
export class EnvPolicyInvalid extends Schema.TaggedError<EnvPolicyInvalid>()("EnvPolicyInvalid", {
  /** Where the policy came from, e.g. `environment` (an option) or `TOOLCAP_ENV_POLICY`. */
  source: Schema.String,
  /** The field, e.g. `inherit` or `set`. */
  field: Schema.String,
  reason: Schema.String
}) {
  readonly code = "ENV_POLICY_INVALID" as const
  override get message(): string {
    return `Invalid environment policy (${this.source}), ${this.field}: ${this.reason}. Pass { inherit?: "all" | "core" | "none", ignoreDefaultExcludes?: boolean, exclude?: string[], includeOnly?: string[], include?: string[], set?: { NAME: "value" } }.`
  }
}

const decodePolicy = Schema.decodeUnknownEither(EnvPolicy, { errors: "first", onExcessProperty: "error" })

/**
 * Validates a policy (from an option, a flag or the variable); `source` names it in the error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (input: unknown, source = "environment"): Either.Either<EnvPolicy, EnvPolicyInvalid> =>
  Either.mapLeft(decodePolicy(input), (error) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    return new EnvPolicyInvalid({
      source,
      field: issue === undefined || issue.path.length === 0 ? "policy" : issue.path.join("."),
      reason: issue?.message ?? "invalid"
    })
  })

/**
 * The policy of the `TOOLCAP_ENV_POLICY` variable of `env` (JSON), or undefined when it is unset
 * or empty.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromVariable = (
  env: Readonly<Record<string, string | undefined>>
): Either.Either<EnvPolicy | undefined, EnvPolicyInvalid> => {
  const text = env[variable]
  if (text === undefined || text.trim().length === 0) return Either.right(undefined)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Either.left(
      new EnvPolicyInvalid({
        source: variable,
        field: "policy",
        reason: `is not JSON (it starts ${JSON.stringify(text.slice(0, 40))})`
      })
    )
  }
  return decode(parsed, variable)
}

const escapeRegExp = (text: string): string => text.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")

/** One case-insensitive expression for a list of globs, or undefined for none. */
const matcher = (globs: ReadonlyArray<string>): RegExp | undefined =>
  globs.length === 0
    ? undefined
    : new RegExp(
        `^(?:${globs.map((glob) => escapeRegExp(glob).replace(/\*/g, "[^]*").replace(/\?/g, "[^]")).join("|")})$`,
        "i"
      )

/**
 * Whether `name` matches the glob `glob` (whole name, case-insensitive).
 *
 * @since 0.1.0
 * @category constructors
 */
export const matches = (glob: string, name: string): boolean => matcher([glob])!.test(name)

/**
 * A validated policy as a function from the host's environment to the call's (steps above). The
 * expressions are built once here, so a call pays one pass over the host's variables.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compile = (
  policy: EnvPolicy
): ((host: Readonly<Record<string, string | undefined>>) => Record<string, string>) => {
  const inherit = policy.inherit ?? "all"
  const core = inherit === "core" ? matcher(CORE_PATTERNS) : undefined
  const dropped = matcher([
    ...(policy.ignoreDefaultExcludes === true ? [] : defaultExcludes),
    ...(policy.exclude ?? [])
  ])
  const only = policy.includeOnly === undefined ? undefined : (matcher(policy.includeOnly) ?? /(?!)/)
  const included = matcher(policy.include ?? [])
  const set = Object.entries(policy.set ?? {})
  return (host) => {
    const out: Record<string, string> = {}
    for (const name of Object.keys(host)) {
      const value = host[name]
      if (value === undefined) continue
      const kept =
        inherit !== "none" &&
        (core === undefined || core.test(name)) &&
        (dropped === undefined || !dropped.test(name)) &&
        (only === undefined || only.test(name))
      if (kept || (included !== undefined && included.test(name))) out[name] = value
    }
    for (const [name, value] of set) out[name] = value
    return out
  }
}

/**
 * The default policy (inherit all, the default excludes), compiled.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compiledDefault: (host: Readonly<Record<string, string | undefined>>) => Record<string, string> =
  compile({})
