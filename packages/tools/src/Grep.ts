/**
 * The Grep tool (spec §2, §5, §6.3, §6.6; DECISIONS §4): ripgrep over the workspace, a scratch
 * file or an approved external root, newest files first, bounded.
 *
 * - Engine: ripgrep from `@vscode/ripgrep`, `--json`, an argv array, killed when the call is
 *   interrupted or its `AbortSignal` aborts. An invalid regex fails with `TOOL_PATTERN_INVALID`
 *   carrying ripgrep's reason.
 * - Files: the same set as Glob (ignore files with git's semantics, hidden files included, `.git`
 *   never, symlinks not followed, no ignore file above an explicit `path`), then `glob` and `type`
 *   filters. Binary files (`Binary`: the ones Read refuses) are skipped silently.
 * - Order: files by modification time, newest first, ties by path; lines in file order. The search
 *   runs in that order, in growing batches, and stops once `headLimit` (default `grepHeadLimit`)
 *   or the search budget is reached, so a capped result holds the newest files' matches and costs
 *   less than searching everything.
 * - `outputMode`: `content` (matching lines, with optional context), `filesWithMatches` (also
 *   spelt `files_with_matches`, `files-with-matches`; the default) or `count` (matching lines per
 *   file). Lines are clipped at `maxLineChars` code points and counted in the notice.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import picomatch from "./internal/picomatch.js"
import { Budgets, InputBounds, LineClip, ToolError, Truncation, Utf8 } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Binary from "./Binary.js"
import * as Confinement from "./Confinement.js"
import * as Roots from "./Roots.js"
import type { Workspace } from "./Workspace.js"
import * as Input from "./internal/searchInput.js"
import * as Order from "./internal/searchOrder.js"
import * as Rg from "./internal/searchRipgrep.js"

const TOOL = "Grep"

/**
 * The accepted spellings of `outputMode`.
 *
 * @since 0.1.0
 * @category models
 */
export const OutputMode = Schema.Literal(
  "content",
  "filesWithMatches",
  "files_with_matches",
  "files-with-matches",
  "count"
)

/**
 * @since 0.1.0
 * @category models
 */
