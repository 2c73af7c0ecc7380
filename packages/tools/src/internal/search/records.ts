/**
 * ripgrep's standard output, decoded record by record as it streams. Each mode asks ripgrep only
 * for what it returns, so there is no JSON to decode:
 *
 * - files: `--files-with-matches --null` prints `PATH\0` per file;
 * - count: `--count --with-filename --null` prints `PATH\0COUNT\n`;
 * - content: `--with-filename --null --line-number --byte-offset --no-heading` prints
 *   `PATH\0LINE:BYTE:TEXT\n` for a matching line and `PATH\0LINE-BYTE-TEXT\n` for a context
 *   line, TEXT cut by `--max-columns` to a preview; with `--column` a matching line's record is
 *   `PATH\0LINE:COLUMN:BYTE:TEXT\n` (ripgrep gives a column to matches only).
 *
 * A path may hold any byte but NUL (a newline too), and TEXT never holds a newline, so the first
 * NUL ends the path and the next newline ends the record. Memory per record is bounded: a path
 * is at most PATH_MAX and a TEXT longer than `maxTextBytes` keeps only its start.
 */

export type Mode = "content" | "filesWithMatches" | "count"

/** One decoded record. */
export interface SearchRecord {
  /** The path as ripgrep printed it (the argument it was given). */
  readonly path: string
  /** count mode: matching lines in the file. */
  readonly count: number
  /** content mode: 1-based line number, 0 otherwise. */
  readonly line: number
  /** content mode: byte offset of the line's start in the file. */
  readonly byte: number
  /**
   * content mode, a matching line: 1-based byte column of its first match when the run was asked
   * for columns; 0 otherwise (not asked for, or a context line).
   */
  readonly column: number
  /** content mode: a matching line (else a context line). */
  readonly isMatch: boolean
  /** content mode: the printed text (without the newline); at most `maxTextBytes`. */
  readonly text: Buffer
}

const NUL = 0
const NEWLINE = 0x0a
const COLON = 0x3a
const DASH = 0x2d

/** Reads a decimal number at `at`; answers it and the index after it (-1 when absent). */
const decimal = (bytes: Buffer, at: number): [number, number] => {
  let value = 0
  let k = at
  while (k < bytes.length && bytes[k]! >= 0x30 && bytes[k]! <= 0x39) {
    value = value * 10 + (bytes[k]! - 0x30)
    k++
  }
  return k === at ? [0, -1] : [value, k]
}

/**
 * Decodes `LINE:COLUMN:BYTE:TEXT` (`LINE:BYTE:TEXT` without `columns`) / `LINE-BYTE-TEXT`;
 * undefined when the record is not of that shape.
 */
const decodeContent = (rest: Buffer, columns: boolean): Omit<SearchRecord, "path" | "count"> | undefined => {
  const [line, afterLine] = decimal(rest, 0)
  if (afterLine === -1) return undefined
  const separator = rest[afterLine]
  if (separator !== COLON && separator !== DASH) return undefined
  let at = afterLine + 1
  let column = 0
  if (separator === COLON && columns) {
    const [first, afterColumn] = decimal(rest, at)
    if (afterColumn === -1 || rest[afterColumn] !== COLON) return undefined
    column = first
    at = afterColumn + 1
  }
  const [byte, afterByte] = decimal(rest, at)
  if (afterByte === -1 || rest[afterByte] !== separator) return undefined
  return { line, column, byte, isMatch: separator === COLON, text: rest.subarray(afterByte + 1) }
}

const EMPTY = Buffer.alloc(0)

/**
 * A streaming decoder of one run's stdout for `mode`; `onRecord` gets every record in order.
 * `columns`: the run was given `--column` (content mode).
 */
export const decoder = (
  mode: Mode,
  maxTextBytes: number,
  onRecord: (record: SearchRecord) => void,
  columns = false
) => {
  let inPath = true
  let path: Array<Buffer> = []
  let rest: Array<Buffer> = []
  let restBytes = 0
  let pathText = ""

  const finishRecord = () => {
    const body = rest.length === 1 ? rest[0]! : Buffer.concat(rest)
    rest = []
    restBytes = 0
    inPath = true
    if (mode === "count") {
      const [count, after] = decimal(body, 0)
      if (after !== -1)
        onRecord({ path: pathText, count, line: 0, byte: 0, column: 0, isMatch: true, text: EMPTY })
      return
    }
    const decoded = decodeContent(body, columns)
    if (decoded !== undefined) onRecord({ path: pathText, count: 1, ...decoded })
  }

  return {
    push(chunk: Buffer): void {
      let at = 0
      while (at < chunk.length) {
        if (inPath) {
          const end = chunk.indexOf(NUL, at)
          if (end === -1) {
            path.push(chunk.subarray(at))
            return
          }
          path.push(chunk.subarray(at, end))
          pathText = (path.length === 1 ? path[0]! : Buffer.concat(path)).toString("utf8")
          path = []
          at = end + 1
          if (mode === "filesWithMatches") {
            onRecord({ path: pathText, count: 1, line: 0, byte: 0, column: 0, isMatch: true, text: EMPTY })
            continue
          }
          inPath = false
        } else {
          const end = chunk.indexOf(NEWLINE, at)
          const stop = end === -1 ? chunk.length : end
          const room = maxTextBytes - restBytes
          if (room > 0) {
            // a copy: the chunk's memory is not kept alive by a retained record
            const piece = Buffer.from(chunk.subarray(at, Math.min(stop, at + room)))
            rest.push(piece)
            restBytes += piece.length
          }
          if (end === -1) return
          at = end + 1
          finishRecord()
        }
      }
    },
    /** Ends the stream (a record without its final newline still counts). */
    end(): void {
      if (!inPath) finishRecord()
    }
  }
}

/** ripgrep's preview suffixes (`--max-columns-preview`): ` [... omitted end of long line]`, ` [... 3 more matches]`. */
const PREVIEW_MARK = Buffer.from(" [... ")

/**
 * The line's own bytes of a printed TEXT: a preview (longer than `maxColumns`) loses ripgrep's
 * suffix; an untouched line loses a final `\r` (CRLF files).
 */
export const lineBytes = (
  text: Buffer,
  maxColumns: number
): { readonly bytes: Buffer; readonly preview: boolean } => {
  if (text.length > maxColumns) {
    const mark = text.lastIndexOf(PREVIEW_MARK)
    return { bytes: text.subarray(0, mark === -1 ? maxColumns : Math.min(mark, maxColumns)), preview: true }
  }
  const last = text.length - 1
  return { bytes: last >= 0 && text[last] === 0x0d ? text.subarray(0, last) : text, preview: false }
}
