/**
 * Read's scan: from a known line start, count lines up to the requested offset, then collect the
 * window line by line under the line, byte and per-line budgets. Memory is bounded by the budgets
 * and two fixed chunk buffers, whatever the file size or line length.
 */
import { isUtf8 } from "node:buffer"
import * as fs from "node:fs"
import { LineClip, Newlines, Utf8 } from "@toolcap/limits"
import type * as LineIndex from "../../LineIndex.js"

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d

/**
 * Bytes read and counted at a time while seeking an offset, straight into the newline counter's
 * memory: large enough that per-read overhead vanishes (18 million lines precede line 18,000,000
 * of a 1 GiB file), small enough to stay cheap.
 */
const SEEK_CHUNK_BYTES = 4 * 1024 * 1024

/** Read size while collecting a window: a window is at most the byte budget plus clipped tails. */
const WINDOW_CHUNK_BYTES = 64 * 1024

/**
 * Chunks read and counted on the calling thread between two turns of the event loop while seeking
 * an offset (8 x 4 MiB, some milliseconds of work). Reads from the page cache cost less in place
 * than as thread-pool round trips, and yielding between slices keeps timers, I/O and
 * interruption responsive during a scan of gigabytes.
 */
const SEEK_CHUNKS_PER_TURN = 8

/**
 * Bytes of a window read on the calling thread. A page is one or two short reads from the page
 * cache, cheaper than thread-pool round trips; beyond this (a huge clipped line being skipped)
 * reads go to the thread pool so the event loop keeps turning.
 */
const SYNC_WINDOW_BYTES = 2 * WINDOW_CHUNK_BYTES

export interface ScanOptions {
  /** An open file descriptor. */
  readonly fd: number
  /** File size from `fstat` when the file was opened. */
  readonly size: number
  /** A known line start at or before `offset`. */
  readonly from: LineIndex.Checkpoint
  /** 1-based first line of the window. */
  readonly offset: number
  readonly maxLines: number
  readonly maxBytes: number
  readonly maxLineChars: number
  /** Receives line starts learnt on the way, for the sparse index. */
  readonly onCheckpoint: (checkpoint: LineIndex.Checkpoint) => void
  readonly signal: AbortSignal
}

export interface PastEnd {
  readonly kind: "PastEnd"
  readonly totalLines: number
}

export interface Window {
  readonly kind: "Window"
  readonly content: string
  readonly contentBytes: number
  readonly lineCount: number
  readonly clippedLines: number
  /** Line number of the first clipped line. */
  readonly firstClippedLine: number | undefined
  /** 0-based file offset of the first byte the first clip left out. */
  readonly firstClippedByte: number | undefined
  /** What ended the window. */
  readonly stoppedBy: "eof" | "lines" | "bytes"
  /** Whether the window reached end of file. */
  readonly atEof: boolean
  /** The line after the window and the byte it starts at. */
  readonly next: LineIndex.Checkpoint
  /** Set when the window's only line alone exceeded the byte budget: that line's full size. */
  readonly singleLineBytes: number | undefined
}

const checkAborted = (signal: AbortSignal): void => {
  if (signal.aborted) throw signal.reason ?? new Error("aborted")
}

const readInto = (fd: number, target: Uint8Array, position: number): Promise<number> =>
  new Promise((resolve, reject) =>
    fs.read(fd, target, 0, target.byteLength, position, (error, bytesRead) =>
      error === null ? resolve(bytesRead) : reject(error)
    )
  )

/** The nth (1-based) `\n` in `bytes[0, length)`; the caller knows there are at least n. */
const nthNewline = (bytes: Uint8Array, length: number, n: number): number => {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, length)
  let at = -1
  for (let k = 0; k < n; k++) at = view.indexOf(NEWLINE, at + 1)
  return at
}

/**
 * Finds the byte where line `offset` starts, scanning from `from` with the fast newline counter.
 */
const seekLine = async (options: ScanOptions): Promise<LineIndex.Checkpoint | PastEnd> => {
  if (options.from.line === options.offset) return options.from
  const counter = Newlines.acquire(SEEK_CHUNK_BYTES)
  try {
    return await seekWith(counter, options)
  } finally {
    Newlines.release(counter)
  }
}

