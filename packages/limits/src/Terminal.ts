/**
 * What a terminal would show of a command's output, as text a model can read: a pure, streaming
 * renderer. Text goes in chunk by chunk (an escape sequence may be split across chunks; a chunk is
 * decoded text, so UTF-8 is never split), rendered lines come out as they become final.
 *
 * Semantics (those of xterm with `\n` as a newline, `convertEol`): `\r` returns to the line start
 * and what follows overwrites (whole or partial); backspace moves left; erase in line and display
 * (`ESC[K`, `ESC[1K`, `ESC[2K`, `ESC[J`, `ESC[1J`, `ESC[2J`); cursor up/down/forward/back, column,
 * row and position (`ESC[A` … `ESC[H`, `ESC[G`, `ESC[d`), save/restore, index and reverse index,
 * erase/delete/insert characters; SGR colour codes removed; private modes (`ESC[?25l`) and every
 * other CSI removed; OSC removed up to BEL or ST (titles dropped, an OSC 8 hyperlink keeps its
 * text, which is ordinary text between two OSCs); DCS/SOS/PM/APC swallowed to ST; charset
 * designations (`ESC(B`) removed; C1 controls in 8-bit form (U+0080–U+009F) act as their 7-bit
 * `ESC` forms; other C0 controls and DEL dropped. A tab is kept as `\t` (one cell): the model
 * reads text, and spaces would change what it copies. Output holds no C0 control but `\t` and
 * `\n`, no DEL and no C1.
 *
 * Memory is bounded: the cursor reaches the last `windowLines` rows (like a terminal's screen,
 * above which no program can move the cursor); rows above are final and emitted. A row holds at
 * most `maxLineChars` cells: the last row wraps there like a terminal of that width (its first
 * `maxLineChars` cells are emitted as a piece without `\n`, the line goes on in the next string),
 * a row above it drops what passes the margin and counts it (`clippedChars`).
 *
 * @since 0.1.0
 */
import * as internal from "./internal/terminal.js"
import * as Newlines from "./Newlines.js"

/**
 * What rendering changed, counted exactly.
 *
 * @since 0.1.0
 * @category models
 */
export interface Counts {
  /** Line states overwritten: a rewrite of visible text after a cursor move (`\r`, cursor up …). */
  readonly progressFrames: number
  /** SGR sequences (`ESC[…m`) removed. */
  readonly colourCodes: number
  /** Every other escape sequence removed (cursor moves, erases, modes, OSC, charsets, C1, cut-short ones). */
  readonly otherSequences: number
  /** Rows whose visible text an erase removed outside a rewrite. */
  readonly linesErased: number
  /** C0 controls acted on or dropped, other than `\n` and `\t` (`\r`, backspace, BEL, DEL …). */
  readonly controls: number
  /** Characters dropped past the right margin of a row above the last one. */
  readonly clippedChars: number
}

/**
 * A streaming renderer. Each string `push` and `end` return is a rendered line with its `\n`,
 * except a piece of a line wider than `maxLineChars` (the line goes on in the next string) and the
 * last line of the output when it had no `\n`. Their concatenation, in order, is the rendered text.
 *
 * @since 0.1.0
 * @category models
 */