export const GrepInput = Schema.Struct({
  /** A ripgrep (Rust) regular expression. */
  pattern: Schema.String,
  /** File or directory to search (default: the workspace root). */
  path: Schema.optional(Schema.String),
  /** Only files matching this glob: `*.ts`, `*.{ts,tsx}` (any depth), `src/**\/*.ts`; `!` excludes. */
  glob: Schema.optional(Schema.String),
  /** Only files of this ripgrep type: `ts`, `py`, `rust`... */
  type: Schema.optional(Schema.String),
  outputMode: Schema.optional(OutputMode),
  caseInsensitive: Schema.optional(Schema.Boolean),
  /** Lines of context before each match (content mode). */
  contextBefore: Schema.optional(Schema.Number),
  /** Lines of context after each match (content mode). */
  contextAfter: Schema.optional(Schema.Number),
  /** Let the pattern span lines; `.` then matches newlines too. */
  multiline: Schema.optional(Schema.Boolean),
  /** Most entries to return (default 200). */
  headLimit: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type GrepInput = typeof GrepInput.Type

/**
 * One line of content-mode output; `context` marks a context line (not itself a match).
 *
 * @since 0.1.0
 * @category models
 */
export const GrepMatch = Schema.Struct({
  path: Schema.String,
  line: Schema.Number,
  text: Schema.String,
  context: Schema.optional(Schema.Literal(true))
})

/**
 * @since 0.1.0
 * @category models
 */
export type GrepMatch = typeof GrepMatch.Type

const bounded = {
  truncated: Schema.Boolean,
  notice: Schema.optional(Schema.String),
  truncation: Schema.optional(Truncation.Truncation)
}

/**
 * `content` mode: matching lines; `count` is the number of matching lines returned, `files` the
 * number of files they come from.
 *
 * @since 0.1.0
 * @category models
 */
export const ContentResult = Schema.Struct({
  matches: Schema.Array(GrepMatch),
  count: Schema.Number,
  files: Schema.Number,
  ...bounded
})

/**
 * `filesWithMatches` mode: files with at least one match; `count` is their number.
 *
 * @since 0.1.0
 * @category models
 */
export const FilesResult = Schema.Struct({
  files: Schema.Array(Schema.String),
  count: Schema.Number,
  ...bounded
})

/**
 * `count` mode: matching lines per file; `count` is their sum.
 *
 * @since 0.1.0
 * @category models
 */
export const CountResult = Schema.Struct({
  counts: Schema.Array(Schema.Struct({ path: Schema.String, count: Schema.Number })),
  count: Schema.Number,
  ...bounded
})

/**
 * The spec's `GrepResult` union plus `truncation` (present exactly when `truncated` is true).
 *
 * @since 0.1.0
 * @category models
 */
export const GrepResult = Schema.Union(ContentResult, FilesResult, CountResult)

/**
 * @since 0.1.0
 * @category models
 */
export type GrepResult = typeof GrepResult.Type

/**
 * Everything `grep` can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type GrepError =
  | ToolError.ToolInvalidInput
  | ToolError.ToolPathDenied
  | ToolError.ToolNotFound
  | ToolError.ToolPatternInvalid
  | ToolError.ToolSpawnFailed

/**
 * Options of a call.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepOptions {
  /** Aborting it interrupts the call (ripgrep is killed). */
  readonly signal?: AbortSignal | undefined
}

type Mode = "content" | "filesWithMatches" | "count"

const invalid = (field: string, reason: string) =>
  new ToolError.ToolInvalidInput({ tool: TOOL, field, reason })

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

/** The size of the next run, from the yield of the files searched so far. */
const nextBatchSize = (last: number, searched: number, found: number, wanted: number): number => {
  const grown = Math.min(MAX_BATCH_FILES, last * BATCH_GROWTH)
  if (found === 0 || wanted <= 0) return grown
  const estimate = Math.ceil((wanted / (found / searched)) * BATCH_SPARE)
  return Math.max(FIRST_BATCH_FILES, Math.min(grown, estimate))
}
const MAX_BATCH_FILES = 16_384
/** Path bytes per run, well inside Linux's 2 MiB argument space (shared with the environment). */
const MAX_BATCH_ARGUMENT_BYTES = 1024 * 1024
/**
 * Entry bytes one run may hold before its order is known, in multiples of the result budget. A run
 * over it is stopped and redone with fewer files, so memory stays bounded however dense the
 * matches are.
 */
const BATCH_RETENTION_BUDGETS = 8
/**
 * Largest ripgrep JSON record held whole. A match in a line of many megabytes (minified or
 * generated files) makes a record that size; larger ones keep only their two ends, which hold
 * everything a clipped line needs, so memory stays bounded however long a line is.
 */
const MAX_JSON_RECORD_BYTES = 16 * 1024 * 1024

interface Candidate {
  /** Path as ripgrep is given it (relative to `cwd`). */
  readonly relative: string
  readonly absolute: string
  readonly display: string
  readonly mtimeMs: number
}

interface Line {
  readonly line: number
  readonly text: string
  readonly context: boolean
  readonly clipped: boolean
  readonly size: number
}

interface FileHits {
  /** Content mode: lines in file order (bounded). */
  readonly lines: Array<Line>
  bytes: number
  /** Count and files modes (and probes): matching lines, or 1 for "has a match". */
  matchedLines: number
  /** Lines too long to place (their line number was not recoverable); reported in the notice. */
  unplaced: number
}

const normalizeMode = (mode: typeof OutputMode.Type | undefined): Mode =>
  mode === undefined || mode === "files_with_matches" || mode === "files-with-matches"
    ? "filesWithMatches"
    : mode

/** ripgrep's glob semantics as a filter: no `/` matches the file name at any depth. */
const globFilter = (glob: string): ((relative: string) => boolean) => {
  const negated = glob.startsWith("!")
  const body = (negated ? glob.slice(1) : glob).replace(/^\/+/, "").replace(/\/+$/, "")
  const anchored = body.includes("/")
  const matcher = picomatch(body, { dot: true })
  const matches = (relative: string) =>
    matcher(anchored ? relative : relative.slice(relative.lastIndexOf("/") + 1))
  return negated ? (relative) => !matches(relative) : matches
}

const decodeData = (data: { text?: string; bytes?: string } | undefined): string =>
  data === undefined
    ? ""
    : data.text !== undefined
      ? data.text
      : Utf8.decode(Buffer.from(data.bytes ?? "", "base64"))

/** The pattern as ripgrep arguments, plus stdin when it is too long for one argument. */
const patternArguments = (
  pattern: string
): Effect.Effect<
  { readonly args: ReadonlyArray<string>; readonly stdin: string | undefined },
  ToolError.ToolInvalidInput
> => {
  const inline = `--regexp=${pattern}`
  if (Buffer.byteLength(inline) <= Rg.MAX_ARGUMENT_BYTES)
    return Effect.succeed({ args: [inline], stdin: undefined })
  if (pattern.includes("\n")) {
    return Effect.fail(invalid("pattern", "a pattern over 128KB cannot hold a line break; write it as \\n"))
  }
  // ripgrep reads one pattern per line from a pattern file; this one has a single line
  return Effect.succeed({ args: ["--file=-"], stdin: `${pattern}\n` })
}

/**
 * Searches file contents.
 *
 * @since 0.1.0
 * @category constructors
 */
export const grep = (
  input: unknown,
  options?: GrepOptions
): Effect.Effect<GrepResult, GrepError, Budgets.Budgets | Workspace | Scratch.Scratch> =>
  Order.interruptOnAbort(Confinement.withinRoots(search(input)), options?.signal).pipe(
    Effect.withSpan("Grep.grep")
  )

const search = (input: unknown) =>
  Effect.gen(function* () {
    const decoded = yield* Input.decode(TOOL, GrepInput, input)
    const budgets = yield* Budgets.Budgets
    const mode = normalizeMode(decoded.outputMode)
    if (decoded.pattern.includes("\0")) {
      return yield* invalid("pattern", "the pattern contains a NUL byte; write it as \\x00 to match one")
    }
    const patternBytes = Buffer.byteLength(decoded.pattern)
    if (patternBytes > budgets.grepMaxPatternBytes) {
      return yield* invalid(
        "pattern",
        `the pattern is ${patternBytes} bytes, over the ${Input.formatBytes(budgets.grepMaxPatternBytes)} limit for patterns; search for a shorter, distinctive part of it`
      )
    }
    if (decoded.glob !== undefined && (decoded.glob.length === 0 || decoded.glob.includes("\0"))) {
      return yield* invalid("glob", "the glob is empty or contains a NUL byte; use e.g. *.ts")
    }
    if (decoded.glob !== undefined) yield* InputBounds.checkGlob(TOOL, "glob", decoded.glob, budgets)
    if (decoded.type !== undefined && !/^[A-Za-z0-9_+-]+$/.test(decoded.type)) {
      return yield* invalid(
        "type",
        `"${decoded.type}" is not a file type name; use e.g. ts, py, rust (ripgrep --type-list)`
      )
    }
    const headLimit =
      (yield* Input.positiveInteger(
        TOOL,
        "headLimit",
        decoded.headLimit,
        "headLimit is the most entries to return, 1 or more"
      )) ?? budgets.grepHeadLimit
    const contextHint = "context is a number of lines, 0 or more"
    const before =
      (yield* Input.nonNegativeInteger(TOOL, "contextBefore", decoded.contextBefore, contextHint)) ?? 0
    const after =
      (yield* Input.nonNegativeInteger(TOOL, "contextAfter", decoded.contextAfter, contextHint)) ?? 0
    // more context than the line budget could never be shown
    const contextCap = budgets.searchMaxLines
    const contextClamped = before > contextCap || after > contextCap

    const target = yield* Roots.resolve(TOOL, "path", decoded.path ?? ".")
    const isDirectory = target.stats.isDirectory()
    if (!isDirectory && !target.stats.isFile()) {
      return yield* invalid(
        "path",
        `${target.display} is not a regular file or directory; Grep searches files`
      )
    }
    const rg = yield* Rg.binary
    const pattern = yield* patternArguments(decoded.pattern)
    const matchFlags = [
      ...(decoded.caseInsensitive === true ? ["--ignore-case"] : ["--case-sensitive"]),
      ...(decoded.multiline === true ? ["--multiline", "--multiline-dotall"] : [])
    ]
    const cwd = isDirectory ? target.realPath : path.dirname(target.realPath)

    const validate = validatePattern(rg, cwd, decoded.pattern, matchFlags, pattern)
    const list = isDirectory
      ? listFiles(rg, target, decoded.type, decoded.glob)
      : Effect.succeed(
          fromArray([
            {
              relative: target.realPath,
              absolute: target.realPath,
              display: target.display,
              mtimeMs: target.stats.mtimeMs
            }
          ])
        )
    const [, candidates] = yield* Effect.all([validate, list], { concurrency: 2 })

    const modeFlags =
      mode === "content"
        ? [
            ...(before > 0 ? [`--before-context=${Math.min(before, contextCap)}`] : []),
            ...(after > 0 ? [`--after-context=${Math.min(after, contextCap)}`] : [])
          ]
        : []
    return yield* collect({
      rg,
      cwd,
      mode,
      candidates,
      flags: [...Rg.commonFlags, "--json", ...matchFlags, ...modeFlags, ...pattern.args],
      stdin: pattern.stdin,
      headLimit,
      budgets,
      contextClamped
    })
  })

/** Runs the pattern once against an empty input, so a bad pattern fails before any search. */
const validatePattern = (
  rg: string,
  cwd: string,
  source: string,
  matchFlags: ReadonlyArray<string>,
  pattern: { readonly args: ReadonlyArray<string>; readonly stdin: string | undefined }
) =>
  Effect.gen(function* () {
    const exit = yield* Rg.run(
      rg,
      [...Rg.commonFlags, "--json", ...matchFlags, ...pattern.args, "--", "/dev/null"],
      {
        cwd,
        stdin: pattern.stdin,
        onData: () => {}
      }
    )
    if (exit.code === 0 || exit.code === 1) return
    return yield* new ToolError.ToolPatternInvalid({ pattern: source, reason: Rg.describeError(exit.stderr) })
  })

/**
 * Files in search order, newest first, dated lazily: the candidate at an index is known once the
 * files before it are.
 */
interface Candidates {
  /** The candidate at `index`, or `undefined` past the last one. */
  readonly at: (index: number) => Candidate | undefined
}

const fromArray = (items: ReadonlyArray<Candidate>): Candidates => ({ at: (index) => items[index] })

/**
 * The directory's files as ripgrep lists them, newest first (`--sortr=modified`), filtered by glob,
 * binary names dropped. Only the files a search reaches are dated here (`lstat`), one group of
 * equal modification times at a time, each group ordered by path: ripgrep's order leaves equal
 * times in walk order, and a capped search of a large tree dates a few hundred files, not all.
 */
const listFiles = (rg: string, target: Roots.Resolved, type: string | undefined, glob: string | undefined) =>
  Effect.gen(function* () {
    const keep = glob === undefined ? undefined : globFilter(glob)
    const relatives: Array<string> = []
    const splitter = Rg.recordSplitter({
      separator: 0,
      onRecord: (record) => {
        const printed = record.toString("utf8")
        const relative = printed.startsWith("./") ? printed.slice(2) : printed
        if (keep !== undefined && !keep(relative)) return
        if (Option.isSome(Binary.byName(relative))) return
        relatives.push(relative)
      }
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
      { cwd: target.realPath, onData: (chunk) => splitter.push(chunk) }
    )
    splitter.end()
    if (exit.code !== 0 && exit.code !== 1 && /unrecognized file type/.test(exit.stderr)) {
      return yield* invalid("type", `${Rg.describeError(exit.stderr)}; see ripgrep --type-list for the names`)
    }
    return datedInOrder(relatives, target)
  })

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
    }
  }
}

