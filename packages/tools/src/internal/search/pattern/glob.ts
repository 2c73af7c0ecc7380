/**
 * Glob's pattern syntax (Glob's `pattern`, Grep's `glob`), matched by `automaton.ts` in linear
 * time. The syntax is picomatch's with `dot: true` (what fast-glob used before), parsed here:
 *
 * - `*` any run within a segment, `?` one code point (never `/`), `[…]` a class (`[!…]` and
 *   `[^…]` negate, `[:alpha:]` and the other POSIX names, `\` escapes, never `/`);
 * - `**` as a whole segment: any number of segments (`a/**` is everything inside `a`, at least one
 *   segment; `**` inside a segment is `*`);
 * - `{a,b}` alternatives (nested, may hold `/`), `{1..9}`, `{a..e}`, `{01..10}`, with a step
 *   `{0..20..5}`; a group with neither a comma nor a range is literal text;
 * - `@(a|b)`, `?(…)`, `+(…)`, `*(…)`, and `!(…)` as a whole segment (a segment none of the
 *   alternatives match); a leading `!` negates the whole pattern; `\` escapes.
 *
 * Where picomatch has quirks, this is the plain reading: `[!abc]` negates, `(`, `|` and `)` are
 * literal outside an extglob, `***` is `*`, `?` is one code point (not one UTF-16 unit), `a/**`
 * never matches `a` itself (picomatch: only when `a` ends without a `*`). A leading `./` is dropped.
 */
import * as Ast from "./ast.js"
import { type Automaton, compile } from "./automaton.js"

type Item =
  | { readonly t: "lit"; readonly cp: number }
  | { readonly t: "slash"; readonly at: number }
  | { readonly t: "star" }
  | { readonly t: "globstar" }
  | { readonly t: "any" }
  | { readonly t: "class"; readonly set: Ast.CharSet }
  | { readonly t: "brace"; readonly options: ReadonlyArray<ReadonlyArray<Item>> }
  | { readonly t: "ext"; readonly kind: string; readonly options: ReadonlyArray<ReadonlyArray<Item>> }

/** A pattern Glob cannot compile; `reason` says why and what to write instead. */
export class PatternError extends Error {}

/** Nesting of braces and extglobs at most: deeper is refused, so parsing never recurses far. */
const MAX_NESTING = 64
/** Values one brace range may stand for. */
const MAX_RANGE_VALUES = 1024
/** Items all alternatives of brace groups holding `/` or `**` may add up to once written out. */
const MAX_EXPANDED_ITEMS = 64 * 1024

const POSIX_CLASSES: Record<string, ReadonlyArray<readonly [number, number]>> = {
  alnum: [[48, 57], [65, 90], [97, 122]],
  alpha: [[65, 90], [97, 122]],
  ascii: [[0, 127]],
  blank: [[9, 9], [32, 32]],
  cntrl: [[0, 31], [127, 127]],
  digit: [[48, 57]],
  graph: [[33, 126]],
  lower: [[97, 122]],
  print: [[32, 126]],
  punct: [[33, 47], [58, 64], [91, 96], [123, 126]],
  space: [[9, 13], [32, 32]],
  upper: [[65, 90]],
  word: [[48, 57], [65, 90], [95, 95], [97, 122]],
  xdigit: [[48, 57], [65, 70], [97, 102]]
} // prettier-ignore

const RANGE = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$|^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/

/** Where each `{` and `(` closes (escapes skipped), found in one pass: unmatched ones are literal. */
const closers = (source: string): Map<number, number> => {
  const close = new Map<number, number>()
  const braces: Array<number> = []
  const parens: Array<number> = []
  for (let at = 0; at < source.length; at++) {
    const c = source[at]
    if (c === "\\") at++
    else if (c === "{") braces.push(at)
    else if (c === "}" && braces.length > 0) close.set(braces.pop()!, at)
    else if (c === "(") parens.push(at)
    else if (c === ")" && parens.length > 0) close.set(parens.pop()!, at)
  }
  return close
}

const isExtglob = (source: string, at: number) => "@?+*!".includes(source[at]!) && source[at + 1] === "("

