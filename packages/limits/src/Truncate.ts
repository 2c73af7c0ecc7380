/**
 * Keep-head and keep-tail cuts bounded by BOTH a byte and a line budget, over bytes or strings,
 * one-shot or streaming. Cuts keep whole lines; when not even one whole line fits, the one line
 * at the kept end is cut at a UTF-8 boundary instead, so the payload is never empty (rules M4).
 *
 * A "line" is text up to and including `\n`; a final piece without `\n` is a line too.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Sink from "effect/Sink"
import { minByteBudget } from "./Budgets.js"
import * as Marker from "./Marker.js"
import * as Newlines from "./Newlines.js"
import * as Utf8 from "./Utf8.js"

/**
 * Which end of the input survives a cut.
 *
 * @since 0.1.0
 * @category models
 */
export type Keep = "head" | "tail"

/**
 * A budget for one cut: both limits apply, whichever is reached first stops the cut. `maxBytes`
 * must be a whole number of at least 4 (one code point), `maxLines` of at least 1; anything else
 * is a programming error and throws a `RangeError` (budgets from `Budgets` always qualify).
 *
 * @since 0.1.0
 * @category models
 */
export interface CutOptions {
  /** Which end survives. */
  readonly keep: Keep
  /** Most bytes kept (the marker is not counted). */
  readonly maxBytes: number
  /** Most lines kept. */
  readonly maxLines: number
}

/**
 * The outcome of a cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cut {
  /** Which end survived. */
  readonly keep: Keep
  /** The byte limit that applied. */
  readonly maxBytes: number
  /** The line limit that applied. */
  readonly maxLines: number
  /** The kept bytes: a prefix (head) or suffix (tail) of the input, never splitting a sequence. */
  readonly bytes: Uint8Array
  /** The kept bytes decoded; invalid input bytes appear as U+FFFD. */
  readonly text: string
  /** Whether anything was cut (then a marker is due); false exactly when `keptBytes === totalBytes`. */
  readonly truncated: boolean
  /** Whole lines kept; 0 when a single line was cut to the byte budget. */
  readonly keptLines: number
  /** Lines of the whole input (a final piece without `\n` counts). */
  readonly totalLines: number
  /** Input bytes kept (invalid UTF-8 counts as the bytes it was, not as U+FFFD). */
  readonly keptBytes: number
  /** Bytes of the whole input. */
  readonly totalBytes: number
  /** Set when no complete line fit: the byte size of the line that was cut. */
  readonly singleLineBytes: number | undefined
  /** Byte size of the input's first line (0 for empty input). */
  readonly firstLineBytes: number
  /** Byte size of the input's last line (0 for empty input). */
  readonly lastLineBytes: number
}

const NEWLINE = 0x0a

const checkOptions = (options: CutOptions): void => {
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < minByteBudget) {
    throw new RangeError(
      `maxBytes must be an integer of at least ${minByteBudget} (one code point), got ${options.maxBytes}`
    )
  }
  if (!Number.isSafeInteger(options.maxLines) || options.maxLines < 1) {
    throw new RangeError(`maxLines must be a positive integer, got ${options.maxLines}`)
  }
}

/** A Buffer view of the bytes (no copy), for its native indexOf / lastIndexOf. */
const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** The newlines of one buffer: how many, and where the first, last and second-to-last are (-1: none). */
interface NewlinesFound {
  readonly count: number
  readonly first: number
  readonly last: number
  readonly previous: number
}

const noNewlines: NewlinesFound = { count: 0, first: -1, last: -1, previous: -1 }

const scanNewlines = (buffer: Buffer): NewlinesFound => {
  const first = buffer.indexOf(NEWLINE)
  if (first === -1) return noNewlines
  // The hot loop only counts (Newlines.count); the positions the totals need are found
  // afterwards by searching back from the end, which costs one short scan per buffer.
  const count = 1 + Newlines.count(buffer, first + 1)
  if (count === 1) return { count, first, last: first, previous: -1 }
  const last = buffer.lastIndexOf(NEWLINE)
  return { count, first, last, previous: count === 2 ? first : buffer.lastIndexOf(NEWLINE, last - 1) }
}

