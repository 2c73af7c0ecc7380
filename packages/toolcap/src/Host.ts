/**
 * The Promise API's host as plain types: its options, the host object `createToolHost` resolves
 * to, and the tool definitions it renders from its budgets.
 *
 * @since 0.1.0
 */
import type { BudgetField, BudgetsValue } from "./Budgets.js"
import type { StoredCheckpoint, TranscriptFormat } from "./Checkpoints.js"
import type { BashChunk, ToolName, ToolOutcome, ToolResults } from "./Results.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolHostOptions {
  /** The workspace directory (Bash's cwd, base of relative paths). */
  readonly workspace: string
  /** Holds `scratch/<sessionId>/` (spill files) and the checkpoint database. */
  readonly dataDir: string
  /** `[A-Za-z0-9._-]{1,128}`, not `.` or `..`. */
  readonly sessionId: string
  /** Directories outside the workspace the tools may reach. */
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
  /** The preset of budgets: `spec` (the limit table, the default) or `compact`. */
  readonly profile?: "spec" | "compact" | undefined
  /** Per-field overrides of the preset's budgets. */
  readonly budgets?: Partial<Record<BudgetField, number>> | undefined
  /** The checkpoint store: a SQLite file (default `<dataDir>/checkpoints.sqlite`). */
  readonly checkpointFile?: string | undefined
  /** Sweep other sessions' scratch directories whose owner is gone, after this many ms unchanged. */
  readonly sweepStaleAfterMs?: number | undefined
  /** Bash calls run at once; the others wait for a slot. Default: `TOOLCAP_MAX_CONCURRENT_CALLS`, else 8 per core. */
  readonly maxConcurrentCalls?: number | undefined
  /** Bash's environment policy; default: the host's variables without secret-looking names. */
  readonly environment?: EnvPolicy | undefined
}

/**
 * Which of the host's variables a Bash call gets, applied in this order: `inherit`, the default
 * excludes (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`, case-insensitive,
 * unless `ignoreDefaultExcludes`), `exclude`, `includeOnly`, then `include` adds host variables
 * back and `set` sets values. `TOOLCAP_RUN_ID` (the call's cookie) is always added.
 *
 * @since 0.1.0
 * @category models
 */
export interface EnvPolicy {
  /** `all` (default), `core` (HOME, LOGNAME, PATH, SHELL, USER, USERNAME, TMPDIR, TEMP, TMP, LANG, LANGUAGE, TERM, TZ, LC_*) or `none`. */
  readonly inherit?: "all" | "core" | "none" | undefined
  readonly ignoreDefaultExcludes?: boolean | undefined
  /** Globs over names (`*`, `?`), case-insensitive. */
  readonly exclude?: ReadonlyArray<string> | undefined
  readonly includeOnly?: ReadonlyArray<string> | undefined
  readonly include?: ReadonlyArray<string> | undefined
  readonly set?: { readonly [name: string]: string } | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /** Aborting stops the call; for Bash, the whole process tree, answering `TOOL_ABORTED`. */
  readonly signal?: AbortSignal | undefined
  /** Receives Bash's chunks in order; a returned promise is awaited before the next chunk. */
  readonly onChunk?: ((chunk: BashChunk) => void | PromiseLike<void>) | undefined
  readonly callId?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CheckpointOptions {
  /** The host's summary of the dropped history; follows the retained user messages. */
  readonly summary?: string | undefined
  /** Guessed when omitted. */
  readonly format?: TranscriptFormat | undefined
}

/**
 * A JSON Schema object describing a tool's input.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputSchema {
  readonly type: "object"
  readonly properties: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly [keyword: string]: unknown
}

/**
 * A tool definition for any provider; the description carries the budgets' numbers.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDef {
  readonly name: ToolName
  readonly description: string
  readonly inputSchema: InputSchema
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PromiseToolHost {
  readonly sessionId: string
  /** The session's scratch directory, where spill files are written. */
  readonly sessionDir: string
  /** Real path of the workspace. */
  readonly workspace: string
  readonly budgets: BudgetsValue
  /** Rendered from `budgets`. */
  readonly definitions: ReadonlyArray<ToolDef>
  /** Runs Read, Glob, Grep or Bash. Tool errors resolve as `{ ok: false }`; only bugs reject. */
  readonly call: {
    <N extends ToolName>(name: N, input: unknown, options?: CallOptions): Promise<ToolOutcome<ToolResults[N]>>
    (name: string, input: unknown, options?: CallOptions): Promise<ToolOutcome>
  }
  /** Builds and persists a checkpoint of a transcript (neutral, Anthropic or OpenAI shape). */
  readonly checkpoint: (
    transcript: unknown,
    options?: CheckpointOptions
  ) => Promise<ToolOutcome<StoredCheckpoint>>
  /** `result: null` when the session has none. */
  readonly latestCheckpoint: () => Promise<ToolOutcome<StoredCheckpoint | null>>
  /** What the model reads of an outcome of `tool`: plain text (Read's lines, Grep's and Glob's lines, Bash's output, or `CODE: message`). */
  readonly modelText: (tool: string, outcome: ToolOutcome, options?: TextOptions) => string
  /** Ends the session: stops running calls, removes the scratch directory. */
  readonly close: () => Promise<void>
}

/**
 * How results read as text for the model.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextOptions {
  /** Read: prefix each line with its number and a tab, as `cat -n` does (default false). */
  readonly lineNumbers?: boolean | undefined
}
