/**
 * What a spill file holds for a stream (rules F3), defined on the whole stream at once: the
 * stream itself when it fits `spillMaxBytes`; otherwise its head and its tail, each the cut a head
 * or tail cut of `Truncate` makes with half of `spillMaxBytes` (the tail's half less the gap
 * line), with the gap line (`Marker.spillGap`) between them. `@toolcap/spill` writes the same
 * copy while a stream runs, in bounded memory; this is its reference.
 *
 * @since 0.1.0
 */
import { spillParts } from "./Budgets.js"
import * as Marker from "./Marker.js"
import * as Truncate from "./Truncate.js"
import * as Utf8 from "./Utf8.js"

/** A spill has no line limit: only its bytes are bounded. */
const UNLIMITED_LINES = Number.MAX_SAFE_INTEGER

/**
 * A copy: its bytes, and what it holds of the stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Copy {
  readonly bytes: Uint8Array
  readonly complete: boolean
  readonly totalBytes: number
  readonly ranges: Marker.SavedCopy["ranges"]
}

/**
 * The copy of `stream` a spill file of at most `spillMaxBytes` holds.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (stream: Uint8Array, spillMaxBytes: number): Copy => {
  const whole = Truncate.cutBytes(stream, {
    keep: "head",
    maxBytes: Math.max(4, stream.length),
    maxLines: UNLIMITED_LINES
  })
  if (stream.length <= spillMaxBytes) {
    return {
      bytes: stream,
      complete: true,
      totalBytes: stream.length,
      ranges: [{ from: 0, to: stream.length, lines: whole.totalLines }]
    }
  }
  const parts = spillParts({ spillMaxBytes })
  const head = Truncate.cutBytes(stream, {
    keep: "head",
    maxBytes: parts.headBytes,
    maxLines: UNLIMITED_LINES
  })
  const tail = Truncate.cutBytes(stream, {
    keep: "tail",
    maxBytes: parts.tailBytes,
    maxLines: UNLIMITED_LINES
  })
  const omitted = {
    bytes: stream.length - head.keptBytes - tail.keptBytes,
    lines: whole.totalLines - head.keptLines - tail.keptLines
  }
  // the gap is a line of its own, also after a head that ends inside its one line
  const gap = Utf8.encode(`${head.singleLineBytes === undefined ? "" : "\n"}${Marker.spillGap(omitted)}\n`)
  return {
    bytes: new Uint8Array(Buffer.concat([head.bytes, gap, tail.bytes])),
    complete: false,
    totalBytes: stream.length,
    ranges: [
      { from: 0, to: head.keptBytes, lines: head.keptLines },
      { from: stream.length - tail.keptBytes, to: stream.length, lines: tail.keptLines }
    ]
  }
}
