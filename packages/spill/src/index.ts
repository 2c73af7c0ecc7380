/**
 * @since 0.1.0
 */
export * as Scratch from "./Scratch.js"
