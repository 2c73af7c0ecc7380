/**
 * One line of an ignore file (`.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude`), read
 * the way ripgrep reads it (its `ignore` crate, globs parsed as its `globset` does with literal
 * separators), so that Glob's walk and Grep's ripgrep keep and drop the same files; matched in
 * linear time by `automaton.ts`.
 *
 * - `#` starts a comment; trailing whitespace is dropped unless the line ends with `\ `;
 * - `!` re-includes; `\!` and `\#` are literal; a trailing `/` matches directories only;
 * - a pattern without a `/` (other than a trailing one) matches a name at any depth, one with a
 *   `/` (a leading one is dropped) matches the path from the ignore file's directory;
 * - `*` and `?` never match `/`; `**` as `**\/x`, `x/**` (everything inside, not x itself) and
 *   `x/**\/y`, elsewhere two `*`; `[…]` classes (`[!…]`, `[^…]`; an unclosed `[` is literal);
 *   `{a,b}` alternatives; `\` escapes. A line that does not parse is skipped, as ripgrep skips it.
 *
 * Names are matched by code point (ripgrep matches bytes: `?` against `é` differs).
 */
import * as Ast from "./ast.js"
import { type Automaton, compile } from "./automaton.js"

/** A parsed ignore rule. */
export interface Rule {
  /** `!`: a match re-includes the path. */
  readonly whitelist: boolean
  /** A trailing `/`: only directories match. */
  readonly onlyDirectories: boolean
  readonly automaton: Automaton
}

/** How the rules of one ignore file judge a path: the last rule that matches decides. */
export type Verdict = "ignore" | "whitelist" | "none"

type Token =
  | { readonly k: "lit"; readonly cp: number }
  | { readonly k: "any" }
  | { readonly k: "zeroOrMore" }
  | { readonly k: "recursivePrefix" }
  | { readonly k: "recursiveSuffix" }
  | { readonly k: "recursiveZeroOrMore" }
  | { readonly k: "class"; readonly set: Ast.CharSet }
  | { readonly k: "alternates"; readonly branches: ReadonlyArray<ReadonlyArray<Token>> }

class Unparsable extends Error {}

