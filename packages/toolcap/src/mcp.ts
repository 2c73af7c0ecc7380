/**
 * `toolcap/mcp`: the MCP server (stdio) of `toolcap mcp`, for a host that runs it in its own
 * process. Needs the optional peer `@modelcontextprotocol/sdk`, loaded when the server starts.
 *
 * @since 0.1.0
 */
import { OptionalPeer } from "@toolcap/adapters"
import * as Mcp from "@toolcap/adapters/Mcp"
import type { Readable, Writable } from "node:stream"
import type { ToolHostOptions } from "./Host.js"

const sdk = "@modelcontextprotocol/sdk"

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioOptions extends ToolHostOptions {
  /** The server's name in the MCP handshake (default `toolcap`). */
  readonly name?: string | undefined
  readonly version?: string | undefined
  /** Default: `process.stdin`. */
  readonly stdin?: Readable | undefined
  /** Default: `process.stdout`; it carries the protocol, so nothing else may write to it. */
  readonly stdout?: Writable | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunningServer {
  /** Resolves once the server stopped and the session ended. */
  readonly closed: Promise<void>
  /** Stops the server: running calls are stopped, the session's scratch directory removed. */
  readonly close: () => Promise<void>
}

/**
 * Serves Read, Glob, Grep and Bash over MCP on stdio until stdin ends. Rejects with a message
 * naming the package to install when the MCP SDK is missing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = async (options: StdioOptions): Promise<RunningServer> => {
  // inside the server's fiber a missing SDK would only end the server: the host is told here
  await OptionalPeer.load(sdk, "the MCP server", () => import("@modelcontextprotocol/sdk/server/index.js"))
  return Mcp.serveStdio(options)
}
