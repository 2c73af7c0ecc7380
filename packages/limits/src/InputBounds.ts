/**
 * Bounds on the work a single tool input can cause, checked before the input is decoded or used:
 * nesting depth, byte length of paths and globs, and the number of patterns a glob's braces expand
 * to. The limits are `Budgets` fields whose defaults no real agent meets; an input over one is
 * refused with a `ToolInvalidInput` naming the field and the limit. Also the one way error text
 * quotes a caller's value: a short prefix, so no message grows with its input.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type { BudgetsValue } from "./Budgets.js"
import { ToolInvalidInput } from "./ToolError.js"
import * as Quote from "./internal/quote.js"

/**
 * The most UTF-8 bytes of a caller's value an error message quotes.
 *
 * @since 0.1.0
 * @category models
 */
export const quoteMaxBytes = Quote.quoteMaxBytes

/**
 * A prefix of `value` of at most `maxBytes` UTF-8 bytes (never splitting a code point), with `…`
 * and the number of characters left out when it was cut.
 *
 * @since 0.1.0
 * @category constructors
 */
export const quote = Quote.quote

/**
 * The UTF-8 byte length of `value`, counting no further than `cap + 1` (so a 100MB string costs
 * no more than a short one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const utf8LengthUpTo = (value: string, cap: number): number => {
  if (value.length > cap) return cap + 1
  let bytes = 0
  for (let at = 0; at < value.length && bytes <= cap; at++) {
    const unit = value.charCodeAt(at)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && (value.charCodeAt(at + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      at++
    } else bytes += 3
  }
  return bytes
}

/**
 * Whether `value` nests arrays and objects deeper than `maxDepth` (a flat object is depth 1).
 * Iterative, so any depth is measured without recursion; stops at the first too-deep value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const exceedsDepth = (value: unknown, maxDepth: number): boolean => {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  const seen = new Set<object>()
  while (stack.length > 0) {
    const next = stack.pop()!
    if (typeof next.value !== "object" || next.value === null) continue
    const depth = next.depth + 1
    if (depth > maxDepth) return true
    // a cycle (possible through the Promise API) is as unbounded as infinite depth
    if (seen.has(next.value)) return true
    seen.add(next.value)
    const children = Array.isArray(next.value) ? next.value : Object.values(next.value)
    for (const child of children) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth })
    }
  }
  return false
}

const RANGE = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$|^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/

/** How many values a brace range body (`1..10`, `a..z`, `0..100..5`) expands to, or undefined. */
const rangeSize = (body: string): number | undefined => {
  const match = RANGE.exec(body)
  if (match === null) return undefined
  const from = match[1] !== undefined ? Number(match[1]) : match[4]!.charCodeAt(0)
  const to = match[2] !== undefined ? Number(match[2]) : match[5]!.charCodeAt(0)
  const step = Math.abs(Number(match[3] ?? match[6] ?? 1)) || 1
  return Math.floor(Math.abs(to - from) / step) + 1
}

/**
 * How many patterns the braces of a glob expand to (`{a,b}/{c,d}` -> 4, `{1..10}` -> 10),
 * counting no further than `cap + 1`. One pass over the pattern; escaped braces (`\{`) are
 * literal, as is a brace group with neither a comma nor a range.
 *
 * @since 0.1.0
 * @category constructors
 */
export const braceExpansions = (pattern: string, cap: number): number => {
  const limit = cap + 1
  const times = (a: number, b: number) => Math.min(limit, a * b)
  // each open group: the expansions of its finished alternatives, of the current one, its start
  const groups: Array<{ sum: number; current: number; commas: number; start: number }> = []
  let top = 1
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at]
    if (char === "\\") {
      at++
    } else if (char === "{") {
      groups.push({ sum: 0, current: 1, commas: 0, start: at + 1 })
    } else if (char === "," && groups.length > 0) {
      const group = groups[groups.length - 1]!
      group.sum = Math.min(limit, group.sum + group.current)
      group.current = 1
      group.commas++
    } else if (char === "}" && groups.length > 0) {
      const group = groups.pop()!
      const size =
        group.commas > 0
          ? Math.min(limit, group.sum + group.current)
          : (rangeSize(pattern.slice(group.start, at)) ?? group.current)
      if (groups.length > 0) {
        const outer = groups[groups.length - 1]!
        outer.current = times(outer.current, size)
      } else {
        top = times(top, size)
      }
    }
  }
  // unclosed groups are literal text; what their alternatives held still multiplies
  for (const group of groups) top = times(top, Math.max(group.current, group.sum))
  return top
}

/**
 * Refuses an input nested deeper than `inputMaxDepth`, before anything decodes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkDepth = (
  tool: string,
  input: unknown,
  budgets: Pick<BudgetsValue, "inputMaxDepth">
): Either.Either<void, ToolInvalidInput> =>
  exceedsDepth(input, budgets.inputMaxDepth)
    ? Either.left(
        new ToolInvalidInput({
          tool,
          field: "input",
          reason: `the input nests arrays or objects more than ${budgets.inputMaxDepth} levels deep (inputMaxDepth); tool inputs are flat objects`
        })
      )
    : Either.void

/**
 * Refuses a path argument longer than `inputMaxPathBytes`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkPath = (
  tool: string,
  field: string,
  value: string,
  budgets: Pick<BudgetsValue, "inputMaxPathBytes">
): Either.Either<string, ToolInvalidInput> =>
  utf8LengthUpTo(value, budgets.inputMaxPathBytes) > budgets.inputMaxPathBytes
    ? Either.left(
        new ToolInvalidInput({
          tool,
          field,
          reason: `the path is longer than ${budgets.inputMaxPathBytes} bytes (inputMaxPathBytes), longer than any path the system can open; it starts ${JSON.stringify(quote(value, 64))}`
        })
      )
    : Either.right(value)

/**
 * Refuses a glob longer than `globMaxPatternBytes` or expanding to more than
 * `globMaxBraceExpansions` patterns.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkGlob = (
  tool: string,
  field: string,
  value: string,
  budgets: Pick<BudgetsValue, "globMaxPatternBytes" | "globMaxBraceExpansions">
): Either.Either<string, ToolInvalidInput> => {
  if (utf8LengthUpTo(value, budgets.globMaxPatternBytes) > budgets.globMaxPatternBytes) {
    return Either.left(
      new ToolInvalidInput({
        tool,
        field,
        reason: `the glob is longer than ${budgets.globMaxPatternBytes} bytes (globMaxPatternBytes); it starts ${JSON.stringify(quote(value, 64))}: use a shorter glob`
      })
    )
  }
  if (braceExpansions(value, budgets.globMaxBraceExpansions) > budgets.globMaxBraceExpansions) {
    return Either.left(
      new ToolInvalidInput({
        tool,
        field,
        reason: `the glob's braces expand to more than ${budgets.globMaxBraceExpansions} patterns (globMaxBraceExpansions); use fewer alternatives or a wildcard`
      })
    )
  }
  return Either.right(value)
}
