/**
 * `toolcap`: bounded Read, Glob, Grep and Bash for hosts that do not compose Effect themselves.
 * One self-contained package (its own copy of effect inside): the Promise API, the MCP server
 * and the AI SDK tools. `ai`, `@modelcontextprotocol/sdk` and `better-sqlite3` are optional
 * peers, loaded only by the features that need them.
 *
 * The published `dist/index.d.ts` is generated from these exports (`scripts/types.mjs`): the
 * result types are expanded from the tools' Schemas, so it names no effect type.
 *
 * @since 0.1.0
 */
import { AiSdk, Mcp, PromiseHost } from "@toolcap/adapters"
import type { Outcome, Specs, ToolDefs } from "@toolcap/adapters"

/**
 * Starts a tool host: `call(name, input, { signal, onChunk })` resolves to
 * `{ ok: true, result }` or `{ ok: false, error: { code, message, ... } }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createToolHost = PromiseHost.createToolHost

/**
 * Serves the tools over MCP on stdio (needs `@modelcontextprotocol/sdk`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = Mcp.serveStdio

/**
 * The AI SDK tool set of a host (needs `ai`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const aiSdkTools: (
  host: PromiseHost.PromiseToolHost,
  options?: AiSdk.ToolsOptions
) => ReturnType<typeof AiSdk.tools> = AiSdk.tools

/**
 * @since 0.1.0
 * @category models
 */
export type ToolHostOptions = PromiseHost.ToolHostOptions

/**
 * @since 0.1.0
 * @category models
 */
export type PromiseToolHost = PromiseHost.PromiseToolHost

/**
 * @since 0.1.0
 * @category models
 */
export type ToolOutcome<A = unknown> = Outcome.Outcome<A>

/**
 * @since 0.1.0
 * @category models
 */
export type ToolName = Specs.ToolName

/**
 * The result of each tool, by name: what `call("Read", ...)` carries as `result`.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResults = Specs.ToolResults

/**
 * @since 0.1.0
 * @category models
 */
export type ReadResult = Specs.ToolResults["Read"]

/**
 * @since 0.1.0
 * @category models
 */
export type GlobResult = Specs.ToolResults["Glob"]

/**
 * @since 0.1.0
 * @category models
 */
export type GrepResult = Specs.ToolResults["Grep"]

/**
 * @since 0.1.0
 * @category models
 */
export type BashResult = Specs.ToolResults["Bash"]

/**
 * @since 0.1.0
 * @category models
 */
export type BashChunk = Parameters<NonNullable<PromiseHost.CallOptions["onChunk"]>>[0]

/**
 * @since 0.1.0
 * @category models
 */
export type StoredCheckpoint = Extract<
  Awaited<ReturnType<PromiseToolHost["checkpoint"]>>,
  { ok: true }
>["result"]

/**
 * @since 0.1.0
 * @category models
 */
export type BudgetsValue = PromiseToolHost["budgets"]

/**
 * @since 0.1.0
 * @category models
 */
export type BudgetField = keyof NonNullable<ToolHostOptions["budgets"]>

/**
 * @since 0.1.0
 * @category models
 */
export type ToolDef = ToolDefs.ToolDef

/**
 * @since 0.1.0
 * @category models
 */
export type TranscriptFormat = NonNullable<
  NonNullable<Parameters<PromiseToolHost["checkpoint"]>[1]>["format"]
>
