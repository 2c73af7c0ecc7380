/**
 * The terminal renderer's machinery: a DEC/ANSI parser (the states of a VT500-style parser) over
 * a window of recent rows. Plain synchronous code with local state: it runs once per chunk of a
 * command's output, on the hot path. See ../Terminal.ts for the semantics and the counts.
 */
import type { Counts, Options, Renderer } from "../Terminal.js"

const enum State {
  Ground,
  Escape,
  EscapeIntermediate,
  Csi,
  CsiIgnore,
  Osc,
  /** DCS, SOS, PM, APC: swallowed up to their terminator */
  Swallow
}

/** A row: a string when every cell up to its end was written (one cell per code point), else cells ("" = blank). */
type Row = string | Array<string>

// anything the fast path cannot copy as text: C0 but \t, DEL, C1 (\n is split on, not parsed)
// oxlint-disable-next-line no-control-regex -- the control characters are what is matched
const SPECIAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/
// what ends a run of text in the parser's ground state (\n included)
// oxlint-disable-next-line no-control-regex -- the control characters are what is matched
const RUN_END = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g

// a parameter larger than any screen: caps the work one sequence can ask for
const PARAM_CAP = 65535
// as xterm: a sequence with more parameters keeps the first ones
const PARAMS_MAX = 32

const codePoints = (text: string): number => {
  let count = text.length
  for (let index = 0; index < text.length; index++) {
    if ((text.charCodeAt(index) & 0xfc00) === 0xdc00 && index > 0) {
      const previous = text.charCodeAt(index - 1)
      if ((previous & 0xfc00) === 0xd800) count--
    }
  }
  return count
}

/** The index in `text` after its first `cells` code points. */
const codePointIndex = (text: string, cells: number): number => {
  let at = 0
  for (let cell = 0; cell < cells && at < text.length; cell++) {
    const unit = text.charCodeAt(at)
    const pair =
      (unit & 0xfc00) === 0xd800 && at + 1 < text.length && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00
    at += pair ? 2 : 1
  }
  return at
}

const rowText = (row: Row): string => {
  if (typeof row === "string") return row
  let end = row.length
  while (end > 0 && (row[end - 1] === "" || row[end - 1] === undefined)) end--
  let text = ""
  for (let index = 0; index < end; index++) {
    const cell = row[index]
    text += cell === "" || cell === undefined ? " " : cell
  }
  return text
}

const hasText = (row: Row | undefined): boolean => {
  if (row === undefined) return false
  if (typeof row === "string") return row.length > 0
  for (const cell of row) if (cell !== "" && cell !== undefined) return true
  return false
}

// the DEC special graphics set (VT100): what 0x60-0x7e draw once it is designated (`ESC(0`);
// 0x5f (a blank on a VT100) stays `_`, as in xterm
const GRAPHICS =
  "\u25c6\u2592\u2409\u240c\u240d\u240a\u00b0\u00b1\u2424\u240b\u2518\u2510\u250c\u2514\u253c\u23ba\u23bb\u2500\u23bc\u23bd\u251c\u2524\u2534\u252c\u2502\u2264\u2265\u03c0\u2260\u00a3\u00b7"

const toGraphics = (text: string): string => {
  let mapped = ""
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    mapped += code >= 0x60 && code <= 0x7e ? GRAPHICS[code - 0x60] : text[index]
  }
  return mapped
}

