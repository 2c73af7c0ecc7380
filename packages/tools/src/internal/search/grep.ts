/**
 * Grep's search: the ordered candidates (an index's) go to ripgrep in batches, newest first, until
 * one entry past the cap has been seen; each batch is one ripgrep process that prints only what
 * the mode returns (`searchRecords`). Without candidates, one ripgrep run walks the directory
 * newest first (`collectWalk`). The first run also validates the pattern: ripgrep refuses a bad
 * one before searching, with its reason on stderr.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import { type Budgets, LineClip, ToolError, type Truncation, Utf8 } from "@toolcap/limits"
import * as Binary from "../../Binary.js"
import * as Notice from "../notice.js"
import * as Order from "./order.js"
import { type Candidate, type Candidates, unknownType } from "./list.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"

export type Mode = Records.Mode

/**
 * Files per ripgrep run, first and at most. The first run is small so a common pattern answers
 * from the newest files at once; each next run is four times larger (so a rare pattern costs a
 * few extra process starts, not one per file), up to a size where start-up cost no longer shows.
 */
const FIRST_BATCH_FILES = 32
/**
 * In the files and count modes an entry is a whole file, and about half the files of a tree hit
 * a common pattern: the first run there takes this many files per entry wanted.
 */
const FIRST_BATCH_FILES_PER_ENTRY = 2
const BATCH_GROWTH = 4
/**
 * After a run, the next one is sized from the entries found per file so far: enough files for
 * the entries still wanted, with this much to spare (never more than BATCH_GROWTH times the last).
 */
const BATCH_SPARE = 1.5
const MAX_BATCH_FILES = 65_536
/**
 * Candidates known to be this few are searched in one run: one process over a couple of thousand
 * files costs less than a second process start (about 10 ms from a Node host), and one run is
 * also the pattern's validation. A run this small searches on one thread, so ripgrep prints the
 * files in the order given and the run is stopped as soon as the result is capped (a common
 * pattern is answered by the newest files alone, like `rg | head`). Larger trees start with a
 * small batch.
 */
export const ONE_RUN_FILES = 2048
/**
 * Path bytes per run, well inside Linux's 2 MiB argument space (shared with the environment); at
 * typical path lengths this is the bound that applies, not MAX_BATCH_FILES.
 */
const MAX_BATCH_ARGUMENT_BYTES = 1024 * 1024
/**
 * Entry bytes one run may hold before its order is known, in multiples of the result budget. Past
 * it, the files too old to be shown are dropped (and their later output ignored), so memory
 * stays bounded however dense the matches are.
 */
const BATCH_RETENTION_BUDGETS = 8

/**
 * The size of the next run, from the yield of the files searched so far. Nothing found yet means
 * a rare pattern: the rest goes in as few runs as the argument space allows, since every extra
 * run is a process start and the newest files have already been searched first.
 */
const nextBatchSize = (last: number, searched: number, found: number, wanted: number): number => {
  if (found === 0) return MAX_BATCH_FILES
  const grown = Math.min(MAX_BATCH_FILES, last * BATCH_GROWTH)
  if (wanted <= 0) return grown
  const estimate = Math.ceil((wanted / (found / searched)) * BATCH_SPARE)
  return Math.max(FIRST_BATCH_FILES, Math.min(grown, estimate))
}

interface Line {
  readonly line: number
  readonly text: string
  readonly context: boolean
  readonly clipped: boolean
  /** File offset of the first byte a clip left out. */
  readonly clipByte: number
  readonly size: number
}

interface FileHits {
  /** Content mode: lines in file order (bounded). */
  readonly lines: Array<Line>
  bytes: number
  /** Count and files modes: matching lines, or 1 for "has a match". */
  matchedLines: number
  /** Known to be a text file (the binary sniff already ran on it). */
  text?: boolean
}

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
}

