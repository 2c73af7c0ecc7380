/**
 * Every limit toolcap enforces, as one effect `Schema` whose defaults are the default limit table
 * (rules L1). Nothing else in toolcap hard-codes a limit: tools read them from the `Budgets`
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
import { spillGapMaxBytes } from "./Marker.js"

/** KB as the markers use it: 96KB kept 98304 bytes (rules L2). */
const KB = 1024

/**
 * The smallest byte budget a cut accepts: the longest UTF-8 sequence is 4 bytes, and a cut that
 * cannot hold one code point could return an empty payload, which rules M4 forbids.
 *
 * @since 0.1.0
 * @category models
 */
export const minByteBudget = 4

/** A whole number of at least `min`; the message says what the number counts. */
const wholeAtLeast = (min: number, unit: string) =>
  Schema.Number.pipe(
    Schema.filter(
      (value) =>
        (Number.isSafeInteger(value) && value >= min) ||
        `must be a whole number of ${unit} >= ${min}, got ${value}`
    )
  )

/**
 * ripgrep reserves its threads' stacks and its allocator's arenas from the same ceiling: measured
 * with 12 threads it needs about 64 MiB to start, so less than twice that is refused.
 */
const ENGINE_MEMORY_MIN_BYTES = 128 * 1024 * KB

const engineMemory = Schema.Number.pipe(
  Schema.filter(
    (value) =>
      value === 0 ||
      (Number.isSafeInteger(value) && value >= ENGINE_MEMORY_MIN_BYTES) ||
      `must be 0 (no ceiling) or a whole number of bytes >= ${ENGINE_MEMORY_MIN_BYTES} (ripgrep needs about 64 MiB to start), got ${value}`
  )
)

const withDefault = (schema: Schema.Schema<number>, fallback: number) =>
  schema.pipe(
    Schema.propertySignature,
    Schema.withConstructorDefault(() => fallback)
  )

/** A byte budget of a cut: at least one code point. */
const bytes = (fallback: number) =>
  withDefault(wholeAtLeast(minByteBudget, "bytes (a cut must hold one 4-byte code point)"), fallback)
const lines = (fallback: number) => withDefault(wholeAtLeast(1, "lines"), fallback)
const entries = (fallback: number) => withDefault(wholeAtLeast(1, "entries"), fallback)
const chars = (fallback: number) => withDefault(wholeAtLeast(1, "characters"), fallback)
const seconds = (fallback: number) => withDefault(wholeAtLeast(1, "seconds"), fallback)
const millis = (fallback: number) => withDefault(wholeAtLeast(0, "milliseconds"), fallback)
const tokens = (fallback: number) => withDefault(wholeAtLeast(1, "tokens"), fallback)
/** A share strictly between 0 and 1 (`inclusive` allows the ends). */
const share = (fallback: number, inclusive: boolean) =>
  withDefault(
    Schema.Number.pipe(
      Schema.filter((value) =>
        inclusive
          ? (value >= 0 && value <= 1) || `must be a number from 0 to 1, got ${value}`
          : (value > 0 && value < 1) || `must be a number strictly between 0 and 1, got ${value}`
      )
    ),
    fallback
  )

/**
 * The fields of the budgets, each with its default from the limit table (rules L1–L10).
 *
 * @since 0.1.0
 * @category models
 */
