/**
 * One Bash stream as the model reads it: the stream rendered as a terminal shows it (rules T5),
 * into its own captures (the budgets count rendered text). Plain output — no byte rendering acts
 * on, the common case — renders to itself, so it is not decoded: its bytes go to the captures as
 * they are, and only its last `WINDOW_BYTES` (whole lines) are held back, because a later `\r` or
 * cursor move may still draw over them. At the first byte rendering acts on, the held bytes and
 * everything after go through the renderer. Plain synchronous code on the hot path, like
 * ./output.ts. Node-specific (StringDecoder).
 */
import { StringDecoder } from "node:string_decoder"
import { Terminal } from "@toolcap/limits"

/**
 * How much plain output stays drawable once rendering begins: a window of the renderer's 100
 * rows at up to 655 bytes each (progress displays redraw short rows), copied at most once per read.
 */
const WINDOW_BYTES = 64 * 1024

/** @internal */
export interface RenderedStream {
  readonly push: (bytes: Uint8Array) => void
  /** Flushes what is held and ends the renderer. */
  readonly finish: () => void
  /** What rendering changed. */
  readonly counts: () => Terminal.Counts
}

const NEWLINE = 0x0a

/** The index just past the last newline of `bytes` before `end`, or 0. */
const afterLastNewline = (bytes: Uint8Array, end: number): number => {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, end)
  return view.lastIndexOf(NEWLINE) + 1
}

/**
 * Where the held window may begin in `bytes` (length `length`): past the first newline at or after
 * `length - WINDOW_BYTES`, else past the last newline before it, else (one line longer than the
 * window) at a UTF-8 boundary `WINDOW_BYTES` from the end.
 */
const windowStart = (bytes: Uint8Array, length: number): number => {
  const from = length - WINDOW_BYTES
  if (from <= 0) return 0
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, length)
  const next = view.indexOf(NEWLINE, from)
  if (next !== -1) return next + 1
  const previous = afterLastNewline(bytes, from)
  if (previous > 0) return previous
  let at = from
  while (at > 0 && (bytes[at]! & 0xc0) === 0x80) at--
  return at
}

/** Where rendered text goes: the rendered captures, and the digest's line feed when it is on. */
export interface Sink {
  readonly push: (bytes: Uint8Array) => void
}

/** @internal */
export const make = (captures: ReadonlyArray<Sink>): RenderedStream => {
  const feed = (bytes: Uint8Array) => {
    if (bytes.length === 0) return
    for (const capture of captures) capture.push(bytes)
  }
  const feedLines = (lines: ReadonlyArray<string>) => {
    if (lines.length > 0) feed(Buffer.from(lines.length === 1 ? lines[0]! : lines.join(""), "utf8"))
  }
  let renderer: Terminal.Renderer | undefined
  let decoder: StringDecoder | undefined
  // the plain output held back, [0, held) of `window`
  let window = new Uint8Array(0)
  let held = 0
  // `reused`: the bytes are a buffer this stream writes again, so they are copied, never fed as they are
  const hold = (bytes: Uint8Array, reused = false) => {
    if (!reused && held === 0 && bytes.length >= WINDOW_BYTES) {
      // a large read: what is before its window is final as it is, without a copy
      const start = windowStart(bytes, bytes.length)
      feed(bytes.subarray(0, start))
      bytes = bytes.subarray(start)
    }
    if (held + bytes.length > window.length) {
      const grown = new Uint8Array(Math.max(window.length * 2, held + bytes.length, 4096))
      grown.set(window.subarray(0, held))
      window = grown
    }
    window.set(bytes, held)
    held += bytes.length
    if (held >= 2 * WINDOW_BYTES) {
      const start = windowStart(window, held)
      feed(window.subarray(0, start))
      window.copyWithin(0, start, held)
      held -= start
    }
  }
  const render = (bytes: Uint8Array) => {
    if (bytes.length === 0) return
    feedLines(renderer!.push(decoder!.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))))
  }
  // coloured output before rendering begins: colour codes removed from the bytes (they change no
  // cell), counted here; a code a read ends in waits for the next read
  let colourCodes = 0
  let pending: Uint8Array = new Uint8Array(0)
  // where the colour fast path writes a read's plain bytes, reused read after read
  let scratch = new Uint8Array(0)
  const start = () => {
    renderer = Terminal.make()
    decoder = new StringDecoder("utf8")
    render(window.subarray(0, held))
    window = new Uint8Array(0)
    held = 0
    render(pending)
    pending = new Uint8Array(0)
  }
  return {
    push(bytes) {
      if (bytes.length === 0) return
      if (renderer === undefined) {
        if (pending.length === 0 && Terminal.firstControl(bytes) === -1) {
          hold(bytes)
          return
        }
        const read = pending.length === 0 ? bytes : Buffer.concat([pending, bytes])
        if (scratch.length < read.length) scratch = new Uint8Array(read.length)
        const stripped = Terminal.stripColour(read, scratch)
        if (stripped !== undefined) {
          colourCodes += stripped.colourCodes
          // a copy: the pending bytes are a view of a read the caller may reuse
          pending = stripped.pending.length === 0 ? stripped.pending : Uint8Array.from(stripped.pending)
          if (stripped.plain.length > 0) hold(stripped.plain, true)
          return
        }
        pending = new Uint8Array(0)
        start()
        bytes = read
      }
      render(bytes)
    },
    finish() {
      if (renderer === undefined && pending.length > 0) start()
      if (renderer === undefined) {
        feed(window.subarray(0, held))
        held = 0
        return
      }
      feedLines([...renderer.push(decoder!.end()), ...renderer.end()])
    },
    counts: () => {
      const counts = renderer?.counts() ?? Terminal.noCounts
      return colourCodes === 0 ? counts : { ...counts, colourCodes: counts.colourCodes + colourCodes }
    }
  }
}
