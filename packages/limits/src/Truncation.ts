/**
 * The machine-readable account of a bounded result (DECISIONS §2): which end was kept, kept and
 * total lines and bytes, the limit that applied, the spill file if one was written, and where to
 * continue. Every bounded toolcap result carries one beside its prose notice or marker.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type * as Truncate from "./Truncate.js"

/**
 * The schema of the truncation object, so hosts can validate and serialize it.
 *
 * @since 0.1.0
 * @category models
 */
export const Truncation = Schema.Struct({
  /** Which end survived. */
  kept: Schema.Literal("head", "tail"),
  /** Whole lines kept (0 when a single line was cut to the byte budget). */
  keptLines: Schema.Number,
  /** Total lines, when known (a Read window that did not reach end of file does not know it). */
  totalLines: Schema.optional(Schema.Number),
  /** Bytes kept (input bytes: invalid UTF-8 counts as what it was, not as U+FFFD). */
  keptBytes: Schema.Number,
  /** Total bytes, when known. */
  totalBytes: Schema.optional(Schema.Number),
  /** The line limit that applied. */
  limitLines: Schema.Number,
  /** The byte limit that applied. */
  limitBytes: Schema.Number,
  /** Set when no complete line fit: the byte size of the single line that was cut. */
  singleLineBytes: Schema.optional(Schema.Number),
  /** Lines clipped to MAX_LINE_CHARS. */
  clippedLines: Schema.optional(Schema.Number),
  /** Path of the spill file holding a fuller copy, only when one was written. */
  spillPath: Schema.optional(Schema.String),
  /** Where to continue (a Read offset), when there is one. */
  nextOffset: Schema.optional(Schema.Number)
})

/**
 * The truncation object: which end was kept, kept and total lines and bytes, the limit, the spill
 * file and where to continue.
 *
 * @since 0.1.0
 * @category models
 */
export type Truncation = typeof Truncation.Type

/**
 * The truncation object of a cut.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromCut = (cut: Truncate.Cut, spillPath?: string): Truncation => ({
  kept: cut.keep,
  keptLines: cut.keptLines,
  totalLines: cut.totalLines,
  keptBytes: cut.keptBytes,
  totalBytes: cut.totalBytes,
  limitLines: cut.maxLines,
  limitBytes: cut.maxBytes,
  ...(cut.singleLineBytes !== undefined ? { singleLineBytes: cut.singleLineBytes } : {}),
  ...(spillPath !== undefined ? { spillPath } : {})
})