export const BudgetsFields = {
  /** Read / Glob / Grep result bytes (BUDGET_SEARCH): results are re-fetchable, so the budget is tight. */
  searchMaxBytes: bytes(48 * KB),
  /** Read / Glob / Grep result lines (BUDGET_SEARCH). */
  searchMaxLines: lines(2000),
  /** Bash stdout bytes reaching the model (BUDGET_SHELL); stdout keeps its head. */
  shellStdoutMaxBytes: bytes(96 * KB),
  /** Bash stdout lines reaching the model (BUDGET_SHELL). */
  shellStdoutMaxLines: lines(4000),
  /** Bash stderr bytes reaching the model (BUDGET_SHELL_ERR); stderr keeps its tail. */
  shellStderrMaxBytes: bytes(96 * KB),
  /** Bash stderr lines reaching the model (BUDGET_SHELL_ERR). */
  shellStderrMaxLines: lines(4000),
  /**
   * Share of stdout's bytes and lines given to its head; the rest keeps its tail. 1 (the default)
   * keeps the head only; a share between keeps both ends, the marker between them.
   */
  shellStdoutHeadShare: share(1, true),
  /** Share of stderr's bytes and lines given to its head; 0 (the default) keeps the tail only. */
  shellStderrHeadShare: share(0, true),
  /** Any single line of a Read or Grep result is clipped here (MAX_LINE_CHARS), in code points. */
  maxLineChars: chars(2000),
  /** Default and maximum lines of one Read window. */
  readWindowLines: lines(2000),
  /** Default Grep match cap (headLimit). */
  grepHeadLimit: entries(200),
  /**
   * Longest Grep pattern, in UTF-8 bytes; longer ones are refused as invalid input. ripgrep's time
   * grows with pattern length times line length on repetitive text (a 100KB periodic literal
   * against a line containing it runs for minutes), and no real search needs a pattern this long.
   */
  grepMaxPatternBytes: withDefault(wholeAtLeast(1, "bytes"), 4 * KB),
  /**
   * Memory ceiling of each search engine process (ripgrep), in bytes; 0 sets none. ripgrep holds a
   * whole line in memory (a whole file with `multiline`), so one enormous line would grow it until
   * the machine ran out; past the ceiling its allocation fails and Grep answers `TOOL_MEMORY_LIMIT`
   * naming the file. Applied as `RLIMIT_DATA` (see the tools README).
   */
  engineMemoryMaxBytes: withDefault(engineMemory, 1024 * 1024 * KB),
  /**
   * Longest path argument (Read / Glob / Grep `path`), in UTF-8 bytes. Linux refuses longer paths
   * anyway (PATH_MAX is 4096 bytes), so only a hostile input meets it, and it bounds the work of
   * resolving a path.
   */
  inputMaxPathBytes: withDefault(wholeAtLeast(1, "bytes"), 4 * KB),
  /**
   * Longest glob (Glob `pattern`, Grep `glob`), in UTF-8 bytes. Real globs are a few dozen bytes;
   * the matcher's work grows with the pattern, so a kilobyte-sized one is refused up front.
   */
  globMaxPatternBytes: withDefault(wholeAtLeast(1, "bytes"), 4 * KB),
  /**
   * Most patterns one glob may expand to through braces (`{a,b}` x 20 is a million). A real glob
   * expands to a handful (`**\/*.{ts,tsx,js,jsx}`: 4); the walker expands braces into separate
   * patterns, so an exponential expansion would cost exponential time and memory.
   */
  globMaxBraceExpansions: withDefault(wholeAtLeast(1, "patterns"), 1024),
  /**
   * Deepest nesting of arrays and objects in a tool's input. Tool inputs are flat objects (depth
   * 1); the input check and error formatting recurse, so thousands of levels would overflow the
   * stack. Refused before any decoding.
   */
  inputMaxDepth: withDefault(wholeAtLeast(1, "levels"), 64),
  /**
   * Longest Bash command, in UTF-8 bytes; longer ones are refused as invalid input. 8 MiB runs
   * any generated script or heredoc a model writes (one over the kernel's 128 KiB argument limit
   * is handed to the shell through a file), while a command of more is data that belongs in a
   * file the command reads, and each call holds its command a few times in memory.
   */
  bashCommandMaxBytes: withDefault(wholeAtLeast(1, "bytes"), 8 * 1024 * KB),
  /** Default Glob entry cap (limit). */
  globLimit: entries(100),
  /** Largest Glob entry cap a caller may ask for; larger requests are clamped. */
  globMaxLimit: entries(1000),
  /** Bytes retained per Bash stream while it runs (CAPTURE_MAX_BYTES); looser than the result budget. */
  captureMaxBytes: bytes(512 * KB),
  /** Lines retained per Bash stream while it runs (CAPTURE_MAX_LINES). */
  captureMaxLines: lines(200_000),
  /**
   * Largest spill file (SPILL_MAX_BYTES): a stream that fits is saved whole; a longer one as its
   * head and its tail, half of this each, with one line between them saying what was left out.
   */
  spillMaxBytes: bytes(512 * KB),
  /** Bash timeout when the call names none, in seconds. */
  bashTimeoutDefaultSeconds: seconds(60),
  /** Smallest Bash timeout a call may ask for, in seconds. */
  bashTimeoutMinSeconds: seconds(1),
  /** Largest Bash timeout a call may ask for, in seconds. */
  bashTimeoutMaxSeconds: seconds(300),
  /** Time between SIGTERM and SIGKILL when a process tree is stopped (rules B9). */
  bashKillGraceMs: millis(2000),
  /** Time the pipes are still read after the main process exited, before leftovers are ended (rules B8). */
  bashDrainGraceMs: millis(1000),
  /**
   * Memory ceiling of one Bash call, in bytes; 0 (the default) sets none. The kernel enforces it
   * on the call's cgroup (the whole call, shared memory and /dev/shm included): v2 `memory.max`
   * where the v2 memory controller is available, else a v1 memory cgroup of the call; else per
   * process (`RLIMIT_AS`: an allocation or mapping past it fails in the program).
   */
  bashMemoryMaxBytes: withDefault(wholeAtLeast(0, "bytes (0: no ceiling)"), 0),
  /**
   * Task limit of one Bash call: processes and threads at once; 0 sets none. 4096 is far above
   * what real work runs at once (a `make -j` or a test runner: tens to hundreds) and an eighth of
   * Linux's default `pid_max` (32768), so a fork loop in one call stops long before the machine
   * runs out of pids. The kernel enforces it with `pids.max` on the call's cgroup (v2, or a v1 pids
   * cgroup of the call on hybrid hosts); where no pids controller exists none applies, and the
   * result says so.
   */
  bashTasksMax: withDefault(wholeAtLeast(0, "tasks (0: no limit)"), 4096),
  /**
   * Whether Bash digests its output for the model (rules G1): 1 folds passing tests, progress
   * frames and repeats and keeps every failure (the raw output stays in the spill copy); 0 keeps
   * the exact head and tail. A call's own `digest` input wins. Off in `spec`, on in `compact`.
   */
  digest: withDefault(
    Schema.Number.pipe(
      Schema.filter((value) => value === 0 || value === 1 || `must be 0 (off) or 1 (on), got ${value}`)
    ),
    0
  ),
  /** Bytes sniffed at the start of a file to detect binary content (rules R7). */
  binarySniffBytes: withDefault(wholeAtLeast(1, "bytes"), 4 * KB),
  /** Share of non-printable bytes in the sniff above which a file is binary (rules R7). */
  binaryNonPrintableRatio: share(0.3, true),
  /** Tokens of user messages a checkpoint retains (rules C1). */
  checkpointRetentionTokens: tokens(20_000),
  /** Tokens the open parallel tool batch of a mid-turn checkpoint may keep (rules C5). */
  checkpointBatchTokens: tokens(20_000),
  /** Head share of a message cut by a checkpoint; the tail gets the rest (75/25, rules C2). */
  checkpointHeadShare: share(0.75, false)
}

