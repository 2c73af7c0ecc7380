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
  /** Complete lines kept, or `undefined` for a single line cut to the byte budget. */
  readonly keptLines: number
  readonly totalLines: number
  readonly keptBytes: number
  /** Set when no complete line fit: the size of the one line that was cut. */
  readonly singleLineBytes?: number | undefined
  readonly maxLines: number
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
 * `{K}` of the markers: the limit in KB (1 KB = 1024 bytes), without a fraction when it is whole.
 *
 * @since 0.1.0
 * @category constructors
 */
export const formatKB = (bytes: number): string => {
  const kb = bytes / 1024
  return Number.isInteger(kb) ? String(kb) : String(Math.round(kb * 100) / 100)
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
