/**
 * Glob's list without a file index: the files below a directory that match a pattern, newest
 * first. ripgrep lists them (`rg --files` on one thread, started in the pinned directory and
 * confined by the kernel to the roots; its walk kept to the pattern's fixed start folder by
 * exclusion globs); the files are matched here in linear time and dated with `lstat` as the list
 * streams in, and only the newest that can be shown are sorted. Where the kernel cannot confine
 * ripgrep (no Landlock), or ripgrep cannot start, the walk of `./walk.ts` lists them instead and
 * the result says so. Both list the same files (Glob's file set equals `rg --files`, tested).
 */
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Confinement from "../../Confinement.js"
import type * as Supervisor from "../../Supervisor.js"
import type * as Roots from "../../Roots.js"
import type { Workspace } from "../../Workspace.js"
import * as Order from "./order.js"
import type * as Pattern from "./pattern/glob.js"
import type { Pinned } from "./pin.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"
import * as Walk from "./walk.js"

/** Matching files in search order, how many there are, and how they were listed. */
export interface Ordered {
  readonly at: (index: number) => { readonly display: string } | undefined
  readonly total: number
  /** Why the list comes from the host's own walk rather than confined ripgrep; absent when confined. */
  readonly unconfined?: string | undefined
  /** The guards of the listing. */
  readonly guard: Confinement.Guard
}

/** The guards of a list made by the host's own walk (no engine, nothing to confine or bound). */
export const hostGuard = (reason: string): Confinement.Guard => ({
  launcher: false,
  landlockRead: false,
  landlockReadReason: reason
})

/**
 * A file-name suffix ripgrep may filter by itself: as a `--type-add` glob it must hold none of the
 * characters that definition syntax gives a meaning (`:` and `,`).
 */
const TYPE_SAFE_SUFFIX = /^[A-Za-z0-9._-]+$/

/**
 * ripgrep lists on one thread: its walk is cheaper than the files' dating here, which runs on
 * this thread while ripgrep walks on, and on a shared machine more walker threads cost more to
 * start than they save (measured on 1k to 100k files at load 5 on 2 cores: 17 vs 30 ms,
 * 23 vs 32 ms, 97 vs 148 ms).
 */
const LIST_THREADS = 1

/**
 * Files dated but not yet known to be outside the newest `keep`, in multiples of `keep`, before
 * the older ones are dropped: bounds memory and sorting to the part of the list that can be shown.
 */
const RETAINED_MULTIPLE = 4

/**
 * Exclusion globs at most that keep ripgrep's walk to the pattern's fixed start folder; a deeper
 * start keeps the levels that fit (the host's match drops the rest).
 */
const MAX_NARROWING_GLOBS = 256

/** Names the exclusion globs can spell (no whitespace, control character or backslash). */
const NARROWABLE_NAME = /^[^\s\p{Cc}\\]+$/u

/** A name as literal text in a ripgrep glob (`\` escapes any character outside a class). */
const escapeGlob = (text: string): string => text.replace(/[*?[\]{}!,]/g, (c) => `\\${c}`)

/**
 * ripgrep exclusion globs (`!`…, anchored at the searched directory) that leave out, at each level
 * of `base`, every name but the one on the way down: `src` becomes `!/[!s]*`, `!/s[!r]*`,
 * `!/sr[!c]*`, `!/src?*`, `!/s`, `!/sr`. Only exclusions: a file they keep is still judged by the
 * ignore files (an including glob would override them), and one they keep that is off the way
 * (ripgrep compares bytes) is dropped by the host's match.
 */
export const narrowingGlobs = (base: ReadonlyArray<string>): Array<string> => {
  const globs: Array<string> = []
  let anchor = "/"
  for (const name of base) {
    // ripgrep trims a glob's trailing whitespace and has no escape inside a class: such names stop here
    if (!NARROWABLE_NAME.test(name)) break
    const chars = Array.from(name)
    const level: Array<string> = []
    for (let at = 0; at < chars.length; at++) {
      const before = escapeGlob(chars.slice(0, at).join(""))
      // inside a class nothing is escaped; `]` first and `-` first are literal there
      level.push(`!${anchor}${before}[!${chars[at]}]*`)
      if (at > 0) level.push(`!${anchor}${before}`)
    }
    level.push(`!${anchor}${escapeGlob(name)}?*`)
    if (globs.length + level.length > MAX_NARROWING_GLOBS) break
    globs.push(...level)
    anchor += `${escapeGlob(name)}/`
  }
  return globs
}