export interface GrepEntry {
  readonly path: string
  readonly line: number
  readonly text: string
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

/** The next files for one ripgrep run: at most `size`, within the argument space. */
const takeBatch = (candidates: Candidates, from: number, size: number): Array<Candidate> => {
  const batch: Array<Candidate> = []
  let argumentBytes = 0
  for (let at = from; batch.length < size; at++) {
    const candidate = candidates.at(at)
    if (candidate === undefined) break
    argumentBytes += Buffer.byteLength(candidate.relative) + 1
    if (batch.length > 0 && argumentBytes > MAX_BATCH_ARGUMENT_BYTES) break
    batch.push(candidate)
  }
  return batch
}

const isBinary = (candidate: Candidate, budgets: Budgets.BudgetsValue): boolean =>
  Option.isSome(
    Binary.detectSync(candidate.absolute, budgets.binarySniffBytes, budgets.binaryNonPrintableRatio)
  )

/** The flags that make ripgrep print only what `mode` returns. */
export const modeFlags = (mode: Mode, maxLineChars: number): ReadonlyArray<string> =>
  mode === "filesWithMatches"
    ? ["--files-with-matches", "--null"]
    : mode === "count"
      ? ["--count", "--with-filename", "--null"]
      : [
          // a text file (to the binary sniff) with a NUL byte later would otherwise print ripgrep's
          // "binary file matches" notice in place of its lines, a line with no record shape;
          // binary files are dropped by the sniff afterwards
          "--text",
          "--with-filename",
          "--null",
          "--line-number",
          "--byte-offset",
          "--no-heading",
          "--no-context-separator",
          "--color=never",
          `--max-columns=${maxColumns(maxLineChars)}`,
          "--max-columns-preview"
        ]

/**
 * ripgrep's column limit counts bytes: a UTF-8 code point takes at most 4, so this many bytes
 * (cut by ripgrep at a character boundary) always hold the first `maxLineChars` code points, and
 * a line printed whole is at most this long. The clip itself is applied here, exactly.
 */
export const maxColumns = (maxLineChars: number): number => 4 * maxLineChars + 4

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
  let leftOver = false
  /** Offers a file's hits; false once the result is capped (nothing later can be admitted). */
  const offer = (candidate: Candidate, found: FileHits): boolean => {
    if (leftOver) return false
    if (found.matchedLines === 0 && found.lines.length === 0) return true
    // the files Read refuses are skipped silently (spec §6.3)
    if (found.text !== true && isBinary(candidate, budgets)) return true
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
      for (const hit of found.lines) {
        if (!gate.admit(Buffer.byteLength(candidate.display) + 1 + hit.size)) {
          leftOver = true
          break
        }
        matches.push({
          path: candidate.display,
          line: hit.line,
          text: hit.text,
          ...(hit.context ? { context: true as const } : {})
        })
        if (hit.clipped) {
          clippedLines++
          firstClip ??= { shellPath: candidate.display, line: hit.line, byte: hit.clipByte }
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
      firstClip
    })
    return { mode, matches, files, counts, matchCount, matchFiles: matchFiles.size, ...told }
  }
  return { gate, offer, finish, leftOver: () => leftOver }
}

