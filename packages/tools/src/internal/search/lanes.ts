/**
 * One run of Grep over a list of files (an index's, newest first), kept per file.
 *
 * Ordered: the list is dealt out to a few ripgrep processes ("lanes") in turn — file i to lane
 * i mod n — each on one thread, so each prints its files in the order given. Files are complete
 * up to the smallest position a running lane is printing (every lane has passed the files before
 * it); as soon as the complete files hold one entry more than can be shown, every lane is
 * stopped, as `rg | head` would end. One lane searches in the exact order of a single process;
 * more lanes search a large list on more cores while still stopping early, which a multi-threaded
 * run cannot (it prints files in no known order, so nothing is complete until it ends). ripgrep
 * examines every path it is given before it searches the first (two `stat` calls each, about
 * 11 µs per path here), so a run is sized to what it is expected to search.
 *
 * Walk: ripgrep walks the directory itself (multi-threaded, the same files as the index, tested)
 * and only the list's files are kept: the cheapest way to search every file left, for a pattern
 * that the newest files did not match at all (likely few or no matches anywhere).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import type { Budgets, ToolError } from "@toolcap/limits"
import type * as Supervisor from "../../Supervisor.js"
import type * as FirstMatch from "./firstMatch.js"
import * as Hits from "./hits.js"
import type { Candidate } from "./list.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"

/**
 * Files per lane at least: below it, another process start (a fork of the host, milliseconds)
 * costs more than its share of the search saves.
 */
const FILES_PER_LANE = 1024

/**
 * Lanes at most: ripgrep's own threads, one per core, would not start more than the cores; past
 * four, process starts grow faster than a capped search gains.
 */
const MAX_LANES = 4

/**
 * Entry bytes a search may hold before its order is known, in multiples of the result budget.
 * Past it, the files too old to be shown are dropped (and their later output ignored), so memory
 * stays bounded however dense the matches are.
 */
const RETENTION_BUDGETS = 8

/** How many lanes search `files` files. */
export const laneCount = (files: number): number =>
  Math.max(1, Math.min(MAX_LANES, os.availableParallelism(), Math.floor(files / FILES_PER_LANE)))

export interface LaneSearch {
  readonly rg: string
  readonly cwd: string
  readonly mode: Hits.Mode
  readonly flags: ReadonlyArray<string>
  readonly stdin: string | undefined
  readonly pattern: string
  readonly budgets: Budgets.BudgetsValue
  readonly finder: FirstMatch.Finder
}

/** One run's files. */
export interface Run {
  /** In search order; for a walk, the way to list them once they are needed. */
  readonly files: ReadonlyArray<Candidate> | (() => ReadonlyArray<Candidate>)
  /** ripgrep walks the directory itself and only `files` are kept. */
  readonly walk?: boolean | undefined
  /** Lanes to deal the files out to (default: `laneCount` of their number). */
  readonly lanes?: number | undefined
}

/**
 * Searches a run's files in order, ripgrep printing what `mode` returns, until the files complete
 * in order hold more than `entriesLeft` entries or `bytesLeft` bytes (one entry past what can be
 * shown: the result is then known to be capped). Answers the hits per file (`relative`).
 */
export const searchOrdered = (
  c: LaneSearch,
  run: Run,
  entriesLeft: number,
  bytesLeft: number
): Effect.Effect<
  Map<string, Hits.FileHits>,
  ToolError.ToolPatternInvalid | ToolError.ToolSpawnFailed | ToolError.ToolMemoryLimit,
  Supervisor.Supervisor