/**
 * The result budget of one Bash stream: its bytes and lines, and the share of them its head keeps
 * (the tail keeps the rest).
 *
 * @since 0.1.0
 * @category models
 */
export const shellStream = (
  b: Schema.Struct.Type<typeof BudgetsFields>,
  stream: "stdout" | "stderr"
): { readonly maxBytes: number; readonly maxLines: number; readonly headShare: number } =>
  stream === "stdout"
    ? { maxBytes: b.shellStdoutMaxBytes, maxLines: b.shellStdoutMaxLines, headShare: b.shellStdoutHeadShare }
    : { maxBytes: b.shellStderrMaxBytes, maxLines: b.shellStderrMaxLines, headShare: b.shellStderrHeadShare }

/** The head's part of a split budget, rounded down; the tail gets the rest. */
const headPart = (total: number, headShare: number): number =>
  headShare >= 1 ? total : headShare <= 0 ? 0 : Math.floor(total * headShare)

/**
 * The bytes a spill file gives the stream's head and its tail when the stream does not fit whole:
 * half of `spillMaxBytes` each, the tail's half less the line that stands between them.
 *
 * @since 0.1.0
 * @category models
 */
export const spillParts = (
  b: Pick<BudgetsValue, "spillMaxBytes">
): { readonly headBytes: number; readonly tailBytes: number } => {
  const headBytes = Math.floor(b.spillMaxBytes / 2)
  return { headBytes, tailBytes: b.spillMaxBytes - headBytes - spillGapMaxBytes }
}