const seekWith = async (
  counter: Newlines.Counter,
  options: ScanOptions
): Promise<LineIndex.Checkpoint | PastEnd> => {
  const { fd, from, offset, signal } = options
  let line = from.line
  let lineStart = from.byte
  let position = from.byte
  const view = counter.memory
  for (let chunks = 0; ; chunks++) {
    if (chunks > 0 && chunks % SEEK_CHUNKS_PER_TURN === 0) {
      await new Promise((resume) => setImmediate(resume))
      checkAborted(signal)
    }
    const length = fs.readSync(fd, view, 0, view.byteLength, position)
    if (length === 0) break
    const chunkStart = position
    position += length
    const newlines = counter.count(length)
    if (line + newlines >= offset) {
      return { line: offset, byte: chunkStart + nthNewline(view, length, offset - line) + 1 }
    }
    if (newlines > 0) {
      line += newlines
      lineStart = chunkStart + Buffer.from(view.buffer, view.byteOffset, length).lastIndexOf(NEWLINE) + 1
      options.onCheckpoint({ line, byte: lineStart })
    }
  }
  // end of file before line `offset` began; a last line without `\n` still counts
  return { kind: "PastEnd", totalLines: lineStart < position ? line : line - 1 }
}

/** Collects the window starting at line `start.line`, byte `start.byte`. */
const collect = async (options: ScanOptions, start: LineIndex.Checkpoint): Promise<Window> => {
  const { fd, maxLines, maxBytes, maxLineChars, signal } = options
  // enough bytes of a line to hold its first maxLineChars code points (4 bytes each at most)
  const keepLimit = 4 * maxLineChars + 8
  const chunk = Buffer.allocUnsafe(WINDOW_CHUNK_BYTES)
  // the window as UTF-8: raw bytes of valid lines, re-encoded text of clipped or invalid ones
  const out = Buffer.allocUnsafe(maxBytes)
  let contentBytes = 0
  let lineCount = 0
  let clippedLines = 0
  let firstClippedLine: number | undefined
  let firstClippedByte: number | undefined
  let singleLineBytes: number | undefined
  let stoppedBy: Window["stoppedBy"] | undefined

  // the line being read: its first keepLimit bytes, its full size, its last body byte
  const kept = Buffer.allocUnsafe(keepLimit)
  let keptBytes = 0
  let lineBytes = 0
  let lastByte = -1
  let lineStart = start.byte

  const finishLine = (endsWithNewline: boolean): void => {
    const lineNumber = start.line + lineCount
    let piece: Uint8Array = kept.subarray(0, keptBytes)
    let clipped = false
    // a short valid line goes through as it is (it cannot exceed maxLineChars code points)
    if (keptBytes !== lineBytes || lineBytes > maxLineChars || !isUtf8(piece)) {
      let text: string
      if (keptBytes === lineBytes) {
        text = Utf8.decode(piece)
        if (lineBytes > maxLineChars) {
          const result = LineClip.clipLine(text, maxLineChars)
          text = result.text
          clipped = result.clippedLines > 0
        }
      } else {
        // only a prefix was kept: it holds more than maxLineChars code points, so the clip decides
        const ending = endsWithNewline ? (lastByte === CARRIAGE_RETURN ? "\r\n" : "\n") : ""
        text = LineClip.clipLine(Utf8.decode(piece) + ending, maxLineChars).text
        clipped = true
      }
      piece = Utf8.encode(text)
    }
    if (piece.length + contentBytes > maxBytes) {
      if (lineCount > 0) {
        stoppedBy = "bytes"
        return
      }
      // rules M4: one line larger than the whole budget still yields a safe prefix of it
      piece = piece.subarray(0, Utf8.prefixBoundary(piece, maxBytes))
      singleLineBytes = lineBytes
      clipped = true
      stoppedBy = "bytes"
    }
    out.set(piece, contentBytes)
    contentBytes += piece.length
    lineCount++
    if (clipped) {
      clippedLines++
      if (firstClippedLine === undefined) {
        firstClippedLine = lineNumber
        const ending =
          singleLineBytes !== undefined || !endsWithNewline ? 0 : lastByte === CARRIAGE_RETURN ? 2 : 1
        firstClippedByte = lineStart + piece.length - ending
      }
    }
    lineStart += lineBytes
    keptBytes = 0
    lineBytes = 0
    lastByte = -1
    if (stoppedBy === undefined && lineCount >= maxLines) stoppedBy = "lines"
  }

  const append = (from: number, to: number): void => {
    const room = keepLimit - keptBytes
    if (room > 0) {
      const take = Math.min(room, to - from)
      chunk.copy(kept, keptBytes, from, from + take)
      keptBytes += take
    }
    lineBytes += to - from
  }

  let position = start.byte
  reading: for (;;) {
    checkAborted(signal)
    const length =
      position - start.byte < SYNC_WINDOW_BYTES
        ? fs.readSync(fd, chunk, 0, chunk.length, position)
        : await readInto(fd, chunk, position)
    if (length === 0) {
      if (lineBytes > 0) finishLine(false)
      stoppedBy ??= "eof"
      break
    }
    const view = chunk.subarray(0, length)
    let at = 0
    while (at < length) {
      if (lineBytes === 0) {
        // fast path: a run of complete short lines that fit goes through in one copy
        let end = at
        let count = 0
        while (lineCount + count < maxLines) {
          const newline = view.indexOf(NEWLINE, end)
          if (
            newline === -1 ||
            newline + 1 - end > maxLineChars ||
            contentBytes + newline + 1 - at > maxBytes
          )
            break
          end = newline + 1
          count++
        }
        if (count > 0 && isUtf8(view.subarray(at, end))) {
          view.copy(out, contentBytes, at, end)
          contentBytes += end - at
          lineCount += count
          lineStart += end - at
          at = end
          if (lineCount >= maxLines) {
            stoppedBy = "lines"
            break reading
          }
          continue
        }
      }
      const newline = view.indexOf(NEWLINE, at)
      const end = newline === -1 ? length : newline + 1
      append(at, end)
      if (newline === -1) {
        lastByte = view[length - 1]!
        break
      }
      if (newline > at) lastByte = view[newline - 1]!
      at = end
      finishLine(true)
      if (stoppedBy !== undefined) break reading
    }
    position += length
  }
  const next = { line: start.line + lineCount, byte: lineStart }
  return {
    kind: "Window",
    content: out.toString("utf8", 0, contentBytes),
    contentBytes,
    lineCount,
    clippedLines,
    firstClippedLine,
    firstClippedByte,
    stoppedBy: stoppedBy,
    atEof: stoppedBy === "eof" || lineStart >= options.size,
    next,
    singleLineBytes
  }
}

