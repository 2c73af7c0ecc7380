/**
 * Grep's search: the ordered candidates (an index's) go to ripgrep in runs, newest first, until
 * one entry past the cap has been seen; each run searches in order (`./lanes.ts`) and prints only
 * what the mode returns. Without candidates, one ripgrep run walks the directory newest first
 * (`collectWalk`). The first run also validates the pattern: ripgrep refuses a bad one before
 * searching, with its reason on stderr.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import type { Budgets, ToolError, Truncation } from "@toolcap/limits"
import * as Binary from "../../Binary.js"
import type * as Supervisor from "../../Supervisor.js"
import * as Notice from "../notice.js"
import * as FirstMatch from "./firstMatch.js"
import * as Hits from "./hits.js"
import * as Lanes from "./lanes.js"
import type * as Memory from "./memory.js"
import { type Candidate, type Candidates, unknownType } from "./list.js"
import * as Order from "./order.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"

export type Mode = Records.Mode

/**
 * Files of the first run, newest first: a common pattern answers from the newest files at once,
 * in one process (ripgrep examines every path it is given before it searches, about 11 µs each:
 * 256 cost a common pattern about 3 ms), and their yield sizes the next run. In the files and
 * count modes an entry is a whole file, and about half the files of a tree hit a common pattern:
 * the first run there takes at least this many files per entry wanted.
 */
const FIRST_BATCH_FILES = 256
const FIRST_BATCH_FILES_PER_ENTRY = 2
/**
 * Candidates known to be this few are searched in one run: one process over a couple of thousand
 * files costs less than a second process start (about 10 ms from a Node host), and one run is
 * also the pattern's validation.
 */
export const ONE_RUN_FILES = 2048
/**
 * Entry bytes of one modification time's files held before older ones are dropped, in multiples
 * of the result budget (the one-shot walk): memory stays bounded however many files share a time.
 */
const GROUP_RETENTION_BUDGETS = 8
/**
 * Runs after the first are sized from the entries per file found so far, without spare: a run
 * stops as soon as the result is capped, but ripgrep examines every path it is given before it
 * searches, so an oversized run costs that much, about what one more process start costs.
 */
const MIN_BATCH_FILES = 256
const MAX_BATCH_FILES = 65_536
/**
 * Path bytes per ripgrep process, well inside Linux's 2 MiB argument space (shared with the
 * environment); a run deals its files out to its lanes, each within this.
 */
const MAX_LANE_ARGUMENT_BYTES = 1024 * 1024

export interface CollectInput {
  readonly rg: string
  readonly cwd: string
  readonly mode: Mode
  readonly candidates: Candidates
  readonly flags: ReadonlyArray<string>
  readonly stdin: string | undefined
  readonly pattern: string
  readonly headLimit: number
  readonly budgets: Budgets.BudgetsValue
  readonly contextClamped: boolean
  /** Reads a range of a file inside the roots (a window of a long line around its match). */
  readonly readRange: Hits.ReadRange
  /** Places the first match of a clipped line (content runs print no columns unless it says so). */
  readonly finder: FirstMatch.Finder
}

export interface GrepEntry {
  readonly path: string
  readonly line: number
  readonly text: string
  readonly column?: number
  readonly context?: true
}

export interface Collected {
  readonly mode: Mode
  readonly matches: Array<GrepEntry>
  readonly files: Array<string>
  readonly counts: Array<{ path: string; count: number }>
  readonly matchCount: number
  readonly matchFiles: number
  readonly truncated: boolean
  readonly notice?: string
  readonly truncation?: Truncation.Truncation
}

/** The next files for one run: at most `size`, within the argument space of its lanes. */
const takeBatch = (candidates: Candidates, from: number, size: number): Array<Candidate> => {
  const batch: Array<Candidate> = []
  let argumentBytes = 0
  const argumentSpace = MAX_LANE_ARGUMENT_BYTES * Lanes.laneCount(Number.MAX_SAFE_INTEGER)
  for (let at = from; batch.length < size; at++) {
    const candidate = candidates.at(at)
    if (candidate === undefined) break
    argumentBytes += Buffer.byteLength(candidate.relative) + 1
    if (batch.length > 0 && argumentBytes > argumentSpace) break
    batch.push(candidate)
  }
  return batch
}