/** Searches the ordered candidates batch by batch until the cap, and assembles the result. */
export const collect = (c: CollectInput) =>
  Effect.gen(function* () {
    const { budgets, mode } = c
    const result = makeResult(c)
    const gate = result.gate
    const entryCap = Math.min(c.headLimit, budgets.searchMaxLines)
    let next = 0
    const total = c.candidates.total
    let batchSize =
      total !== undefined && total <= ONE_RUN_FILES
        ? ONE_RUN_FILES
        : mode === "content"
          ? FIRST_BATCH_FILES
          : Math.max(FIRST_BATCH_FILES, entryCap * FIRST_BATCH_FILES_PER_ENTRY)

    if (c.candidates.at(0) === undefined) {
      // nothing to search: one run on empty input still tells whether the pattern is valid
      yield* runBatch(c, [], 0, 0)
    }
    // the search goes on past a full result only until one more entry shows it was capped
    while (c.candidates.at(next) !== undefined && !result.leftOver()) {
      // nothing found in the newest files, and the rest is the whole directory: ripgrep walks it
      // itself in one run (its walk lists the same files, tested), instead of being handed them
      const walkRest = next > 0 && gate.entries() === 0 && c.candidates.wholeDirectory === true
      // the rest of a walked directory is listed only if the walk finds something (a pattern
      // that matches nothing costs ripgrep's walk alone, not a list of every file)
      const from = next
      const batch = walkRest
        ? lazily(() => allFrom(c.candidates, from))
        : takeBatch(c.candidates, next, batchSize)
      const hits = yield* runBatch(
        c,
        batch,
        Math.max(0, entryCap - gate.entries()),
        Math.max(0, budgets.searchMaxBytes - gate.bytes()),
        walkRest
      )
      if (hits.size > 0) {
        for (const candidate of itemsOf(batch)) {
          const found = hits.get(candidate.relative)
          if (found !== undefined && !result.offer(candidate, found)) break
        }
      }
      if (walkRest) break
      const searched = itemsOf(batch).length
      next += searched
      batchSize = nextBatchSize(searched, next, gate.entries(), entryCap + 1 - gate.entries())
    }
    return result.finish()
  })

/** A run's files, or (for a walk) the way to list them once they are needed. */
type Batch = ReadonlyArray<Candidate> | (() => ReadonlyArray<Candidate>)

const lazily = (list: () => ReadonlyArray<Candidate>): (() => ReadonlyArray<Candidate>) => {
  let listed: ReadonlyArray<Candidate> | undefined
  return () => (listed ??= list())
}

const itemsOf = (batch: Batch): ReadonlyArray<Candidate> => (typeof batch === "function" ? batch() : batch)

/** Every candidate from `from` on, in order. */
const allFrom = (candidates: Candidates, from: number): Array<Candidate> => {
  const all: Array<Candidate> = []
  for (let at = from; candidates.at(at) !== undefined; at++) all.push(candidates.at(at)!)
  return all
}

/** Adds a content record's line to `file`, clipped as results show it; its rendered size. */
const addLine = (
  file: FileHits,
  record: Records.SearchRecord,
  columns: number,
  maxLineChars: number
): number => {
  const { bytes, preview } = Records.lineBytes(record.text, columns)
  const clip = LineClip.clipLine(Utf8.decode(bytes), maxLineChars)
  const size = Buffer.byteLength(`:${record.line}:${clip.text}`) + 1
  file.lines.push({
    line: record.line,
    text: clip.text,
    context: !record.isMatch,
    clipped: preview || clip.clippedLines > 0,
    clipByte: record.byte + Buffer.byteLength(clip.text),
    size
  })
  file.bytes += size
  return size
}

/**
 * One ripgrep run, its output fed to `decoder` (ended with the run); `onStop` gets the way to
 * kill the run early once output has begun.
 */
const runInto = (
  c: { readonly rg: string; readonly stdin: string | undefined },
  args: ReadonlyArray<string>,
  cwd: string,
  decoder: { readonly push: (chunk: Buffer) => void; readonly end: () => void },
  onStop: (stop: () => void) => void
) =>
  Effect.tap(
    Rg.run(c.rg, args, {
      cwd,
      stdin: c.stdin,
      onData: (chunk, stop) => {
        onStop(stop)
        decoder.push(chunk)
      }
    }),
    () => Effect.sync(() => decoder.end())
  )

/** The pattern's refusal or the run's end by a signal, as the tool reports them. */
const runFailure = (c: { readonly pattern: string }, exit: Rg.Exit) =>
  // ripgrep refuses a bad pattern before it searches: exit 2 and its reason (file errors are
  // silenced by --no-messages, so they never print)
  exit.code === 2 && exit.stderr.trim() !== ""
    ? Effect.fail(
        new ToolError.ToolPatternInvalid({ pattern: c.pattern, reason: Rg.describeError(exit.stderr) })
      )
    : exit.signal !== null && !exit.stopped
      ? Effect.fail(
          new ToolError.ToolSpawnFailed({ command: "rg", reason: `it was ended by ${exit.signal}` })
        )
      : Effect.void

