/**
 * What a spill file holds (rules F3): the whole stream when it fits `spillMaxBytes`, else its
 * head and its tail, each cut at a line boundary exactly as a head or tail cut of
 * `@toolcap/limits` would cut it (a UTF-8 boundary when no whole line fits), with one line between
 * them saying how many bytes and lines were left out. Works on a reader of the stream's retained
 * bytes, a block at a time, so the same code serves a copy held in memory and one on disk.
 */
import { Budgets, Marker, Newlines, Utf8 } from "@toolcap/limits"

const NEWLINE = 0x0a

/** Bytes read at a time while scanning or copying a copy on disk. */
export const BLOCK_BYTES = 64 * 1024

/** Reads bytes `[from, to)` of the stream; only what the recorder retained may be asked for. */
export type Reader = (from: number, to: number) => Uint8Array

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** Newlines in `[from, to)` of the stream, counted a block at a time. */
const newlinesIn = (read: Reader, from: number, to: number): number => {
  let count = 0
  for (let at = from; at < to; at += BLOCK_BYTES)
    count += Newlines.count(read(at, Math.min(to, at + BLOCK_BYTES)))
  return count
}

/**
 * Lines of a whole stream: its newlines, plus one for a final piece without one.
 */
export const countLines = (bytes: Uint8Array): number => {
  if (bytes.length === 0) return 0
  const newlines = newlinesIn((from, to) => bytes.subarray(from, to), 0, bytes.length)
  return newlines + (bytes[bytes.length - 1] === NEWLINE ? 0 : 1)
}

/** The end of the head: just after the last newline before `headBytes`, else a UTF-8 boundary. */
const headEnd = (read: Reader, headBytes: number): { readonly end: number; readonly whole: boolean } => {
  for (let to = headBytes; to > 0; to -= BLOCK_BYTES) {
    const from = Math.max(0, to - BLOCK_BYTES)
    const newline = asBuffer(read(from, to)).lastIndexOf(NEWLINE)
    if (newline !== -1) return { end: from + newline + 1, whole: true }
  }
  // no whole line fits: the one line is cut where `Truncate` cuts it, looking at byte `headBytes`
  const from = Math.max(0, headBytes - 3)
  return { end: from + Utf8.prefixBoundary(read(from, headBytes + 1), headBytes - from), whole: false }
}

/**
 * The start of the tail: just after the first newline that leaves at most `tailBytes` after it
 * (a newline that is the stream's last byte ends the last line, it starts none), else a UTF-8
 * boundary inside the last line.
 */
const tailStart = (
  read: Reader,
  total: number,
  tailBytes: number
): { readonly start: number; readonly whole: boolean } => {
  const first = total - tailBytes - 1
  for (let from = first; from < total - 1; from += BLOCK_BYTES) {
    const to = Math.min(total - 1, from + BLOCK_BYTES)
    const newline = asBuffer(read(from, to)).indexOf(NEWLINE)
    if (newline !== -1) return { start: from + newline + 1, whole: true }
  }
  const at = total - tailBytes
  const from = at - 3
  return { start: from + Utf8.suffixBoundary(read(from, Math.min(total, at + 4)), 3), whole: false }
}

/**
 * How the copy of a stream is laid out: complete, or head bytes `[0, headEnd)`, the gap line,
 * then tail bytes `[tailStart, total)`.
 */
export type Layout =
  | { readonly complete: true; readonly total: number; readonly totalLines: number }
  | {
      readonly complete: false
      readonly total: number
      readonly headEnd: number
      readonly headLines: number
      readonly tailStart: number
      readonly tailLines: number
      /** The gap line with its `\n` (and a `\n` before it when the head ends inside a line). */
      readonly gap: Uint8Array
    }

/**
 * The layout of the copy of a stream of `total` bytes and `totalLines` lines. When it does not fit
 * `spillMaxBytes`, `read` must answer the first `spillMaxBytes / 2 + 1` bytes and the last
 * `spillMaxBytes / 2` bytes.
 */
export const layout = (read: Reader, total: number, totalLines: number, spillMaxBytes: number): Layout => {
  if (total <= spillMaxBytes) return { complete: true, total, totalLines }
  const parts = Budgets.spillParts({ spillMaxBytes })
  const head = headEnd(read, parts.headBytes)
  const tail = tailStart(read, total, parts.tailBytes)
  const headLines = head.whole ? newlinesIn(read, 0, head.end) : 0
  const tailLines = tail.whole
    ? newlinesIn(read, tail.start, total) + (read(total - 1, total)[0] === NEWLINE ? 0 : 1)
    : 0
  const omitted = { bytes: tail.start - head.end, lines: totalLines - headLines - tailLines }
  const before = head.whole ? "" : "\n"
  return {
    complete: false,
    total,
    headEnd: head.end,
    headLines,
    tailStart: tail.start,
    tailLines,
    gap: Utf8.encode(`${before}${Marker.spillGap(omitted)}\n`)
  }
}

/** The stream's byte ranges a layout keeps, in file order, for the `truncation` object. */
export const ranges = (copy: Layout): Marker.SavedCopy["ranges"] =>
  copy.complete
    ? [{ from: 0, to: copy.total, lines: copy.totalLines }]
    : [
        { from: 0, to: copy.headEnd, lines: copy.headLines },
        { from: copy.tailStart, to: copy.total, lines: copy.tailLines }
      ]

/** Writes the file's content in order, a block at a time: head, gap, tail (or the whole stream). */
export const emit = (read: Reader, copy: Layout, write: (bytes: Uint8Array) => void): void => {
  const copyRange = (from: number, to: number) => {
    for (let at = from; at < to; at += BLOCK_BYTES) write(read(at, Math.min(to, at + BLOCK_BYTES)))
  }
  if (copy.complete) return copyRange(0, copy.total)
  copyRange(0, copy.headEnd)
  write(copy.gap)
  copyRange(copy.tailStart, copy.total)
}

/** The size of the file a layout makes. */
export const fileBytes = (copy: Layout): number =>
  copy.complete ? copy.total : copy.headEnd + copy.gap.length + (copy.total - copy.tailStart)