/** A class `[…]` starting at `at`, or undefined when it does not close (then `[` is literal). */
const parseClass = (source: string, at: number): { set: Ast.CharSet; end: number } | undefined => {
  let index = at + 1
  const negated = source[index] === "!" || source[index] === "^"
  if (negated) index++
  const pairs: Array<readonly [number, number]> = []
  let first = true
  while (index < source.length) {
    let cp = source.codePointAt(index)!
    if (cp === 0x5d && !first) {
      // classes never match `/`: a negated one excludes it, a plain one cannot hold it
      const ranges = negated ? Ast.normalizeRanges([...pairs, [Ast.SLASH, Ast.SLASH]]) : withoutSlash(pairs)
      return { set: { ranges, negated }, end: index + 1 }
    }
    first = false
    if (cp === 0x5b && source[index + 1] === ":") {
      const close = source.indexOf(":]", index + 2)
      const named = close === -1 ? undefined : POSIX_CLASSES[source.slice(index + 2, close)]
      if (named !== undefined) {
        pairs.push(...named)
        index = close + 2
        continue
      }
    }
    if (cp === 0x5c && index + 1 < source.length) {
      index++
      cp = source.codePointAt(index)!
    }
    index += cp > 0xffff ? 2 : 1
    if (source[index] === "-" && index + 1 < source.length && source[index + 1] !== "]") {
      let to = source.codePointAt(index + 1)!
      index += 1
      if (to === 0x5c && index + 1 < source.length) {
        index++
        to = source.codePointAt(index)!
      }
      index += to > 0xffff ? 2 : 1
      pairs.push([cp, to])
    } else pairs.push([cp, cp])
  }
  return undefined
}

const withoutSlash = (pairs: ReadonlyArray<readonly [number, number]>): ReadonlyArray<number> =>
  Ast.normalizeRanges(
    pairs.flatMap(([from, to]): Array<readonly [number, number]> =>
      from <= Ast.SLASH && Ast.SLASH <= to
        ? [
            [from, Ast.SLASH - 1],
            [Ast.SLASH + 1, to]
          ]
        : [[from, to]]
    )
  )

/** The values of a brace range body (`1..3`, `a..e`, `01..10`, `0..20..5`), or undefined. */
const rangeValues = (body: string): Array<string> | undefined => {
  const match = RANGE.exec(body)
  if (match === null) return undefined
  const numeric = match[1] !== undefined
  const from = numeric ? Number(match[1]) : match[4]!.charCodeAt(0)
  const to = numeric ? Number(match[2]) : match[5]!.charCodeAt(0)
  const step = Math.abs(Number(match[3] ?? match[6] ?? 1)) || 1
  if (Math.floor(Math.abs(to - from) / step) + 1 > MAX_RANGE_VALUES)
    throw new PatternError(
      `the brace range {${body}} stands for more than ${MAX_RANGE_VALUES} values; use a wildcard`
    )
  // zero-padded bounds pad every value to the longer bound's width (as bash does)
  const padded = numeric && /^-?0\d/.test(match[1]!) ? Math.max(match[1]!.length, match[2]!.length) : 0
  const values: Array<string> = []
  for (let value = from; from <= to ? value <= to : value >= to; value += from <= to ? step : -step) {
    if (!numeric) values.push(String.fromCharCode(value))
    else {
      const digits = String(Math.abs(value)).padStart(padded - (value < 0 ? 1 : 0), "0")
      values.push(value < 0 ? `-${digits}` : digits)
    }
  }
  return values
}

const literals = (value: string): Array<Item> =>
  Array.from(value, (c) => ({ t: "lit", cp: c.codePointAt(0)! }))

