/**
 * An MCP server (Model Context Protocol, stdio) exposing Read, Glob, Grep and Bash of a
 * `ToolHost`, with the definitions rendered from the budgets. Results come back as text for the
 * model (`ModelOutput`) and as `structuredContent` (the wire `Outcome`, for programmatic
 * clients); a tool error sets `isError`. A client's cancellation aborts the call, which stops
 * Bash's whole process tree.
 *
 * Bash's stdout/stderr chunks leave the server only when the client asked for them: as log
 * messages (logger `toolcap/bash`, data `{ callId, stream, seq, lastSeq, data }`) once it set a
 * logging level through `logging/setLevel`, and as progress notifications when the call carries
 * a progress token. Chunks that arrive while a message is being written are coalesced into the
 * next one (consecutive chunks of a stream, `seq`..`lastSeq`), each write waits for the client
 * to read, and a client that reads slowly (or not at all) pauses the command's pipes: the
 * server's memory stays bounded whatever the command writes. The notifications of a stream carry
 * at most that stream's result budget in all (envelopes included); past it, chunks are left out
 * and a last notice says how many bytes (see the package README).
 *
 * @since 0.1.0
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolResult, LoggingLevel, ServerNotification } from "@modelcontextprotocol/sdk/types.js"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { Readable, Writable } from "node:stream"
import * as ChunkNotifications from "./internal/chunkNotifications.js"
import * as McpGuard from "./internal/mcpGuard.js"
import * as Optional from "./internal/optional.js"
import * as StdioTransport from "./internal/stdioTransport.js"
import * as ModelOutput from "./ModelOutput.js"
import * as Outcome from "./Outcome.js"
import * as PromiseHost from "./PromiseHost.js"
import * as ToolHost from "./ToolHost.js"

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

const sdk = "@modelcontextprotocol/sdk"

/** RFC 5424 order of the MCP logging levels, least severe first. */
const severity: Record<LoggingLevel, number> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7
}

const levelOf = (stream: "stdout" | "stderr"): LoggingLevel => (stream === "stderr" ? "warning" : "info")

/**
 * An MCP server (not yet connected) serving the tools of a host. Asynchronous because the MCP SDK
 * is loaded on first use: hosts (and the CLI) that never serve MCP do not pay for loading it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createServer = async (
  host: ToolHost.ToolHostService,
  info: ServerInfo = {}
): Promise<Server> => {
  const feature = "the MCP server"
  const { Server } = await Optional.load(
    sdk,
    feature,
    () => import("@modelcontextprotocol/sdk/server/index.js")
  )
  const { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema } = await Optional.load(
    sdk,
    feature,
    () => import("@modelcontextprotocol/sdk/types.js")
  )
  const server = new Server(
    { name: info.name ?? "toolcap", version: info.version ?? "0.1.0" },
    { capabilities: { tools: {}, logging: {} } }
  )

  // Unset until the client sets one: a client that never asked for logs gets none.
  let logLevel: LoggingLevel | undefined
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    logLevel = request.params.level
    return {}
  })

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: host.definitions.map((def) => ({
      name: def.name,
      description: def.description,
      inputSchema: def.inputSchema
    }))
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name
    const level = logLevel
    const callId = `mcp-${String(extra.requestId)}`
    const forwarder = ChunkNotifications.make({
      callId,
      budget: { stdout: host.budgets.shellStdoutMaxBytes, stderr: host.budgets.shellStderrMaxBytes },
      progressToken: request.params["_meta"]?.progressToken,
      logLevel: (stream) =>
        level !== undefined && severity[levelOf(stream)] >= severity[level] ? levelOf(stream) : undefined,
      logger: chunkLogger,
      send: (notification) => extra.sendNotification(notification as ServerNotification),
      signal: extra.signal
    })
    const input = request.params.arguments ?? {}
    // Bash's chunks go out while it runs, from its one stream; the answer after the last of them
    const exit = await Effect.runPromiseExit(
      name === "Bash" && forwarder !== undefined
        ? forwarder.forward(host.bashStream(input, { signal: extra.signal, callId }))
        : host.call(name, input, { signal: extra.signal, callId })
    )
    // A defect is a bug: thrown, the SDK answers it as a JSON-RPC error.
    return toCallToolResult(name, Outcome.settle(name, exit))
  })

  return server
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioStreams {
  /** Default: `process.stdin`. */
  readonly stdin?: Readable | undefined
  /** Default: `process.stdout`; it carries the protocol, so nothing else may write to it. */
  readonly stdout?: Writable | undefined
}

/**
 * Serves the `ToolHost`'s tools over stdio until the client goes away (its input ends) or the
 * fiber is interrupted; the server is closed either way.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (
  options: ServerInfo & StdioStreams = {}
): Effect.Effect<void, never, ToolHost.ToolHost> =>
  Effect.gen(function* () {
    const host = yield* ToolHost.ToolHost
    const server = yield* Effect.promise(() => createServer(host, options))
    const stdout = options.stdout ?? process.stdout
    // every request with an id is answered, even one the SDK would drop (McpGuard)
    const validate = yield* Effect.promise(() => McpGuard.sdkValidate())
    const input = McpGuard.guard(options.stdin ?? process.stdin, stdout, validate, process.stderr)
    const transport = yield* Effect.promise(() => StdioTransport.make(input, stdout))
    const closed = yield* Deferred.make<void>()
    // oxlint-disable-next-line unicorn/prefer-add-event-listener -- the SDK exposes a callback, not an EventTarget
    server.onclose = () => Deferred.unsafeDone(closed, Exit.void)
    yield* Effect.acquireUseRelease(
      Effect.promise(() => server.connect(transport)),
      () => Deferred.await(closed),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface StdioOptions extends PromiseHost.ToolHostOptions, ServerInfo, StdioStreams {}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunningServer {
  /** Resolves once the server stopped and the session ended. */
  readonly closed: Promise<void>
  /** Stops the server: running calls are stopped, the session's scratch dir removed. */
  readonly close: () => Promise<void>
}

/**
 * Serves the tools over stdio until stdin ends or `close()` is called (Promise API over `serve`).
 * The server's lifetime is the session: when it stops, running calls are stopped and the scratch
 * directory is removed. Rejects like `createToolHost` on bad options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = async (options: StdioOptions): Promise<RunningServer> => {
  const runtime = ManagedRuntime.make(PromiseHost.layer(options))
  const built = await runtime.runPromiseExit(Effect.void)
  if (Exit.isFailure(built)) {
    await runtime.dispose()
    throw Cause.squash(built.cause)
  }
  const fiber = runtime.runFork(serve(options))
  const closed = runtime.runPromise(Fiber.await(fiber)).then(() => runtime.dispose())
  const close = () => {
    runtime.runFork(Fiber.interrupt(fiber))
    return closed
  }
  return { closed, close }
}