interface Totals {
  readonly totalBytes: number
  readonly totalLines: number
  readonly firstLineBytes: number
  readonly lastLineBytes: number
}

/**
 * Walks whole lines forward from the start of `window` (a prefix of the input). `complete` says
 * whether `window` is the whole input; if not, a line without its `\n` inside the window is longer
 * than the window and so longer than the budget.
 */
const walkHead = (window: Uint8Array, complete: boolean, options: CutOptions, totals: Totals): Cut => {
  const buffer = asBuffer(window)
  let end = 0
  let lines = 0
  while (lines < options.maxLines && end < window.length) {
    const newline = buffer.indexOf(NEWLINE, end)
    if (newline === -1 && !complete) break
    const lineEnd = newline === -1 ? window.length : newline + 1
    if (lineEnd > options.maxBytes) break
    end = lineEnd
    lines++
  }
  if (lines === 0 && totals.totalBytes > 0) {
    const kept = Utf8.prefixBoundary(window, options.maxBytes)
    return build(window.subarray(0, kept), options, totals, 0, totals.firstLineBytes)
  }
  return build(window.subarray(0, end), options, totals, lines, undefined)
}

/**
 * Walks whole lines backward from the end of `window` (a suffix of the input). `startsAtLine` says
 * whether `window[0]` begins a line (it is the input's start, or follows a `\n`); if not, the line
 * reaching `window[0]` extends before it.
 */
const walkTail = (window: Uint8Array, startsAtLine: boolean, options: CutOptions, totals: Totals): Cut => {
  const buffer = asBuffer(window)
  let start = window.length
  let lines = 0
  while (lines < options.maxLines && start > 0) {
    // start - 1 is the previous line's own `\n`; search before it for the one ending the line before.
    const newline = start >= 2 ? buffer.lastIndexOf(NEWLINE, start - 2) : -1
    if (newline === -1 && !startsAtLine) break
    const lineStart = newline + 1
    if (window.length - lineStart > options.maxBytes) break
    start = lineStart
    lines++
  }
  if (lines === 0 && totals.totalBytes > 0) {
    const kept = Utf8.suffixBoundary(window, window.length - options.maxBytes)
    return build(window.subarray(kept), options, totals, 0, totals.lastLineBytes)
  }
  return build(window.subarray(start), options, totals, lines, undefined)
}

const build = (
  bytes: Uint8Array,
  options: CutOptions,
  totals: Totals,
  keptLines: number,
  singleLineBytes: number | undefined
): Cut => ({
  keep: options.keep,
  maxBytes: options.maxBytes,
  maxLines: options.maxLines,
  bytes,
  text: Utf8.decode(bytes),
  truncated: bytes.length < totals.totalBytes,
  keptLines,
  totalLines: totals.totalLines,
  keptBytes: bytes.length,
  totalBytes: totals.totalBytes,
  singleLineBytes,
  firstLineBytes: totals.firstLineBytes,
  lastLineBytes: totals.lastLineBytes
})

const fits = (options: CutOptions, totals: Totals): boolean =>
  totals.totalBytes <= options.maxBytes && totals.totalLines <= options.maxLines

/**
 * Counts lines of a whole input and measures its first and last lines.
 */
const measure = (input: Uint8Array): Totals => {
  const newlines = scanNewlines(asBuffer(input))
  return totalsOf(input.length, newlines.count, newlines.first, newlines.last, newlines.previous)
}