/**
 * Scans to `offset` and collects the window there, or reports that the file ends before it.
 */
export const scan = async (options: ScanOptions): Promise<Window | PastEnd> => {
  const start = await seekLine(options)
  if ("kind" in start) return start
  if (start.line !== options.from.line) options.onCheckpoint(start)
  // line `offset` would start at end of file: there is no such line (an empty file has no line 1
  // either, but reading it from the start is not an error: it answers an empty window)
  if (start.byte >= options.size && options.offset > 1)
    return { kind: "PastEnd", totalLines: options.offset - 1 }
  return collect(options, start)
}

/** Backward read size: a page of log lines is usually found in the last chunk or two. */
const BACKWARD_CHUNK_BYTES = 64 * 1024

/** Chunks read backwards between two turns of the event loop (a clipped line of gigabytes). */
const BACKWARD_CHUNKS_PER_TURN = 256

export interface LastLines {
  /** Byte where the first of the last `count` lines starts. */
  readonly byte: number
  /** True when the file has `count` lines or fewer: the window starts at line 1. */
  readonly fromStart: boolean
  /** The file's line count, when `fromStart`. */
  readonly totalLines: number | undefined
}

/**
 * Finds where the last `count` lines of a file begin, reading backwards from the end in fixed
 * chunks (memory does not depend on file or line size). A final line without `\n` is a line, as
 * `tail -n` counts it.
 */
export const lastLines = async (
  fd: number,
  size: number,
  count: number,
  signal: AbortSignal
): Promise<LastLines> => {
  const chunk = Buffer.allocUnsafe(BACKWARD_CHUNK_BYTES)
  // the newline that ends the last line does not start a line
  let end = size
  if (size > 0) {
    fs.readSync(fd, chunk, 0, 1, size - 1)
    if (chunk[0] === NEWLINE) end = size - 1
  }
  let found = 0
  let position = end
  for (let chunks = 0; position > 0; chunks++) {
    if (chunks > 0 && chunks % BACKWARD_CHUNKS_PER_TURN === 0) {
      await new Promise((resume) => setImmediate(resume))
      checkAborted(signal)
    }
    const length = Math.min(BACKWARD_CHUNK_BYTES, position)
    const start = position - length
    const read = fs.readSync(fd, chunk, 0, length, start)
    const view = chunk.subarray(0, read)
    for (
      let at = view.lastIndexOf(NEWLINE);
      at !== -1;
      at = at === 0 ? -1 : view.lastIndexOf(NEWLINE, at - 1)
    ) {
      found++
      if (found === count) return { byte: start + at + 1, fromStart: false, totalLines: undefined }
    }
    position = start
  }
  // fewer newlines than lines asked for: the window starts at line 1
  return { byte: 0, fromStart: true, totalLines: size === 0 ? 0 : found + 1 }
}
