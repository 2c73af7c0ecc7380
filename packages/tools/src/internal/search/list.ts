/**
 * Grep's files in search order (spec §6.6): newest first, ties by path. Without a file index the
 * directory is listed by ripgrep (`rg --files --sortr=modified`, its ignore rules) and files are
 * dated only as far as a search reaches; with one, the index's order is used as it is.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import * as Binary from "../../Binary.js"
import * as Roots from "../../Roots.js"
import picomatch from "./picomatch.js"
import * as Order from "./order.js"
import * as Records from "./records.js"
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

/**
 * The directory's files as ripgrep lists them, newest first (`--sortr=modified`), filtered by glob,
 * binary names dropped. Only the files a search reaches are dated here (`lstat`), one group of
 * equal modification times at a time, each group ordered by path: ripgrep's order leaves equal
 * times in walk order, and a capped search of a large tree dates a few hundred files, not all.
 */
export const listFiles = (
  rg: string,
  target: Roots.Resolved,
  type: string | undefined,
  glob: string | undefined
) =>
  Effect.gen(function* () {
    const keep = glob === undefined ? undefined : globFilter(glob)
    const relatives: Array<string> = []
    // `--files --null` prints `PATH\0` per file, the records of files-with-matches
    const decoder = Records.decoder("filesWithMatches", 0, (record) => {
      const relative = record.path.startsWith("./") ? record.path.slice(2) : record.path
      if (keep !== undefined && !keep(relative)) return
      if (Option.isSome(Binary.byName(relative))) return
      relatives.push(relative)
    })
    const exit = yield* Rg.run(
      rg,
      [
        ...Rg.commonFlags,
        "--files",
        "--null",
        "--sortr=modified",
        ...(type !== undefined ? [`--type=${type}`] : []),
        ...Rg.excludeGitFlags,
        "--",
        "."
      ],
      { cwd: target.realPath, onData: (chunk) => decoder.push(chunk) }
    )
    decoder.end()
    yield* unknownType(exit)
    return datedInOrder(relatives, target)
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

const datedInOrder = (relatives: ReadonlyArray<string>, target: Roots.Resolved): Candidates => {
  const prefix = Roots.displayPrefix(target)
  const dated: Array<Candidate> = []
  let cursor = 0
  // the first file of the next group, already dated
  let held: Candidate | undefined
  const date = (relative: string): Candidate | undefined => {
    const absolute = target.realPath + path.sep + relative
    // a file that vanished since it was listed is dropped
    const stats = fs.lstatSync(absolute, { throwIfNoEntry: false })
    return stats === undefined || !stats.isFile()
      ? undefined
      : { relative, absolute, display: prefix + relative, mtimeMs: stats.mtimeMs }
  }
  const extendTo = (index: number) => {
    while (dated.length <= index) {
      let first = held
      held = undefined
      while (first === undefined && cursor < relatives.length) first = date(relatives[cursor++]!)
      if (first === undefined) return
      const group = [first]
      while (cursor < relatives.length) {
        const next = date(relatives[cursor++]!)
        if (next === undefined) continue
        if (next.mtimeMs !== first.mtimeMs) {
          held = next
          break
        }
        group.push(next)
      }
      group.sort(Order.newestFirst)
      for (const candidate of group) dated.push(candidate)
    }
  }
  return {
    at: (index) => {
      extendTo(index)
      return dated[index]
    },
    // an upper bound (a file may vanish before it is dated): enough to size the runs
    total: relatives.length
  }
}

/** ripgrep's glob semantics as a filter: no `/` matches the file name at any depth. */
export const globFilter = (glob: string): ((relative: string) => boolean) => {
  const negated = glob.startsWith("!")
  const body = (negated ? glob.slice(1) : glob).replace(/^\/+/, "").replace(/\/+$/, "")
  const anchored = body.includes("/")
  const matcher = picomatch(body, { dot: true })
  const matches = (relative: string) =>
    matcher(anchored ? relative : relative.slice(relative.lastIndexOf("/") + 1))
  return negated ? (relative) => !matches(relative) : matches
}

/**
 * The index's files (already in search order) as candidates: filtered by `glob`, binary names
 * dropped. The filter runs as the search reaches each file; the count is known up front only for
 * a tree small enough to be searched in one run.
 */
export const fromIndex = (
  files: ReadonlyArray<{ readonly relative: string; readonly mtimeMs: number }>,
  target: Roots.Resolved,
  glob: string | undefined,
  countUpTo: number = 2048
): Candidates => {
  const keep = glob === undefined ? undefined : globFilter(glob)
  const prefix = Roots.displayPrefix(target)
  const kept: Array<Candidate> = []
  let cursor = 0
  const extendTo = (index: number) => {
    while (kept.length <= index && cursor < files.length) {
      const file = files[cursor++]!
      if (keep !== undefined && !keep(file.relative)) continue
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
    wholeDirectory: glob === undefined
  }
}
