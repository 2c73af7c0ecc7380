/**
 * `toolcap`: bounded Read, Glob, Grep and Bash for hosts that do not compose Effect themselves,
 * with its own copy of effect inside. This entry is the Promise API; the AI SDK tools
 * (`toolcap/ai`) and the MCP server (`toolcap/mcp`) are entries of their own, so a host that
 * imports this one loads neither `ai` nor the MCP SDK, nor their types.
 *
 * @since 0.1.0
 */
import { PromiseHost } from "@toolcap/adapters"
import type { PromiseToolHost, ToolHostOptions } from "./Host.js"

/**
 * Starts a tool host; rejects when the workspace is not a directory or an option is invalid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createToolHost: (options: ToolHostOptions) => Promise<PromiseToolHost> =
  PromiseHost.createToolHost

export type { BudgetField, BudgetsValue } from "./Budgets.js"
export type {
  Batch,
  Checkpoint,
  ContextEntry,
  CutFigures,
  Message,
  StoredCheckpoint,
  TranscriptFormat
} from "./Checkpoints.js"
export type {
  CallOptions,
  CheckpointOptions,
  EnvPolicy,
  InputSchema,
  PromiseToolHost,
  TextOptions,
  ToolDef,
  ToolHostOptions
} from "./Host.js"
export type {
  BashChunk,
  BashResult,
  Bounded,
  Failure,
  SpillCopy,
  EngineGuard,
  EngineMemoryCeiling,
  GlobResult,
  GrepContentResult,
  GrepCountResult,
  GrepFilesResult,
  GrepMatch,
  GrepResult,
  MemoryCeiling,
  PerStream,
  ReadResult,
  Success,
  TaskLimit,
  ToolName,
  ToolOutcome,
  ToolResults,
  Truncation,
  TruncationPart,
  WireError
} from "./Results.js"
