/**
 * Every sentence Read, Glob and Grep tell the model, and the `truncation` object beside it, built
 * in one place so the three tools say the same thing the same way.
 *
 * A clipped line's notice names a command that really shows the rest: Bash with
 * `tail -c +BYTE FILE | head -c BYTES`, starting at the first byte the clip left out (always a
 * character boundary) and taking one search budget of it. Bash's own result budget has no
 * per-line clip, so this is the one tool call that returns the rest of a long line verbatim.
 */
import { Marker, PathQuote, type Truncation } from "@toolcap/limits"
import type { Stop } from "./search/order.js"

/** `1 line` / `3 lines`. */
export const plural = (count: number, word: string): string =>
  `${count} ${word}${count === 1 ? "" : word.endsWith("ch") ? "es" : "s"}`

/** Where a clipped line continues: the file (as the shell should name it) and the first byte left out. */
export interface ClipContinuation {
  /** The file as Bash (cwd = workspace) reaches it. */
  readonly shellPath: string
  readonly line: number
  /** 0-based byte offset of the first byte the clip left out. */
  readonly byte: number
}

/** Where the first long line shown from its first match (not from its start) begins. */
export interface MatchWindow {
  readonly path: string
  readonly line: number
  /** 1-based byte column of the line where the shown text starts. */
  readonly column: number
}

/** The sentence about long lines shown around their first match. */
export const matchWindows = (count: number, first: MatchWindow): string =>
  `${plural(count, "line")} whose first match lies past the clip ${count === 1 ? "is" : "are"} shown around that match, not from ${count === 1 ? "its" : "their"} start (${count === 1 ? "" : "the first: "}line ${first.line} of ${PathQuote.quote(first.path)} from byte column ${first.column}; each entry's \`column\` says where).`

/** The sentence about clipped lines, naming a command that shows the rest of the first one. */
export const clippedLines = (
  count: number,
  maxLineChars: number,
  first: ClipContinuation | undefined,
  maxBytes: number
): string => {
  const head = `${plural(count, "line")} longer than ${maxLineChars} characters ${count === 1 ? "was" : "were"} clipped`
  if (first === undefined) return `${head}.`
  const command = `tail -c +${first.byte + 1} ${PathQuote.shellWord(first.shellPath)} | head -c ${maxBytes}`
  return `${head}; the rest of ${count === 1 ? "it" : `the first (line ${first.line})`} shows with Bash \`${command}\` (raise the +offset by ${maxBytes} for the part after that).`
}

/** Why a list stopped. */
export const stopReason = (
  stop: Stop | undefined,
  maxBytes: number,
  maxLines: number,
  cap: string
): string =>
  stop === "bytes"
    ? `the ${Marker.formatBytes(maxBytes)} result budget`
    : stop === "lines"
      ? `the ${maxLines}-line result budget`
      : cap

/** `limit N is above the maximum M, so it was clamped to M.` */
export const clamped = (field: string, requested: number, maximum: number, what: string): string =>
  `${field} ${requested} is above the ${what} ${maximum}, so it was clamped to ${maximum}.`

/** Joins sentences into a notice, or nothing. */
export const join = (sentences: ReadonlyArray<string>): { readonly notice?: string } =>
  sentences.length > 0 ? { notice: sentences.join(" ") } : {}

// ---------------------------------------------------------------------------------------------
// Read

export interface ReadNoticeInput {
  /** The first line: its real number, or (when `offsetKnown` is false) `-k`, k lines before the end. */
  readonly offset: number
  readonly offsetKnown: boolean
  readonly lineCount: number
  readonly atEof: boolean
  readonly stoppedBy: "eof" | "lines" | "bytes"
  /** The offset of the next page (negative when line numbers are unknown). */
  readonly nextOffset: number
  readonly maxLines: number
  readonly maxBytes: number
  readonly maxLineChars: number
  readonly requestedLimit: number | undefined
  readonly clampedTo: number | undefined
  readonly singleLineBytes: number | undefined
  readonly contentBytes: number
  readonly clippedLines: number
  readonly firstClip: ClipContinuation | undefined
  readonly fileBytes: number
}