/** Parses `source[from, to)` into items; `separator` splits alternatives of a group. */
const parseItems = (
  source: string,
  from: number,
  to: number,
  close: Map<number, number>,
  depth: number
): Array<Item> => {
  if (depth > MAX_NESTING)
    throw new PatternError(`the pattern nests braces or extglobs more than ${MAX_NESTING} deep; flatten it`)
  const items: Array<Item> = []
  for (let at = from; at < to;) {
    const c = source[at]!
    if (c === "\\") {
      if (at + 1 < to) {
        const cp = source.codePointAt(at + 1)!
        items.push({ t: "lit", cp })
        at += cp > 0xffff ? 3 : 2
      } else {
        items.push({ t: "lit", cp: 0x5c })
        at++
      }
    } else if (isExtglob(source, at) && close.has(at + 1) && close.get(at + 1)! < to) {
      const end = close.get(at + 1)!
      const options = splitTopLevel(source, at + 2, end, "|", close).map(([a, b]) =>
        parseItems(source, a, b, close, depth + 1)
      )
      if (options.some((option) => option.some((item) => item.t === "slash")))
        throw new PatternError(`a / inside ${c}(…) is not supported; use braces such as {a,b/c}`)
      items.push({ t: "ext", kind: c, options })
      at = end + 1
    } else if (c === "*") {
      let end = at
      while (source[end] === "*" && end < to) end++
      items.push(end - at === 2 ? { t: "globstar" } : { t: "star" })
      at = end
    } else if (c === "?") {
      items.push({ t: "any" })
      at++
    } else if (c === "/") {
      items.push({ t: "slash", at })
      at++
    } else if (c === "[") {
      const parsed = parseClass(source, at)
      if (parsed !== undefined && parsed.end <= to) {
        items.push({ t: "class", set: parsed.set })
        at = parsed.end
      } else {
        items.push({ t: "lit", cp: 0x5b })
        at++
      }
    } else if (c === "{" && close.has(at) && close.get(at)! < to) {
      const end = close.get(at)!
      const parts = splitTopLevel(source, at + 1, end, ",", close)
      const range = parts.length === 1 ? rangeValues(source.slice(at + 1, end)) : undefined
      if (parts.length > 1)
        items.push({ t: "brace", options: parts.map(([a, b]) => parseItems(source, a, b, close, depth + 1)) })
      else if (range !== undefined) items.push({ t: "brace", options: range.map(literals) })
      else {
        items.push({ t: "lit", cp: 0x7b }, ...parseItems(source, at + 1, end, close, depth + 1), {
          t: "lit",
          cp: 0x7d
        })
      }
      at = end + 1
    } else {
      const cp = source.codePointAt(at)!
      items.push({ t: "lit", cp })
      at += cp > 0xffff ? 2 : 1
    }
  }
  return items
}

/** The `[from, to)` spans of `source[from, to)` between top-level `separator`s. */
const splitTopLevel = (
  source: string,
  from: number,
  to: number,
  separator: string,
  close: Map<number, number>
): Array<readonly [number, number]> => {
  const spans: Array<readonly [number, number]> = []
  let start = from
  for (let at = from; at < to; at++) {
    const c = source[at]
    if (c === "\\") at++
    else if (c === "[") {
      const parsed = parseClass(source, at)
      if (parsed !== undefined && parsed.end <= to) at = parsed.end - 1
    } else if ((c === "{" || c === "(") && close.has(at) && close.get(at)! < to) at = close.get(at)!
    else if (c === separator) {
      spans.push([start, at])
      start = at + 1
    }
  }
  spans.push([start, to])
  return spans
}

const spansPath = (items: ReadonlyArray<Item>): boolean =>
  items.some(
    (item) =>
      item.t === "slash" || item.t === "globstar" || (item.t === "brace" && item.options.some(spansPath))
  )

/** Writes out the brace groups that hold `/` or `**`: they decide where segments are. */
const expand = (items: ReadonlyArray<Item>, budget: { left: number }): Array<Array<Item>> => {
  let results: Array<Array<Item>> = [[]]
  for (const item of items) {
    const choices =
      item.t === "brace" && item.options.some(spansPath)
        ? item.options.flatMap((option) => expand(option, budget))
        : [[item]]
    const next: Array<Array<Item>> = []
    for (const prefix of results)
      for (const choice of choices) {
        budget.left -= prefix.length + choice.length
        if (budget.left < 0)
          throw new PatternError(
            "the pattern's braces write out to too much; use fewer alternatives or a wildcard"
          )
        next.push([...prefix, ...choice])
      }
    results = next
  }
  return results
}

const nodeOf = (items: ReadonlyArray<Item>): Ast.Node =>
  Ast.seq(
    items.map((item): Ast.Node => {
      switch (item.t) {
        case "lit":
          return Ast.literal(item.cp)
        case "star":
        case "globstar":
          return Ast.star
        case "any":
          return Ast.char(Ast.notSlash)
        case "class":
          return Ast.char(item.set)
        case "brace":
          return Ast.alt(item.options.map(nodeOf))
        case "slash":
          return Ast.literal(Ast.SLASH)
        case "ext": {
          const inner = Ast.alt(item.options.map(nodeOf))
          if (item.kind === "@") return inner
          if (item.kind === "?") return Ast.optional(inner)
          if (item.kind === "+") return Ast.oneOrMore(inner)
          if (item.kind === "*") return Ast.zeroOrMore(inner)
          throw new PatternError("!(…) is supported only as a whole path segment, e.g. src/!(test)/*.ts")
        }
      }
    })
  )

