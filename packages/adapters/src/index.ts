/**
 * The adapters' core. The AI SDK tools and the MCP server are entries of their own
 * (`@toolcap/adapters/AiSdk`, `@toolcap/adapters/Mcp`): each needs an optional peer (`ai`, the
 * MCP SDK) whose types and code a host that imports this barrel never loads.
 *
 * @since 0.1.0
 */
/**
 * @since 0.1.0
 */
export * as CallObserver from "./CallObserver.js"
/**
 * @since 0.1.0
 */
export * as ModelOutput from "./ModelOutput.js"
/**
 * @since 0.1.0
 */
export * as OptionalPeer from "./OptionalPeer.js"
/**
 * @since 0.1.0
 */
export * as Outcome from "./Outcome.js"
/**
 * @since 0.1.0
 */
export * as PromiseHost from "./PromiseHost.js"
/**
 * @since 0.1.0
 */
export * as Specs from "./Specs.js"
/**
 * @since 0.1.0
 */
export * as ToolDefs from "./ToolDefs.js"
/**
 * @since 0.1.0
 */
export * as ToolHost from "./ToolHost.js"
/**
 * @since 0.1.0
 */
export * as ToolSpec from "./ToolSpec.js"
