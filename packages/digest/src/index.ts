/**
 * `@toolcap/digest`: a streaming digest of command output that folds what carries nothing and
 * keeps every failure, with exact accounting. Pure: no I/O.
 *
 * @since 0.1.0
 */

/**
 * The digester: rendered lines in, the digest (header, kept lines, gap markers) out.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Digest from "./Digest.js"
/**
 * Bytes in, numbered lines out to a digester.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Feed from "./Feed.js"
/**
 * The near-repeat mask: numbers, hex ids, timestamps and durations masked.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Mask from "./Mask.js"
/**
 * The digest's header and gap markers.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Notice from "./Notice.js"
/**
 * The recognisers: what a line of output is, by its shape.
 *
 * @since 0.1.0
 * @category modules
 */
export * as Shape from "./Shape.js"