const totalsOf = (
  totalBytes: number,
  newlines: number,
  firstNewline: number,
  lastNewline: number,
  previousNewline: number
): Totals => {
  const endsWithNewline = totalBytes > 0 && lastNewline === totalBytes - 1
  const lastLineStart = endsWithNewline ? previousNewline + 1 : lastNewline + 1
  return {
    totalBytes,
    totalLines: newlines + (totalBytes > 0 && !endsWithNewline ? 1 : 0),
    firstLineBytes: firstNewline === -1 ? totalBytes : firstNewline + 1,
    lastLineBytes: totalBytes - lastLineStart
  }
}

/**
 * Cuts bytes to a budget: the most whole lines from the kept end that fit both limits, or, when
 * not even one fits, a UTF-8-safe prefix (head) or suffix (tail) of that one line. The kept bytes
 * are a view of `input`, not a copy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cutBytes = (input: Uint8Array, options: CutOptions): Cut => {
  checkOptions(options)
  const totals = measure(input)
  if (fits(options, totals)) return build(input, options, totals, totals.totalLines, undefined)
  return options.keep === "head"
    ? walkHead(input, true, options, totals)
    : walkTail(input, true, options, totals)
}

/**
 * Cuts text to a budget counted in UTF-8 bytes (a lone surrogate counts as U+FFFD).
 *
 * @since 0.1.0
 * @category constructors
 */
export const cutString = (input: string, options: CutOptions): Cut => cutBytes(Utf8.encode(input), options)

/**
 * Re-cuts an existing cut (same kept end) to a budget no looser than the one it was made with,
 * keeping the true totals of the original input. The answer equals cutting the original input to
 * that budget, so a Bash stream captured at the capture budget can be narrowed to the result
 * budget without keeping the whole output. A looser budget throws a `RangeError`: the kept bytes
 * could not answer it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const narrow = (cut: Cut, options: Omit<CutOptions, "keep">): Cut => {
  const next: CutOptions = { keep: cut.keep, maxBytes: options.maxBytes, maxLines: options.maxLines }
  checkOptions(next)
  if (next.maxBytes > cut.maxBytes || next.maxLines > cut.maxLines) {
    throw new RangeError("narrow takes a budget no looser than the cut's own")
  }
  const totals: Totals = cut
  if (fits(next, totals)) return build(cut.bytes, next, totals, totals.totalLines, undefined)
  if (cut.keep === "head") return walkHead(cut.bytes, !cut.truncated, next, totals)
  // a tail cut of whole lines starts at a line; a single-line tail cut starts mid-line
  return walkTail(cut.bytes, !cut.truncated || cut.singleLineBytes === undefined, next, totals)
}

/**
 * A cut fed chunk by chunk: any chunking of an input gives the same `Cut` as `cutBytes` on the
 * whole, in memory bounded by the budget (a head keeps at most `maxBytes + 1` bytes, a tail a ring
 * buffer of `maxBytes + 3`), with the totals of lines and bytes counted over everything fed.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamCut {
  /** Feeds the next chunk; the chunk may be reused by the caller afterwards. */
  readonly push: (chunk: Uint8Array) => void
  /** The cut of everything fed so far. */
  readonly result: () => Cut
  /** Bytes fed so far. */
  readonly bytesSeen: () => number
}

/**
 * Starts a streaming cut. A `StreamCut` has one owner: feed it from one fiber.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stream = (options: CutOptions): StreamCut => {
  checkOptions(options)
  return options.keep === "head" ? headStream(options) : tailStream(options)
}

/** Counts what passes through, the same way `measure` does for a whole input. */
const makeCounter = () => {
  let totalBytes = 0
  let newlines = 0
  let first = -1
  let last = -1
  let previous = -1
  return {
    count(chunk: Uint8Array): void {
      const found = scanNewlines(asBuffer(chunk))
      if (found.count > 0) {
        if (first === -1) first = totalBytes + found.first
        previous = found.count >= 2 ? totalBytes + found.previous : last
        last = totalBytes + found.last
        newlines += found.count
      }
      totalBytes += chunk.length
    },
    totals: (): Totals => totalsOf(totalBytes, newlines, first, last, previous),
    bytes: (): number => totalBytes
  }
}