> =>
  Effect.gen(function* () {
    const list = run.files
    const walk = run.walk === true
    // with the result full, a run only has to show whether anything else matches
    const mode: Hits.Mode = entriesLeft === 0 ? "filesWithMatches" : c.mode
    const maxLineChars = c.budgets.maxLineChars
    const columns = Hits.maxColumns(maxLineChars)
    // a walk's list is made (and indexed by path) only when its first record arrives: a pattern
    // that matches nothing costs the walk alone
    let listed: ReadonlyArray<Candidate> | undefined = typeof list === "function" ? undefined : list
    let positions: Map<string, number> | undefined
    const batchOf = () => (listed ??= (list as () => ReadonlyArray<Candidate>)())
    const positionOf = (relative: string): number | undefined => {
      if (positions === undefined) {
        positions = new Map()
        batchOf().forEach((candidate, index) => positions!.set(candidate.relative, index))
      }
      return positions.get(relative)
    }
    const lanes = walk ? 1 : (run.lanes ?? laneCount(batchOf().length))
    const hits = new Map<string, Hits.FileHits>()

    // the position each lane prints now (-1: nothing yet), and the lanes that ended
    const printing = Array.from({ length: lanes }, () => -1)
    const ended = Array.from({ length: lanes }, () => false)
    let complete = 0
    let completeEntries = 0
    let completeBytes = 0
    const stop = yield* Deferred.make<void>()
    let stopped = false
    const stopAll = () => {
      stopped = true
      Deferred.unsafeDone(stop, Effect.void)
    }
    /** Counts the files that became complete; stops every lane once they overfill the result. */
    const advance = () => {
      if (stopped) return
      // a walk prints in no known order: its files are complete when it ends
      if (walk && !ended[0]) return
      if (walk && hits.size === 0) return
      const batch = batchOf()
      let until = batch.length
      for (let lane = 0; lane < lanes; lane++) if (!ended[lane]) until = Math.min(until, printing[lane]!)
      for (; complete < until; complete++) {
        const candidate = batch[complete]!
        const file = hits.get(candidate.relative)
        if (file === undefined || (file.matchedLines === 0 && file.lines.length === 0)) continue
        // binary files, which the result skips, are not counted
        if (Hits.isBinary(candidate, c.budgets)) {
          hits.delete(candidate.relative)
          continue
        }
        file.text = true
        completeEntries += mode === "content" ? file.lines.length : 1
        completeBytes += file.bytes
        if (completeEntries > entriesLeft || completeBytes > bytesLeft) {
          complete++
          stopAll()
          return
        }
      }
    }

    // files at or after this position cannot be shown any more; what is held is bounded
    const retentionLimit = c.budgets.searchMaxBytes * RETENTION_BUDGETS
    let retained = 0
    let cutoff = Number.POSITIVE_INFINITY
    const hitsOf = (relative: string): Hits.FileHits | undefined => {
      let found = hits.get(relative)
      if (found === undefined) {
        if ((positionOf(relative) ?? cutoff) >= cutoff) return undefined
        found = { lines: [], bytes: 0, matchedLines: 0 }
        hits.set(relative, found)
      }
      return found
    }
    /** Drops the files later than the first ones (in order) that already overfill the result. */
    const prune = () => {
      let entries = 0
      let bytes = 0
      const batch = batchOf()
      for (let at = 0; at < Math.min(cutoff, batch.length); at++) {
        const file = hits.get(batch[at]!.relative)
        if (file === undefined) continue
        entries += file.lines.length
        bytes += file.bytes
        if (entries > entriesLeft || bytes > bytesLeft) {
          cutoff = at + 1
          break
        }
      }
      retained = 0
      for (const [relative, file] of hits) {
        if (positionOf(relative)! >= cutoff) hits.delete(relative)
        else retained += file.bytes
      }
    }
    const onRecord = (lane: number) => (record: Records.SearchRecord) => {
      if (stopped) return
      const relative = walk && record.path.startsWith("./") ? record.path.slice(2) : record.path
      if (!walk) {
        const position = positionOf(relative) ?? -1
        if (position !== printing[lane]) {
          printing[lane] = position
          advance()
          if (stopped) return
        }
      }
      const file = hitsOf(relative)
      if (file === undefined) return
      if (mode !== "content") {
        file.matchedLines = record.count
        return
      }
      // only what could still be shown is kept (one entry more, to know the result is capped)
      if (file.lines.length > entriesLeft || file.bytes > bytesLeft) return
      retained += Hits.addLine(file, record, columns, maxLineChars, c.finder)
      if (retained > retentionLimit) prune()
    }

    const maxCount = mode === "content" ? [`--max-count=${entriesLeft + 1}`] : []
    const exits = yield* Effect.forEach(
      Array.from({ length: lanes }, (_, lane) => lane),
      (lane) => {
        const files: Array<string> = []
        if (!walk) for (let at = lane; at < batchOf().length; at += lanes) files.push(batchOf()[at]!.relative)
        const decoder = Records.decoder(mode, columns + 64, onRecord(lane), c.finder.columns)
        return Hits.runInto(
          c,
          [
            ...c.flags,
            // a walked file is searched as a named one is (not abandoned at a late NUL byte);
            // before the mode's flags: content mode's --text overrides it
            ...(walk ? ["--binary"] : []),
            ...Hits.modeFlags(mode, maxLineChars, c.finder.columns),
            ...maxCount,
            // on one thread ripgrep prints the files in the order given
            ...(walk
              ? [...Rg.excludeGitFlags, "--", "."]
              : ["--threads=1", "--", ...(files.length === 0 ? ["/dev/null"] : files)])
          ],
          c.cwd,
          decoder,
          (stopLane) => {
            if (stopped) stopLane()
          }
        ).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              ended[lane] = true
              advance()
            })
          ),
          // a lane that has not printed yet is stopped by interruption (ripgrep killed, awaited)
          Effect.raceFirst(Effect.as(Deferred.await(stop), undefined))
        )
      },
      { concurrency: "unbounded" }
    )
    for (let lane = 0; lane < lanes; lane++) {
      const exit = exits[lane]
      // the files this lane was given (a walk: every file of the run)
      if (exit !== undefined)
        yield* Hits.runFailure(
          c,
          exit,
          Effect.sync(() => batchOf().filter((_, at) => walk || at % lanes === lane))
        )
    }
    return hits
  })
