/**
 * @since 0.1.0
 */
export * as Budgets from "./Budgets.js"
/**
 * @since 0.1.0
 */
export * as LineClip from "./LineClip.js"
/**
 * @since 0.1.0
 */
export * as Marker from "./Marker.js"
/**
 * @since 0.1.0
 */
export * as ToolError from "./ToolError.js"
/**
 * @since 0.1.0
 */
export * as Truncate from "./Truncate.js"
/**
 * @since 0.1.0
 */
export * as Utf8 from "./Utf8.js"
/**
 * @since 0.1.0
 */
export * as Truncation from "./Truncation.js"