/** globset's parser, with `literal_separator`, `backslash_escape` and `allow_unclosed_class`. */
const tokenize = (glob: string): Array<Token> => {
  const chars = Array.from(glob, (c) => c.codePointAt(0)!)
  let position = 0
  let previous: number | undefined
  let current: number | undefined
  let foundUnclosedClass = false
  const branches: Array<Array<Token>> = [[]]
  const alternates: Array<number> = []
  const bump = () => {
    previous = current
    current = chars[position++]
    return current
  }
  const peek = () => chars[position]
  const push = (token: Token) => branches[branches.length - 1]!.push(token)
  const SLASH = Ast.SLASH
  const parseStar = () => {
    const before = previous
    if (peek() !== 0x2a) return push({ k: "zeroOrMore" })
    bump()
    if (branches[branches.length - 1]!.length === 0) {
      if (peek() !== undefined && peek() !== SLASH) {
        push({ k: "zeroOrMore" })
        push({ k: "zeroOrMore" })
      } else {
        push({ k: "recursivePrefix" })
        bump()
      }
      return
    }
    if (before !== SLASH && (branches.length <= 1 || (before !== 0x2c && before !== 0x7b))) {
      push({ k: "zeroOrMore" })
      push({ k: "zeroOrMore" })
      return
    }
    let suffix: boolean
    const next = peek()
    if (next === undefined) {
      bump()
      suffix = true
    } else if ((next === 0x2c || next === 0x7d) && branches.length >= 2) suffix = true
    else if (next === SLASH) {
      bump()
      suffix = false
    } else {
      push({ k: "zeroOrMore" })
      push({ k: "zeroOrMore" })
      return
    }
    const popped = branches[branches.length - 1]!.pop()
    if (popped?.k === "recursivePrefix" || popped?.k === "recursiveSuffix") push(popped)
    else push({ k: suffix ? "recursiveSuffix" : "recursiveZeroOrMore" })
  }
  const parseClass = () => {
    const saved = { position, previous, current }
    const pairs: Array<[number, number]> = []
    const negated = peek() === 0x21 || peek() === 0x5e
    if (negated) bump()
    let first = true
    let inRange = false
    const extend = (to: number) => {
      const last = pairs[pairs.length - 1]!
      last[1] = to
      if (last[1] < last[0]) throw new Unparsable("invalid range")
    }
    for (;;) {
      const c = bump()
      if (c === undefined) {
        ;({ position, previous, current } = saved)
        foundUnclosedClass = true
        return push({ k: "lit", cp: 0x5b })
      }
      if (c === 0x5d && !first) break
      if (c === 0x5d) pairs.push([c, c])
      else if (c === 0x2d) {
        if (first) pairs.push([c, c])
        else if (inRange) {
          extend(c)
          inRange = false
        } else inRange = true
      } else {
        if (inRange) extend(c)
        else pairs.push([c, c])
        inRange = false
      }
      first = false
    }
    if (inRange) pairs.push([0x2d, 0x2d])
    push({ k: "class", set: { ranges: Ast.normalizeRanges(pairs), negated } })
  }
  for (let c = bump(); c !== undefined; c = bump()) {
    if (c === 0x3f) push({ k: "any" })
    else if (c === 0x2a) parseStar()
    else if (c === 0x5b && !foundUnclosedClass) parseClass()
    else if (c === 0x7b) {
      alternates.push(branches.length)
      branches.push([])
    } else if (c === 0x7d) {
      const start = alternates.pop()
      if (start === undefined) throw new Unparsable("unopened alternates")
      push({ k: "alternates", branches: branches.splice(start) })
    } else if (c === 0x2c) {
      if (alternates.length === 0) push({ k: "lit", cp: c })
      else branches.push([])
    } else if (c === 0x5c) {
      const escaped = bump()
      if (escaped === undefined) throw new Unparsable("dangling escape")
      push({ k: "lit", cp: escaped })
    } else push({ k: "lit", cp: c })
  }
  if (branches.length > 1) throw new Unparsable("unclosed alternates")
  return branches[0]!
}

const nodeOf = (tokens: ReadonlyArray<Token>): Ast.Node =>
  Ast.seq(
    tokens.flatMap((token): Array<Ast.Node> => {
      switch (token.k) {
        case "lit":
          return [Ast.literal(token.cp)]
        case "any":
          return [Ast.char(Ast.notSlash)]
        case "zeroOrMore":
          return [Ast.star]
        case "recursivePrefix":
          return [
            Ast.alt([Ast.optional(Ast.literal(Ast.SLASH)), Ast.seq([Ast.anyPath, Ast.literal(Ast.SLASH)])])
          ]
        case "recursiveSuffix":
          return [Ast.literal(Ast.SLASH), Ast.anyPath]
        case "recursiveZeroOrMore":
          return [
            Ast.alt([
              Ast.literal(Ast.SLASH),
              Ast.seq([Ast.literal(Ast.SLASH), Ast.anyPath, Ast.literal(Ast.SLASH)])
            ])
          ]
        case "class":
          return [Ast.char(token.set)]
        case "alternates": {
          // ripgrep drops empty alternatives, and the whole group when none is left
          const kept = token.branches.filter((branch) => branch.length > 0)
          return kept.length === 0 ? [] : [Ast.alt(kept.map(nodeOf))]
        }
      }
    })
  )

/**
 * How a line is matched. Most lines of real ignore files are a name (`node_modules`, `**\/dist`),
 * an extension (`*.log`) or a path without wildcards: those are looked up in hash maps, as
 * ripgrep's glob set does; only the others go through one automaton of them all.
 */
type Shape =
  | { readonly kind: "exact"; readonly text: string }
  | { readonly kind: "tail"; readonly text: string }
  | { readonly kind: "suffix"; readonly text: string }
  | { readonly kind: "pattern" }