/**
 * The result being assembled: files are offered in search order, each admitted whole or in part
 * while the cap and the budget allow; `leftOver` once one entry more than fits was seen.
 */
const makeResult = (c: CollectInput) => {
  const { budgets, mode } = c
  const gate = Order.budget(c.headLimit, budgets.searchMaxLines, budgets.searchMaxBytes)
  const matches: Array<GrepEntry> = []
  const files: Array<string> = []
  const counts: Array<{ path: string; count: number }> = []
  let matchCount = 0
  const matchFiles = new Set<string>()
  let clippedLines = 0
  let firstClip: Notice.ClipContinuation | undefined
  let firstWindow: Notice.MatchWindow | undefined
  let windows = 0
  let leftOver = false
  // lines offered as shown by their clip while their first match was not placed yet (a walk's)
  const provisional: Array<FirstMatch.Pending> = []
  /** Offers a file's hits; false once the result is capped (nothing later can be admitted). */
  const offer = (candidate: Candidate, found: Hits.FileHits): boolean => {
    if (leftOver) return false
    if (found.matchedLines === 0 && found.lines.length === 0) return true
    // the files Read refuses are skipped silently (rules S8)
    if (found.text !== true && Hits.isBinary(candidate, budgets)) return true
    if (gate.full()) {
      leftOver = true
      return false
    }
    if (mode === "filesWithMatches") {
      if (!gate.admit(Order.renderedBytes(candidate.display))) leftOver = true
      else files.push(candidate.display)
    } else if (mode === "count") {
      const entry = { path: candidate.display, count: found.matchedLines }
      if (!gate.admit(Order.renderedBytes(`${entry.path}:${entry.count}`))) leftOver = true
      else counts.push(entry)
    } else {
      let ordinal = 0
      for (const hit of found.lines) {
        if (!hit.context) ordinal++
        if (hit.unplaced !== undefined) provisional.push(pendingOf(candidate, hit, hit.unplaced, ordinal))
        // a long line whose first match lies past its clip shows a window around that match
        const window =
          hit.hidden === undefined
            ? undefined
            : Hits.windowAround(c.readRange, candidate.absolute, hit.hidden, budgets.maxLineChars)
        const text = window?.text ?? hit.text
        const size = window === undefined ? hit.size : Buffer.byteLength(`:${hit.line}:${text}`) + 1
        if (!gate.admit(Order.renderedBytes(candidate.display) + size)) {
          leftOver = true
          break
        }
        matches.push({
          path: candidate.display,
          line: hit.line,
          text,
          ...(window !== undefined ? { column: window.column } : {}),
          ...(hit.context ? { context: true as const } : {})
        })
        if (window !== undefined) {
          windows++
          firstWindow ??= { path: candidate.display, line: hit.line, column: window.column }
        }
        if (hit.clipped) {
          clippedLines++
          firstClip ??= {
            shellPath: candidate.display,
            line: hit.line,
            byte: window?.endByte ?? hit.clipByte
          }
        }
        if (!hit.context) {
          matchCount++
          matchFiles.add(candidate.display)
        }
      }
    }
    return !leftOver
  }
  const finish = (): Collected => {
    const told = Notice.grep({
      contextClamped: c.contextClamped,
      truncated: leftOver,
      stop: gate.stop(),
      headLimit: c.headLimit,
      keptEntries: gate.entries(),
      keptBytes: gate.bytes(),
      maxLines: budgets.searchMaxLines,
      maxBytes: budgets.searchMaxBytes,
      maxLineChars: budgets.maxLineChars,
      clippedLines,
      firstClip,
      windows,
      firstWindow
    })
    return { mode, matches, files, counts, matchCount, matchFiles: matchFiles.size, ...told }
  }
  return { gate, offer, finish, leftOver: () => leftOver, provisional: () => provisional }
}

const pendingOf = (
  candidate: Candidate,
  hit: Hits.Line,
  at: FirstMatch.Unplaced,
  ordinal: number
): FirstMatch.Pending => ({
  relative: candidate.relative,
  file: { display: candidate.display, absolute: candidate.absolute },
  line: hit.line,
  ordinal,
  at
})

