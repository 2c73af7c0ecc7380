/**
 * Every limit toolcap enforces, as one effect `Schema` whose defaults are the spec's limit table
 * (spec §2). Nothing else in toolcap hard-codes a limit: tools read them from the `Budgets`
 * service, and tool descriptions are rendered from the same values.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** KB as the spec uses it: 96KB kept 98304 bytes. */
const KB = 1024

const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

/**
 * The fields of the budgets, each with the spec's default.
 *
 * @since 0.1.0
 * @category models
 */
export const BudgetsFields = {
  /** Read / Glob / Grep result bytes (BUDGET_SEARCH): results are re-fetchable, so the budget is tight. */
  searchMaxBytes: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 48 * KB)
  ),
  /** Read / Glob / Grep result lines (BUDGET_SEARCH). */
  searchMaxLines: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 2000)
  ),
  /** Bash stdout bytes reaching the model (BUDGET_SHELL); stdout keeps its head. */
  shellStdoutMaxBytes: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 96 * KB)
  ),
  /** Bash stdout lines reaching the model (BUDGET_SHELL). */
  shellStdoutMaxLines: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 4000)
  ),
  /** Bash stderr bytes reaching the model (BUDGET_SHELL_ERR); stderr keeps its tail. */
  shellStderrMaxBytes: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 96 * KB)
  ),
  /** Bash stderr lines reaching the model (BUDGET_SHELL_ERR). */
  shellStderrMaxLines: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 4000)
  ),
  /** Any single line of a Read or Grep result is clipped here (MAX_LINE_CHARS), in code points. */
  maxLineChars: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 2000)
  ),
  /** Default and maximum lines of one Read window. */
  readWindowLines: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 2000)
  ),
  /** Default Grep match cap (headLimit). */
  grepHeadLimit: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 200)
  ),
  /** Default Glob entry cap (limit). */
  globLimit: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 100)
  ),
  /** Largest Glob entry cap a caller may ask for; larger requests are clamped. */
  globMaxLimit: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 1000)
  ),
  /** Bytes retained per Bash stream while it runs (CAPTURE_MAX_BYTES); looser than the result budget. */
  captureMaxBytes: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 512 * KB)
  ),
  /** Lines retained per Bash stream while it runs (CAPTURE_MAX_LINES). */
  captureMaxLines: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 200_000)
  ),
  /** Largest spill file (SPILL_MAX_BYTES). */
  spillMaxBytes: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 512 * KB)
  ),
  /** Bash timeout when the call names none, in seconds. */
  bashTimeoutDefaultSeconds: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 60)
  ),
  /** Smallest Bash timeout a call may ask for, in seconds. */
  bashTimeoutMinSeconds: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 1)
  ),
  /** Largest Bash timeout a call may ask for, in seconds. */
  bashTimeoutMaxSeconds: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 300)
  ),
  /** Time between SIGTERM and SIGKILL when a process tree is stopped. */
  bashKillGraceMs: NonNegativeInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 2000)
  ),
  /** Time the pipes are still read after the main process exited, before leftovers are ended. */
  bashDrainGraceMs: NonNegativeInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 1000)
  ),
  /** Bytes sniffed at the start of a file to detect binary content. */
  binarySniffBytes: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 4 * KB)
  ),
  /** Share of non-printable bytes in the sniff above which a file is binary. */
  binaryNonPrintableRatio: Schema.Number.pipe(
    Schema.between(0, 1),
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 0.3)
  ),
  /** Tokens of user messages a checkpoint retains. */
  checkpointRetentionTokens: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 20_000)
  ),
  /** Tokens the open parallel tool batch of a mid-turn checkpoint may keep. */
  checkpointBatchTokens: PositiveInt.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 20_000)
  ),
  /** Head share of a message cut by a checkpoint; the tail gets the rest (75/25). */
  checkpointHeadShare: Schema.Number.pipe(
    Schema.greaterThan(0),
    Schema.lessThan(1),
    Schema.propertySignature,
    Schema.withConstructorDefault(() => 0.75)
  )
}

/**
 * The budgets schema, with the cross-field rules the spec implies.
 *
 * @since 0.1.0
 * @category models
 */
