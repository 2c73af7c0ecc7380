/**
 * Glob's one-shot list (no file index): the files below a directory that match a pattern, newest
 * first. ripgrep lists them (`rg --files`, confined by the kernel to the roots; the files are dated
 * here with `lstat` as the list streams in, and only the newest that can be shown are sorted)
 * when the pattern starts with `**` and Landlock is there; otherwise, or when ripgrep cannot run,
 * the guarded walk of `./walk.ts` does. Both list the same files (Glob's file set equals
 * `rg --files`, tested) and the pattern is matched here as the index path matches it (picomatch).
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Confinement from "../../Confinement.js"
import type * as Supervisor from "../../Supervisor.js"
import type * as Roots from "../../Roots.js"
import type { Workspace } from "../../Workspace.js"
import picomatch from "./picomatch.js"
import * as Order from "./order.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"
import * as Walk from "./walk.js"

/** Matching files in search order, and how many there are. */
export interface Ordered {
  readonly at: (index: number) => { readonly display: string } | undefined
  readonly total: number
}

/**
 * A file-name suffix ripgrep may filter by itself: as a `--type-add` glob it must hold none of the
 * characters that definition syntax gives a meaning (`:` and `,`).
 */
const TYPE_SAFE_SUFFIX = /^[A-Za-z0-9._-]+$/

/**
 * Whether ripgrep lists for `pattern`: only a pattern that searches the whole tree from its top
 * (`**` first: a walk of `src/` alone, or of one level for `*.md`, beats listing every file), and
 * only where ripgrep is confined (without Landlock the walk's descriptor checks are what keep a
 * swapped folder from leading outside).
 */
const listedByRipgrep = (pattern: string): Effect.Effect<boolean, never, Supervisor.Supervisor> =>
  pattern === "**" || pattern.startsWith("**/")
    ? Effect.map(Confinement.support, (support) => support.kind === "landlock")
    : Effect.succeed(false)

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

const byRipgrep = (
  target: Roots.Resolved,
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
    const matcher = picomatch(pattern, { dot: true })
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
      if (!matcher(relative)) return
      // dated as it arrives, while ripgrep walks on; a file that vanished since is dropped
      const stats = fs.lstatSync(target.realPath + path.sep + relative, { throwIfNoEntry: false })
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
        ...Rg.excludeGitFlags,
        "--",
        "."
      ],
      { cwd: target.realPath, onData: (chunk) => decoder.push(chunk) }
    )
    decoder.end()
    if (exit.signal !== null || (exit.code !== 0 && exit.code !== 1 && exit.code !== 2)) {
      // a list cut short is not the directory's list
      return yield* new ToolError.ToolSpawnFailed({
        command: rg,
        reason: exit.signal !== null ? `it was ended by ${exit.signal}` : `exit ${exit.code}`
      })
    }
    const ordered = newestFirst()
    return { at: (index: number) => ordered[index], total }
  }).pipe(Confinement.withinRoots)

const byWalk = (
  target: Roots.Resolved,
  pattern: string,
  prefix: string,
  guard: Roots.WalkGuard,
  invalid: (reason: string) => ToolError.ToolPatternInvalid
): Effect.Effect<Ordered, ToolError.ToolPatternInvalid> =>
  Effect.map(
    Effect.tryPromise({
      try: (signal) => Walk.walk(target.realPath, pattern, prefix, signal, guard),
      catch: (cause) => invalid(cause instanceof Error ? cause.message : String(cause))
    }),
    (found) => {
      found.sort(Order.newestFirst)
      return { at: (index) => found[index], total: found.length }
    }
  )

/** The files below `target` matching `pattern`, newest first. */
export const list = (
  target: Roots.Resolved,
  pattern: string,
  prefix: string,
  /** How many of the newest are needed at most (the rest is only counted). */
  keep: number,
  guard: Roots.WalkGuard,
  invalid: (reason: string) => ToolError.ToolPatternInvalid
): Effect.Effect<
  Ordered,
  ToolError.ToolPatternInvalid,
  Workspace | Scratch.Scratch | Supervisor.Supervisor
> =>
  Effect.flatMap(listedByRipgrep(pattern), (listed) =>
    listed
      ? byRipgrep(target, pattern, prefix, keep).pipe(
          // ripgrep missing or refused to start: the walk answers the same
          Effect.catchAll(() => byWalk(target, pattern, prefix, guard, invalid))
        )
      : byWalk(target, pattern, prefix, guard, invalid)
  )