/**
 * The cross-field rules of the budgets (rules L8, L9); each issue names the field to change.
 */
const crossFieldIssues = (b: Schema.Struct.Type<typeof BudgetsFields>): Array<Schema.FilterIssue> => {
  const issues: Array<Schema.FilterIssue> = []
  const shellBytes = Math.max(b.shellStdoutMaxBytes, b.shellStderrMaxBytes)
  const shellLines = Math.max(b.shellStdoutMaxLines, b.shellStderrMaxLines)
  // rules L8: capture is deliberately the looser ceiling; if it matched the result budget, a
  // spilled copy could never be fuller than the excerpt it backs.
  if (b.captureMaxBytes <= shellBytes) {
    issues.push({
      path: ["captureMaxBytes"],
      message: `must be greater than the Bash result budget (shellStdoutMaxBytes / shellStderrMaxBytes, ${shellBytes}), got ${b.captureMaxBytes}: raise it or lower the result budget`
    })
  }
  if (b.captureMaxLines <= shellLines) {
    issues.push({
      path: ["captureMaxLines"],
      message: `must be greater than the Bash result budget (shellStdoutMaxLines / shellStderrMaxLines, ${shellLines}), got ${b.captureMaxLines}: raise it or lower the result budget`
    })
  }
  let headExcerpt = 0
  let tailExcerpt = 0
  for (const stream of ["stdout", "stderr"] as const) {
    const budget = shellStream(b, stream)
    const head = {
      bytes: headPart(budget.maxBytes, budget.headShare),
      lines: headPart(budget.maxLines, budget.headShare)
    }
    const tail = { bytes: budget.maxBytes - head.bytes, lines: budget.maxLines - head.lines }
    headExcerpt = Math.max(headExcerpt, head.bytes)
    tailExcerpt = Math.max(tailExcerpt, tail.bytes)
    // a cut needs one code point and one line at each end it keeps
    const split = budget.headShare > 0 && budget.headShare < 1
    if (
      split &&
      (head.bytes < minByteBudget || tail.bytes < minByteBudget || head.lines < 1 || tail.lines < 1)
    ) {
      const field = stream === "stdout" ? "shellStdoutHeadShare" : "shellStderrHeadShare"
      issues.push({
        path: [field],
        message: `splits ${stream}'s budget into a head of ${head.bytes} bytes / ${head.lines} lines and a tail of ${tail.bytes} bytes / ${tail.lines} lines, got ${budget.headShare}; each end needs at least ${minByteBudget} bytes and 1 line: move the share toward the middle, or use 1 (head only) or 0 (tail only)`
      })
    }
  }
  // a head-and-tail spill must be at least as full as the excerpt at each end it backs
  const spill = spillParts(b)
  if (spill.headBytes < headExcerpt || spill.tailBytes < tailExcerpt) {
    const least = Math.max(2 * headExcerpt, 2 * (tailExcerpt + spillGapMaxBytes) - 1)
    issues.push({
      path: ["spillMaxBytes"],
      message: `must be at least ${least} bytes, got ${b.spillMaxBytes}: a spill that does not fit whole keeps half of it for the stream's head (at least the largest head excerpt, ${headExcerpt} bytes) and half less a ${spillGapMaxBytes}-byte gap line for its tail (at least the largest tail excerpt, ${tailExcerpt} bytes), or the copy would hold less than the excerpt it backs`
    })
  }
  if (b.globLimit > b.globMaxLimit) {
    issues.push({
      path: ["globLimit"],
      message: `must not exceed globMaxLimit (${b.globMaxLimit}), got ${b.globLimit}`
    })
  }
  if (b.bashTimeoutMinSeconds > b.bashTimeoutMaxSeconds) {
    issues.push({
      path: ["bashTimeoutMinSeconds"],
      message: `must not exceed bashTimeoutMaxSeconds (${b.bashTimeoutMaxSeconds}), got ${b.bashTimeoutMinSeconds}`
    })
  } else if (
    b.bashTimeoutDefaultSeconds < b.bashTimeoutMinSeconds ||
    b.bashTimeoutDefaultSeconds > b.bashTimeoutMaxSeconds
  ) {
    issues.push({
      path: ["bashTimeoutDefaultSeconds"],
      message: `must lie within bashTimeoutMinSeconds..bashTimeoutMaxSeconds (${b.bashTimeoutMinSeconds}..${b.bashTimeoutMaxSeconds}), got ${b.bashTimeoutDefaultSeconds}`
    })
  }
  return issues
}

