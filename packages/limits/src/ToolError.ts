/**
 * The typed failures every toolcap tool shares, each with a stable wire `code` and a message that
 * says what was wrong and what to do next (rules E1, E2). Bash's timeout and abort errors, which
 * carry a partial result, live with the Bash tool in `@toolcap/tools`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { quote } from "./internal/quote.js"
import { formatKB } from "./Marker.js"
import * as PathQuote from "./PathQuote.js"

/**
 * The most UTF-8 bytes of an error's explanation (`reason`). Reasons are a sentence or two; one
 * that quotes its input (a schema message echoing a 10MB value) is cut, so every message stays
 * under 2KB whatever the input.
 */
const REASON_MAX_BYTES = 1024

/** The most UTF-8 bytes of a tool or field name quoted in an error. */
const NAME_MAX_BYTES = 64

/** Fields of an error are cut at construction, so the message and the wire form both stay short. */
const short = (value: string, maxBytes?: number): string => quote(value, maxBytes)

/**
 * Every wire code a toolcap tool can answer with.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolErrorCode = Schema.Literal(
  "TOOL_BINARY_CONTENT",
  "TOOL_INVALID_INPUT",
  "TOOL_PATH_DENIED",
  "TOOL_NOT_FOUND",
  "TOOL_IS_DIRECTORY",
  "TOOL_TIMEOUT",
  "TOOL_ABORTED",
  "TOOL_SPAWN_FAILED",
  "TOOL_PATTERN_INVALID",
  "TOOL_MEMORY_LIMIT",
  "TOOL_LAUNCHER_LOST"
)

/**
 * A wire code of a toolcap tool error.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolErrorCode = typeof ToolErrorCode.Type

/**
 * Binary content was not dumped into the model's context.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolBinaryContent extends Schema.TaggedError<ToolBinaryContent>()("ToolBinaryContent", {
  path: Schema.String,
  size: Schema.Number,
  reason: Schema.String
}) {
  constructor(
    props: { readonly path: string; readonly size: number; readonly reason: string },
    options?: Schema.MakeOptions
  ) {
    super({ ...props, path: short(props.path), reason: short(props.reason, REASON_MAX_BYTES) }, options)
  }
  readonly code = "TOOL_BINARY_CONTENT" as const
  override get message(): string {
    return `${PathQuote.quote(this.path)} looks binary (${this.reason}; ${this.size} bytes), so its content was not returned. Inspect it with a tool made for that format, or Grep text files instead.`
  }
}

/**
 * The input does not fit the tool's schema or range.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolInvalidInput extends Schema.TaggedError<ToolInvalidInput>()("ToolInvalidInput", {
  tool: Schema.String,
  field: Schema.String,
  reason: Schema.String
}) {
  constructor(
    props: { readonly tool: string; readonly field: string; readonly reason: string },
    options?: Schema.MakeOptions
  ) {
    super(
      {
        ...props,
        tool: short(props.tool, NAME_MAX_BYTES),
        field: short(props.field, NAME_MAX_BYTES),
        reason: short(props.reason, REASON_MAX_BYTES)
      },
      options
    )
  }
  readonly code = "TOOL_INVALID_INPUT" as const
  override get message(): string {
    return `${this.tool}: invalid "${this.field}": ${this.reason}`
  }
}

/**
 * The path lies outside every root the host allows (workspace, session scratch, approved external roots).
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolPathDenied extends Schema.TaggedError<ToolPathDenied>()("ToolPathDenied", {
  path: Schema.String,
  reason: Schema.String
}) {
  constructor(props: { readonly path: string; readonly reason: string }, options?: Schema.MakeOptions) {
    super({ ...props, path: short(props.path), reason: short(props.reason, REASON_MAX_BYTES) }, options)
  }
  readonly code = "TOOL_PATH_DENIED" as const
  override get message(): string {
    return `Access to ${PathQuote.quote(this.path)} denied: ${this.reason}. Use a path inside the workspace, the session scratch directory, or a root the host approved.`
  }
}

/**
 * Nothing exists at the path.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolNotFound extends Schema.TaggedError<ToolNotFound>()("ToolNotFound", {
  path: Schema.String
}) {
  constructor(props: { readonly path: string }, options?: Schema.MakeOptions) {
    super({ ...props, path: short(props.path) }, options)
  }
  readonly code = "TOOL_NOT_FOUND" as const
  override get message(): string {
    return `${PathQuote.quote(this.path)} does not exist. Use Glob to find the right path.`
  }
}

/**
 * A directory was given where a file is needed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolIsDirectory extends Schema.TaggedError<ToolIsDirectory>()("ToolIsDirectory", {
  path: Schema.String
}) {
  constructor(props: { readonly path: string }, options?: Schema.MakeOptions) {
    super({ ...props, path: short(props.path) }, options)
  }
  readonly code = "TOOL_IS_DIRECTORY" as const
  override get message(): string {
    return `${PathQuote.quote(this.path)} is a directory, not a file. Use Glob to list its files.`
  }
}

/**
 * A process could not be started.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolSpawnFailed extends Schema.TaggedError<ToolSpawnFailed>()("ToolSpawnFailed", {
  command: Schema.String,
  reason: Schema.String
}) {
  constructor(props: { readonly command: string; readonly reason: string }, options?: Schema.MakeOptions) {
    super({ ...props, command: short(props.command), reason: short(props.reason, REASON_MAX_BYTES) }, options)
  }
  readonly code = "TOOL_SPAWN_FAILED" as const
  override get message(): string {
    return `Could not start ${this.command}: ${this.reason}`
  }
}

/**
 * The launcher server that started a command went away (it was killed, or crashed) before it told
 * the host how the command ended: its exit status is unknown, so none is reported (no exit code,
 * no signal is made up). Whatever of the command was still running was stopped with the call; the
 * next call runs on a new server, so running the command again is safe to try.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolLauncherLost extends Schema.TaggedError<ToolLauncherLost>()("ToolLauncherLost", {
  command: Schema.String,
  reason: Schema.String
}) {
  constructor(props: { readonly command: string; readonly reason: string }, options?: Schema.MakeOptions) {
    super({ ...props, command: short(props.command), reason: short(props.reason, REASON_MAX_BYTES) }, options)
  }
  readonly code = "TOOL_LAUNCHER_LOST" as const
  override get message(): string {
    return `${this.command} was lost: ${this.reason}, so how it ended is unknown (no exit status is reported). What was left of it was stopped; run it again (a new launcher server takes the call).`
  }
}

/**
 * A search pattern (regex or glob) was rejected.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolPatternInvalid extends Schema.TaggedError<ToolPatternInvalid>()("ToolPatternInvalid", {
  pattern: Schema.String,
  reason: Schema.String
}) {
  constructor(props: { readonly pattern: string; readonly reason: string }, options?: Schema.MakeOptions) {
    super({ ...props, pattern: short(props.pattern), reason: short(props.reason, REASON_MAX_BYTES) }, options)
  }
  readonly code = "TOOL_PATTERN_INVALID" as const
  override get message(): string {
    return `Invalid pattern ${JSON.stringify(this.pattern)}: ${this.reason}. Fix the pattern (escape regex metacharacters for a literal search).`
  }
}

/** The most other suspects a memory error lists beside the one it names. */
const MEMORY_SUSPECTS_SHOWN = 5