/**
 * One ripgrep run over a batch of files, kept per file (`relative` -> hits). With `walk`, ripgrep
 * walks the directory itself and only the batch's files are kept: files searched before gave
 * nothing, and a file the walk meets that the batch lacks arrived after the search began.
 * `--binary` makes a walked file searched as a named one is (not abandoned at a late NUL byte).
 */
const runBatch = (
  c: CollectInput,
  files: Batch,
  entriesLeft: number,
  bytesLeft: number,
  walk: boolean = false
) =>
  Effect.gen(function* () {
    // a walk's files are listed (and indexed by path) only when its first record arrives
    let listed: ReadonlyArray<Candidate> | undefined
    const batchItems = () => (listed ??= itemsOf(files))
    // with the result full, a run only has to show whether anything else matches
    const mode: Mode = entriesLeft === 0 ? "filesWithMatches" : c.mode
    const maxLineChars = c.budgets.maxLineChars
    const columns = maxColumns(maxLineChars)
    const hits = new Map<string, FileHits>()
    let positions: Map<string, number> | undefined
    const positionOf = (relative: string): number | undefined => {
      if (positions === undefined) {
        positions = new Map()
        batchItems().forEach((candidate, index) => positions!.set(candidate.relative, index))
      }
      return positions.get(relative)
    }
    const retentionLimit = c.budgets.searchMaxBytes * BATCH_RETENTION_BUDGETS
    let retained = 0
    // files at or after this position in the batch cannot be shown any more
    let cutoff = walk ? Number.POSITIVE_INFINITY : batchItems().length
    const hitsOf = (relative: string): FileHits | undefined => {
      let found = hits.get(relative)
      if (found === undefined) {
        if ((positionOf(relative) ?? cutoff) >= cutoff) return undefined
        found = { lines: [], bytes: 0, matchedLines: 0 }
        hits.set(relative, found)
      }
      return found
    }
    // only what could still be shown is kept (one entry more, to know the result is capped)
    const full = (file: FileHits) => file.lines.length > entriesLeft || file.bytes > bytesLeft
    /** Drops the files older than the newest ones that already overfill the result. */
    const prune = () => {
      let entries = 0
      let bytes = 0
      const items = batchItems()
      for (let at = 0; at < Math.min(cutoff, items.length); at++) {
        const file = hits.get(items[at]!.relative)
        if (file === undefined) continue
        entries += file.lines.length
        bytes += file.bytes
        // an entry of this file is already one too many: later files cannot be shown
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
    // on one thread ripgrep prints the files in the order given: once the files before the one
    // printing now hold one entry past what is left (binary files, which the result skips, not
    // counted), nothing later can be shown and the run is stopped
    const batch = walk ? [] : batchItems()
    const ordered = !walk && batch.length > 1 && batch.length <= ONE_RUN_FILES
    let stopRun: (() => void) | undefined
    let stopped = false
    let currentIndex = -1
    let current: FileHits | undefined
    let orderedEntries = 0
    let orderedBytes = 0
    const completed = () => {
      const file = current
      current = undefined
      if (file === undefined || (file.matchedLines === 0 && file.lines.length === 0)) return
      if (isBinary(batch[currentIndex]!, c.budgets)) {
        hits.delete(batch[currentIndex]!.relative)
        return
      }
      file.text = true
      orderedEntries += mode === "content" ? file.lines.length : 1
      orderedBytes += file.bytes
    }
    const onRecord = (record: Records.SearchRecord) => {
      if (stopped) return
      if (ordered) {
        const index = positionOf(record.path) ?? -1
        if (index !== currentIndex) {
          completed()
          if (orderedEntries > entriesLeft || orderedBytes > bytesLeft) {
            stopped = true
            stopRun?.()
            return
          }
          currentIndex = index
        }
      }
      const file = hitsOf(walk && record.path.startsWith("./") ? record.path.slice(2) : record.path)
      if (file === undefined) return
      current = file
      if (mode !== "content") {
        file.matchedLines = record.count
        return
      }
      if (full(file)) return
      retained += addLine(file, record, columns, maxLineChars)
      if (retained > retentionLimit) prune()
    }
    const decoder = Records.decoder(mode, columns + 64, onRecord)
    const maxCount =
      mode === "filesWithMatches" ? [] : mode === "content" ? [`--max-count=${entriesLeft + 1}`] : []
    const exit = yield* runInto(
      c,
      [
        ...c.flags,
        // before the mode's flags: content mode's --text overrides it
        ...(walk ? ["--binary"] : []),
        ...modeFlags(mode, maxLineChars),
        ...maxCount,
        ...(ordered ? ["--threads=1"] : []),
        ...(walk ? [...Rg.excludeGitFlags, "--", "."] : ["--"]),
        ...(walk ? [] : batch.length === 0 ? ["/dev/null"] : batch.map((candidate) => candidate.relative))
      ],
      c.cwd,
      decoder,
      (stop) => (stopRun = stop)
    )
    yield* runFailure(c, exit)
    return hits
  })

/**
 * The one-shot search of a directory without a file index: a single ripgrep run walks it newest
 * first (`--sortr=modified`, which dates every file before it searches, as a listing would) and
 * prints what the mode returns; files reach the result in that order as their output completes.
 * ripgrep leaves equal times in walk order, so the files of one modification time (dated here
 * with `lstat` as their output arrives; only files with hits are dated) are held until the next
 * time shows up and then offered by path, as the order requires (spec §6.6). The run is stopped
 * as soon as the result is capped. One process per call: the listing, the batches and the
 * pattern's validation are that run.
 */
export const collectWalk = (
  c: Omit<CollectInput, "candidates"> & {
    /** How this process reaches the directory (ripgrep starts in `cwd`), and how its files are shown. */
    readonly root: string
    readonly displayPrefix: string
    /** Flags choosing the files (e.g. `--type=ts`); the glob is applied here, as a listing's. */
    readonly selection: ReadonlyArray<string>
    readonly keep: ((relative: string) => boolean) | undefined
  }
) =>
  Effect.gen(function* () {
    const { budgets, mode } = c
    const result = makeResult({ ...c, candidates: { at: () => undefined } })
    const entryCap = Math.min(c.headLimit, budgets.searchMaxLines)
    const maxLineChars = budgets.maxLineChars
    const columns = maxColumns(maxLineChars)
    // one entry past the cap shows the result is capped; with the budget full only that is left
    const entriesLeft = () => Math.max(0, entryCap - result.gate.entries())
    // files of the current modification time, and the file whose records are arriving now
    let group: Array<{ readonly candidate: Candidate; readonly hits: FileHits }> = []
    let groupTime = Number.NaN
    let current: { readonly candidate: Candidate; readonly hits: FileHits } | undefined
    let currentPath: string | undefined
    let done = false
    let stopRun: (() => void) | undefined
    // a group's files beyond what could still be shown are dropped as it grows, so memory stays
    // bounded however many files share one time (a fresh checkout: all of them)
    const retentionLimit = budgets.searchMaxBytes * BATCH_RETENTION_BUDGETS
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
      addLine(file.hits, record, columns, maxLineChars)
    }
    const decoder = Records.decoder(mode, columns + 64, onRecord)
    const exit = yield* runInto(
      c,
      [
        ...c.flags,
        // a walked file is searched as a named one is (not abandoned at a late NUL byte); before
        // the mode's flags: content mode's --text overrides it
        "--binary",
        ...modeFlags(mode, maxLineChars),
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
    yield* runFailure(c, exit)
    if (!done) {
      close()
      if (!done) flush()
    }
    return result.finish()
  })
