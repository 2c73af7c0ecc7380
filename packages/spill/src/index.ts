/**
 * @since 0.1.0
 */
export * as Scratch from "./Scratch.js"

/**
 * @since 0.1.0
 */
export * as Procfs from "./Procfs.js"
