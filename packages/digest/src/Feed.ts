/**
 * Bytes in, lines out to a digester (rules G3, G6): splits a stream of UTF-8 bytes at `\n`
 * (a final piece without one is a line too; a `\r` before the `\n` is not part of the line's
 * text) and numbers each line by the newlines before it, so line `n` of the stream fed is line
 * `n` of its spill copy. Fed a renderer's output, the numbers are rendered lines; they equal the
 * raw lines whenever rendering did not move the cursor between rows (the rule is in the README).
 * Memory: one partial line, held up to `lineMaxBytes` (its start; the rest is counted, not held).
 *
 * @since 0.1.0
 */
import type { Digester } from "./Digest.js"

/**
 * A byte feed of a digester.
 *
 * @since 0.1.0
 * @category models
 */
export interface Feed {
  /** Feeds bytes of the stream, in order. */
  readonly push: (bytes: Uint8Array) => void
  /** Ends the stream: its last piece, if it had no newline, becomes a line. */
  readonly end: () => void
  /** Lines fed so far (a final piece counts once `end` ran). */
  readonly lines: () => number
}

const NEWLINE = 0x0a
const CR = 0x0d

/** `end`, or before it the start of the UTF-8 sequence it would cut (a clip never invents a U+FFFD). */
const boundary = (view: Uint8Array, start: number, end: number): number => {
  if (end >= view.length || (view[end]! & 0xc0) !== 0x80) return end
  let at = end
  while (at > start && (view[at]! & 0xc0) === 0x80) at--
  return at
}

/**
 * A feed into `digester`; a line longer than the digester holds is passed on by its start (cut
 * at a code point), so the digester counts it as clipped.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (digester: Digester): Feed => {
  // 4 bytes per code point at most: the digester still sees more than it holds, and counts the clip
  const lineMaxBytes = 4 * digester.lineMaxChars + 4
  let lines = 0
  // the current line's start, when it began in an earlier read
  let partial: Uint8Array = new Uint8Array(0)
  let partialLength = 0
  let ended = false
  const emit = (view: Buffer, start: number, end: number) => {
    lines++
    let stop = end
    if (stop > start && view[stop - 1] === CR) stop--
    digester.push(
      view.toString("utf8", start, boundary(view, start, Math.min(stop, start + lineMaxBytes))),
      lines
    )
  }
  const holdPartial = (view: Buffer, start: number, end: number) => {
    const room = lineMaxBytes - partialLength
    if (room <= 0) return
    const take = Math.min(room, end - start)
    if (partialLength + take > partial.length) {
      const grown = new Uint8Array(
        Math.min(lineMaxBytes, Math.max(2 * partial.length, partialLength + take, 256))
      )
      grown.set(partial.subarray(0, partialLength))
      partial = grown
    }
    partial.set(view.subarray(start, start + take), partialLength)
    partialLength += take
  }
  const flushPartial = (view: Buffer, end: number) => {
    // the line began in an earlier read: join what was held with this read's part of it
    holdPartial(view, 0, end)
    const whole = Buffer.from(partial.buffer, partial.byteOffset, partialLength)
    emit(whole, 0, partialLength)
    partialLength = 0
  }
  return {
    push(bytes) {
      if (ended || bytes.length === 0) return
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      let start = 0
      let newline = view.indexOf(NEWLINE, 0)
      if (partialLength > 0 && newline !== -1) {
        flushPartial(view, newline)
        start = newline + 1
        newline = view.indexOf(NEWLINE, start)
      }
      while (newline !== -1) {
        emit(view, start, newline)
        start = newline + 1
        newline = view.indexOf(NEWLINE, start)
      }
      if (start < view.length) holdPartial(view, start, view.length)
    },
    end() {
      if (ended) return
      ended = true
      if (partialLength > 0) {
        lines++
        let stop = partialLength
        if (partial[stop - 1] === CR) stop--
        const view = Buffer.from(partial.buffer, partial.byteOffset, stop)
        digester.push(view.toString("utf8", 0, boundary(view, 0, stop)), lines)
        partialLength = 0
      }
    },
    lines: () => lines
  }
}