/**
 * How sure a `ToolMemoryLimit` is of the file it names: `certain` (only that file was being
 * searched), `likely` (the only file the engine may have been reading that is large enough to
 * need the memory), `possible` (the largest of several such files), `unknown` (none is large
 * enough: the pattern itself may have needed it).
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryLimitCertainty = Schema.Literal("certain", "likely", "possible", "unknown")

/**
 * A search engine (ripgrep) reached the memory ceiling the host gave it (`engineMemoryMaxBytes`)
 * and was stopped by the kernel's refusal, instead of growing until the machine ran out: it holds
 * a whole line in memory (a whole file with `multiline`), so one enormous line is enough. Names
 * the file it was most likely reading, how sure that is, and what to do instead.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolMemoryLimit extends Schema.TaggedError<ToolMemoryLimit>()("ToolMemoryLimit", {
  tool: Schema.String,
  /** The ceiling that applied, in bytes. */
  limitBytes: Schema.Number,
  certainty: MemoryLimitCertainty,
  /** The file named (as the tool shows paths); absent when no file explains it. */
  path: Schema.optional(Schema.String),
  /** Its size in bytes. */
  fileBytes: Schema.optional(Schema.Number),
  /** Other files as large that it may have been reading instead (at most five, largest first). */
  others: Schema.Array(Schema.String)
}) {
  constructor(
    props: {
      readonly tool: string
      readonly limitBytes: number
      readonly certainty: typeof MemoryLimitCertainty.Type
      readonly path?: string | undefined
      readonly fileBytes?: number | undefined
      readonly others: ReadonlyArray<string>
    },
    options?: Schema.MakeOptions
  ) {
    super(
      {
        tool: short(props.tool, NAME_MAX_BYTES),
        limitBytes: props.limitBytes,
        certainty: props.certainty,
        ...(props.path !== undefined ? { path: short(props.path) } : {}),
        ...(props.fileBytes !== undefined ? { fileBytes: props.fileBytes } : {}),
        others: props.others.slice(0, MEMORY_SUSPECTS_SHOWN).map((other) => short(other))
      },
      options
    )
  }
  readonly code = "TOOL_MEMORY_LIMIT" as const
  override get message(): string {
    const stopped = `${this.tool} stopped: ripgrep reached its memory ceiling of ${formatKB(this.limitBytes)}KB (engineMemoryMaxBytes), as it does on a line longer than it can hold (with multiline, a file)`
    if (this.path === undefined || this.certainty === "unknown") {
      return `${stopped}, but no file it may have been reading is that large: the pattern itself probably needed the memory. Simplify the pattern, or narrow path or glob.`
    }
    const size = this.fileBytes === undefined ? "" : ` (${formatKB(this.fileBytes)}KB)`
    const name = this.path.split("/").at(-1) ?? this.path
    const what = `Read ${PathQuote.quote(this.path)} with offset/limit to page through it, or leave it out of the search with glob "!${name}"`
    switch (this.certainty) {
      case "certain":
        return `${stopped}, while searching ${PathQuote.quote(this.path)}${size}. ${what}.`
      case "likely":
        return `${stopped}, almost certainly in ${PathQuote.quote(this.path)}${size}: the only file it may have been reading that is large enough. ${what}.`
      case "possible":
        return `${stopped}, in one of the large files it may have been reading, most likely the largest, ${PathQuote.quote(this.path)}${size}; also ${this.others.map(PathQuote.quote).join(", ")} (ripgrep's output stops before the file it died in). ${what}, and likewise the others.`
    }
  }
}
