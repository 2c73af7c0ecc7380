/**
 * @since 0.1.0
 */
export * as Workspace from "./Workspace.js"
