// Cutting a text to a token budget with a head/tail share, through any estimator. Searches are
// exponential-then-binary from the kept end, so their cost follows the budget, not the text size.
import { Marker } from "@toolcap/limits"

/** What sits between the head and the tail of a cut text: the checkpoint marker on a line of its own. */
export const markerBlock = `\n${Marker.checkpointMarker}\n`

type Estimate = (text: string) => number

/** True when `index` falls between the two halves of a surrogate pair. */
const splitsPair = (text: string, index: number): boolean =>
  index > 0 &&
  index < text.length &&
  (text.charCodeAt(index) & 0xfc00) === 0xdc00 &&
  (text.charCodeAt(index - 1) & 0xfc00) === 0xd800

/** The first probe: generous enough that most texts resolve with one or two estimates. */
const firstSpan = (target: number): number => Math.max(64, target * 8)

/** The largest code point boundary `end` with `estimate(text.slice(0, end)) <= target`. */
export const longestPrefix = (estimate: Estimate, text: string, target: number): number => {
  if (target <= 0) return 0
  let lo = 0
  let hi = text.length
  for (let span = firstSpan(target); ; span *= 2) {
    if (span >= text.length) {
      if (estimate(text) <= target) return text.length
      break
    }
    const probe = splitsPair(text, span) ? span - 1 : span
    if (estimate(text.slice(0, probe)) <= target) lo = probe
    else {
      hi = probe
      break
    }
  }
  while (hi - lo > 1) {
    let mid = (lo + hi) >>> 1
    if (splitsPair(text, mid)) {
      mid = mid - 1 === lo ? mid + 1 : mid - 1
      if (mid <= lo || mid >= hi) break
    }
    if (estimate(text.slice(0, mid)) <= target) lo = mid
    else hi = mid
  }
  return lo
}

/** The smallest code point boundary `start >= minStart` with `estimate(text.slice(start)) <= target`. */
export const shortestSuffixStart = (
  estimate: Estimate,
  text: string,
  target: number,
  minStart: number
): number => {
  const length = text.length
  if (target <= 0) return length
  let lo = minStart
  let hi = length
  for (let span = firstSpan(target); ; span *= 2) {
    if (length - span <= minStart) {
      if (estimate(text.slice(minStart)) <= target) return minStart
      break
    }
    const start = length - span
    const probe = splitsPair(text, start) ? start + 1 : start
    if (estimate(text.slice(probe)) <= target) hi = probe
    else {
      lo = probe
      break
    }
  }
  while (hi - lo > 1) {
    let mid = (lo + hi) >>> 1
    if (splitsPair(text, mid)) {
      mid = mid + 1 === hi ? mid - 1 : mid + 1
      if (mid <= lo || mid >= hi) break
    }
    if (estimate(text.slice(mid)) <= target) hi = mid
    else lo = mid
  }
  return hi
}

/** A text cut to a budget: head, marker block, tail. */
export interface CutText {
  readonly text: string
  /** UTF-16 units of the original kept at the start and at the end. */
  readonly headLength: number
  readonly tailLength: number
  readonly headTokens: number
  readonly tailTokens: number
  readonly markerTokens: number
  /** The whole cut text, re-estimated. */
  readonly tokens: number
}

/**
 * Cuts `text` (which does not fit) to `budget` tokens: the budget less the marker's own tokens is
 * shared `headShare` / rest between head and tail. The result is re-estimated as a whole and cut
 * again, smaller, while it exceeds the budget. `undefined` when fewer than `minContent` tokens of
 * content would remain beside the marker.
 */
export const cutToBudget = (
  estimate: Estimate,
  text: string,
  budget: number,
  headShare: number,
  minContent: number
): CutText | undefined => {
  const markerTokens = estimate(markerBlock)
  let content = budget - markerTokens
  // each retry lowers the content budget by at least one token, and the re-estimate rarely misses
  for (let attempt = 0; attempt < 64 && content >= minContent; attempt++) {
    const headTarget = Math.floor(content * headShare)
    const tailTarget = content - headTarget
    const headEnd = longestPrefix(estimate, text, headTarget)
    const tailStart = shortestSuffixStart(estimate, text, tailTarget, headEnd)
    const head = text.slice(0, headEnd)
    const tail = text.slice(tailStart)
    const cut = head + markerBlock + tail
    const tokens = estimate(cut)
    if (tokens <= budget) {
      return {
        text: cut,
        headLength: headEnd,
        tailLength: text.length - tailStart,
        headTokens: estimate(head),
        tailTokens: estimate(tail),
        markerTokens,
        tokens
      }
    }
    content -= Math.max(1, tokens - budget)
  }
  return undefined
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/** The text with every lone surrogate replaced by U+FFFD (`undefined` when it had none). */
export const repairSurrogates = (text: string): string | undefined => {
  loneSurrogate.lastIndex = 0
  if (!loneSurrogate.test(text)) return undefined
  return text.replace(loneSurrogate, "\ufffd")
}
