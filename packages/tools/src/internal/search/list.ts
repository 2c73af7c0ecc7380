/**
 * Grep's files in search order: newest first, ties by path, from the index's order (without an
 * index, the one-shot search walks the directory itself, `./grep.ts`), filtered by `glob`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import * as Binary from "../../Binary.js"
import * as Roots from "../../Roots.js"
import * as Order from "./order.js"
import * as Pattern from "./pattern/glob.js"
import * as Rg from "./ripgrep.js"

/** A file to search. */
export interface Candidate {
  /** Path as ripgrep is given it (relative to `cwd`). */
  readonly relative: string
  readonly absolute: string
  readonly display: string
  readonly mtimeMs: number
}

/**
 * Files in search order, newest first, dated lazily: the candidate at an index is known once the
 * files before it are.
 */
export interface Candidates {
  /** The candidate at `index`, or `undefined` past the last one. */
  readonly at: (index: number) => Candidate | undefined
  /** How many there are at most, when known up front (used to size the runs). */
  readonly total?: number | undefined
  /**
   * Whether they are every file ripgrep's own walk of the directory would search (an index's list
   * without a glob filter), so the rest of a search may be left to that walk.
   */
  readonly wholeDirectory?: boolean | undefined
}

export const fromArray = (items: ReadonlyArray<Candidate>): Candidates => ({
  at: (index) => items[index],
  total: items.length
})

/** A `--type` name ripgrep does not know, reported as Grep's invalid input. */
export const unknownType = (exit: Rg.Exit): Effect.Effect<void, ToolError.ToolInvalidInput> =>
  exit.code !== 0 && exit.code !== 1 && /unrecognized file type/.test(exit.stderr)
    ? Effect.fail(
        new ToolError.ToolInvalidInput({
          tool: "Grep",
          field: "type",
          reason: `${Rg.describeError(exit.stderr)}; see ripgrep --type-list for the names`
        })
      )
    : Effect.void

/**
 * ripgrep's glob semantics as a filter: no `/` matches the file name at any depth, `!` excludes.
 * The glob is Glob's syntax, matched in linear time; throws `PatternError` when it cannot compile.
 */
export const globFilter = (glob: string): ((relative: string) => boolean) => {
  const negated = glob.startsWith("!")
  const body = (negated ? glob.slice(1) : glob).replace(/^\/+/, "").replace(/\/+$/, "")
  const anchored = body.includes("/")
  const matcher = Pattern.compileGlob(body)
  const matches = (relative: string) =>
    matcher.matches(anchored ? relative : relative.slice(relative.lastIndexOf("/") + 1))
  return negated ? (relative) => !matches(relative) : matches
}

/**
 * The index's files (already in search order, narrowed by a `glob` beforehand) as candidates,
 * binary names dropped. The filter runs as the search reaches each file; the count is known up front only for
 * a tree small enough to be searched in one run.
 */
export const fromIndex = (
  files: ReadonlyArray<{ readonly relative: string; readonly mtimeMs: number }>,
  target: Roots.Resolved,
  /** Whether `files` are the whole index (not narrowed by a `glob`). */
  wholeDirectory: boolean,
  countUpTo: number = 2048
): Candidates => {
  const prefix = Roots.displayPrefix(target)
  const kept: Array<Candidate> = []
  let cursor = 0
  const extendTo = (index: number) => {
    while (kept.length <= index && cursor < files.length) {
      const file = files[cursor++]!
      if (Option.isSome(Binary.byName(file.relative))) continue
      kept.push({
        relative: file.relative,
        absolute: target.realPath + path.sep + file.relative,
        display: prefix + file.relative,
        mtimeMs: file.mtimeMs
      })
    }
  }
  if (files.length <= countUpTo) extendTo(files.length)
  return {
    at: (index) => {
      extendTo(index)
      return kept[index]
    },
    total: files.length <= countUpTo ? kept.length : files.length,
    wholeDirectory
  }
}

/**
 * The files `keep` admits, in order, a turn of the event loop every 8192: a glob matched against
 * a large index takes a while, and the host serves other requests meanwhile.
 */
export const keptInTurns = <F extends { readonly relative: string }>(
  files: ReadonlyArray<F>,
  keep: (relative: string) => boolean
): Effect.Effect<ReadonlyArray<F>> =>
  Effect.gen(function* () {
    const kept: Array<F> = []
    for (let at = 0; at < files.length; at++) {
      if (at > 0 && at % Order.FILES_PER_TURN === 0) yield* Order.eventLoopTurn
      if (keep(files[at]!.relative)) kept.push(files[at]!)
    }
    return kept
  })