interface CollectInput {
  readonly rg: string
  readonly cwd: string
  readonly mode: Mode
  readonly candidates: Candidates
  readonly flags: ReadonlyArray<string>
  readonly stdin: string | undefined
  readonly headLimit: number
  readonly budgets: Budgets.BudgetsValue
  readonly contextClamped: boolean
}

interface BatchOutcome {
  readonly hits: Map<string, FileHits>
  /** The run held more than its retention bound and was stopped; redo it with fewer files. */
  readonly overflowed: boolean
}

/** Searches the ordered candidates batch by batch until the cap, and assembles the result. */
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

/**
 * Count mode in two passes: find the newest files with a match, stopping each file at its first
 * match, then count only the files that will be shown. Counting every file of a large first batch
 * would format every match of files that never make the cut.
 */
const collectCounts = (c: CollectInput) =>
  Effect.gen(function* () {
    const { budgets } = c
    const entryCap = Math.min(c.headLimit, budgets.searchMaxLines)
    const finding: CollectInput = { ...c, mode: "filesWithMatches" }
    const matched: Array<Candidate> = []
    let next = 0
    let batchSize = Math.max(FIRST_BATCH_FILES, entryCap * FIRST_BATCH_FILES_PER_ENTRY)
    // one file more than can be shown tells whether the result is capped
    while (c.candidates.at(next) !== undefined && matched.length <= entryCap) {
      const batch = takeBatch(c.candidates, next, batchSize)
      const outcome = yield* runBatch(finding, batch, entryCap + 1 - matched.length, Number.POSITIVE_INFINITY)
      for (const candidate of batch) {
        if (matched.length > entryCap) break
        if ((outcome.hits.get(candidate.relative)?.matchedLines ?? 0) === 0) continue
        if (!isBinary(candidate, budgets)) matched.push(candidate)
      }
      next += batch.length
      batchSize = nextBatchSize(batch.length, next, matched.length, entryCap + 1 - matched.length)
    }
    const shown = fromArray(matched.slice(0, entryCap))
    const tally = new Map<string, number>()
    for (let at = 0; shown.at(at) !== undefined;) {
      const batch = takeBatch(shown, at, MAX_BATCH_FILES)
      const outcome = yield* runBatch(c, batch, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)
      for (const [relative, hits] of outcome.hits) tally.set(relative, hits.matchedLines)
      at += batch.length
    }
    const gate = Order.budget(c.headLimit, budgets.searchMaxLines, budgets.searchMaxBytes)
    const counts: Array<{ path: string; count: number }> = []
    let leftOver = matched.length > entryCap
    for (const candidate of matched.slice(0, entryCap)) {
      const entry = { path: candidate.display, count: tally.get(candidate.relative) ?? 0 }
      if (!gate.admit(Order.renderedBytes(`${entry.path}:${entry.count}`))) {
        leftOver = true
        break
      }
      counts.push(entry)
    }
    return assemble(c, {
      gate,
      truncated: leftOver,
      contentLines: [],
      files: [],
      counts,
      matchCount: 0,
      matchFiles: 0,
      clippedLines: 0,
      unplaced: 0
    })
  })

