/**
 * @since 0.1.0
 */
export * as Viewer from "./Viewer.js"
/**
 * @since 0.1.0
 */
export * as ViewerHost from "./ViewerHost.js"