/**
 * The budgets schema, with its cross-field rules (rules L8, L9).
 *
 * @since 0.1.0
 * @category models
 */
export class BudgetsSchema extends Schema.Class<BudgetsSchema>("@toolcap/limits/Budgets")(
  Schema.Struct(BudgetsFields).pipe(Schema.filter(crossFieldIssues))
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
 * The budget field names, in table order.
 *
 * @since 0.1.0
 * @category models
 */
export const fieldNames: ReadonlyArray<BudgetField> = Object.keys(BudgetsFields) as Array<BudgetField>

/**
 * The default limit table (rules L1).
 *
 * @since 0.1.0
 * @category constructors
 */
// Built without validating: the table is constant (a test decodes it), and validating compiles
// the whole schema's parser, a few milliseconds of every process that loads this module.
export const defaults: BudgetsValue = BudgetsSchema.make({}, true)

/**
 * The names of the presets (`TOOLCAP_PROFILE`).
 *
 * @since 0.1.0
 * @category models
 */
export const profileNames = ["spec", "compact"] as const

/**
 * A preset of the budgets (rules L10): `spec` is the default limit table; `compact` spends less
 * context per call (small head-and-tail Bash excerpts, Read windows of a screenful) and relies
 * on the spill copy and on paging for the rest. The numbers and their reasons are in the README.
 *
 * @since 0.1.0
 * @category models
 */
export type Profile = (typeof profileNames)[number]

/** What `compact` changes of the default table; every other field keeps its default. */
const compactOverrides: Partial<Record<BudgetField, number>> = {
  // a Read window of a screenful of code: 250 lines of ~64 bytes, about 4k tokens
  searchMaxBytes: 16 * KB,
  searchMaxLines: 250,
  readWindowLines: 250,
  // a source line past 500 characters is generated or minified; the notice names the rest
  maxLineChars: 500,
  grepHeadLimit: 100,
  // both ends of stdout: its first lines say what a command did, its last ones how it ended; 56 KB
  // shows a needle anywhere in an output of up to ~56 KB (a compiler's or a search's whole report),
  // the size a host showing 50 KB of tail also shows whole, and leaves larger floods to the copy
  shellStdoutMaxBytes: 56 * KB,
  shellStdoutMaxLines: 1000,
  shellStdoutHeadShare: 0.5,
  // stderr's actionable message is last, but its first error is often the cause of the rest; a
  // compiler prints a few KB of notes after its error, so the tail keeps 8 KB of the 10
  shellStderrMaxBytes: 10 * KB,
  shellStderrMaxLines: 250,
  shellStderrHeadShare: 0.2,
  // fold what carries nothing (passing tests, progress, repeats) so failures fit the small excerpts
  digest: 1,
  // small excerpts lean on the copy: 16 MB keeps every benchmark output whole on disk (host memory
  // stays within the capture budgets), so a needle in the middle of a flood is one Grep away
  spillMaxBytes: 16 * 1024 * KB
}

/**
 * Every preset's budgets. Built without validating, like `defaults` (a test decodes each).
 *
 * @since 0.1.0
 * @category constructors
 */
export const profiles: { readonly [P in Profile]: BudgetsValue } = {
  spec: defaults,
  compact: BudgetsSchema.make({ ...compactOverrides }, true)
}

/**
 * Whether a string names a preset.
 *
 * @since 0.1.0
 * @category models
 */
export const isProfile = (name: string): name is Profile =>
  (profileNames as ReadonlyArray<string>).includes(name)

/**
 * The environment variable that selects the preset the per-field variables override.
 *
 * @since 0.1.0
 * @category models
 */
export const profileVariable = "TOOLCAP_PROFILE"

/**
 * An override was rejected; `fields` and the message name each field and the rule it broke.
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetsInvalid extends Schema.TaggedError<BudgetsInvalid>()("BudgetsInvalid", {
  /** The rejected fields (or unknown names). */
  fields: Schema.Array(Schema.String),
  /** One `field: rule` line per problem. */
  detail: Schema.String
}) {
  override get message(): string {
    return `Invalid toolcap budgets: ${this.detail}`
  }
}

