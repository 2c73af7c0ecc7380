/**
 * `@toolcap/limits`: the budgets and the truncation that never corrupts data, shared by every
 * toolcap tool. Pure: no I/O.
 *
 * @since 0.1.0
 */

/**
 * The one adapter from an `AbortSignal` to Effect (wait for it, or interrupt on it).
 *
 * @since 0.1.0
 * @category modules
 */
export * as Abort from "./Abort.js"
/**
 * Every limit toolcap enforces, as one effect `Schema` whose defaults are the limit table, and the
 * `Budgets` service with its layers (defaults, per-field overrides, `TOOLCAP_*` config).
 *
 * @since 0.1.0
 * @category modules
 */
export * as Budgets from "./Budgets.js"
/**
 * Bash's environment policy: which host variables a call gets (inherit, excludes, include,
 * includeOnly, set), secrets left out by default.
 *
 * @since 0.1.0
 * @category modules
 */
export * as EnvPolicy from "./EnvPolicy.js"
/**
 * Names that cannot forge lines: a path holding a control character, C-quoted as git quotes it
 * (`"dir\n/etc/shadow"`) in every text the model reads; and as one shell word.
 *
 * @since 0.1.0
 * @category modules
 */
export * as PathQuote from "./PathQuote.js"
/**
 * Bounds on the work one tool input can cause (depth, path and glob length, brace expansions),
 * and the short quote error messages use.
 *
 * @since 0.1.0
 * @category modules
 */
export * as InputBounds from "./InputBounds.js"
/**
 * The per-line clip (MAX_LINE_CHARS), counting clipped lines.
 *
 * @since 0.1.0
 * @category modules
 */
export * as LineClip from "./LineClip.js"
/**
 * The exact truncation markers and where they go.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Marker from "./Marker.js"
/**
 * Counting newline bytes fast (WebAssembly SIMD, `indexOf` where there is none), over a buffer
 * or in a counter's own memory that reads land in.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Newlines from "./Newlines.js"
/**
 * What a spill file holds for a stream: the whole stream, or its head and tail with the gap line.
 *
 * @since 0.1.0
 * @category modules
 */
export * as SpillCopy from "./SpillCopy.js"
/**
 * What a terminal would show of a command's output: a pure, streaming renderer (`\r`, erase,
 * cursor moves, SGR/OSC removed) with exact counts of what it changed.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Terminal from "./Terminal.js"
/**
 * The typed tool errors with their stable wire codes.
 *
 * @since 0.1.0
 * @category modules
 */
export * as ToolError from "./ToolError.js"
/**
 * Keep-head and keep-tail cuts over bytes or strings, one-shot or streaming.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Truncate from "./Truncate.js"
/**
 * UTF-8 cut boundaries, decoding and encoding.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Utf8 from "./Utf8.js"
/**
 * The machine-readable truncation object every bounded result carries.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Truncation from "./Truncation.js"