interface Line {
  readonly whitelist: boolean
  readonly onlyDirectories: boolean
  /** Present for a line that is not literal text. */
  readonly tokens: ReadonlyArray<Token> | undefined
  readonly shape: Shape
}

/**
 * Wildcard lines compiled at most per ignore file (a decision): each is an automaton of its own
 * that every path walked is matched against (one table lookup per character once cached), so a
 * path costs at most this many passes; the further wildcard lines of a longer file are not
 * compiled (ripgrep, in its own process, compiles them all: only such files can make Glob and
 * Grep differ). Real ignore files hold a few dozen.
 */
const MAX_PATTERN_LINES = 256

const push = (map: Map<string, Array<number>>, key: string, index: number) => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [index])
  else list.push(index)
}

/**
 * One ignore file's rules: the literal ones looked up, the wildcard ones matched from the last
 * back (the last matching rule decides), so a file of thousands of lines costs a walk little more
 * than a file of a few. Undefined when the file holds no rule.
 */
export const compileFile = (
  text: string
): { readonly judge: (relative: string, isDirectory: boolean) => Verdict } | undefined => {
  const rules: Array<Line> = []
  for (const raw of text.split("\n")) {
    const rule = parseLine(raw)
    if (rule !== undefined) rules.push(rule)
  }
  if (rules.length === 0) return undefined
  const exact = new Map<string, Array<number>>()
  const tail = new Map<string, Array<number>>()
  // suffixes of a name, by their length
  const suffixes = new Map<number, Map<string, Array<number>>>()
  const patterns: Array<number> = []
  rules.forEach((rule, index) => {
    const shape = rule.shape
    if (shape.kind === "exact") push(exact, shape.text, index)
    else if (shape.kind === "tail") push(tail, shape.text, index)
    else if (shape.kind === "suffix") {
      let byText = suffixes.get(shape.text.length)
      if (byText === undefined) suffixes.set(shape.text.length, (byText = new Map()))
      push(byText, shape.text, index)
    } else if (patterns.length < MAX_PATTERN_LINES) patterns.push(index)
  })
  const automata = patterns.map((index) => compile(nodeOfLine(rules[index]!.tokens!)))
  return {
    judge: (relative, isDirectory) => {
      let best = -1
      const consider = (indexes: ReadonlyArray<number> | undefined) => {
        if (indexes === undefined) return
        for (let at = indexes.length - 1; at >= 0; at--) {
          const index = indexes[at]!
          if (index <= best) return
          if (!rules[index]!.onlyDirectories || isDirectory) {
            best = index
            return
          }
        }
      }
      consider(exact.get(relative))
      // the path's tails at segment boundaries: `a/b/c`, `b/c`, `c`
      for (let at = -1; ; at = relative.indexOf("/", at + 1)) {
        consider(tail.get(at === -1 ? relative : relative.slice(at + 1)))
        if (at !== -1 && relative.indexOf("/", at + 1) === -1) break
        if (at === -1 && !relative.includes("/")) break
      }
      const name = relative.slice(relative.lastIndexOf("/") + 1)
      for (const [length, byText] of suffixes)
        if (length <= name.length) consider(byText.get(name.slice(name.length - length)))
      // the last wildcard lines first: an earlier one cannot beat a later match
      for (let at = patterns.length - 1; at >= 0 && patterns[at]! > best; at--) {
        const rule = rules[patterns[at]!]!
        if (rule.onlyDirectories && !isDirectory) continue
        if (automata[at]!.matches(relative)) best = patterns[at]!
      }
      return best === -1 ? "none" : rules[best]!.whitelist ? "whitelist" : "ignore"
    }
  }
}