const collect = (c: CollectInput) =>
  Effect.gen(function* () {
    const { budgets, mode } = c
    if (mode === "count") return yield* collectCounts(c)
    const gate = Order.budget(c.headLimit, budgets.searchMaxLines, budgets.searchMaxBytes)
    const entryCap = Math.min(c.headLimit, budgets.searchMaxLines)
    const contentLines: Array<GrepMatch> = []
    const files: Array<string> = []
    let matchCount = 0
    const matchFiles = new Set<string>()
    let clippedLines = 0
    let unplaced = 0
    let leftOver = false
    let next = 0
    let batchSize =
      mode === "content"
        ? FIRST_BATCH_FILES
        : Math.max(FIRST_BATCH_FILES, entryCap * FIRST_BATCH_FILES_PER_ENTRY)

    // the search goes on past a full result only until one more entry shows it was capped
    while (c.candidates.at(next) !== undefined && !leftOver) {
      const batch = takeBatch(c.candidates, next, batchSize)
      const outcome = yield* runBatch(
        c,
        batch,
        Math.max(0, entryCap - gate.entries()),
        Math.max(0, budgets.searchMaxBytes - gate.bytes())
      )
      if (outcome.overflowed) {
        batchSize = Math.max(1, Math.floor(batch.length / BATCH_RETENTION_BUDGETS))
        continue
      }
      for (const candidate of batch) {
        const hits = outcome.hits.get(candidate.relative)
        if (hits === undefined) continue
        unplaced += hits.unplaced
        if (hits.matchedLines === 0 && hits.lines.length === 0) continue
        // the files Read refuses are skipped silently (spec §6.3)
        if (isBinary(candidate, budgets)) continue
        if (gate.full()) {
          leftOver = true
          break
        }
        if (mode === "filesWithMatches") {
          if (!gate.admit(Order.renderedBytes(candidate.display))) leftOver = true
          else files.push(candidate.display)
        } else {
          for (const hit of hits.lines) {
            if (!gate.admit(Buffer.byteLength(candidate.display) + 1 + hit.size)) {
              leftOver = true
              break
            }
            contentLines.push({
              path: candidate.display,
              line: hit.line,
              text: hit.text,
              ...(hit.context ? { context: true as const } : {})
            })
            if (hit.clipped) clippedLines++
            if (!hit.context) {
              matchCount++
              matchFiles.add(candidate.display)
            }
          }
        }
        if (leftOver) break
      }
      next += batch.length
      batchSize = nextBatchSize(batch.length, next, gate.entries(), entryCap + 1 - gate.entries())
    }
    const truncated = leftOver
    return assemble(c, {
      gate,
      truncated,
      contentLines,
      files,
      counts: [],
      matchCount,
      matchFiles: matchFiles.size,
      clippedLines,
      unplaced
    })
  })