/** @internal */
export const make = (options: Required<Options>): Renderer => {
  const windowLines = Math.max(1, Math.floor(options.windowLines))
  const maxLineChars = Math.max(1, Math.floor(options.maxLineChars))

  let rows: Array<Row> = [""]
  /** rows emitted (final) so far: the absolute index of rows[0] */
  let base = 0
  let cy = 0
  let cx = 0
  /** the cursor sits at the end of rows[cy], a string row; cx is computed when needed */
  let atEnd = true
  /** a cursor move happened since the last rewrite: the next rewrite of visible text is a frame */
  let armed = false
  /** DECSC / SCOSC: the cursor and the character sets, as xterm saves them */
  let saved:
    | {
        readonly row: number
        readonly col: number
        readonly g0Graphics: boolean
        readonly g1Graphics: boolean
        readonly shifted: boolean
      }
    | undefined

  let state = State.Ground
  let params: Array<number> = []
  let param = -1
  let prefix = 0
  let intermediate = 0
  /** G0 and G1 designated as DEC special graphics, and G1 shifted in (SO) */
  let g0Graphics = false
  let g1Graphics = false
  let shifted = false
  /** an OSC or string just ended at ESC: the `\` of its ST is part of it */
  let stPending = false

  let progressFrames = 0
  let colourCodes = 0
  let otherSequences = 0
  let linesErased = 0
  let controls = 0
  let clippedChars = 0

  let out: Array<string> = []

  const viewTop = () => Math.max(0, rows.length - windowLines)
  const col = (): number => {
    if (atEnd) {
      cx = codePoints(rows[cy] as string)
      atEnd = false
    }
    return cx
  }
  const moved = () => {
    col()
    armed = true
  }
  const rewrote = () => {
    if (armed) {
      progressFrames++
      armed = false
    } else linesErased++
  }
  const cellsAt = (index: number): Array<string> => {
    const row = rows[index]!
    if (typeof row !== "string") return row
    const cells = Array.from(row)
    rows[index] = cells
    return cells
  }
  /** Emits the rows above the last `keep` rows as final lines. */
  const emitAbove = (keep: number) => {
    const count = rows.length - keep
    if (count <= 0) return
    for (let index = 0; index < count; index++) out.push(rowText(rows[index]!) + "\n")
    rows = rows.slice(count)
    base += count
    cy = Math.max(0, cy - count)
  }
  const newRow = () => {
    rows.push("")
    // in batches: rows beyond the window are final once twice the window is drawn
    if (rows.length > 2 * windowLines) emitAbove(windowLines)
  }
  /** The last row holds more than maxLineChars code points: it wraps, its first part final. */
  const wrapLastRow = () => {
    let row = rows[cy] as string
    if (row.length <= maxLineChars || codePoints(row) <= maxLineChars) return
    emitAbove(1)
    while (row.length > maxLineChars && codePoints(row) > maxLineChars) {
      const cut = codePointIndex(row, maxLineChars)
      out.push(row.slice(0, cut))
      row = row.slice(cut)
    }
    rows[0] = row
  }

  /** Writes a run of text (no control in it) at the cursor. */
  const write = (piece: string) => {
    if (piece.length === 0) return
    const run = (shifted ? g1Graphics : g0Graphics) ? toGraphics(piece) : piece
    const row = rows[cy]!
    if (atEnd || (typeof row === "string" && cx === codePoints(row))) {
      rows[cy] = (row as string) + run
      atEnd = true
      if ((rows[cy] as string).length > maxLineChars) {
        if (cy === rows.length - 1) wrapLastRow()
        else {
          // a row above the last one: what passes the right margin is dropped and counted
          const text = rows[cy] as string
          const chars = codePoints(text)
          if (chars > maxLineChars) {
            clippedChars += chars - maxLineChars
            rows[cy] = text.slice(0, codePointIndex(text, maxLineChars))
          }
        }
      }
      return
    }
    const cells = cellsAt(cy)
    while (cells.length < cx) cells.push("")
    for (const char of run) {
      if (cx >= maxLineChars) {
        if (cy === rows.length - 1) {
          emitAbove(1)
          out.push(rowText(cells))
          cells.length = 0
          cx = 0
        } else {
          clippedChars++
          continue
        }
      }
      const previous = cells[cx]
      if (previous !== undefined && previous !== "" && armed) {
        progressFrames++
        armed = false
      }
      cells[cx++] = char
    }
  }

  const lineFeed = (carriageReturn: boolean) => {
    const column = col()
    if (cy === rows.length - 1) newRow()
    cy++
    cx = carriageReturn ? 0 : column
    armed = true
  }
  const reverseIndex = () => {
    moved()
    const top = viewTop()
    if (cy > top) {
      cy--
      return
    }
    // at the top of the screen the screen scrolls down: a blank row on top, the bottom row lost
    rows.splice(cy, 0, "")
    if (rows.length - top > windowLines) rows.splice(top + windowLines, 1)
  }
  const moveTo = (row: number, column: number) => {
    moved()
    const top = viewTop()
    const target = Math.min(Math.max(row, top), top + windowLines - 1)
    while (rows.length - 1 < target) rows.push("")
    cy = target
    cx = Math.min(Math.max(column, 0), maxLineChars - 1)
  }

  /** Clears the cursor row (EL's modes); whether visible text went. */
  const clearLine = (mode: number): boolean => {
    col()
    const row = rows[cy]!
    if (mode === 2) {
      rows[cy] = ""
      return hasText(row)
    }
    const cells = cellsAt(cy)
    if (mode === 0) {
      if (cx >= cells.length) return false
      const removed = hasText(cells.slice(cx))
      cells.length = cx
      return removed
    }
    if (mode !== 1) return false
    const end = Math.min(cx + 1, cells.length)
    const removed = hasText(cells.slice(0, end))
    for (let index = 0; index < end; index++) cells[index] = ""
    return removed
  }
  const eraseInLine = (mode: number) => {
    if (clearLine(mode)) rewrote()
  }
  const eraseInDisplay = (mode: number) => {
    col()
    if (mode === 3) return // scrollback: the lines were printed, the model keeps them
    const top = viewTop()
    const from = mode === 0 ? cy + 1 : top
    const to = mode === 1 ? cy - 1 : rows.length - 1
    let erased = 0
    for (let index = from; index <= to; index++) {
      if (hasText(rows[index])) erased++
      rows[index] = ""
    }
    if (clearLine(mode)) erased++
    if (erased === 0) return
    if (armed) {
      progressFrames++
      armed = false
    } else linesErased += erased
  }
  const editChars = (final: number, count: number) => {
    const at = col()
    const cells = cellsAt(cy)
    while (cells.length < at) cells.push("")
    if (final === 0x58 /* X: ECH */) {
      const end = Math.min(at + count, cells.length)
      if (hasText(cells.slice(at, end))) rewrote()
      for (let index = at; index < end; index++) cells[index] = ""
    } else if (final === 0x50 /* P: DCH */) {
      if (hasText(cells.slice(at, at + count))) rewrote()
      cells.splice(at, count)
    } else {
      // @: ICH, the cells pushed past the right margin are lost as on a terminal
      cells.splice(at, 0, ...Array.from({ length: Math.min(count, maxLineChars) }, () => ""))
      if (cells.length > maxLineChars) {
        if (hasText(cells.slice(maxLineChars)))
          clippedChars += cells.slice(maxLineChars).filter(Boolean).length
        cells.length = maxLineChars
      }
    }
  }

  const csiDispatch = (final: number) => {
    if (param >= 0) params.push(param)
    const first = params[0] ?? 0
    const count = Math.max(1, first)
    if (final === 0x6d /* m */ && prefix === 0 && intermediate === 0) {
      colourCodes++
      return
    }
    otherSequences++
    if (prefix !== 0 || intermediate !== 0) return
    const top = viewTop()
    switch (final) {
      case 0x41: // A: CUU
        moveTo(cy - count, col())
        return
      case 0x42: // B: CUD
      case 0x65: // e: VPR
        moveTo(cy + count, col())
        return
      case 0x43: // C: CUF
      case 0x61: // a: HPR
        moveTo(cy, col() + count)
        return
      case 0x44: // D: CUB
        moveTo(cy, col() - count)
        return
      case 0x45: // E: CNL
        moveTo(cy + count, 0)
        return
      case 0x46: // F: CPL
        moveTo(cy - count, 0)
        return
      case 0x47: // G: CHA
      case 0x60: // `: HPA
        moveTo(cy, count - 1)
        return
      case 0x48: // H: CUP
      case 0x66: // f: HVP
        moveTo(top + count - 1, Math.max(1, params[1] ?? 0) - 1)
        return
      case 0x64: // d: VPA
        moveTo(top + count - 1, col())
        return
      case 0x4a: // J: ED
        eraseInDisplay(first)
        return
      case 0x4b: // K: EL
        eraseInLine(first)
        return
      case 0x58: // X: ECH
      case 0x50: // P: DCH
      case 0x40: // @: ICH
        editChars(final, count)
        return
      case 0x73: // s: save cursor
        save()
        return
      case 0x75: // u: restore cursor
        restore()
        return
      default:
        return
    }
  }
  const save = () => {
    saved = { row: cy - viewTop(), col: col(), g0Graphics, g1Graphics, shifted }
  }
  // with nothing saved, a restore homes the cursor and resets the character sets (as xterm does)
  const restore = () => {
    moveTo(viewTop() + (saved?.row ?? 0), saved?.col ?? 0)
    g0Graphics = saved?.g0Graphics ?? false
    g1Graphics = saved?.g1Graphics ?? false
    shifted = saved?.shifted ?? false
  }
  const reset = () => {
    // RIS: the screen is cleared and the cursor goes home
    eraseInDisplay(2)
    moveTo(viewTop(), 0)
    saved = undefined
  }

  const escDispatch = (final: number) => {
    if (final === 0x5c /* \ */ && stPending) {
      stPending = false
      return
    }
    stPending = false
    otherSequences++
    if (intermediate === 0x28 /* ( */) g0Graphics = final === 0x30
    else if (intermediate === 0x29 /* ) */) g1Graphics = final === 0x30
    if (intermediate !== 0) return // other designations and the like: nothing to draw
    switch (final) {
      case 0x37: // 7: DECSC
        save()
        return
      case 0x38: // 8: DECRC
        restore()
        return
      case 0x44: // D: IND
        lineFeed(false)
        return
      case 0x45: // E: NEL
        lineFeed(true)
        return
      case 0x4d: // M: RI
        reverseIndex()
        return
      case 0x63: // c: RIS
        reset()
        return
      default:
        return
    }
  }

  /** A C0 control (not ESC, CAN, SUB) executed in any state but the strings. */
  const execute = (code: number) => {
    switch (code) {
      case 0x0a:
        lineFeed(true)
        return
      case 0x0b:
      case 0x0c:
        controls++
        lineFeed(true)
        return
      case 0x0d:
        controls++
        moved()
        cx = 0
        return
      case 0x0e:
      case 0x0f:
        // SO, SI: G1 or G0 into use
        controls++
        shifted = code === 0x0e
        return
      case 0x08:
        controls++
        moved()
        if (cx > 0) cx--
        return
      default:
        controls++
        return
    }
  }

  /**
   * A C1 control (0x80-0x9f): the introducers (CSI, OSC, DCS, SOS, PM, APC), ST, IND and NEL act
   * as their 7-bit ESC forms; the others are dropped (as xterm does).
   */
  const c1 = (code: number) => {
    stPending = false
    switch (code) {
      case 0x9b:
        enterCsi()
        return
      case 0x9d:
        otherSequences++
        state = State.Osc
        return
      case 0x90:
      case 0x98:
      case 0x9e:
      case 0x9f:
        otherSequences++
        state = State.Swallow
        return
      case 0x9c:
        otherSequences++
        state = State.Ground
        return
      case 0x84:
        otherSequences++
        state = State.Ground
        lineFeed(false)
        return
      case 0x85:
        otherSequences++
        state = State.Ground
        lineFeed(true)
        return
      default:
        otherSequences++
        state = State.Ground
    }
  }
  const enterCsi = () => {
    state = State.Csi
    params = []
    param = -1
    prefix = 0
    intermediate = 0
  }

  const parse = (chunk: string) => {
    const length = chunk.length
    let index = 0
    while (index < length) {
      if (state === State.Ground) {
        RUN_END.lastIndex = index
        const match = RUN_END.exec(chunk)
        const end = match === null ? length : match.index
        if (end > index) write(chunk.slice(index, end))
        if (end === length) return
        index = end
      }
      const code = chunk.charCodeAt(index++)
      if (code >= 0x80 && code <= 0x9f) {
        if (state === State.Osc || state === State.Swallow) {
          // ST ends the string (counted when it began); another C1 control cuts it short and acts
          if (code === 0x9c) {
            state = State.Ground
            continue
          }
        }
        c1(code)
        continue
      }
      if (code === 0x1b) {
        if (state === State.Osc || state === State.Swallow) stPending = true
        else if (state !== State.Ground) otherSequences++ // the sequence it cuts short
        state = State.Escape
        intermediate = 0
        continue
      }
      if (code === 0x18 || code === 0x1a) {
        // CAN, SUB: cancel the sequence in progress
        if (state === State.Ground) controls++
        else if (state !== State.Osc && state !== State.Swallow) otherSequences++
        state = State.Ground
        continue
      }
      if (state === State.Osc || state === State.Swallow) {
        if (code === 0x07 && state === State.Osc) state = State.Ground
        continue
      }
      if (code < 0x20) {
        execute(code)
        continue
      }
      if (code === 0x7f) {
        controls++
        continue
      }
      if (code >= 0xa0 && state !== State.Ground) {
        // a character no sequence can hold: the sequence is cut short and the character dropped
        otherSequences++
        state = State.Ground
        continue
      }
      switch (state) {
        case State.Ground:
          // unreachable: the run above took every other character
          write(String.fromCharCode(code))
          continue
        case State.Escape:
          if (code !== 0x5c) stPending = false
          if (code >= 0x20 && code <= 0x2f) {
            intermediate = code
            state = State.EscapeIntermediate
          } else if (code === 0x5b) enterCsi()
          else if (code === 0x5d) {
            otherSequences++
            state = State.Osc
          } else if (code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f) {
            otherSequences++
            state = State.Swallow
          } else {
            state = State.Ground
            escDispatch(code)
          }
          continue
        case State.EscapeIntermediate:
          if (code >= 0x20 && code <= 0x2f) continue
          state = State.Ground
          escDispatch(code)
          intermediate = 0
          continue
        case State.Csi:
          if (code >= 0x30 && code <= 0x39) {
            if (intermediate !== 0) state = State.CsiIgnore
            else param = Math.min(PARAM_CAP, (param < 0 ? 0 : param * 10) + (code - 0x30))
          } else if (code === 0x3b || code === 0x3a) {
            if (intermediate !== 0) state = State.CsiIgnore
            else if (params.length < PARAMS_MAX) {
              params.push(param < 0 ? 0 : param)
              param = -1
            }
          } else if (code >= 0x3c && code <= 0x3f) {
            if (params.length === 0 && param < 0 && prefix === 0 && intermediate === 0) prefix = code
            else state = State.CsiIgnore
          } else if (code >= 0x20 && code <= 0x2f) intermediate = code
          else if (code >= 0x40 && code <= 0x7e) {
            state = State.Ground
            csiDispatch(code)
          } else state = State.CsiIgnore
          continue
        case State.CsiIgnore:
          if (code >= 0x40 && code <= 0x7e) {
            state = State.Ground
            otherSequences++
          }
          continue
        default:
          continue
      }
    }
  }

  /** A chunk with no control in it, from the ground state: lines are copied, not parsed. */
  const plain = (chunk: string) => {
    let start = 0
    let newline = chunk.indexOf("\n")
    while (newline !== -1) {
      // a fresh last row and a line that fits: the line is the row
      if (cy === rows.length - 1 && atEnd && rows[cy] === "" && newline - start <= maxLineChars) {
        rows[cy] = chunk.slice(start, newline)
        newRow()
        cy++
        armed = true
      } else {
        write(chunk.slice(start, newline))
        lineFeed(true)
        atEnd = rows[cy] === "" && cy === rows.length - 1
      }
      start = newline + 1
      newline = chunk.indexOf("\n", start)
    }
    if (start < chunk.length) write(chunk.slice(start))
  }

  const take = (): ReadonlyArray<string> => {
    const lines = out
    out = []
    return lines
  }
  let ended = false

  return {
    push(chunk) {
      if (ended || chunk.length === 0) return []
      if (state === State.Ground && !g0Graphics && !shifted && !SPECIAL.test(chunk)) plain(chunk)
      else parse(chunk)
      // a row the cursor left at its end stays cheap to append to
      if (!atEnd && cy === rows.length - 1 && rows[cy] === "" && cx === 0) atEnd = true
      return take()
    },
    end() {
      if (ended) return []
      ended = true
      // a sequence cut short by the end (a string was counted when it began)
      if (state === State.Csi || state === State.CsiIgnore || state === State.EscapeIntermediate)
        otherSequences++
      else if (state === State.Escape && !stPending) otherSequences++
      state = State.Ground
      const last = rows.length - 1
      for (let index = 0; index < last; index++) out.push(rowText(rows[index]!) + "\n")
      const tail = rowText(rows[last]!)
      if (tail.length > 0) out.push(tail)
      rows = [""]
      return take()
    },
    counts: (): Counts => ({
      progressFrames,
      colourCodes,
      otherSequences,
      linesErased,
      controls,
      clippedChars
    })
  }
}
