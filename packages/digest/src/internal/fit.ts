/**
 * The result budget applied to a digest (rules G7, G10): when the items do not fit, must-keep lines
 * are chosen first (the last lines of a failed command, the first error of each code, then the
 * others in order), then the head and the tail of the rest share what is left by the stream's
 * head share; whatever is not chosen merges into the gap markers around it, counted as `budget` (must-keep ones also in
 * `mustKeep`). Markers cost bytes too, so the choice is repeated with less room until it fits.
 */
import * as Notice from "../Notice.js"
import { errorCode, isMustKeep } from "../Shape.js"
import type { Gap, Item, Line } from "./retain.js"
import { addLine, emptyGap, isGap, mergeGap } from "./retain.js"

export interface Budget {
  readonly maxBytes: number
  readonly maxLines: number
  /** Share of what is left after must-keep lines that goes to the head (the tail gets the rest). */
  readonly headShare: number
}

/** Lines and gap markers, in order: what the digest shows. */
export type Shown = ReadonlyArray<Line | Gap>

const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

/** Collapses folded lines and adjacent gaps into single gaps. */
export const collapse = (
  items: ReadonlyArray<Item>,
  chosen?: (index: number) => boolean
): Array<Line | Gap> => {
  const out: Array<Line | Gap> = []
  let open: Gap | undefined
  items.forEach((item, index) => {
    if (isGap(item)) {
      if (open === undefined) {
        open = emptyGap(item.first)
        out.push(open)
      }
      mergeGap(open, item)
      return
    }
    if (item.folded === undefined && (chosen === undefined || chosen(index))) {
      open = undefined
      out.push(item)
      return
    }
    if (open === undefined) {
      open = emptyGap(item.raw)
      out.push(open)
    }
    addLine(open, item)
  })
  return out
}

/** The text of shown items, one line each (no trailing newline). */
export const lines = (shown: Shown): Array<string> =>
  shown.map((item) => (isGap(item) ? Notice.gap(item.counts, item.first, item.last) : item.text))

export const measure = (shown: Shown): { bytes: number; lines: number } => {
  let bytes = 0
  for (const line of lines(shown)) bytes += utf8Bytes(line) + 1
  return { bytes, lines: shown.length }
}

/**
 * The order must-keep lines are chosen in: the runner's own summary lines, a failed command's
 * last lines, the first error of each diagnostic code with the stack or source excerpt that
 * follows it (a flood of one code, 2,000 unused variables, must not crowd out the one type error
 * that has another), then the others (errors and their stacks, headers) in order.
 */
const mustOrder = (items: ReadonlyArray<Item>): Array<number> => {
  const summary: Array<number> = []
  const tail: Array<number> = []
  const firsts: Array<number> = []
  const rest: Array<number> = []
  const codes = new Set<string>()
  // inside the stack of an error that opened a new code: its lines go with it
  let withFirst = false
  items.forEach((item, index) => {
    if (isGap(item) || item.folded !== undefined || !isMustKeep(item.kind)) return
    if (item.kind === "error") {
      const code = errorCode(item.text)
      withFirst = code !== undefined && !codes.has(code)
      if (withFirst) codes.add(code!)
    } else if (item.kind !== "stack") withFirst = false
    if (item.kind === "summary") summary.push(index)
    else if (item.kind === "tail") tail.push(index)
    else (withFirst ? firsts : rest).push(index)
  })
  return [...summary, ...tail, ...firsts, ...rest]
}

const choose = (items: ReadonlyArray<Item>, roomBytes: number, roomLines: number, headShare: number) => {
  const chosen = new Set<number>()
  let bytes = 0
  let count = 0
  for (const index of mustOrder(items)) {
    const line = items[index] as Line
    if (bytes + line.bytes <= roomBytes && count + 1 <= roomLines) {
      chosen.add(index)
      bytes += line.bytes
      count++
    }
  }
  const leftBytes = roomBytes - bytes
  const leftLines = roomLines - count
  const headBytes = headShare >= 1 ? leftBytes : headShare <= 0 ? 0 : Math.floor(leftBytes * headShare)
  const headLines = headShare >= 1 ? leftLines : headShare <= 0 ? 0 : Math.floor(leftLines * headShare)
  const fill = (from: number, step: 1 | -1, maxBytes: number, maxLines: number) => {
    let used = 0
    let n = 0
    for (let index = from; index >= 0 && index < items.length; index += step) {
      const item = items[index]!
      if (isGap(item) || item.folded !== undefined || chosen.has(index)) continue
      if (used + item.bytes > maxBytes || n + 1 > maxLines) break
      chosen.add(index)
      used += item.bytes
      n++
    }
    return { used, n }
  }
  const head = fill(0, 1, headBytes, headLines)
  fill(items.length - 1, -1, leftBytes - head.used, leftLines - head.n)
  return chosen
}

/** Tries this many times, each with the room less by the overshoot, before giving up the fill. */
const FIT_ATTEMPTS = 8

/**
 * The items fitted to `budget` (less `reserve` bytes and one line for the header) and to the
 * rendered text's own size; `cut` tells whether anything had to go.
 */
export const fit = (
  items: ReadonlyArray<Item>,
  budget: Budget,
  reserveBytes: number,
  renderedBytes: number
): { readonly shown: Array<Line | Gap>; readonly cut: boolean } => {
  // never longer than the rendered text: a gap's marker may cost more than the short lines it stands for
  let maxBytes = Math.min(renderedBytes, Math.max(0, budget.maxBytes - reserveBytes))
  const maxLines = Math.max(0, budget.maxLines - 1)
  const whole = collapse(items)
  const size = measure(whole)
  if (size.bytes <= maxBytes && size.lines <= maxLines) return { shown: whole, cut: false }
  // a cut for lines alone must not make the text longer: markers may cost more than short lines
  maxBytes = Math.min(maxBytes, size.bytes)
  let roomBytes = maxBytes
  let roomLines = maxLines
  let shown = whole
  for (let attempt = 0; attempt < FIT_ATTEMPTS; attempt++) {
    const chosen = choose(items, roomBytes, roomLines, budget.headShare)
    shown = collapse(items, (index) => chosen.has(index))
    const got = measure(shown)
    if (got.bytes <= maxBytes && got.lines <= maxLines) return { shown, cut: true }
    roomBytes = Math.max(0, roomBytes - (got.bytes - maxBytes) - 1)
    roomLines = Math.max(0, roomLines - (got.lines - maxLines))
  }
  // nothing but markers fits: one gap for everything
  return { shown: collapse(items, () => false), cut: true }
}
