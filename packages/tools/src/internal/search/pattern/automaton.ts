/**
 * Matching in time linear in the path, whatever the pattern: a pattern (`ast.ts`) becomes a
 * Thompson automaton whose state sets are followed one code point at a time, never by
 * backtracking, so `*a*a*…*a*b` against 200 `a`s costs 200 steps of a small set instead of an
 * exponential search. The sets met are cached as the states of a lazily built deterministic
 * automaton (each transition computed once, then a table lookup), with the cache bounded: past
 * it, the cache is dropped and rebuilt as the path goes on, so memory stays bounded too.
 */
import { type CharSet, contains, type Node, SLASH } from "./ast.js"

const CHAR = 0
const SPLIT = 1
const MATCH = 2
const NOT_SEGMENT = 3

/**
 * Cached transitions at most (entries of the deterministic automaton's tables, 4 bytes each):
 * bounds the cache to 16 MB for the largest pattern; a pattern's states times its character
 * classes rarely comes near.
 */
const MAX_CACHED_TRANSITIONS = 4 * 1024 * 1024
/** Deterministic states kept at least before the cache is dropped, whatever the alphabet. */
const MIN_CACHED_STATES = 64
/**
 * Automaton states held by the cached deterministic states at most (4 bytes each): a set of many
 * patterns (an ignore file of thousands of lines) has large state sets, bounded by this.
 */
const MAX_CACHED_SET_ENTRIES = 4 * 1024 * 1024

export interface Automaton {
  /** Whether `path` as a whole is matched. */
  readonly matches: (path: string) => boolean
  /**
   * Incremental matching, where the pattern allows it (no `!(…)`): the state after a prefix, so a
   * walk can carry it down a directory tree and prune where nothing can match any more.
   */
  readonly incremental:
    | {
        readonly start: () => State
        readonly advance: (state: State, text: string) => State
        /** Nothing that starts with what was consumed can match. */
        readonly dead: (state: State) => boolean
        readonly accepts: (state: State) => boolean
      }
    | undefined
  /** Steps taken over automaton states so far (a measure of work, for the linearity tests). */
  readonly work: () => number
  /** States of the nondeterministic automaton (its size). */
  readonly size: number
}

/** Where an incremental match stands: the automaton's states after the text consumed so far. */
export type State = ReadonlyArray<number>

interface Nfa {
  readonly kind: Array<number>
  readonly set: Array<CharSet | undefined>
  readonly out1: Array<number>
  readonly out2: Array<number>
  readonly inner: Array<Automaton | undefined>
}

const add = (
  nfa: Nfa,
  kind: number,
  out1: number,
  out2: number,
  set?: CharSet,
  inner?: Automaton
): number => {
  nfa.kind.push(kind)
  nfa.set.push(set)
  nfa.out1.push(out1)
  nfa.out2.push(out2)
  nfa.inner.push(inner)
  return nfa.kind.length - 1
}

/** Builds `node` so that it continues at `next`; answers its first state. */
const build = (nfa: Nfa, node: Node, next: number): number => {
  switch (node.kind) {
    case "Char":
      return add(nfa, CHAR, next, -1, node.set)
    case "Seq": {
      let at = next
      for (let index = node.items.length - 1; index >= 0; index--) at = build(nfa, node.items[index]!, at)
      return at
    }
    case "Alt": {
      if (node.options.length === 0) return add(nfa, CHAR, -1, -1, { ranges: [], negated: false })
      let at = build(nfa, node.options[node.options.length - 1]!, next)
      for (let index = node.options.length - 2; index >= 0; index--)
        at = add(nfa, SPLIT, build(nfa, node.options[index]!, next), at)
      return at
    }
    case "Repeat": {
      if (!node.many) return add(nfa, SPLIT, build(nfa, node.node, next), next)
      const loop = add(nfa, SPLIT, -1, next)
      const body = build(nfa, node.node, loop)
      nfa.out1[loop] = body
      return node.min === 0 ? loop : body
    }
    case "NotSegment":
      return add(nfa, NOT_SEGMENT, next, -1, undefined, compile(node.inner))
  }
}

/** The classes of code points no set of the automaton tells apart, by their first code point. */
const alphabetOf = (sets: ReadonlyArray<CharSet | undefined>) => {
  const points = new Set<number>()
  for (const set of sets) {
    if (set === undefined) continue
    for (let at = 0; at < set.ranges.length; at += 2) {
      points.add(set.ranges[at]!)
      points.add(set.ranges[at + 1]! + 1)
    }
  }
  const ordered = [...points]
  ordered.sort((a, b) => a - b)
  const bounds = Int32Array.from(ordered)
  const classOf = (codePoint: number): number => {
    let low = 0
    let high = bounds.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (bounds[mid]! <= codePoint) low = mid + 1
      else high = mid
    }
    return low
  }
  const ascii = new Int32Array(128)
  for (let code = 0; code < 128; code++) ascii[code] = classOf(code)
  return {
    count: bounds.length + 1,
    representative: (klass: number) => (klass === 0 ? 0 : bounds[klass - 1]!),
    classOf: (codePoint: number) => (codePoint < 128 ? ascii[codePoint]! : classOf(codePoint))
  }
}

/**
 * Compiles a pattern into its automaton. Compiling is linear in the pattern's size; matching a
 * path is linear in the path's length times the automaton's size at worst, and one table lookup
 * per code point once the transitions met are cached.
 */
export const compile = (node: Node): Automaton => compileSet([node])

