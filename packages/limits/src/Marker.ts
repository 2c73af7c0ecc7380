/**
 * The exact truncation markers (spec §3, DECISIONS §2). A head cut appends its marker, a tail cut
 * prepends it; the spill sentence appears only when a full copy was really written.
 *
 * @since 0.1.0
 */

/**
 * What a marker needs to know about a cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface MarkerInput {
  /** Which end survived. */
  readonly keep: "head" | "tail"
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
  /** Path of the spill file, only when one was written. */
  readonly spillPath?: string | undefined
}

/**
 * The checkpoint marker: its own text, so diagnostics can tell where information was shortened.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkpointMarker = "[checkpoint truncated: this message crossed the retained context budget]"

/**
 * `{K}` of the markers: the limit in KB (1 KB = 1024 bytes). A whole number of KB prints as an
 * integer (`96`). Otherwise it is rounded DOWN, so a marker never claims a larger limit than the
 * one that applied: to two decimals (`97.65`), or below 1 KB to two significant digits (`0.0039`)
 * so a small limit never reads as `0`. Trailing zeros are dropped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const formatKB = (bytes: number): string => {
  if (bytes % 1024 === 0) return String(bytes / 1024)
  // bytes * 10^d / 1024 is exact in binary floating point, so rounding down is exact too
  const floorAt = (decimals: number): number => Math.floor((bytes * 10 ** decimals) / 1024)
  let decimals = 2
  if (bytes < 1024) while (floorAt(decimals) < 10) decimals++
  return String(floorAt(decimals) / 10 ** decimals)
}

/**
 * The closing sentence: where to get the rest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nextStep = (spillPath: string | undefined): string =>
  spillPath === undefined
    ? "Narrow the request to see more."
    : `Full output saved to ${spillPath} — Grep it, or Read it with offset/limit.`

/**
 * Renders the marker of a cut.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (input: MarkerInput): string => {
  const tail = nextStep(input.spillPath)
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
