/**
 * The Read-at-the-marker follow-up: the line window an agent reads of a saved copy, computed from
 * the visible text of a first result by one function for every policy. A marker that names the
 * lines it cut (or shown) gives the window of the lines missing; a marker that names a path but no
 * line gives no window, and the agent reads the copy from its start with the Read tool's default
 * limit; a result that names no place cannot make the follow-up at all.
 *
 * @since 0.1.0
 */
import type { Location, PeerPolicy, View } from "./Peer.js"
import { splitLines } from "./Text.js"

/**
 * The lines a Read asks for: a 1-based first line and, when the text names one, a line count.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadWindow {
  readonly offset: number
  readonly limit?: number
}

const NUMBER = "(\\d[\\d,]*)"
const num = (text: string | undefined): number => Number((text ?? "0").replace(/,/g, ""))

/**
 * The phrasings of a line window, tried in order on the line that names the place: what was kept
 * (the lines missing are the ones to read), what is shown, or an offset the text proposes.
 */
const PHRASES: ReadonlyArray<{
  readonly pattern: RegExp
  readonly window: (m: RegExpExecArray) => ReadWindow | undefined
}> = [
  {
    // `kept the first H and the last T of N lines`: the middle, lines H+1 … N−T
    pattern: new RegExp(`kept the first ${NUMBER} and the last ${NUMBER} of ${NUMBER} lines`),
    window: (m) => ({ offset: num(m[1]) + 1, limit: Math.max(num(m[3]) - num(m[1]) - num(m[2]), 1) })
  },
  {
    // `kept the first K of N lines`: the rest, from line K+1
    pattern: new RegExp(`kept the first ${NUMBER} of ${NUMBER} lines`),
    window: (m) => ({ offset: num(m[1]) + 1, limit: Math.max(num(m[2]) - num(m[1]), 1) })
  },
  {
    // `kept the last K of N lines`: the start, lines 1 … N−K
    pattern: new RegExp(`kept the last ${NUMBER} of ${NUMBER} lines`),
    window: (m) => ({ offset: 1, limit: Math.max(num(m[2]) - num(m[1]), 1) })
  },
  {
    // `showing lines A-B of N`: the lines before A, else the lines after B
    pattern: new RegExp(`[Ss]howing lines ${NUMBER}\\s*[-–]\\s*${NUMBER} of ${NUMBER}`),
    window: (m) =>
      num(m[1]) > 1
        ? { offset: 1, limit: num(m[1]) - 1 }
        : num(m[2]) < num(m[3])
          ? { offset: num(m[2]) + 1, limit: num(m[3]) - num(m[2]) }
          : undefined
  },
  {
    // `offset=N` (and `limit=L`) as a notice proposes it
    pattern: new RegExp(`offset=${NUMBER}(?:\\s+limit=${NUMBER})?`),
    window: (m) => ({ offset: num(m[1]), ...(m[2] === undefined ? {} : { limit: num(m[2]) }) })
  }
]

/**
 * The window the visible text names for the place at `path`: the first phrasing found on a line
 * of `text` that holds `path` (markers name their window and their file on one line); `{ offset:
 * 1 }` when the line names none. The needle, the case and the policy play no part.
 *
 * @since 0.1.0
 * @category constructors
 */
export const windowNamed = (text: string, path: string): ReadWindow => {
  for (const line of splitLines(text)) {
    if (!line.includes(path)) continue
    for (const phrase of PHRASES) {
      const match = phrase.pattern.exec(line)
      const window = match === null ? undefined : phrase.window(match)
      if (window !== undefined) return window
    }
  }
  return { offset: 1 }
}

/**
 * A host's Read of `location` at a window: its own Read (its limits, numbering and notices) over
 * the window's lines. The host's line numbers then count from the window's start rather than from
 * `offset`, which changes a few tokens and no outcome.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readAt = (peer: PeerPolicy, location: Location, window: ReadWindow): View => {
  const lines = splitLines(location.content)
  const from = Math.max(window.offset - 1, 0)
  const picked = lines.slice(from, window.limit === undefined ? undefined : from + window.limit)
  return peer.read.apply({ kind: "file", path: location.path, content: picked.join("\n") })
}