/** Parses one line of an ignore file; undefined for a blank line, a comment or a line ripgrep skips. */
export const parseRule = (raw: string): Rule | undefined => {
  const rule = parseLine(raw)
  if (rule === undefined) return undefined
  const shape = rule.shape
  const node =
    rule.tokens !== undefined
      ? nodeOfLine(rule.tokens)
      : shape.kind === "exact"
        ? Ast.text(shape.text)
        : shape.kind === "tail"
          ? nodeOfLine([{ k: "recursivePrefix" }, ...literalTokens(shape.text)])
          : nodeOfLine([
              { k: "recursivePrefix" },
              { k: "zeroOrMore" },
              ...literalTokens(shape.kind === "suffix" ? shape.text : "")
            ])
  return { whitelist: rule.whitelist, onlyDirectories: rule.onlyDirectories, automaton: compile(node) }
}

const literalTokens = (text: string): Array<Token> =>
  Array.from(text, (c) => ({ k: "lit", cp: c.codePointAt(0)! }))

const parseLine = (raw: string): Line | undefined => {
  if (raw.startsWith("#")) return undefined
  let line = raw.endsWith("\\ ") ? raw : raw.trimEnd()
  if (line === "") return undefined
  let whitelist = false
  let absolute = false
  if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1)
    absolute = line.startsWith("/")
  } else {
    if (line.startsWith("!")) {
      whitelist = true
      line = line.slice(1)
    }
    if (line.startsWith("/")) {
      line = line.slice(1)
      absolute = true
    }
  }
  let onlyDirectories = false
  if (line.endsWith("/")) {
    onlyDirectories = true
    line = line.slice(0, -1)
    if (line.endsWith("\\")) line = line.slice(0, -1)
  }
  let actual = line
  if (!absolute && !line.includes("/") && !(actual.startsWith("**/") || actual === "**"))
    actual = `**/${actual}`
  if (actual.endsWith("/**")) actual = `${actual}/*`
  // most lines hold no wildcard: a name, a path, an extension, read without the parser
  if (plain(actual))
    return { whitelist, onlyDirectories, tokens: undefined, shape: { kind: "exact", text: actual } }
  if (actual.startsWith("**/") && plain(actual.slice(3)))
    return { whitelist, onlyDirectories, tokens: undefined, shape: { kind: "tail", text: actual.slice(3) } }
  if (actual.startsWith("**/*") && !actual.slice(4).includes("/") && plain(actual.slice(4)))
    return { whitelist, onlyDirectories, tokens: undefined, shape: { kind: "suffix", text: actual.slice(4) } }
  let tokens: Array<Token>
  try {
    tokens = tokenize(actual)
  } catch (error) {
    if (error instanceof Unparsable) return undefined
    throw error
  }
  return { whitelist, onlyDirectories, tokens, shape: shapeOf(tokens) }
}

/** The characters globset gives a meaning (a line without them is literal text). */
const WILDCARDS = /[*?[\]{},\\]/

const plain = (text: string) => !WILDCARDS.test(text)

/** The automaton of a line's tokens. */
const nodeOfLine = (tokens: ReadonlyArray<Token>): Ast.Node =>
  tokens.length === 1 && tokens[0]!.k === "recursivePrefix" ? Ast.anyPath : nodeOf(tokens)

const literalText = (tokens: ReadonlyArray<Token>): string | undefined =>
  tokens.length > 0 && tokens.every((token) => token.k === "lit")
    ? String.fromCodePoint(...tokens.map((token) => (token as { readonly cp: number }).cp))
    : undefined

/** The shape of a line's glob: a literal path, a literal tail after `**\/`, a name's literal suffix, or a pattern. */
const shapeOf = (tokens: ReadonlyArray<Token>): Shape => {
  const whole = literalText(tokens)
  if (whole !== undefined) return { kind: "exact", text: whole }
  if (tokens[0]?.k === "recursivePrefix") {
    const rest = tokens.slice(1)
    const after = literalText(rest)
    if (after !== undefined) return { kind: "tail", text: after }
    const suffix = rest[0]?.k === "zeroOrMore" ? literalText(rest.slice(1)) : undefined
    if (suffix !== undefined && !suffix.includes("/")) return { kind: "suffix", text: suffix }
  }
  return { kind: "pattern" }
}