/**
 * One byte past the budget is retained by a head stream: whether that byte continues a sequence
 * decides where a single line too long for the budget may be cut (see `Utf8.prefixBoundary`).
 */
const HEAD_LOOKAHEAD = 1

/**
 * The least a stream's buffer grows to; it is allocated at the first bytes and grows by doubling
 * up to its capacity, so a short output (most commands) costs a few KiB, not the capture budget.
 */
const MIN_RETAINED_BYTES = 4 * 1024

const headStream = (options: CutOptions): StreamCut => {
  const counter = makeCounter()
  const capacity = options.maxBytes + HEAD_LOOKAHEAD
  // grown by doubling up to capacity, so small outputs stay small
  let retained = new Uint8Array(0)
  let filled = 0
  return {
    push(chunk) {
      counter.count(chunk)
      const room = capacity - filled
      if (room <= 0 || chunk.length === 0) return
      const take = Math.min(room, chunk.length)
      if (filled + take > retained.length) {
        const grown = new Uint8Array(
          Math.min(capacity, Math.max(retained.length * 2, filled + take, MIN_RETAINED_BYTES))
        )
        grown.set(retained.subarray(0, filled))
        retained = grown
      }
      retained.set(take === chunk.length ? chunk : chunk.subarray(0, take), filled)
      filled += take
    },
    result() {
      const totals = counter.totals()
      const window = retained.slice(0, filled)
      if (fits(options, totals)) return build(window, options, totals, totals.totalLines, undefined)
      return walkHead(window, filled === totals.totalBytes, options, totals)
    },
    bytesSeen: counter.bytes
  }
}

/**
 * Three bytes before the budget are retained by a tail stream: they decide whether the first byte
 * a single too-long line may keep continues a sequence (see `Utf8.suffixBoundary`). A line that
 * fits the budget starts at least three bytes into the window, so its preceding newline is
 * retained too.
 */
const TAIL_LOOKBACK = 3

const tailStream = (options: CutOptions): StreamCut => {
  const counter = makeCounter()
  const capacity = options.maxBytes + TAIL_LOOKBACK
  // linear [0, filled) until `capacity` bytes were seen, then a full ring whose oldest byte is at `oldest`
  let ring = new Uint8Array(0)
  let filled = 0
  let wrapped = false
  let oldest = 0
  return {
    push(chunk) {
      counter.count(chunk)
      if (chunk.length === 0) return
      if (!wrapped) {
        if (filled + chunk.length <= capacity) {
          if (filled + chunk.length > ring.length) {
            const grown = new Uint8Array(
              Math.min(capacity, Math.max(ring.length * 2, filled + chunk.length, MIN_RETAINED_BYTES))
            )
            grown.set(ring.subarray(0, filled))
            ring = grown
          }
          ring.set(chunk, filled)
          filled += chunk.length
          return
        }
        const full = new Uint8Array(capacity)
        if (chunk.length >= capacity) {
          full.set(chunk.subarray(chunk.length - capacity))
        } else {
          const keepOld = capacity - chunk.length
          full.set(ring.subarray(filled - keepOld, filled), 0)
          full.set(chunk, keepOld)
        }
        ring = full
        filled = capacity
        wrapped = true
        oldest = 0
        return
      }
      // only the last `capacity` bytes of a chunk can survive; Buffer#copy takes ranges without views
      const source = asBuffer(chunk)
      const from = source.length > capacity ? source.length - capacity : 0
      const copied = source.copy(ring, oldest, from)
      if (from + copied < source.length) source.copy(ring, 0, from + copied)
      oldest = (oldest + source.length - from) % capacity
    },
    result() {
      const totals = counter.totals()
      let window: Uint8Array
      if (!wrapped) {
        window = ring.slice(0, filled)
      } else {
        window = new Uint8Array(capacity)
        window.set(ring.subarray(oldest), 0)
        window.set(ring.subarray(0, oldest), capacity - oldest)
      }
      if (fits(options, totals)) return build(window, options, totals, totals.totalLines, undefined)
      return walkTail(window, window.length === totals.totalBytes, options, totals)
    },
    bytesSeen: counter.bytes
  }
}

