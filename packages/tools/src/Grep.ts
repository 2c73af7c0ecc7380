/**
 * The Grep tool (rules S1–S11): ripgrep over the workspace, a scratch
 * file or an approved external root, newest files first, bounded.
 *
 * - Engine: ripgrep from `@vscode/ripgrep`, an argv array, killed when the call is interrupted or
 *   its `AbortSignal` aborts; each mode asks it only for what it returns (names, counts, or a
 *   bounded view of each line). An invalid regex fails with `TOOL_PATTERN_INVALID` carrying
 *   ripgrep's reason, read from the search's own run.
 * - Files: the same set as Glob (ignore files with git's semantics, hidden files included, `.git`
 *   never, symlinks not followed, no ignore file above an explicit `path`), then `glob` and `type`
 *   filters. Binary files (`Binary`: the ones Read refuses) are skipped silently.
 * - Order: files by modification time, newest first, ties by path; lines in file order. The files
 *   come from the host's `FileIndex` when it has one, searched in that order in growing batches
 *   (one run for a small tree); without one, a single ripgrep run walks the directory newest
 *   first. Either way the search stops once `headLimit`
 *   (default `grepHeadLimit`) or the search budget is reached, so a capped result holds the newest
 *   files' matches and costs less than searching everything.
 * - `outputMode`: `content` (matching lines, with optional context), `filesWithMatches` (also
 *   spelt `files_with_matches`, `files-with-matches`; the default) or `count` (matching lines per
 *   file). Lines are clipped at `maxLineChars` code points and counted in the notice.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { Budgets, InputBounds, Marker, PathQuote, ToolError, Truncation } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Confinement from "./Confinement.js"
import * as FileIndex from "./FileIndex.js"
import * as Roots from "./Roots.js"
import type * as Supervisor from "./Supervisor.js"
import type { Workspace } from "./Workspace.js"
import * as Input from "./internal/input.js"
import * as FirstMatch from "./internal/search/firstMatch.js"
import * as Search from "./internal/search/grep.js"
import * as List from "./internal/search/list.js"
import * as Order from "./internal/search/order.js"
import * as Pattern from "./internal/search/pattern/glob.js"
import * as Pin from "./internal/search/pin.js"
import * as Rg from "./internal/search/ripgrep.js"

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
  /**
   * Present when `text` is a window of a long line around its first match (the match lies past
   * the `maxLineChars` clip of the line's start): the 1-based byte column where `text` starts.
   */
  column: Schema.optional(Schema.Number),
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
  truncation: Schema.optional(Truncation.Truncation),
  /** Which guards applied to ripgrep: the launcher, Landlock's read confinement, the memory ceiling. */
  guard: Confinement.Guard
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
 * The Grep result, one shape per output mode, plus `truncation` (present exactly when `truncated` is true).
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
  | ToolError.ToolMemoryLimit

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

type Mode = Search.Mode

const invalid = (field: string, reason: string) =>
  new ToolError.ToolInvalidInput({ tool: TOOL, field, reason })

const normalizeMode = (mode: typeof OutputMode.Type | undefined): Mode =>
  mode === undefined || mode === "files_with_matches" || mode === "files-with-matches"
    ? "filesWithMatches"
    : mode

/** Grep's `glob` as a filter, or why it cannot be one. */
const globFilterOf = (
  glob: string
): Effect.Effect<(relative: string) => boolean, ToolError.ToolInvalidInput> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(List.globFilter(glob))
    } catch (error) {
      if (error instanceof Pattern.PatternError) return Effect.fail(invalid("glob", error.message))
      throw error
    }
  })

/**
 * ripgrep flags that leave out what a `glob` of the form `!name` (a literal file name, matched at
 * any depth) excludes: the host's filter drops those files anyway, and ripgrep then never reads
 * them (the way round a file too large for the memory ceiling). Any other glob is applied by the
 * host alone, whose matcher is linear.
 */
const engineExclusion = (glob: string | undefined): ReadonlyArray<string> =>
  // ripgrep trims a glob's surrounding whitespace: such a name is left to the host
  glob !== undefined && glob.trim() === glob && /^![^*?[\]{}\\/!]+$/.test(glob) ? ["--glob", glob] : []

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
): Effect.Effect<
  GrepResult,
  GrepError,
  Budgets.Budgets | Workspace | Scratch.Scratch | Supervisor.Supervisor