/** One ripgrep run over a batch of files, kept per file. */
const runBatch = (c: CollectInput, batch: ReadonlyArray<Candidate>, entriesLeft: number, bytesLeft: number) =>
  Effect.gen(function* () {
    // with the result full, a run only has to show whether anything else matches
    const probing = entriesLeft === 0
    const mode = probing ? "filesWithMatches" : c.mode
    const maxLineChars = c.budgets.maxLineChars
    const hits = new Map<string, FileHits>()
    const retentionLimit = c.budgets.searchMaxBytes * BATCH_RETENTION_BUDGETS
    let retained = 0
    let overflowed = false
    const hitsOf = (relative: string): FileHits => {
      let found = hits.get(relative)
      if (found === undefined) {
        found = { lines: [], bytes: 0, matchedLines: 0, unplaced: 0 }
        hits.set(relative, found)
      }
      return found
    }
    let stopRun: (() => void) | undefined
    const keepLine = (file: FileHits, line: number, raw: string, isMatch: boolean, forceClipped: boolean) => {
      const clipped = LineClip.clipLine(raw, maxLineChars)
      const size = Buffer.byteLength(`:${line}:${clipped.text}`) + 1
      file.lines.push({
        line,
        text: clipped.text,
        context: !isMatch,
        clipped: forceClipped || clipped.clippedLines > 0,
        size
      })
      file.bytes += size
      retained += size
    }
    // only what could still be shown is kept (one entry more, to know the result is capped)
    const full = (file: FileHits) => file.lines.length > entriesLeft || file.bytes > bytesLeft
    const afterLine = () => {
      if (batch.length > 1 && retained > retentionLimit && !overflowed) {
        overflowed = true
        stopRun?.()
      }
    }
    const onRecord = (record: Buffer) => {
      const message = JSON.parse(record.toString("utf8"))
      const file = hitsOf(decodeData(message.data?.path))
      if (mode === "filesWithMatches") {
        file.matchedLines = 1
        return
      }
      if (mode === "count") {
        file.matchedLines = Number(message.data?.stats?.matched_lines ?? 0)
        return
      }
      const first = Number(message.data?.line_number ?? 0)
      const pieces = decodeData(message.data?.lines).split("\n")
      if (pieces.length > 1 && pieces[pieces.length - 1] === "") pieces.pop()
      for (let k = 0; k < pieces.length && !full(file); k++) {
        const piece = pieces[k]!
        keepLine(
          file,
          first + k,
          piece.endsWith("\r") ? piece.slice(0, -1) : piece,
          message.type === "match",
          false
        )
      }
      afterLine()
    }
    // a line of many megabytes: only its start is needed, so its record is never held whole
    const onOversized = (head: Buffer, tail: Buffer) => {
      const recovered = Rg.oversizedLine(head, tail, maxLineChars)
      if (recovered === undefined) return
      const file = hitsOf(recovered.path)
      if (recovered.line === undefined) {
        file.unplaced++
        return
      }
      if (!full(file)) keepLine(file, recovered.line, recovered.text, recovered.isMatch, true)
      afterLine()
    }
    // the records each mode needs, recognised by their first bytes and never held otherwise
    const wanted =
      mode === "filesWithMatches"
        ? ['{"type":"begin"']
        : mode === "count"
          ? ['{"type":"end"']
          : ['{"type":"match"', '{"type":"context"']
    const splitter = Rg.recordSplitter({
      separator: 0x0a,
      onRecord,
      wants: (start) => {
        const text = start.toString("latin1")
        return wanted.some((prefix) => text.startsWith(prefix))
      },
      maxRecordBytes: MAX_JSON_RECORD_BYTES,
      onOversized
    })
    const maxCount =
      probing || c.mode === "filesWithMatches"
        ? ["--max-count=1"]
        : mode === "content"
          ? [`--max-count=${entriesLeft + 1}`]
          : []
    const exit = yield* Rg.run(
      c.rg,
      [...c.flags, ...maxCount, "--", ...batch.map((candidate) => candidate.relative)],
      {
        cwd: c.cwd,
        stdin: c.stdin,
        onData: (chunk, stop) => {
          stopRun = stop
          splitter.push(chunk)
        }
      }
    )
    if (!exit.stopped) splitter.end()
    if (exit.signal !== null && !exit.stopped) {
      return yield* new ToolError.ToolSpawnFailed({ command: "rg", reason: `it was ended by ${exit.signal}` })
    }
    return { hits, overflowed } satisfies BatchOutcome
  })

