/**
 * `toolcap`: bounded Read, Glob, Grep and Bash for hosts that do not compose Effect themselves.
 * One self-contained package (its own copy of effect inside): the Promise API, the MCP server
 * and the AI SDK tools. `ai`, `@modelcontextprotocol/sdk` and `better-sqlite3` are optional
 * peers, loaded only by the features that need them.
 *
 * @since 0.1.0
 */
import { AiSdk, Mcp, PromiseHost } from "@toolcap/adapters"
import type { Outcome } from "@toolcap/adapters"

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