/** One rejected field (or unknown name) and the rule it broke. */
interface Issue {
  readonly field: string
  readonly message: string
}

const decode = Schema.decodeUnknownEither(BudgetsSchema)

const isField = (name: string): name is BudgetField =>
  Object.prototype.hasOwnProperty.call(BudgetsFields, name)

/** Merges overrides over `base` and decodes; every problem is reported, not just the first. */
const validate = (
  overrides: Partial<Record<string, number>>,
  base: BudgetsValue
): Either.Either<BudgetsValue, ReadonlyArray<Issue>> => {
  const unknown: Array<Issue> = Object.keys(overrides)
    .filter((name) => !isField(name))
    .map((field) => ({ field, message: `is not a budget field (known: ${fieldNames.join(", ")})` }))
  const merged: Record<string, unknown> = {}
  for (const field of fieldNames) merged[field] = overrides[field] ?? base[field]
  const decoded = Either.mapLeft(decode(merged, { errors: "all" }), (error) =>
    ParseResult.ArrayFormatter.formatErrorSync(error).map((issue): Issue => ({
      field: String(issue.path[0] ?? "budgets"),
      message: issue.message
    }))
  )
  if (unknown.length === 0) return decoded
  return Either.left([...unknown, ...(Either.isLeft(decoded) ? decoded.left : [])])
}

const invalid = (issues: ReadonlyArray<Issue>): BudgetsInvalid =>
  new BudgetsInvalid({
    fields: issues.map((issue) => issue.field),
    detail: issues.map((issue) => `${issue.field} ${issue.message}`).join("; ")
  })

/**
 * Validates overrides on top of the defaults (or of `base`: budgets, or a preset's name). Fails
 * with `BudgetsInvalid` naming every rejected field.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  overrides: Partial<Record<BudgetField, number>>,
  base: BudgetsValue | Profile = defaults
): Either.Either<BudgetsValue, BudgetsInvalid> => {
  if (typeof base === "string" && !isProfile(base))
    return Either.left(
      invalid([
        {
          field: "profile",
          message: `must name a preset (${profileNames.join(", ")}), got ${JSON.stringify(base)}`
        }
      ])
    )
  return Either.mapLeft(validate(overrides, typeof base === "string" ? profiles[base] : base), invalid)
}

/**
 * The environment variable that overrides a field: `TOOLCAP_` and the field name in
 * SCREAMING_SNAKE_CASE, e.g. `searchMaxBytes` -> `TOOLCAP_SEARCH_MAX_BYTES`.
 *
 * @since 0.1.0
 * @category models
 */
export const envName = (field: BudgetField): string =>
  "TOOLCAP_" + field.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()

