/**
 * An MCP server (Model Context Protocol, stdio) exposing Read, Glob, Grep and Bash with the
 * definitions rendered from the budgets. Results come back as text for the model (`ModelOutput`)
 * and as `structuredContent` (the wire `Outcome`, for programmatic clients); a tool error sets
 * `isError`. While Bash runs, each
 * stdout/stderr chunk is forwarded as a progress notification (when the client sent a progress
 * token) and as a log message carrying `{ callId, stream, seq, data }`. A client's cancellation
 * aborts the call, which stops Bash's whole process tree.
 *
 * @since 0.1.0
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"
import type { Bash } from "@toolcap/tools"
import * as McpGuard from "./internal/mcpGuard.js"
import * as ModelOutput from "./ModelOutput.js"
import type * as Outcome from "./Outcome.js"
import * as PromiseHost from "./PromiseHost.js"

/**
 * The logger name of Bash chunk log messages.
 *
 * @since 0.1.0
 * @category models
 */
export const chunkLogger = "toolcap/bash"

/**
 * @since 0.1.0
 * @category models
 */
export interface ServerInfo {
  readonly name?: string | undefined
  readonly version?: string | undefined
}

/**
 * The MCP result of an outcome: the model-facing text as content, the whole wire outcome as
 * `structuredContent`, `isError` for a tool error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toCallToolResult = (tool: string, outcome: Outcome.Outcome): CallToolResult => ({
  content: [{ type: "text", text: ModelOutput.text(tool, outcome) }],
  structuredContent: { ...outcome },
  isError: !outcome.ok
})

/**
 * An MCP server (not yet connected) serving the tools of a host. Asynchronous because the MCP SDK
 * is loaded on first use: hosts (and the CLI) that never serve MCP do not pay for loading it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createServer = async (
  host: PromiseHost.PromiseToolHost,
  info: ServerInfo = {}
): Promise<Server> => {
  const { Server } = await import("@modelcontextprotocol/sdk/server/index.js")
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import("@modelcontextprotocol/sdk/types.js")
  const server = new Server(
    { name: info.name ?? "toolcap", version: info.version ?? "0.1.0" },
    { capabilities: { tools: {}, logging: {} } }
  )

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: host.definitions.map((def) => ({
      name: def.name,
      description: def.description,
      inputSchema: def.inputSchema
    }))
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = request.params["_meta"]?.progressToken
    let forwarded = 0
    const onChunk = (chunk: Bash.BashChunk) => {
      if (extra.signal.aborted) return
      forwarded += 1
      if (progressToken !== undefined) {
        void extra
          .sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: forwarded, message: `${chunk.stream}: ${chunk.data}` }
          })
          .catch(() => undefined)
      }
      // Through sendLoggingMessage so a client's logging/setLevel is honoured.
      void server
        .sendLoggingMessage(
          {
            level: chunk.stream === "stderr" ? "warning" : "info",
            logger: chunkLogger,
            data: { callId: chunk.callId, stream: chunk.stream, seq: chunk.seq, data: chunk.data }
          },
          extra.sessionId
        )
        .catch(() => undefined)
    }
    const outcome = await host.call(request.params.name, request.params.arguments ?? {}, {
      signal: extra.signal,
      callId: `mcp-${String(extra.requestId)}`,
      onChunk
    })
    return toCallToolResult(request.params.name, outcome)
  })

  return server
}

/**
 * Process stdout carries the protocol: anything logged through `console` (the default Effect
 * logger included) goes to stderr while the server runs. Returns the undo.
 */
const consoleToStderr = (): (() => void) => {
  const saved = { log: console.log, info: console.info, debug: console.debug }
  console.log = console.info = console.debug = (...args: Array<unknown>) => console.error(...args)
  return () => Object.assign(console, saved)
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioOptions extends PromiseHost.ToolHostOptions, ServerInfo {
  readonly stdin?: Readable | undefined
  readonly stdout?: Writable | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunningServer {
  readonly host: PromiseHost.PromiseToolHost
  /** Resolves once the server stopped and the session ended. */
  readonly closed: Promise<void>
  /** Stops the server: running calls are stopped, the session's scratch dir removed. */
  readonly close: () => Promise<void>
}

/**
 * Serves the tools over stdio until stdin ends or `close()` is called. The server's lifetime is
 * the session: when it stops, running calls are stopped and the scratch directory is removed.
 * On the process's own stdout, `console.log/info/debug` are sent to stderr while it runs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = async (options: StdioOptions): Promise<RunningServer> => {
  const restoreConsole = options.stdout === undefined ? consoleToStderr() : () => {}
  const host = await PromiseHost.createToolHost(options).catch((error: unknown) => {
    restoreConsole()
    throw error
  })
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js")
  const server = await createServer(host, options)
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  // every request with an id is answered, even one the SDK would drop (McpGuard)
  const guarded = McpGuard.guard(stdin, stdout, await McpGuard.sdkValidate(), process.stderr)
  const transport = new StdioServerTransport(guarded, stdout)
  let resolveClosed!: () => void
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      stdin.off("end", onEnd)
      await host.close()
      await server.close().catch(() => undefined)
      restoreConsole()
      resolveClosed()
    })()
    return closing
  }
  // The SDK's stdio transport does not notice the client going away; its stdin ending is that signal.
  const onEnd = () => void close()
  stdin.on("end", onEnd)
  // oxlint-disable-next-line unicorn/prefer-add-event-listener -- the SDK exposes a callback, not an EventTarget
  server.onclose = () => void close()
  await server.connect(transport)
  return { host, closed, close }
}
