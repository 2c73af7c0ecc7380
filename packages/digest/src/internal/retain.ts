/**
 * The digest's bounded memory (rules G3): the items it will show, within a byte and line budget
 * (the capture budgets), whatever the stream's length. The first quarter of the budget keeps the
 * stream's first items, the last quarter its latest ones, and the half between keeps the
 * must-keep lines that scroll out of the tail; everything else that scrolls out becomes a gap,
 * counted, so a failure 5 MB into a 10 MB flood is still shown and every line is accounted for.
 */
import type { Folded } from "../Notice.js"
import * as Notice from "../Notice.js"
import type { Kind } from "../Shape.js"
import { isMustKeep } from "../Shape.js"

/** One rendered line, as the digest holds it. */
export interface Line {
  readonly text: string
  /** The raw line (of the spill copy) the rendered line ended on. */
  readonly raw: number
  readonly kind: Kind
  /** The diagnostic code of a warning line. */
  readonly code: string | undefined
  /** Its UTF-8 bytes plus the newline. */
  readonly bytes: number
  /** Set when a later line folded this one after it was held (a warning code's previous last). */
  folded: Folded | undefined
}

/** Lines left out, standing as one marker. */
export interface Gap {
  readonly gap: true
  readonly counts: Notice.Counts
  readonly codes: Map<string, number>
  first: number
  last: number
  /** Must-keep lines among them (left out to fit a budget). */
  mustKeep: number
}

export type Item = Line | Gap

export const isGap = (item: Item): item is Gap => "gap" in item

/** What one marker costs the retention budget: markers are one line of about this many bytes. */
export const MARKER_BYTES = 80

export const emptyGap = (first: number): Gap => ({
  gap: true,
  counts: Notice.noCounts(),
  codes: new Map(),
  first,
  last: first,
  mustKeep: 0
})

/** Adds a line to a gap: counted as its fold kind, or as `budget` (and must-keep, if it is). */
export const addLine = (gap: Gap, line: Line): void => {
  const kind = line.folded ?? "budget"
  gap.counts[kind]++
  if (kind === "warning" && line.code !== undefined)
    gap.codes.set(line.code, (gap.codes.get(line.code) ?? 0) + 1)
  if (kind === "budget" && isMustKeep(line.kind)) gap.mustKeep++
  // a run's held line joins its gap after the lines folded behind it
  if (line.raw < gap.first) gap.first = line.raw
  if (line.raw > gap.last) gap.last = line.raw
}

/** Merges `from` into `into` (from follows into). */
export const mergeGap = (into: Gap, from: Gap): void => {
  for (const kind of Notice.foldedKinds) into.counts[kind] += from.counts[kind]
  for (const [code, n] of from.codes) into.codes.set(code, (into.codes.get(code) ?? 0) + n)
  into.mustKeep += from.mustKeep
  into.last = from.last
}

const costOf = (item: Item): number => (isGap(item) ? MARKER_BYTES : item.bytes)

export interface Retention {
  readonly push: (item: Item) => void
  readonly items: () => Array<Item>
}

/** Retention within `maxBytes` and `maxLines` (each item costs one line). */
export const make = (maxBytes: number, maxLines: number): Retention => {
  // a quarter each for the first and the latest items, half for must-keep lines between
  const headBytes = Math.floor(maxBytes / 4)
  const headLines = Math.max(1, Math.floor(maxLines / 4))
  const tailBytes = headBytes
  const tailLines = headLines
  const middleBytes = maxBytes - headBytes - tailBytes
  const middleLines = Math.max(1, maxLines - headLines - tailLines)
  const head: Array<Item> = []
  let headUsed = 0
  let headFull = false
  const middle: Array<Item> = []
  let middleUsed = 0
  let middleCount = 0
  // the tail is a queue: items[tailStart..] are live
  let tail: Array<Item> = []
  let tailStart = 0
  let tailUsed = 0
  const toMiddle = (item: Item) => {
    const last = middle[middle.length - 1]
    if (isGap(item)) {
      if (last !== undefined && isGap(last)) mergeGap(last, item)
      else middle.push(item)
      return
    }
    const keep = item.folded === undefined && isMustKeep(item.kind)
    if (keep && middleUsed + item.bytes <= middleBytes && middleCount < middleLines) {
      middle.push(item)
      middleUsed += item.bytes
      middleCount++
      return
    }
    if (last !== undefined && isGap(last)) addLine(last, item)
    else {
      const gap = emptyGap(item.raw)
      addLine(gap, item)
      middle.push(gap)
      middleCount++
    }
  }
  return {
    push(item) {
      const cost = costOf(item)
      if (!headFull) {
        if (headUsed + cost <= headBytes && head.length < headLines) {
          head.push(item)
          headUsed += cost
          return
        }
        headFull = true
      }
      tail.push(item)
      tailUsed += cost
      while (tail.length - tailStart > 1 && (tailUsed > tailBytes || tail.length - tailStart > tailLines)) {
        const out = tail[tailStart]!
        tailStart++
        tailUsed -= costOf(out)
        toMiddle(out)
      }
      if (tailStart > 1024 && tailStart * 2 > tail.length) {
        tail = tail.slice(tailStart)
        tailStart = 0
      }
    },
    items: () => [...head, ...middle, ...tail.slice(tailStart)]
  }
}
