/**
 * The exact truncation markers (rules M2–M7). A head cut appends its marker, a tail cut
 * prepends it, a head-and-tail cut puts it between the two; the closing sentence says exactly
 * what the spill file holds: the whole stream ("Full output saved"), or its head and its tail
 * with their sizes. Also the one line a head-and-tail spill file holds between its two parts.
 *
 * @since 0.1.0
 */
import * as PathQuote from "./PathQuote.js"

/**
 * What a marker needs to know about a cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface MarkerInput {
  /** Which end survived: both for a head-and-tail cut (then `head` and `tail` say how much of each). */
  readonly keep: "head" | "tail" | "both"
  /** Complete lines kept (0 when a single line was cut to the byte budget). */
  readonly keptLines: number
  /** Lines of the whole input. */
  readonly totalLines: number
  /** Bytes kept. */
  readonly keptBytes: number
  /** Set when no complete line fit: the size of the one line that was cut. */
  readonly singleLineBytes?: number | undefined
  /** The line limit that applied. */
  readonly maxLines: number
  /** The byte limit that applied; shown in KB. */
  readonly maxBytes: number
  /** For a head-and-tail cut: what each end kept. */
  readonly head?: Part | undefined
  readonly tail?: Part | undefined
  /** Total bytes of the input (a head-and-tail marker states it). */
  readonly totalBytes?: number | undefined
  /** The spill file, only when one was written: a path alone means a complete copy. */
  readonly spillPath?: string | SavedCopy | undefined
}

/**
 * What one end of a head-and-tail cut kept.
 *
 * @since 0.1.0
 * @category models
 */
export interface Part {
  /** Complete lines kept (0 when the end is a piece of one line). */
  readonly lines: number
  readonly bytes: number
}

/**
 * What a spill file holds: the whole stream, or its head and its tail (byte ranges of the stream,
 * `[from, to)`, in file order) with one line between them saying what was left out.
 *
 * @since 0.1.0
 * @category models
 */
export interface SavedCopy {
  readonly path: string
  /** True only when the file is the stream, byte for byte. */
  readonly complete: boolean
  /** Bytes of the whole stream. */
  readonly totalBytes: number
  /** The stream's bytes the file holds: one range when complete, else the head's and the tail's. */
  readonly ranges: ReadonlyArray<{ readonly from: number; readonly to: number; readonly lines: number }>
}

/**
 * The checkpoint marker: its own text, so diagnostics can tell where information was shortened.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkpointMarker = "[checkpoint truncated: this message crossed the retained context budget]"

const KB = 1024
const MB = 1024 * KB

/**
 * `bytes` in `unit`s, rounded DOWN so a figure never claims a larger limit than the one that
 * applied: whole when exact (`96`), else to two decimals (`97.65`), or below one unit to two
 * significant digits (`0.0039`) so a small figure never reads as `0`. Trailing zeros are dropped.
 */
const figure = (bytes: number, unit: number): string => {
  if (bytes % unit === 0) return String(bytes / unit)
  // bytes * 10^d / 2^k is exact in binary floating point, so rounding down is exact too
  const floorAt = (decimals: number): number => Math.floor((bytes * 10 ** decimals) / unit)
  let decimals = 2
  if (bytes < unit) while (floorAt(decimals) < 10) decimals++
  return String(floorAt(decimals) / 10 ** decimals)
}

/**
 * `{K}` of the markers: the limit in KB (1 KB = 1024 bytes), rounded down as `formatBytes` rounds:
 * `96`, `97.65`, `0.0039`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const formatKB = (bytes: number): string => figure(bytes, KB)

/**
 * A size in prose, for notices, descriptions and reports: bytes below 1 KB (`1000 bytes`), KB
 * below 1 MB (`48KB`, `97.65KB`), else MB (`16MB`, `9.4MB`), with 1 KB = 1024 bytes and the
 * figure rounded down as in the markers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const formatBytes = (bytes: number): string =>
  bytes < KB
    ? `${bytes} ${bytes === 1 ? "byte" : "bytes"}`
    : bytes < MB
      ? `${figure(bytes, KB)}KB`
      : `${figure(bytes, MB)}MB`

const bytesOf = (range: SavedCopy["ranges"][number] | undefined): number =>
  range === undefined ? 0 : range.to - range.from

/**
 * The closing sentence: where to get the rest. `Full output saved to <path>` only for a complete
 * copy (a path alone means one); a head-and-tail copy names its parts in exact bytes:
 * `First <h> and last <t> of <total> bytes saved to <path> — …`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nextStep = (spill: string | SavedCopy | undefined): string => {
  if (spill === undefined) return "Narrow the request to see more."
  if (typeof spill === "string" || spill.complete)
    return `Full output saved to ${PathQuote.quote(typeof spill === "string" ? spill : spill.path)} — Grep it, or Read it with offset/limit.`
  const [head, tail] = spill.ranges
  return `First ${bytesOf(head)} and last ${bytesOf(tail)} of ${spill.totalBytes} bytes saved to ${PathQuote.quote(spill.path)} — Grep it, or Read it with offset/limit.`
}

/**
 * The line a head-and-tail spill file holds between the stream's head and its tail (without its
 * `\n`): how many bytes and lines of the stream are not in the file. A line counts when any of
 * its bytes was left out.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spillGap = (omitted: { readonly bytes: number; readonly lines: number }): string =>
  `[… ${omitted.lines} lines (${omitted.bytes} bytes) left out here …]`

/**
 * The most bytes the gap of a head-and-tail spill file can take: its line with the largest
 * numbers (safe integers), its own `\n`, and the `\n` that ends a head cut inside a line.
 *
 * @since 0.1.0
 * @category models
 */
export const spillGapMaxBytes: number =
  new TextEncoder().encode(spillGap({ bytes: Number.MAX_SAFE_INTEGER, lines: Number.MAX_SAFE_INTEGER }))
    .length + 2

/**
 * Renders the marker of a cut.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (input: MarkerInput): string => {
  const tail = nextStep(input.spillPath)
  if (input.keep === "both") {
    const head = input.head ?? { lines: 0, bytes: 0 }
    const end = input.tail ?? { lines: 0, bytes: 0 }
    return `[truncated: kept the first ${head.lines} and the last ${end.lines} of ${input.totalLines} lines (${head.bytes} and ${end.bytes} of ${input.totalBytes ?? input.keptBytes} bytes); limit ${input.maxLines} lines / ${formatKB(input.maxBytes)}KB. ${tail}]`
  }
  if (input.singleLineBytes !== undefined) {
    return `[truncated: no complete line fits the ${formatKB(input.maxBytes)}KB limit; kept ${input.keptBytes} bytes of a single ${input.singleLineBytes}-byte line. ${tail}]`
  }
  const end = input.keep === "head" ? "first" : "last"
  return `[truncated: kept the ${end} ${input.keptLines} of ${input.totalLines} lines; limit ${input.maxLines} lines / ${formatKB(input.maxBytes)}KB. ${tail}]`
}

/**
 * Places a marker at the cut: appended after a head, prepended before a tail, on a line of its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attach = (text: string, keep: "head" | "tail", marker: string): string => {
  if (keep === "head")
    return text.length === 0 || text.endsWith("\n") ? `${text}${marker}` : `${text}\n${marker}`
  return `${marker}\n${text}`
}

/**
 * Places the marker of a head-and-tail cut between the two, on a line of its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const between = (head: string, marker: string, tail: string): string =>
  `${attach(head, "head", marker)}\n${tail}`
