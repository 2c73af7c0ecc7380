/**
 * @since 0.1.0
 */
export * as Workspace from "./Workspace.js"
/**
 * @since 0.1.0
 */
export * as Bash from "./Bash.js"
/**
 * @since 0.1.0
 */
export * as Supervisor from "./Supervisor.js"
/**
 * @since 0.1.0
 */
export * as Binary from "./Binary.js"
/**
 * @since 0.1.0
 */
export * as FileIndex from "./FileIndex.js"
/**
 * @since 0.1.0
 */
export * as Glob from "./Glob.js"
/**
 * @since 0.1.0
 */
export * as Grep from "./Grep.js"
/**
 * @since 0.1.0
 */
export * as IgnoreRules from "./IgnoreRules.js"
/**
 * @since 0.1.0
 */
export * as LineIndex from "./LineIndex.js"
/**
 * @since 0.1.0
 */
export * as Read from "./Read.js"
/**
 * @since 0.1.0
 */
export * as Roots from "./Roots.js"
/**
 * @since 0.1.0
 */
export * as Confinement from "./Confinement.js"