/** Plain decimal notation only: `Number()` would also take "", "0x10" and "Infinity". */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/** The budgets from `Config`; the preset is `forced` when given, else `TOOLCAP_PROFILE`'s. */
const configOf = (forced: Profile | undefined): Config.Config<BudgetsValue> =>
  Config.all({
    profile:
      forced === undefined
        ? Config.option(Config.string(profileVariable))
        : Config.succeed(Option.some(forced)),
    fields: Config.all(
      Object.fromEntries(
        fieldNames.map((field) => [field, Config.option(Config.string(envName(field)))])
      ) as Record<BudgetField, Config.Config<Option.Option<string>>>
    )
  }).pipe(
    Config.mapOrFail(({ fields: raw, profile: profileName }) => {
      const overrides: Partial<Record<BudgetField, number>> = {}
      const errors: Array<ConfigError.ConfigError> = []
      const chosen = Option.getOrElse(
        Option.map(profileName, (name) => name.trim()),
        () => "spec"
      )
      if (!isProfile(chosen)) {
        errors.push(
          ConfigError.InvalidData(
            [profileVariable],
            `${profileVariable} must name a preset (${profileNames.join(", ")}), got ${JSON.stringify(chosen)}`
          )
        )
      }
      const base = isProfile(chosen) ? profiles[chosen] : defaults
      for (const field of fieldNames) {
        const value = raw[field]
        if (Option.isNone(value)) continue
        const text = value.value.trim()
        if (DECIMAL.test(text)) {
          overrides[field] = Number(text)
        } else {
          errors.push(
            ConfigError.InvalidData(
              [envName(field)],
              `${envName(field)} (${field}) must be a number, got ${JSON.stringify(value.value)}`
            )
          )
        }
      }
      const validated = validate(overrides, base)
      if (Either.isRight(validated) && errors.length === 0) return Either.right(validated.right)
      if (Either.isLeft(validated)) {
        for (const issue of validated.left) {
          const name = isField(issue.field) ? envName(issue.field) : issue.field
          errors.push(ConfigError.InvalidData([name], `${name} (${issue.field}) ${issue.message}`))
        }
      }
      return Either.left(errors.reduce((all, error) => ConfigError.And(all, error)))
    })
  )

/**
 * Reads the budgets from effect `Config` (by default the environment): the preset named by
 * `TOOLCAP_PROFILE` (default `spec`), overridden per field by one variable each, named by
 * `envName`. An unknown preset, a value that is not a number, or one that breaks a rule, fails
 * with a `ConfigError` whose path and message name the variable, the field and the rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const config: Config.Config<BudgetsValue> = configOf(undefined)

/**
 * The budgets in force.
 *
 * @since 0.1.0
 * @category services
 */
export class Budgets extends Context.Tag("@toolcap/limits/Budgets")<Budgets, BudgetsValue>() {}

/**
 * The default limit table.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Budgets> = Layer.succeed(Budgets, defaults)

/**
 * A preset's budgets.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProfile = (profile: Profile): Layer.Layer<Budgets> =>
  Layer.succeed(Budgets, profiles[profile])

/**
 * Defaults (or a preset's budgets) with per-field overrides; an invalid override fails the layer
 * with `BudgetsInvalid`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  overrides: Partial<Record<BudgetField, number>>,
  profile: Profile = "spec"
): Layer.Layer<Budgets, BudgetsInvalid> => Layer.effect(Budgets, make(overrides, profile))

/**
 * The preset of `TOOLCAP_PROFILE` overridden from effect `Config` (`TOOLCAP_*` environment variables by default, or
 * whatever `ConfigProvider` the host installs); fails at startup with a `ConfigError` naming the
 * variable of each invalid value.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<Budgets, ConfigError.ConfigError> = Layer.effect(Budgets, config)

/**
 * Like `layerConfig`, with the preset given here rather than by `TOOLCAP_PROFILE` (a host's own
 * option, such as the CLI's `--profile`); the per-field variables still override it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfigWith = (profile: Profile): Layer.Layer<Budgets, ConfigError.ConfigError> =>
  Layer.effect(Budgets, configOf(profile))