> =>
  Order.interruptOnAbort(Confinement.withinRoots(Effect.scoped(search(input))), options?.signal).pipe(
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
        `the pattern is ${patternBytes} bytes, over the ${Marker.formatBytes(budgets.grepMaxPatternBytes)} limit for patterns; search for a shorter, distinctive part of it`
      )
    }
    if (decoded.glob !== undefined && (decoded.glob.length === 0 || decoded.glob.includes("\0"))) {
      return yield* invalid("glob", "the glob is empty or contains a NUL byte; use e.g. *.ts")
    }
    if (decoded.glob !== undefined) yield* InputBounds.checkGlob(TOOL, "glob", decoded.glob, budgets)
    const keep = decoded.glob === undefined ? undefined : yield* globFilterOf(decoded.glob)
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
        `${PathQuote.quote(target.display)} is not a regular file or directory; Grep searches files`
      )
    }
    const rg = yield* Rg.binary
    const pattern = yield* patternArguments(decoded.pattern)
    const matchFlags = [
      ...(decoded.caseInsensitive === true ? ["--ignore-case"] : ["--case-sensitive"]),
      ...(decoded.multiline === true ? ["--multiline", "--multiline-dotall"] : [])
    ]
    // a directory is held for the call: ripgrep starts in it, and what it lists is answered only
    // if it stayed in place (a file is searched by its real path)
    const pinned = isDirectory ? yield* Pin.pin(target) : undefined
    const cwd = pinned !== undefined ? pinned.shared : path.dirname(target.realPath)
    const index = yield* Effect.serviceOption(FileIndex.FileIndex)
    // file types are ripgrep's own knowledge: a typed search is left to ripgrep's walk
    const indexable = isDirectory && Option.isSome(index) && decoded.type === undefined
    const indexed = Option.filter(
      indexable ? yield* index.value.files(target.realPath) : Option.none<FileIndex.Snapshot>(),
      // an index of another directory than the one pinned (replaced since) is not used
      (snapshot) =>
        snapshot.identity === undefined ||
        pinned?.identity === undefined ||
        (snapshot.identity.dev === pinned.identity.dev && snapshot.identity.ino === pinned.identity.ino)
    )
    const contextFlags =
      mode === "content"
        ? [
            ...(before > 0 ? [`--before-context=${Math.min(before, contextCap)}`] : []),
            ...(after > 0 ? [`--after-context=${Math.min(after, contextCap)}`] : [])
          ]
        : []
    const common = {
      rg,
      cwd,
      mode,
      flags: [
        ...Rg.commonFlags,
        ...matchFlags,
        ...contextFlags,
        ...engineExclusion(decoded.glob),
        ...pattern.args
      ],
      stdin: pattern.stdin,
      pattern: decoded.pattern,
      headLimit,
      budgets,
      contextClamped,
      readRange: Roots.readRangeWithin(yield* Roots.roots),
      finder: FirstMatch.finder({
        pattern: decoded.pattern,
        caseInsensitive: decoded.caseInsensitive === true,
        multiline: decoded.multiline === true,
        patternFlags: [...matchFlags, ...pattern.args],
        patternOnStdin: pattern.stdin !== undefined
      })
    }
    const found =
      isDirectory && Option.isNone(indexed)
        ? // no index: one ripgrep run walks the directory newest first
          yield* Search.collectWalk({
            ...common,
            root: target.realPath,
            displayPrefix: Roots.displayPrefix(target),
            selection: decoded.type !== undefined ? [`--type=${decoded.type}`] : [],
            keep
          })
        : yield* Search.collect({
            ...common,
            candidates: Option.isSome(indexed)
              ? List.fromIndex(
                  keep === undefined
                    ? indexed.value.files
                    : yield* List.keptInTurns(indexed.value.files, keep),
                  target,
                  keep === undefined
                )
              : List.fromArray([
                  {
                    relative: target.realPath,
                    absolute: target.realPath,
                    display: target.display,
                    mtimeMs: target.stats.mtimeMs
                  }
                ])
          })
    if (pinned !== undefined) yield* Pin.stillInPlace(pinned, target)
    if (indexable && Option.isNone(indexed)) yield* index.value.warm(target.realPath)
    const tail = {
      guard: yield* Confinement.currentGuard,
      truncated: found.truncated,
      ...(found.notice !== undefined ? { notice: found.notice } : {}),
      ...(found.truncation !== undefined ? { truncation: found.truncation } : {})
    }
    if (mode === "content")
      return {
        matches: found.matches,
        count: found.matchCount,
        files: found.matchFiles,
        ...tail
      } satisfies GrepResult
    if (mode === "filesWithMatches")
      return { files: found.files, count: found.files.length, ...tail } satisfies GrepResult
    return {
      counts: found.counts,
      count: found.counts.reduce((sum, entry) => sum + entry.count, 0),
      ...tail
    } satisfies GrepResult
  })