export class BudgetsSchema extends Schema.Class<BudgetsSchema>("@toolcap/limits/Budgets")(
  Schema.Struct(BudgetsFields).pipe(
    Schema.filter((b) => {
      const issues: Array<Schema.FilterIssue> = []
      // spec §2: capture is deliberately the looser ceiling, or a spill could never be fuller.
      if (b.captureMaxBytes < Math.max(b.shellStdoutMaxBytes, b.shellStderrMaxBytes)) {
        issues.push({
          path: ["captureMaxBytes"],
          message:
            "captureMaxBytes must be at least the Bash result budget (shellStdoutMaxBytes, shellStderrMaxBytes)"
        })
      }
      if (b.captureMaxLines < Math.max(b.shellStdoutMaxLines, b.shellStderrMaxLines)) {
        issues.push({
          path: ["captureMaxLines"],
          message:
            "captureMaxLines must be at least the Bash result budget (shellStdoutMaxLines, shellStderrMaxLines)"
        })
      }
      if (b.spillMaxBytes < Math.max(b.shellStdoutMaxBytes, b.shellStderrMaxBytes)) {
        issues.push({
          path: ["spillMaxBytes"],
          message: "spillMaxBytes must be at least the Bash result budget"
        })
      }
      if (b.globLimit > b.globMaxLimit) {
        issues.push({ path: ["globLimit"], message: "globLimit must not exceed globMaxLimit" })
      }
      if (b.bashTimeoutMinSeconds > b.bashTimeoutMaxSeconds) {
        issues.push({
          path: ["bashTimeoutMinSeconds"],
          message: "bashTimeoutMinSeconds must not exceed bashTimeoutMaxSeconds"
        })
      } else if (
        b.bashTimeoutDefaultSeconds < b.bashTimeoutMinSeconds ||
        b.bashTimeoutDefaultSeconds > b.bashTimeoutMaxSeconds
      ) {
        issues.push({
          path: ["bashTimeoutDefaultSeconds"],
          message: "bashTimeoutDefaultSeconds must lie within bashTimeoutMinSeconds..bashTimeoutMaxSeconds"
        })
      }
      return issues
    })
  )
) {}

/**
 * The resolved budgets.
 *
 * @since 0.1.0
 * @category models
 */
export type BudgetsValue = BudgetsSchema

/**
 * The names of the budget fields.
 *
 * @since 0.1.0
 * @category models
 */
export type BudgetField = keyof typeof BudgetsFields

/**
 * The spec's limit table.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaults: BudgetsValue = BudgetsSchema.make({})

/**
 * An override was rejected; the message names the field and the rule.
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetsInvalid extends Schema.TaggedError<BudgetsInvalid>()("BudgetsInvalid", {
  detail: Schema.String
}) {
  override get message(): string {
    return `Invalid toolcap budgets: ${this.detail}`
  }
}

const decode = Schema.decodeUnknownEither(BudgetsSchema)

/**
 * Validates overrides on top of the defaults (or of `base`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  overrides: Partial<Record<BudgetField, number>>,
  base: BudgetsValue = defaults
): Either.Either<BudgetsValue, BudgetsInvalid> => {
  const merged: Record<string, unknown> = {}
  for (const field of fieldNames) merged[field] = base[field]
  for (const [field, value] of Object.entries(overrides)) {
    if (!(field in BudgetsFields)) {
      return Either.left(new BudgetsInvalid({ detail: `unknown field "${field}"` }))
    }
    if (value !== undefined) merged[field] = value
  }
  return Either.mapLeft(
    decode(merged, { errors: "all", onExcessProperty: "error" }),
    (error) => new BudgetsInvalid({ detail: ParseResult.TreeFormatter.formatErrorSync(error) })
  )
}

/**
 * The budget field names, in table order.
 *
 * @since 0.1.0
 * @category models
 */
export const fieldNames: ReadonlyArray<BudgetField> = Object.keys(BudgetsFields) as Array<BudgetField>

/**
 * The environment variable (under the `TOOLCAP_` prefix) that overrides a field,
 * e.g. `searchMaxBytes` -> `TOOLCAP_SEARCH_MAX_BYTES`.
 *
 * @since 0.1.0
 * @category models
 */
export const envName = (field: BudgetField): string =>
  "TOOLCAP_" + field.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()

/**
 * Reads overrides from effect `Config` (by default the environment, `TOOLCAP_*`).
 * A malformed or invalid value fails with a `ConfigError` naming the variable and the rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const config: Config.Config<BudgetsValue> = Config.all(
  Object.fromEntries(
    fieldNames.map((field) => [field, Config.option(Config.number(envName(field).slice("TOOLCAP_".length)))])
  ) as Record<BudgetField, Config.Config<Option.Option<number>>>
).pipe(
  Config.nested("TOOLCAP"),
  Config.mapOrFail((options) => {
    const overrides: Partial<Record<BudgetField, number>> = {}
    for (const field of fieldNames) {
      const value = options[field]
      if (Option.isSome(value)) overrides[field] = value.value
    }
    return Either.mapLeft(make(overrides), (error) =>
      ConfigError.InvalidData(
        [],
        `${error.detail}\n(environment variables: ${fieldNames.map(envName).join(", ")})`
      )
    )
  })
)

/**
 * The budgets in force.
 *
 * @since 0.1.0
 * @category services
 */
export class Budgets extends Context.Tag("@toolcap/limits/Budgets")<Budgets, BudgetsValue>() {}

/**
 * The spec's defaults.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Budgets> = Layer.succeed(Budgets, defaults)

/**
 * Defaults with per-field overrides; an invalid override fails the layer with `BudgetsInvalid`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  overrides: Partial<Record<BudgetField, number>>
): Layer.Layer<Budgets, BudgetsInvalid> => Layer.effect(Budgets, make(overrides))

/**
 * Defaults overridden from effect `Config` (`TOOLCAP_*` environment variables by default).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<Budgets, ConfigError.ConfigError> = Layer.effect(Budgets, config)
