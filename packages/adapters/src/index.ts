/**
 * @since 0.1.0
 */
export * as AiSdk from "./AiSdk.js"
/**
 * @since 0.1.0
 */
export * as CallObserver from "./CallObserver.js"
/**
 * @since 0.1.0
 */
export * as Mcp from "./Mcp.js"
/**
 * @since 0.1.0
 */
export * as ModelOutput from "./ModelOutput.js"
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
