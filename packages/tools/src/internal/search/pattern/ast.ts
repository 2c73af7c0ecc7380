/**
 * The shape every path pattern compiles to, whatever its syntax (Glob's globs, Grep's `glob`,
 * the lines of ignore files): sets of code points, sequences, alternatives and bounded
 * repetition. Nothing here can express a back-reference or a look-around, so every pattern is a
 * regular language and `automaton.ts` matches it in time linear in the path.
 */

/** Code points as sorted, disjoint, inclusive `[from, to]` pairs; `negated` takes the complement. */
export interface CharSet {
  readonly ranges: ReadonlyArray<number>
  readonly negated: boolean
}

export type Node =
  | { readonly kind: "Char"; readonly set: CharSet }
  | { readonly kind: "Seq"; readonly items: ReadonlyArray<Node> }
  | { readonly kind: "Alt"; readonly options: ReadonlyArray<Node> }
  | { readonly kind: "Repeat"; readonly node: Node; readonly min: 0 | 1; readonly many: boolean }
  /** A whole path segment (non-empty, no `/`) that `inner` does not match: Glob's `!(…)`. */
  | { readonly kind: "NotSegment"; readonly inner: Node }

export const SLASH = 0x2f

export const char = (set: CharSet): Node => ({ kind: "Char", set })

export const literal = (codePoint: number): Node => char({ ranges: [codePoint, codePoint], negated: false })

export const text = (value: string): Node => seq(Array.from(value, (c) => literal(c.codePointAt(0)!)))

/** One code point other than `/` (`?`, and each step of `*`). */
export const notSlash: CharSet = { ranges: [SLASH, SLASH], negated: true }

/** Any code point, `/` included (the steps of `**`). */
export const anyChar: CharSet = { ranges: [], negated: true }

export const seq = (items: ReadonlyArray<Node>): Node =>
  items.length === 1 ? items[0]! : { kind: "Seq", items }

export const alt = (options: ReadonlyArray<Node>): Node =>
  options.length === 1 ? options[0]! : { kind: "Alt", options }

export const optional = (node: Node): Node => ({ kind: "Repeat", node, min: 0, many: false })

export const zeroOrMore = (node: Node): Node => ({ kind: "Repeat", node, min: 0, many: true })

export const oneOrMore = (node: Node): Node => ({ kind: "Repeat", node, min: 1, many: true })

/** `*`: any run of code points within one segment. */
export const star: Node = zeroOrMore(char(notSlash))

/** Any run of code points, `/` included. */
export const anyPath: Node = zeroOrMore(char(anyChar))

/** Sorts and merges `[from, to]` pairs. */
export const normalizeRanges = (pairs: ReadonlyArray<readonly [number, number]>): ReadonlyArray<number> => {
  const sorted = pairs.filter(([from, to]) => from <= to)
  sorted.sort((a, b) => a[0] - b[0])
  const merged: Array<number> = []
  for (const [from, to] of sorted) {
    const last = merged.length - 1
    if (last > 0 && from <= merged[last]! + 1) merged[last] = Math.max(merged[last]!, to)
    else merged.push(from, to)
  }
  return merged
}

export const contains = (set: CharSet, codePoint: number): boolean => {
  let inside = false
  for (let at = 0; at < set.ranges.length; at += 2) {
    if (codePoint < set.ranges[at]!) break
    if (codePoint <= set.ranges[at + 1]!) {
      inside = true
      break
    }
  }
  return inside !== set.negated
}