const splitSegments = (items: ReadonlyArray<Item>): Array<Array<Item>> => {
  const segments: Array<Array<Item>> = [[]]
  for (const item of items) {
    if (item.t === "slash") segments.push([])
    else segments[segments.length - 1]!.push(item)
  }
  return segments
}

/** One written-out alternative as a path pattern: segments joined by `/`, `**` segments spanning any. */
const pathNode = (items: ReadonlyArray<Item>): Ast.Node => {
  const segments = splitSegments(items).filter(
    (segment, index, all) => !(isGlobstar(segment) && index > 0 && isGlobstar(all[index - 1]!))
  )
  const out: Array<Ast.Node> = []
  let slashOwed = false
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1
    if (isGlobstar(segment)) {
      if (segments.length === 1) out.push(Ast.anyPath)
      else if (index === 0) out.push(Ast.optional(Ast.seq([Ast.anyPath, Ast.literal(Ast.SLASH)])))
      // `a/**` is what lies inside `a` (as in ignore files), not a file named `a`
      else if (last) out.push(Ast.literal(Ast.SLASH), Ast.oneOrMore(Ast.char(Ast.anyChar)))
      else out.push(Ast.literal(Ast.SLASH), Ast.optional(Ast.seq([Ast.anyPath, Ast.literal(Ast.SLASH)])))
      slashOwed = false
      return
    }
    if (slashOwed) out.push(Ast.literal(Ast.SLASH))
    const only = segment.length === 1 ? segment[0] : undefined
    out.push(
      only?.t === "ext" && only.kind === "!"
        ? { kind: "NotSegment", inner: Ast.alt(only.options.map(nodeOf)) }
        : nodeOf(segment)
    )
    slashOwed = true
  })
  return Ast.seq(out)
}

const isGlobstar = (segment: ReadonlyArray<Item>) => segment.length === 1 && segment[0]!.t === "globstar"

/** The leading folders made only of literal characters (never the last segment), and the text after them. */
const baseOf = (items: ReadonlyArray<Item>, source: string): { names: Array<string>; rest: string } => {
  const names: Array<string> = []
  let restAt = 0
  let segment: Array<number> = []
  let literal = true
  for (const item of items) {
    if (item.t !== "slash") {
      if (item.t === "lit") segment.push(item.cp)
      else literal = false
      continue
    }
    const name = String.fromCodePoint(...segment)
    if (!literal || name === "" || name === "." || name === "..") break
    names.push(name)
    restAt = item.at + 1
    segment = []
  }
  return { names, rest: source.slice(restAt) }
}

/**
 * The literal folders a pattern starts with and the pattern after them (`src/lib/*.ts` ->
 * `["src", "lib"]`, `*.ts`): the directory every match lies in. Throws `PatternError`.
 */
export const scanBase = (pattern: string): { readonly names: ReadonlyArray<string>; readonly rest: string } =>
  baseOf(parseItems(pattern, 0, pattern.length, closers(pattern), 0), pattern)

/** A compiled glob. */
export interface Glob {
  /** Whether `path` (relative, with `/`) matches. */
  readonly matches: (path: string) => boolean
  /** The automaton, for incremental matching down a walk (absent for negated patterns). */
  readonly automaton: Automaton | undefined
  readonly negated: boolean
  /**
   * The directories every match starts with, unescaped (`src/lib` for `src/lib/**\/*.ts`), or
   * empty; a negated pattern has none.
   */
  readonly base: ReadonlyArray<string>
}

/** Compiles a glob; throws `PatternError` with the reason when it cannot be compiled. */
export const compileGlob = (pattern: string): Glob => {
  let start = 0
  while (pattern.startsWith("./", start)) start += 2
  const negations = start
  while (pattern[start] === "!" && pattern[start + 1] !== "(") start++
  const negated = (start - negations) % 2 === 1
  const close = closers(pattern)
  const items = parseItems(pattern, start, pattern.length, close, 0)
  const alternatives = expand(items, { left: MAX_EXPANDED_ITEMS })
  const automaton = compile(Ast.alt(alternatives.map(pathNode)))
  const base = negated ? [] : baseOf(items, pattern).names
  return {
    matches: negated ? (path) => !automaton.matches(path) : automaton.matches,
    automaton: negated ? undefined : automaton,
    negated,
    base
  }
}
