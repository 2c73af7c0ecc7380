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

/** Parses one line of an ignore file; undefined for a blank line, a comment or a line ripgrep skips. */
export const parseRule = (raw: string): Rule | undefined => {
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
  let tokens: Array<Token>
  try {
    tokens = tokenize(actual)
  } catch (error) {
    if (error instanceof Unparsable) return undefined
    throw error
  }
  const node = tokens.length === 1 && tokens[0]!.k === "recursivePrefix" ? Ast.anyPath : nodeOf(tokens)
  return { whitelist, onlyDirectories, automaton: compile(node) }
}