/** Patterns in one automaton, each ending in a match state tagged with its index. */
const compileSet = (nodes: ReadonlyArray<Node>): Automaton => {
  const nfa: Nfa = { kind: [], set: [], out1: [], out2: [], inner: [] }
  // each pattern ends in a match state of its own: its index among the patterns
  const tagOf = new Map<number, number>()
  const starts: Array<number> = []
  nodes.forEach((node, index) => {
    const accept = add(nfa, MATCH, -1, -1)
    tagOf.set(accept, index)
    starts.push(build(nfa, node, accept))
  })
  const size = nfa.kind.length
  const alphabet = alphabetOf(nfa.set)
  const hasNotSegment = nfa.kind.includes(NOT_SEGMENT)
  let work = 0

  // the epsilon closure of a list of states: the character, match and segment states reachable
  const stamp = new Int32Array(size)
  let generation = 0
  const stack: Array<number> = []
  const closure = (from: ReadonlyArray<number>): Array<number> => {
    generation++
    const found: Array<number> = []
    for (const state of from) if (state >= 0) stack.push(state)
    while (stack.length > 0) {
      const state = stack.pop()!
      work++
      if (stamp[state] === generation) continue
      stamp[state] = generation
      if (nfa.kind[state] === SPLIT) {
        if (nfa.out2[state]! >= 0) stack.push(nfa.out2[state]!)
        if (nfa.out1[state]! >= 0) stack.push(nfa.out1[state]!)
      } else found.push(state)
    }
    return found
  }
  /** The states `codePoint` leads to from `states`, before closure. */
  const stepFrom = (states: ReadonlyArray<number>, codePoint: number): Array<number> => {
    const next: Array<number> = []
    for (const state of states) {
      work++
      if (nfa.kind[state] === CHAR && nfa.out1[state]! >= 0 && contains(nfa.set[state]!, codePoint))
        next.push(nfa.out1[state]!)
    }
    return next
  }

  // the deterministic automaton, built lazily: state 0 is dead (no state left)
  const maxStates = Math.max(MIN_CACHED_STATES, Math.floor(MAX_CACHED_TRANSITIONS / alphabet.count))
  let sets: Array<ReadonlyArray<number>> = []
  let accepting: Array<ReadonlyArray<number>> = []
  let tables: Array<Int32Array | undefined> = []
  let known = new Map<string, number>()
  let held = 0
  const intern = (states: Array<number>): number => {
    states.sort((a, b) => a - b)
    const key = states.join(",")
    const found = known.get(key)
    if (found !== undefined) return found
    if (sets.length >= maxStates || held + states.length > MAX_CACHED_SET_ENTRIES) reset()
    const id = sets.length
    sets.push(states)
    held += states.length
    const tags: Array<number> = []
    for (const state of states) if (nfa.kind[state] === MATCH) tags.push(tagOf.get(state)!)
    tags.sort((a, b) => a - b)
    accepting.push(tags)
    tables.push(undefined)
    known.set(key, id)
    return id
  }
  const reset = () => {
    sets = []
    accepting = []
    tables = []
    known = new Map()
    held = 0
    intern([])
  }
  reset()
  let initial = intern(closure(starts))
  const transition = (state: number, codePoint: number): number => {
    const klass = alphabet.classOf(codePoint)
    let table = tables[state]
    if (table === undefined) {
      table = new Int32Array(alphabet.count).fill(-1)
      tables[state] = table
    }
    const cached = table[klass]!
    work++
    if (cached >= 0) return cached
    const before = sets.length
    const target = intern(closure(stepFrom(sets[state]!, alphabet.representative(klass))))
    // a reset while interning renumbered every state: the source's table went with it
    if (sets.length < before || tables[state] !== table) {
      initial = intern(closure(starts))
      return target
    }
    table[klass] = target
    return target
  }
  const advance = (state: number, text: string): number => {
    let current = state
    for (let at = 0; at < text.length && current !== 0; at++) {
      const codePoint = text.codePointAt(at)!
      if (codePoint > 0xffff) at++
      current = transition(current, codePoint)
    }
    return current
  }

  /**
   * With `!(…)` segments: the sets are followed directly, and a segment state, met where a
   * segment starts, checks that segment once and lets its continuation arrive where it ends.
   * Positions are UTF-16 offsets (`/` is one unit, so segment ends are the same in both).
   */
  const simulate = (path: string): boolean => {
    const arriving = new Map<number, Array<number>>()
    let current = closure(starts)
    for (let at = 0; ;) {
      for (const state of current) {
        if (nfa.kind[state] !== NOT_SEGMENT || (at > 0 && path.charCodeAt(at - 1) !== SLASH)) continue
        const slash = path.indexOf("/", at)
        const end = slash === -1 ? path.length : slash
        work += end - at
        if (end === at || nfa.inner[state]!.matches(path.slice(at, end))) continue
        const list = arriving.get(end) ?? []
        list.push(nfa.out1[state]!)
        arriving.set(end, list)
      }
      if (at >= path.length) return current.some((state) => nfa.kind[state] === MATCH)
      const codePoint = path.codePointAt(at)!
      at += codePoint > 0xffff ? 2 : 1
      current = closure([...stepFrom(current, codePoint), ...(arriving.get(at) ?? [])])
      arriving.delete(at)
      if (current.length === 0 && arriving.size === 0) return false
    }
  }

  return {
    matches: hasNotSegment ? simulate : (path) => accepting[advance(initial, path)]!.length > 0,
    incremental: hasNotSegment
      ? undefined
      : {
          start: () => sets[initial]!,
          advance: (state, text) => sets[advance(intern([...state]), text)]!,
          dead: (state) => state.length === 0,
          accepts: (state) => state.some((nfaState) => nfa.kind[nfaState] === MATCH)
        },
    work: () => work,
    size
  }
}