interface Assembly {
  readonly gate: ReturnType<typeof Order.budget>
  readonly truncated: boolean
  readonly contentLines: Array<GrepMatch>
  readonly files: Array<string>
  readonly counts: Array<{ path: string; count: number }>
  readonly matchCount: number
  readonly matchFiles: number
  readonly clippedLines: number
  readonly unplaced: number
}

const assemble = (c: CollectInput, a: Assembly): GrepResult => {
  const { budgets } = c
  const sentences: Array<string> = []
  if (c.contextClamped) {
    sentences.push(`Context was clamped to ${budgets.searchMaxLines} lines, the most a result can show.`)
  }
  if (a.truncated) {
    const stop = a.gate.stop()
    const why =
      stop === "bytes"
        ? `the ${Input.formatBytes(budgets.searchMaxBytes)} result budget`
        : stop === "lines"
          ? `the ${budgets.searchMaxLines}-line result budget`
          : `headLimit ${c.headLimit}`
    sentences.push(
      `Stopped at ${why}, newest files first; narrow the pattern, path or glob${stop === "entries" ? ", or raise headLimit," : ""} to see more.`
    )
  }
  if (a.clippedLines > 0) {
    sentences.push(
      `${Input.plural(a.clippedLines, "line")} longer than ${budgets.maxLineChars} characters ${a.clippedLines === 1 ? "was" : "were"} clipped; Read the file for the rest.`
    )
  }
  if (a.unplaced > 0) {
    sentences.push(
      `${Input.plural(a.unplaced, "match")} in lines too long to number (over ${MAX_JSON_RECORD_BYTES / 1024 / 1024}MB of output) ${a.unplaced === 1 ? "was" : "were"} left out; Grep with a narrower pattern or Read around it.`
    )
  }
  const truncation: Truncation.Truncation | undefined =
    a.truncated || a.clippedLines > 0
      ? {
          kept: "head",
          keptLines: a.gate.entries(),
          keptBytes: a.gate.bytes(),
          limitLines: Math.min(c.headLimit, budgets.searchMaxLines),
          limitBytes: budgets.searchMaxBytes,
          ...(a.clippedLines > 0 ? { clippedLines: a.clippedLines } : {})
        }
      : undefined
  const tail = {
    truncated: truncation !== undefined,
    ...(sentences.length > 0 ? { notice: sentences.join(" ") } : {}),
    ...(truncation !== undefined ? { truncation } : {})
  }
  if (c.mode === "content")
    return { matches: a.contentLines, count: a.matchCount, files: a.matchFiles, ...tail }
  if (c.mode === "filesWithMatches") return { files: a.files, count: a.files.length, ...tail }
  return { counts: a.counts, count: a.counts.reduce((sum, entry) => sum + entry.count, 0), ...tail }
}