const byRipgrep = (
  pinned: Pinned,
  realPath: string,
  glob: Pattern.Glob,
  pattern: string,
  prefix: string,
  keep: number
): Effect.Effect<Ordered, ToolError.ToolSpawnFailed, Workspace | Scratch.Scratch | Supervisor.Supervisor> =>
  Effect.gen(function* () {
    const rg = yield* Rg.binary
    const suffix = Walk.fileSuffixOf(pattern)
    // most files of a tree cannot match: ripgrep leaves them out of the list
    const selection =
      suffix !== undefined && TYPE_SAFE_SUFFIX.test(suffix)
        ? [`--type-add=globsuffix:*${suffix}`, "--type=globsuffix"]
        : []
    // one past what can be shown, so the list's end is where it was capped, as with a full list
    const retained = keep + 1
    let found: Array<Order.Dated> = []
    let total = 0
    const newestFirst = () => {
      found.sort(Order.newestFirst)
      return found
    }
    // `--files --null` prints `PATH\0` per file, the records of files-with-matches
    const decoder = Records.decoder("filesWithMatches", 0, (record) => {
      const relative = record.path.startsWith("./") ? record.path.slice(2) : record.path
      if (!glob.matches(relative)) return
      // dated as it arrives, while ripgrep walks on (by its real path: a lookup through the
      // pinned descriptor's /proc entry costs more than ripgrep's own walk, and only the date is
      // read; the names are ripgrep's); a file that vanished since is dropped
      const stats = Order.statsOf(realPath + path.sep + relative)
      if (stats === undefined || !stats.isFile()) return
      total++
      found.push({ display: prefix + relative, mtimeMs: stats.mtimeMs })
      if (found.length > retained * RETAINED_MULTIPLE) found = newestFirst().slice(0, retained)
    })
    const exit = yield* Rg.run(
      rg,
      [
        ...Rg.commonFlags,
        "--files",
        "--null",
        `--threads=${LIST_THREADS}`,
        ...selection,
        ...narrowingGlobs(glob.base).flatMap((narrowing) => ["--glob", narrowing]),
        ...Rg.excludeGitFlags,
        "--",
        "."
      ],
      { cwd: pinned.shared, onData: (chunk) => decoder.push(chunk) }
    )
    decoder.end()
    // exit 2 with a message is an error of the run itself (file errors are silenced)
    if (
      exit.signal !== null ||
      (exit.code !== 0 && exit.code !== 1 && exit.code !== 2) ||
      (exit.code === 2 && exit.stderr.trim() !== "")
    ) {
      // a list cut short is not the directory's list
      return yield* new ToolError.ToolSpawnFailed({
        command: rg,
        reason:
          exit.signal !== null
            ? `it was ended by ${exit.signal}`
            : `exit ${exit.code}${exit.stderr.trim() === "" ? "" : `: ${Rg.describeError(exit.stderr)}`}`
      })
    }
    const ordered = newestFirst()
    return { at: (index: number) => ordered[index], total, guard: yield* Confinement.currentGuard }
  }).pipe(Confinement.withinRoots)

const byWalk = (
  pinned: Pinned,
  glob: Pattern.Glob,
  pattern: string,
  prefix: string,
  guard: Roots.WalkGuard,
  unconfined: string
): Effect.Effect<Ordered> =>
  Effect.map(
    Effect.promise((signal) =>
      Walk.walk(pinned.local, glob, prefix, signal, guard, Walk.fileSuffixOf(pattern))
    ),
    (found) => {
      found.sort(Order.newestFirst)
      return {
        at: (index) => found[index],
        total: found.length,
        unconfined,
        guard: hostGuard(`listed by the host's own walk: ${unconfined}`)
      }
    }
  )

/** The files below the pinned directory matching `glob` (`pattern` is its text), newest first. */
export const list = (
  pinned: Pinned,
  /** The directory's real path. */
  realPath: string,
  glob: Pattern.Glob,
  pattern: string,
  prefix: string,
  /** How many of the newest are needed at most (the rest is only counted). */
  keep: number,
  guard: Roots.WalkGuard
): Effect.Effect<Ordered, never, Workspace | Scratch.Scratch | Supervisor.Supervisor> =>
  Effect.flatMap(Confinement.support, (support) =>
    support.kind === "landlock"
      ? byRipgrep(pinned, realPath, glob, pattern, prefix, keep).pipe(
          // ripgrep missing or refused to start: the walk answers the same
          Effect.catchAll((error) =>
            byWalk(
              pinned,
              glob,
              pattern,
              prefix,
              guard,
              `ripgrep could not list the directory (${error.reason})`
            )
          )
        )
      : byWalk(pinned, glob, pattern, prefix, guard, `ripgrep cannot be confined here (${support.reason})`)
  )