/**
 * The streaming cut as an effect `Sink`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sink = (options: CutOptions): Sink.Sink<Cut, Uint8Array> =>
  Sink.suspend(() => {
    const state = stream(options)
    return Sink.forEachChunk((chunks: Chunk.Chunk<Uint8Array>) =>
      Effect.sync(() => {
        for (const chunk of chunks) state.push(chunk)
      })
    ).pipe(Sink.map(() => state.result()))
  })

/**
 * The cut's text with its marker where it was truncated: appended after a head, prepended before
 * a tail. The closing sentence names the spill file when one was written, saying what it holds
 * (a path alone: a complete copy).
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (cut: Cut, spillPath?: string | Marker.SavedCopy): string =>
  cut.truncated ? Marker.attach(cut.text, cut.keep, marker(cut, spillPath)) : cut.text

/**
 * The marker of a truncated cut.
 *
 * @since 0.1.0
 * @category rendering
 */
export const marker = (cut: Cut, spillPath?: string | Marker.SavedCopy): string =>
  Marker.render({
    keep: cut.keep,
    keptLines: cut.keptLines,
    totalLines: cut.totalLines,
    keptBytes: cut.keptBytes,
    singleLineBytes: cut.singleLineBytes,
    maxLines: cut.maxLines,
    maxBytes: cut.maxBytes,
    spillPath
  })

/**
 * The budget of one end of a head-and-tail cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface PartBudget {
  readonly maxBytes: number
  readonly maxLines: number
}

/**
 * A budget split between the head and the tail of an input: `headShare` of the bytes and lines
 * (rounded down) to the head, the rest to the tail. A share of 1 leaves no tail, 0 no head.
 *
 * @since 0.1.0
 * @category constructors
 */
export const splitBudget = (
  budget: PartBudget,
  headShare: number
): { readonly head: PartBudget | undefined; readonly tail: PartBudget | undefined } => {
  if (headShare >= 1) return { head: budget, tail: undefined }
  if (headShare <= 0) return { head: undefined, tail: budget }
  const head = {
    maxBytes: Math.floor(budget.maxBytes * headShare),
    maxLines: Math.floor(budget.maxLines * headShare)
  }
  return {
    head,
    tail: { maxBytes: budget.maxBytes - head.maxBytes, maxLines: budget.maxLines - head.maxLines }
  }
}

/**
 * The text of a head-and-tail cut: the head's cut, the marker on a line of its own, the tail's
 * cut. `head` and `tail` are cuts of one input (with its true totals) that does not fit `limit`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderBoth = (
  head: Cut,
  tail: Cut,
  limit: PartBudget,
  spillPath?: string | Marker.SavedCopy
): string => Marker.between(head.text, markerBoth(head, tail, limit, spillPath), tail.text)

/**
 * The marker of a head-and-tail cut.
 *
 * @since 0.1.0
 * @category rendering
 */
export const markerBoth = (
  head: Cut,
  tail: Cut,
  limit: PartBudget,
  spillPath?: string | Marker.SavedCopy
): string =>
  Marker.render({
    keep: "both",
    keptLines: head.keptLines + tail.keptLines,
    totalLines: head.totalLines,
    keptBytes: head.keptBytes + tail.keptBytes,
    totalBytes: head.totalBytes,
    head: { lines: head.keptLines, bytes: head.keptBytes },
    tail: { lines: tail.keptLines, bytes: tail.keptBytes },
    maxLines: limit.maxLines,
    maxBytes: limit.maxBytes,
    spillPath
  })