/** What placing first matches needs of a search. */
const locateInput = (c: Omit<CollectInput, "candidates">): FirstMatch.LocateInput => ({
  rg: c.rg,
  cwd: c.cwd,
  stdin: c.stdin,
  pattern: c.pattern,
  flags: c.flags,
  finder: c.finder,
  columnFlags: Hits.modeFlags("content", c.budgets.maxLineChars, true),
  maxTextBytes: Hits.maxColumns(c.budgets.maxLineChars) + 64,
  runFailure: (exit, files) => Hits.runFailure(c, exit, files)
})

/**
 * Places the first match of the unplaced lines of `files` (a run's, in search order): each
 * becomes a line with a window to show (its match lies past the clip) or a plain clipped one.
 */
const place = (
  c: CollectInput,
  files: ReadonlyArray<{ readonly candidate: Candidate; readonly hits: Hits.FileHits }>
) =>
  Effect.gen(function* () {
    const pending: Array<FirstMatch.Pending> = []
    const where: Array<{ readonly lines: Array<Hits.Line>; readonly index: number }> = []
    for (const { candidate, hits } of files) {
      let ordinal = 0
      hits.lines.forEach((hit, index) => {
        if (!hit.context) ordinal++
        if (hit.unplaced === undefined) return
        pending.push(pendingOf(candidate, hit, hit.unplaced, ordinal))
        where.push({ lines: hits.lines, index })
      })
    }
    if (pending.length === 0) return
    const placed = yield* FirstMatch.locate(locateInput(c), pending)
    placed.forEach((at, k) => {
      const { index, lines } = where[k]!
      const { unplaced, ...line } = lines[index]!
      lines[index] =
        at === undefined || unplaced === undefined
          ? line
          : { ...line, hidden: { lineByte: unplaced.lineByte, matchByte: unplaced.lineByte + at } }
    })
  })

/** Every candidate from `from` on, in order. */
const allFrom = (candidates: Candidates, from: number): Array<Candidate> => {
  const all: Array<Candidate> = []
  for (let at = from; candidates.at(at) !== undefined; at++) all.push(candidates.at(at)!)
  return all
}

/** Searches the ordered candidates run by run until the cap, and assembles the result. */
export const collect = (
  c: CollectInput
): Effect.Effect<
  Collected,
  ToolError.ToolPatternInvalid | ToolError.ToolSpawnFailed | ToolError.ToolMemoryLimit,
  Supervisor.Supervisor
> =>
  Effect.gen(function* () {
    const { budgets, mode } = c
    const result = makeResult(c)
    const gate = result.gate
    const entryCap = Math.min(c.headLimit, budgets.searchMaxLines)
    const total = c.candidates.total
    const small = total !== undefined && total <= ONE_RUN_FILES
    let next = 0

    // nothing to search: one run on empty input still tells whether the pattern is valid
    if (c.candidates.at(0) === undefined) yield* Lanes.searchOrdered(c, { files: [] }, 0, 0)
    // the search goes on past a full result only until one more entry shows it was capped
    while (c.candidates.at(next) !== undefined && !result.leftOver()) {
      let run: Lanes.Run
      if (next === 0) {
        run = {
          files: takeBatch(
            c.candidates,
            0,
            small
              ? ONE_RUN_FILES
              : Math.max(FIRST_BATCH_FILES, mode === "content" ? 0 : entryCap * FIRST_BATCH_FILES_PER_ENTRY)
          )
        }
      } else if (gate.entries() === 0 && c.candidates.wholeDirectory === true) {
        // nothing in the newest files: ripgrep walks the directory itself in one run, on all its
        // threads, instead of being handed every file left (a rare pattern costs that walk alone)
        const from = next
        let listed: ReadonlyArray<Candidate> | undefined
        run = { files: () => (listed ??= allFrom(c.candidates, from)), walk: true }
      } else {
        const wanted = entryCap + 1 - gate.entries()
        const perFile = gate.entries() / next
        const size = perFile === 0 ? MAX_BATCH_FILES : Math.ceil(wanted / perFile)
        run = {
          files: takeBatch(c.candidates, next, Math.min(MAX_BATCH_FILES, Math.max(MIN_BATCH_FILES, size)))
        }
      }
      const hits = yield* Lanes.searchOrdered(
        c,
        run,
        Math.max(0, entryCap - gate.entries()),
        Math.max(0, budgets.searchMaxBytes - gate.bytes())
      )
      const files = typeof run.files === "function" ? (hits.size > 0 ? run.files() : []) : run.files
      if (mode === "content" && hits.size > 0)
        yield* place(
          c,
          files.flatMap((candidate) => {
            const found = hits.get(candidate.relative)
            return found === undefined ? [] : [{ candidate, hits: found }]
          })
        )
      for (let at = 0; at < files.length && hits.size > 0; at++) {
        const found = hits.get(files[at]!.relative)
        if (found !== undefined && !result.offer(files[at]!, found)) break
      }
      if (run.walk === true) break
      next += files.length
    }
    return result.finish()
  })