/** Read's notice and `truncation`. */
export const read = (
  r: ReadNoticeInput
): { readonly truncated: boolean; readonly notice?: string; readonly truncation?: Truncation.Truncation } => {
  const truncated = !r.atEof || r.clippedLines > 0
  const sentences: Array<string> = []
  if (r.clampedTo !== undefined) {
    sentences.push(clamped("limit", r.requestedLimit ?? r.clampedTo, r.clampedTo, "read window of"))
  }
  if (!r.offsetKnown) {
    sentences.push(
      `The window starts ${plural(-r.offset, "line")} before the end of the file; its line numbers are unknown without counting the whole file (Read with offset -${-r.offset + r.maxLines} for the lines before it).`
    )
  }
  if (r.singleLineBytes !== undefined) {
    sentences.push(
      `Line ${r.offset} alone is larger than the ${Marker.formatBytes(r.maxBytes)} result budget: showing its first ${r.contentBytes} bytes of ${r.singleLineBytes}.`
    )
  }
  if (!r.atEof) {
    const range = r.lineCount === 1 ? `line ${r.offset}` : `lines ${r.offset}-${r.offset + r.lineCount - 1}`
    const why =
      r.stoppedBy === "bytes"
        ? ` (the ${Marker.formatBytes(r.maxBytes)} result budget is full)`
        : r.requestedLimit !== undefined && r.clampedTo === undefined
          ? ""
          : ` (the ${r.maxLines}-line read window is full)`
    const shown = r.offsetKnown ? `Showing ${range}${why}` : `Showing ${plural(r.lineCount, "line")}${why}`
    sentences.push(`${shown}; the file continues: Read with offset ${r.nextOffset} to see more.`)
  }
  if (r.clippedLines > 0)
    sentences.push(clippedLines(r.clippedLines, r.maxLineChars, r.firstClip, r.maxBytes))
  const truncation: Truncation.Truncation | undefined = truncated
    ? {
        kept: "head",
        keptLines: r.lineCount,
        ...(r.atEof && r.offsetKnown ? { totalLines: r.offset + r.lineCount - 1 } : {}),
        keptBytes: r.contentBytes,
        totalBytes: r.fileBytes,
        limitLines: r.maxLines,
        limitBytes: r.maxBytes,
        ...(r.singleLineBytes !== undefined ? { singleLineBytes: r.singleLineBytes } : {}),
        ...(r.clippedLines > 0 ? { clippedLines: r.clippedLines } : {}),
        ...(!r.atEof ? { nextOffset: r.nextOffset } : {})
      }
    : undefined
  return { truncated, ...join(sentences), ...(truncation !== undefined ? { truncation } : {}) }
}

// ---------------------------------------------------------------------------------------------
// Glob

export interface GlobNoticeInput {
  readonly requestedLimit: number | undefined
  readonly limit: number
  readonly maxLimit: number
  readonly clamped: boolean
  readonly shown: number
  readonly total: number
  readonly stop: Stop | undefined
  readonly keptBytes: number
  readonly maxLines: number
  readonly maxBytes: number
  readonly target: string
  readonly pattern: string
}

/** Glob's notice and `truncation`. */
export const glob = (
  g: GlobNoticeInput
): { readonly truncated: boolean; readonly notice?: string; readonly truncation?: Truncation.Truncation } => {
  const truncated = g.shown < g.total
  const sentences: Array<string> = []
  if (g.clamped) sentences.push(clamped("limit", g.requestedLimit ?? g.maxLimit, g.maxLimit, "maximum"))
  if (truncated) {
    const why = stopReason(g.stop, g.maxBytes, g.maxLines, `limit ${g.limit}`)
    const raise = g.stop === "entries" && g.limit < g.maxLimit ? `, raise limit (up to ${g.maxLimit})` : ""
    sentences.push(
      `Showing the ${g.shown} newest of ${g.total} matching files (stopped at ${why}); narrow the pattern or path${raise} to see others.`
    )
  }
  if (g.total === 0) sentences.push(`No file under ${g.target} matches ${g.pattern}.`)
  const truncation: Truncation.Truncation | undefined = truncated
    ? {
        kept: "head",
        keptLines: g.shown,
        totalLines: g.total,
        keptBytes: g.keptBytes,
        limitLines: Math.min(g.limit, g.maxLines),
        limitBytes: g.maxBytes
      }
    : undefined
  return { truncated, ...join(sentences), ...(truncation !== undefined ? { truncation } : {}) }
}

// ---------------------------------------------------------------------------------------------
// Grep

export interface GrepNoticeInput {
  readonly contextClamped: boolean
  readonly truncated: boolean
  readonly stop: Stop | undefined
  readonly headLimit: number
  readonly keptEntries: number
  readonly keptBytes: number
  readonly maxLines: number
  readonly maxBytes: number
  readonly maxLineChars: number
  readonly clippedLines: number
  readonly firstClip: ClipContinuation | undefined
  /** Long matching lines shown around their first match. */
  readonly windows: number
  readonly firstWindow: MatchWindow | undefined
}

/** Grep's notice and `truncation`. */
export const grep = (
  g: GrepNoticeInput
): { readonly truncated: boolean; readonly notice?: string; readonly truncation?: Truncation.Truncation } => {
  const sentences: Array<string> = []
  if (g.contextClamped)
    sentences.push(`Context was clamped to ${g.maxLines} lines, the most a result can show.`)
  if (g.truncated) {
    const why = stopReason(g.stop, g.maxBytes, g.maxLines, `headLimit ${g.headLimit}`)
    sentences.push(
      `Stopped at ${why}, newest files first; narrow the pattern, path or glob${g.stop === "entries" ? ", or raise headLimit," : ""} to see more.`
    )
  }
  if (g.clippedLines > 0)
    sentences.push(clippedLines(g.clippedLines, g.maxLineChars, g.firstClip, g.maxBytes))
  if (g.firstWindow !== undefined) sentences.push(matchWindows(g.windows, g.firstWindow))
  const truncated = g.truncated || g.clippedLines > 0
  const truncation: Truncation.Truncation | undefined = truncated
    ? {
        kept: "head",
        keptLines: g.keptEntries,
        keptBytes: g.keptBytes,
        limitLines: Math.min(g.headLimit, g.maxLines),
        limitBytes: g.maxBytes,
        ...(g.clippedLines > 0 ? { clippedLines: g.clippedLines } : {})
      }
    : undefined
  return { truncated, ...join(sentences), ...(truncation !== undefined ? { truncation } : {}) }
}