export interface Renderer {
  /** Feeds a chunk of decoded text; the lines it made final. */
  readonly push: (chunk: string) => ReadonlyArray<string>
  /** Ends the output: every line still in the window. Later pushes are ignored. */
  readonly end: () => ReadonlyArray<string>
  /** What rendering changed so far. */
  readonly counts: () => Counts
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Rows the cursor can reach back (the screen's height). */
  readonly windowLines?: number
  /** Cells in a row (the screen's width). */
  readonly maxLineChars?: number
}

/**
 * The default window: taller than the screen any multi-line progress display draws on (docker,
 * cargo, pnpm redraw at most a few dozen rows; a program cannot move above a real terminal's
 * screen, commonly 24–60 rows), small enough that the window costs little.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_WINDOW_LINES = 100

/**
 * The default width: a progress line is drawn for a terminal at most a few hundred columns wide;
 * 4096 cells keep every real line whole while bounding what one row holds (with the window, the
 * renderer holds at most 2 × 100 rows × 4096 cells).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_LINE_CHARS = 4096

/**
 * A fresh renderer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Renderer =>
  internal.make({
    windowLines: options.windowLines ?? DEFAULT_WINDOW_LINES,
    maxLineChars: options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS
  })

/**
 * Renders a whole text at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (
  text: string,
  options: Options = {}
): { readonly text: string; readonly counts: Counts } => {
  const renderer = make(options)
  const rendered = renderer.push(text).join("") + renderer.end().join("")
  return { text: rendered, counts: renderer.counts() }
}

/**
 * No change at all.
 *
 * @since 0.1.0
 * @category constants
 */
export const noCounts: Counts = {
  progressFrames: 0,
  colourCodes: 0,
  otherSequences: 0,
  linesErased: 0,
  controls: 0,
  clippedChars: 0
}

/**
 * Whether rendering changed more than colour: then the raw bytes differ from the text in more
 * than SGR codes, and a host keeps them reachable.
 *
 * @since 0.1.0
 * @category models
 */
export const changedBeyondColour = (counts: Counts): boolean =>
  counts.progressFrames + counts.otherSequences + counts.linesErased + counts.controls + counts.clippedChars >
  0

/**
 * Whether rendering changed anything.
 *
 * @since 0.1.0
 * @category models
 */
export const changed = (counts: Counts): boolean => counts.colourCodes > 0 || changedBeyondColour(counts)

/**
 * The index of the first byte of UTF-8 `bytes` that rendering would act on (a C0 control other
 * than `\t` and `\n`, DEL, or a C1 control, U+0080–U+009F, encoded `C2 80`–`C2 9F`), or -1 when
 * there is none: text with none renders to itself. A `C2` that ends the bytes counts as one (its
 * next byte is in the next read). Vectorised (see `Newlines.firstControl`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const firstControl = (bytes: Uint8Array): number => Newlines.firstControl(bytes)

/**
 * What `stripColour` made of a read whose only escape sequences are colour codes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stripped {
  /** The read without its complete SGR sequences: text with no byte rendering acts on. */
  readonly plain: Uint8Array
  /** The SGR sequences removed. */
  readonly colourCodes: number
  /** The colour code the read ends in, complete or cut short (`ESC`, `ESC[3` …), for the next read; empty when none. */
  readonly pending: Uint8Array
}

// a complete SGR sequence as the renderer's ground state parses it: ESC [ digits ; : then m (no
// prefix, no intermediate); the renderer only counts it. Not one a UTF-8 continuation byte follows:
// removing it would join the bytes around it into a character the renderer (which decodes them
// apart, each to U+FFFD) never shows
// oxlint-disable-next-line no-control-regex -- the control character is what is matched
const SGR = /\x1b\[[0-9;:]*m(?![\x80-\xbf])/g
// one the read ends in, complete or cut short: held back, the next read's first byte decides
// oxlint-disable-next-line no-control-regex -- the control character is what is matched
const SGR_TAIL = /^\x1b(?:\[[0-9;:]*m?)?$/
// a sequence at the end longer than this is not held back: the renderer takes it (a real colour
// code has a few dozen parameter bytes; 32 parameters of 5 digits fit)
const PENDING_MAX = 256

/**
 * The fast path for coloured output: UTF-8 `bytes` (a read, in the renderer's ground state) with
 * every complete `ESC[…m` removed, when what is left holds no byte rendering acts on; undefined
 * otherwise (the read needs the renderer). A colour code the read ends in (complete or not) is
 * `pending`, to prepend to the next read. Rendering the read is rendering `plain` (an SGR
 * sequence changes no cell, the renderer only counts it) with `colourCodes` more colour codes.
 * Works on a latin1 view of the bytes, so UTF-8 passes through byte for byte. With `into` (at
 * least as long as `bytes`), `plain` is a view of it, valid until the caller reuses it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stripColour = (bytes: Uint8Array, into?: Uint8Array): Stripped | undefined => {
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
  let pending: Uint8Array = EMPTY
  const last = text.lastIndexOf("\x1b")
  if (last !== -1 && text.length - last <= PENDING_MAX && SGR_TAIL.test(text.slice(last))) {
    pending = bytes.subarray(last)
    text = text.slice(0, last)
  }
  let escapes = 0
  for (let at = text.indexOf("\x1b"); at !== -1; at = text.indexOf("\x1b", at + 1)) escapes++
  const left = escapes === 0 ? text : text.replace(SGR, "")
  // written into the caller's buffer when it has room: a fresh buffer per read costs more (in
  // garbage collection) than removing the codes
  const plain =
    into !== undefined && into.byteLength >= left.length
      ? into.subarray(0, Buffer.from(into.buffer, into.byteOffset, into.byteLength).write(left, 0, "latin1"))
      : Buffer.from(left, "latin1")
  // an escape left (not a colour code) or any other control: the renderer's work
  if (Newlines.firstControl(plain) !== -1) return undefined
  return { plain, colourCodes: escapes, pending }
}

const EMPTY = new Uint8Array(0)