type WalkInput = Omit<CollectInput, "candidates"> & {
  /** The directory's real path (ripgrep starts in `cwd`, the pinned directory), how its files are shown. */
  readonly root: string
  readonly displayPrefix: string
  /** Flags choosing the files (e.g. `--type=ts`); the glob is applied here, as a listing's. */
  readonly selection: ReadonlyArray<string>
  readonly keep: ((relative: string) => boolean) | undefined
}

type WalkError =
  | ToolError.ToolPatternInvalid
  | ToolError.ToolSpawnFailed
  | ToolError.ToolInvalidInput
  | ToolError.ToolMemoryLimit

/**
 * The one-shot search of a directory without a file index: a single ripgrep run walks it newest
 * first (`--sortr=modified`, which dates every file before it searches, as a listing would) and
 * prints what the mode returns; files reach the result in that order as their output completes.
 * ripgrep leaves equal times in walk order, so the files of one modification time (dated here
 * with `lstat` as their output arrives; only files with hits are dated) are held until the next
 * time shows up and then offered by path, as the order requires (rules S1). The run is stopped
 * as soon as the result is capped. One process per call: the listing, the batches and the
 * pattern's validation are that run.
 *
 * Its files are offered while it runs, so a clipped line whose first match is not placed yet is
 * offered as shown by its clip; once the run ended those lines (of the result, and the one past
 * it) are placed, and should one of them need a window (its match lies past the clip, which
 * changes its size) the walk runs again with columns, as it ran before lines were placed.
 */
export const collectWalk = (c: WalkInput): Effect.Effect<Collected, WalkError, Supervisor.Supervisor> =>
  Effect.gen(function* () {
    const first = yield* walkOnce(c)
    const provisional = first.provisional()
    if (provisional.length === 0) return first.finish()
    const placed = yield* FirstMatch.locate(locateInput(c), provisional)
    if (placed.every((at) => at === undefined)) return first.finish()
    return (yield* walkOnce({ ...c, finder: { ...c.finder, columns: true } })).finish()
  })

