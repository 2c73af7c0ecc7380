/**
 * Every text of the digest the model reads, built here (rules G6): the first line saying what
 * the digest did, and the gap markers that stand for the lines it left out, each naming the raw
 * line range that `Read` with offset/limit recovers.
 *
 * @since 0.1.0
 */
import { Marker } from "@toolcap/limits"

/**
 * Why a line was left out: folded as a near-repeat, a passing test, a progress frame or a repeat
 * of one warning code, or omitted to fit the result budget.
 *
 * @since 0.1.0
 * @category models
 */
export type Folded = "repeat" | "pass" | "progress" | "warning" | "budget"

/**
 * The folded kinds, in the order the notice names them.
 *
 * @since 0.1.0
 * @category models
 */
export const foldedKinds: ReadonlyArray<Folded> = ["pass", "progress", "repeat", "warning", "budget"]

const count = (n: number): string => n.toLocaleString("en-US")

const plural = (n: number, one: string, many: string): string => `${count(n)} ${n === 1 ? one : many}`

/** One kind's count, as the notice and the markers phrase it. */
const phrase = (kind: Folded, n: number): string => {
  switch (kind) {
    case "pass":
      return plural(n, "passing-test line", "passing-test lines")
    case "progress":
      return plural(n, "progress frame", "progress frames")
    case "repeat":
      return plural(n, "repeated line", "repeated lines")
    case "warning":
      return plural(n, "repeated warning line", "repeated warning lines")
    case "budget":
      return plural(n, "line omitted to fit the budget", "lines omitted to fit the budget")
  }
}

/**
 * Counts per folded kind.
 *
 * @since 0.1.0
 * @category models
 */
export type Counts = { [K in Folded]: number }

/**
 * No line folded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noCounts = (): Counts => ({ repeat: 0, pass: 0, progress: 0, warning: 0, budget: 0 })

/** A raw line range, `5–302` (one line: `5`). */
const range = (first: number, last: number): string =>
  first === last ? `raw line ${first}` : `raw lines ${first}–${last}`

/**
 * The marker standing for a gap: `[… 298 more lines like these, raw lines 5–302 …]` for a fold
 * of near-repeats between its first and last line; otherwise the gap's counts per kind.
 *
 * @since 0.1.0
 * @category constructors
 */
export const gap = (counts: Counts, firstRaw: number, lastRaw: number): string => {
  const kinds = foldedKinds.filter((kind) => counts[kind] > 0)
  const where = range(firstRaw, lastRaw)
  if (kinds.length === 1 && kinds[0] === "repeat")
    return `[… ${plural(counts.repeat, "more line", "more lines")} like these, ${where} …]`
  return `[… ${kinds.map((kind) => phrase(kind, counts[kind])).join(", ")}, ${where} …]`
}

/**
 * What the header reports.
 *
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  /** Rendered lines of the stream. */
  readonly lines: number
  /** Lines shown verbatim. */
  readonly kept: number
  /** Lines left out, per kind (kept + their sum = lines). */
  readonly folded: Counts
  /** Repeated warning lines folded, per diagnostic code. */
  readonly warningCodes: ReadonlyArray<readonly [code: string, lines: number]>
  /** Must-keep lines that still had to go to fit the budget (counted in `folded.budget`). */
  readonly mustKeepOmitted: number
  /** Lines too long to hold whole, shown by their start. */
  readonly clippedLines: number
  /** The raw stream: its bytes, its lines (the spill copy's lines) and the copy's path, if saved. */
  readonly raw: {
    readonly bytes: number
    readonly lines: number
    readonly path?: string | undefined
    /** The sentence saying what the copy holds and how to read it, when it is not the whole stream's. */
    readonly copy?: string | undefined
  }
}

/** Most diagnostic codes the header names one by one; the rest are counted together. */
const NAMED_CODES = 5

/**
 * The first line of a digest: what was folded (counts per kind, per warning code), the must-keep
 * lines the budget still took, the raw size and lines, and where the raw copy is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const header = (summary: Summary): string => {
  const kinds = foldedKinds.filter((kind) => kind !== "budget" && summary.folded[kind] > 0)
  const parts = kinds.map((kind) => {
    if (kind !== "warning" || summary.warningCodes.length === 0) return phrase(kind, summary.folded[kind])
    const named = summary.warningCodes.slice(0, NAMED_CODES).map(([code, n]) => `${code} ${count(n)}`)
    const rest = summary.warningCodes.length - NAMED_CODES
    return `${phrase(kind, summary.folded[kind])} (${named.join(", ")}${rest > 0 ? `, ${count(rest)} more codes` : ""})`
  })
  const budget = summary.folded.budget
  const omitted =
    budget > 0
      ? `; omitted ${plural(budget, "line", "lines")} to fit the budget` +
        (summary.mustKeepOmitted > 0
          ? `, ${count(summary.mustKeepOmitted)} of them must-keep (errors, summaries, headers)`
          : "")
      : ""
  const clipped =
    summary.clippedLines > 0
      ? `; ${plural(summary.clippedLines, "line", "lines")} too long to show whole, shown by their start`
      : ""
  const raw = `raw ${Marker.formatBytes(summary.raw.bytes)}, ${plural(summary.raw.lines, "line", "lines")}`
  const where =
    summary.raw.copy ??
    (summary.raw.path === undefined
      ? "no raw copy saved"
      : `raw copy at ${summary.raw.path} — Read it with offset/limit at the raw lines named below`)
  return `[digest: showing ${count(summary.kept)} of ${plural(summary.lines, "line", "lines")}; folded ${parts.length > 0 ? parts.join(", ") : "nothing"}${omitted}${clipped}; ${raw}; ${where}]`
}
