/**
 * The machine-readable account of a bounded result (rules M10): which end was kept, kept and
 * total lines and bytes, the limit that applied, the spill file if one was written, and where to
 * continue. Every bounded toolcap result carries one beside its prose notice or marker.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type * as Marker from "./Marker.js"
import type * as Truncate from "./Truncate.js"

/**
 * A byte range of a stream, `[from, to)`, and the complete lines in it.
 *
 * @since 0.1.0
 * @category models
 */
export const ByteRange = Schema.Struct({ from: Schema.Number, to: Schema.Number, lines: Schema.Number })

/**
 * What a spill file holds: the whole stream byte for byte (`complete`), or its head and its tail
 * (`ranges`, in file order) with one line between them saying what was left out.
 *
 * @since 0.1.0
 * @category models
 */
export const SpillCopy = Schema.Struct({
  complete: Schema.Boolean,
  /** Bytes of the whole stream. */
  totalBytes: Schema.Number,
  /** The stream's byte ranges the file holds: one when complete, else the head and the tail. */
  ranges: Schema.Array(ByteRange)
})

/**
 * @since 0.1.0
 * @category models
 */
export type SpillCopy = typeof SpillCopy.Type

/** What one end of a head-and-tail cut kept. */
const Part = Schema.Struct({ lines: Schema.Number, bytes: Schema.Number })

/**
 * The schema of the truncation object, so hosts can validate and serialize it.
 *
 * @since 0.1.0
 * @category models
 */
export const Truncation = Schema.Struct({
  /** Which end survived; `both` for a head-and-tail cut (then `head` and `tail` say how much each kept). */
  kept: Schema.Literal("head", "tail", "both"),
  /** What the head of a head-and-tail cut kept. */
  head: Schema.optional(Part),
  /** What the tail of a head-and-tail cut kept. */
  tail: Schema.optional(Part),
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
  /** What that file holds: the whole stream, or its head and tail byte ranges. */
  spillCopy: Schema.optional(SpillCopy),
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
export const fromCut = (cut: Truncate.Cut, spill?: string | Marker.SavedCopy): Truncation => ({
  kept: cut.keep,
  keptLines: cut.keptLines,
  totalLines: cut.totalLines,
  keptBytes: cut.keptBytes,
  totalBytes: cut.totalBytes,
  limitLines: cut.maxLines,
  limitBytes: cut.maxBytes,
  ...(cut.singleLineBytes !== undefined ? { singleLineBytes: cut.singleLineBytes } : {}),
  ...spillFields(spill)
})

/**
 * The spill fields of a truncation object: the path, and what the file holds.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spillFields = (
  spill: string | Marker.SavedCopy | undefined
): { readonly spillPath?: string; readonly spillCopy?: SpillCopy } => {
  if (spill === undefined) return {}
  if (typeof spill === "string") return { spillPath: spill }
  return {
    spillPath: spill.path,
    spillCopy: {
      complete: spill.complete,
      totalBytes: spill.totalBytes,
      ranges: spill.ranges.map((range) => ({ from: range.from, to: range.to, lines: range.lines }))
    }
  }
}

/**
 * The truncation object of a head-and-tail cut: `head` and `tail` are cuts of one input (with its
 * true totals) that does not fit `limit`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromBoth = (
  head: Truncate.Cut,
  tail: Truncate.Cut,
  limit: Truncate.PartBudget,
  spill?: string | Marker.SavedCopy
): Truncation => ({
  kept: "both",
  head: { lines: head.keptLines, bytes: head.keptBytes },
  tail: { lines: tail.keptLines, bytes: tail.keptBytes },
  keptLines: head.keptLines + tail.keptLines,
  totalLines: head.totalLines,
  keptBytes: head.keptBytes + tail.keptBytes,
  totalBytes: head.totalBytes,
  limitLines: limit.maxLines,
  limitBytes: limit.maxBytes,
  ...spillFields(spill)
})