const walkOnce = (c: WalkInput) =>
  Effect.gen(function* () {
    const { budgets, mode } = c
    const result = makeResult({ ...c, candidates: { at: () => undefined } })
    const entryCap = Math.min(c.headLimit, budgets.searchMaxLines)
    const maxLineChars = budgets.maxLineChars
    const columns = Hits.maxColumns(maxLineChars)
    // one entry past the cap shows the result is capped; with the budget full only that is left
    const entriesLeft = () => Math.max(0, entryCap - result.gate.entries())
    // files of the current modification time, and the file whose records are arriving now
    let group: Array<{ readonly candidate: Candidate; readonly hits: Hits.FileHits }> = []
    let groupTime = Number.NaN
    let current: { readonly candidate: Candidate; readonly hits: Hits.FileHits } | undefined
    let currentPath: string | undefined
    let done = false
    let stopRun: (() => void) | undefined
    // a group's files beyond what could still be shown are dropped as it grows, so memory stays
    // bounded however many files share one time (a fresh checkout: all of them)
    const retentionLimit = budgets.searchMaxBytes * GROUP_RETENTION_BUDGETS
    let groupBytes = 0
    const flush = () => {
      group.sort((a, b) => Order.newestFirst(a.candidate, b.candidate))
      for (const file of group) {
        if (!result.offer(file.candidate, file.hits)) {
          done = true
          break
        }
      }
      group = []
      groupBytes = 0
      if (done) stopRun?.()
    }
    const pruneGroup = () => {
      group.sort((a, b) => Order.newestFirst(a.candidate, b.candidate))
      let entries = 0
      let bytes = 0
      const left = entriesLeft()
      const bytesLeft = Math.max(0, budgets.searchMaxBytes - result.gate.bytes())
      for (let at = 0; at < group.length; at++) {
        entries += mode === "content" ? group[at]!.hits.lines.length : 1
        bytes += group[at]!.hits.bytes
        if (entries > left || bytes > bytesLeft) {
          group.length = at + 1
          break
        }
      }
      groupBytes = group.reduce((sum, file) => sum + file.hits.bytes, 0)
    }
    /** The file whose output completed goes into its time's group (a new time flushes the old). */
    const close = () => {
      if (current === undefined) return
      const file = current
      current = undefined
      if (file.hits.matchedLines === 0 && file.hits.lines.length === 0) return
      if (group.length > 0 && file.candidate.mtimeMs !== groupTime) flush()
      if (done) return
      groupTime = file.candidate.mtimeMs
      group.push(file)
      groupBytes += file.hits.bytes + 1
      if (groupBytes > retentionLimit || group.length > 4 * (entryCap + 1)) pruneGroup()
    }
    const open = (relative: string) => {
      currentPath = relative
      if (c.keep !== undefined && !c.keep(relative)) return
      if (Option.isSome(Binary.byName(relative))) return
      const absolute = c.root + path.sep + relative
      // a file that vanished since ripgrep read it is dropped
      const stats = Order.statsOf(absolute)
      if (stats === undefined || !stats.isFile()) return
      current = {
        candidate: { relative, absolute, display: c.displayPrefix + relative, mtimeMs: stats.mtimeMs },
        hits: { lines: [], bytes: 0, matchedLines: 0 }
      }
    }
    const onRecord = (record: Records.SearchRecord) => {
      if (done) return
      const relative = record.path.startsWith("./") ? record.path.slice(2) : record.path
      if (relative !== currentPath) {
        close()
        if (done) return
        open(relative)
      }
      const file = current
      if (file === undefined) return
      if (mode !== "content") {
        file.hits.matchedLines = record.count
        return
      }
      if (file.hits.lines.length > entriesLeft()) return
      Hits.addLine(file.hits, record, columns, maxLineChars, c.finder)
    }
    const decoder = Records.decoder(mode, columns + 64, onRecord, c.finder.columns)
    const exit = yield* Hits.runInto(
      c,
      [
        ...c.flags,
        // a walked file is searched as a named one is (not abandoned at a late NUL byte); before
        // the mode's flags: content mode's --text overrides it
        "--binary",
        ...Hits.modeFlags(mode, maxLineChars, c.finder.columns),
        ...(mode === "content" ? [`--max-count=${entryCap + 1}`] : []),
        "--sortr=modified",
        ...c.selection,
        ...Rg.excludeGitFlags,
        "--",
        "."
      ],
      c.cwd,
      decoder,
      (stop) => (stopRun = stop)
    )
    yield* unknownType(exit)
    yield* Hits.runFailure(c, exit, walkedFiles(c))
    if (!done) {
      close()
      if (!done) flush()
    }
    return result
  })

/**
 * The files a walk run searched, listed again (only after it died at its memory ceiling, to name
 * the file): ripgrep's list of the same selection, which runs in far less memory than a search.
 */
const walkedFiles = (c: {
  readonly rg: string
  readonly cwd: string
  readonly root: string
  readonly displayPrefix: string
  readonly selection: ReadonlyArray<string>
  readonly keep: ((relative: string) => boolean) | undefined
}): Effect.Effect<ReadonlyArray<Memory.RunFile>, never, Supervisor.Supervisor> => {
  const files: Array<Memory.RunFile> = []
  const decoder = Records.decoder("filesWithMatches", 0, (record) => {
    const relative = record.path.startsWith("./") ? record.path.slice(2) : record.path
    if (c.keep !== undefined && !c.keep(relative)) return
    files.push({ display: c.displayPrefix + relative, absolute: c.root + path.sep + relative })
  })
  return Rg.run(
    c.rg,
    [...Rg.commonFlags, "--files", "--null", ...c.selection, ...Rg.excludeGitFlags, "--", "."],
    { cwd: c.cwd, onData: (chunk) => decoder.push(chunk) }
  ).pipe(
    Effect.tap(() => Effect.sync(() => decoder.end())),
    Effect.as(files),
    // unlisted, no file can be named: the error says so
    Effect.orElseSucceed(() => files)
  )
}
