/**
 * The Glob tool (rules S1–S5, S12): files whose path matches a glob, newest first.
 *
 * - `pattern` is a glob relative to `path` (default: the workspace root), in picomatch's syntax
 *   (`internal/search/pattern/glob.ts`), matched in time linear in each path whatever the pattern;
 *   an absolute pattern names its own directory (`/repo/src/**\/*.ts`). `..` may not climb out.
 * - Ignore files apply with git's semantics (`IgnoreRules`), `.git/` is never listed, hidden files
 *   are, symlinks are not followed. An explicit `path` reaches into ignored trees (`node_modules`,
 *   `dist`, the scratch directory): ignore files above it do not apply, those at or below it do.
 * - The directory is held by a descriptor for the call (`internal/search/pin`): a directory
 *   exchanged into its place is never listed, and one moved away fails the call.
 * - Files come from the host's `FileIndex` when it has one (already in order: the list stops at
 *   the cap), else from one listing of the directory (`internal/search/glob`): ripgrep's, confined
 *   by the kernel to the roots, or where that cannot be, a walk in this process, reported in
 *   `unconfined`.
 * - Matches are ordered by modification time, newest first, ties by path; `limit` (default
 *   `globLimit`, at most `globMaxLimit`: larger values are clamped and noticed) and the search
 *   budget (`searchMaxLines` / `searchMaxBytes`) cap them with `truncated: true`.
 * - Workspace matches are workspace-relative (with `/`); scratch and external ones absolute.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { Budgets, InputBounds, PathQuote, ToolError, Truncation } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Confinement from "./Confinement.js"
import * as FileIndex from "./FileIndex.js"
import * as Roots from "./Roots.js"
import type * as Supervisor from "./Supervisor.js"
import type { Workspace } from "./Workspace.js"
import * as Notice from "./internal/notice.js"
import * as GlobList from "./internal/search/glob.js"
import * as Input from "./internal/input.js"
import * as Descriptor from "./internal/roots/descriptor.js"
import * as Order from "./internal/search/order.js"
import * as Pattern from "./internal/search/pattern/glob.js"
import * as Pin from "./internal/search/pin.js"

const TOOL = "Glob"

/**
 * @since 0.1.0
 * @category models
 */
export const GlobInput = Schema.Struct({
  /** A glob relative to `path`, e.g. `**\/*.ts`, `src/**\/*.{ts,tsx}`. */
  pattern: Schema.String,
  /** Directory to search (default: the workspace root). */
  path: Schema.optional(Schema.String),
  /** Most matches to return (default 100, at most 1000). */
  limit: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type GlobInput = typeof GlobInput.Type

/**
 * The Glob result: matches, `truncated`, `notice`, plus `truncation` (present exactly when `truncated` is true).
 *
 * @since 0.1.0
 * @category models
 */
export const GlobResult = Schema.Struct({
  /** Matching files, newest first. */
  matches: Schema.Array(Schema.String),
  /** How many matches are returned. */
  count: Schema.Number,
  truncated: Schema.Boolean,
  notice: Schema.optional(Schema.String),
  truncation: Schema.optional(Truncation.Truncation),
  /**
   * Present when the directory was listed by toolcap's own walk instead of ripgrep confined by
   * the kernel to the roots (no Landlock here): why.
   */
  unconfined: Schema.optional(Schema.String),
  /** Which guards applied to the listing: the launcher, Landlock's read confinement, the memory ceiling. */
  guard: Confinement.Guard
})

/**
 * @since 0.1.0
 * @category models
 */
export type GlobResult = typeof GlobResult.Type

/**
 * Everything `glob` can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type GlobError =
  | ToolError.ToolInvalidInput
  | ToolError.ToolPathDenied
  | ToolError.ToolNotFound
  | ToolError.ToolPatternInvalid

/**
 * Options of a call.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobOptions {
  /** Aborting it interrupts the call. */
  readonly signal?: AbortSignal | undefined
}

const invalid = (field: string, reason: string) =>
  new ToolError.ToolInvalidInput({ tool: TOOL, field, reason })

const sameIdentity = (
  a: { readonly dev: number; readonly ino: number } | undefined,
  b: { readonly dev: number; readonly ino: number } | undefined
) => a === undefined || b === undefined || (a.dev === b.dev && a.ino === b.ino)

/** The glob compiled, or the reason it cannot be. */
const compilePattern = (
  input: string,
  pattern: string
): Effect.Effect<Pattern.Glob, ToolError.ToolPatternInvalid> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(Pattern.compileGlob(pattern))
    } catch (error) {
      if (error instanceof Pattern.PatternError)
        return Effect.fail(new ToolError.ToolPatternInvalid({ pattern: input, reason: error.message }))
      throw error
    }
  })

/** Splits an absolute pattern into its directory and the glob below it. */
const splitPattern = (
  pattern: string,
  explicitPath: string | undefined
): Effect.Effect<
  { readonly directory: string | undefined; readonly glob: string },
  ToolError.ToolInvalidInput
> => {
  if (pattern.length === 0) return Effect.fail(invalid("pattern", "the pattern is empty; use e.g. **/*.ts"))
  if (pattern.includes("\0"))
    return Effect.fail(invalid("pattern", "the pattern contains a NUL byte; remove it"))
  let directory = explicitPath
  let glob = pattern
  if (path.isAbsolute(pattern)) {
    if (explicitPath !== undefined) {
      return Effect.fail(
        invalid(
          "pattern",
          "an absolute pattern names its own directory; drop path, or make the pattern relative to path"
        )
      )
    }
    // the literal folders before the first wildcard name the directory (braces nested past the
    // limit are reported when the pattern is compiled)
    let scanned: { readonly names: ReadonlyArray<string>; readonly rest: string }
    try {
      scanned = Pattern.scanBase(pattern.slice(1))
    } catch {
      scanned = { names: [], rest: pattern.slice(1) }
    }
    directory = `/${scanned.names.join("/")}`
    glob = scanned.rest
  }
  glob = glob.replace(/^(\.\/)+/, "")
  if (glob.split("/").includes("..")) {
    return Effect.fail(
      invalid(
        "pattern",
        "the pattern may not climb out of the searched directory with '..'; give that directory as path"
      )
    )
  }
  if (glob.length === 0)
    return Effect.fail(invalid("pattern", "the pattern names no files; use e.g. **/*.ts"))
  return Effect.succeed({ directory, glob })
}

/**
 * Finds files by glob.
 *
 * @since 0.1.0
 * @category constructors
 */
export const glob = (
  input: unknown,
  options?: GlobOptions
): Effect.Effect<
  GlobResult,
  GlobError,
  Budgets.Budgets | Workspace | Scratch.Scratch | Supervisor.Supervisor
> =>
  Order.interruptOnAbort(
    Effect.gen(function* () {
      const decoded = yield* Input.decode(TOOL, GlobInput, input)
      const budgets = yield* Budgets.Budgets
      const requested = yield* Input.positiveInteger(
        TOOL,
        "limit",
        decoded.limit,
        `limit is the number of matches to return, from 1 to ${budgets.globMaxLimit}`
      )
      const clamped = requested !== undefined && requested > budgets.globMaxLimit
      const limit = requested === undefined ? budgets.globLimit : clamped ? budgets.globMaxLimit : requested
      yield* InputBounds.checkGlob(TOOL, "pattern", decoded.pattern, budgets)
      const { directory, glob: pattern } = yield* splitPattern(decoded.pattern, decoded.path)

      const compiled = yield* compilePattern(decoded.pattern, pattern)
      const target = yield* Roots.resolve(TOOL, "path", directory ?? ".")
      if (!target.stats.isDirectory()) {
        return yield* invalid(
          "path",
          `${PathQuote.quote(target.display)} is a file, not a directory; Glob searches directories (Read the file instead)`
        )
      }
      // the pattern's fixed start folder is resolved and contained like any path argument
      if (compiled.base.length > 0)
        yield* Roots.resolve(TOOL, "pattern", path.join(target.realPath, ...compiled.base)).pipe(
          Effect.catchTag("ToolNotFound", () => Effect.void)
        )
      const pinned = yield* Pin.pin(target)
      const index = yield* Effect.serviceOption(FileIndex.FileIndex)
      const snapshot = Option.isSome(index) ? yield* index.value.files(target.realPath) : Option.none()
      // an index of another directory than the one pinned (replaced since) is not used
      const indexed = Option.filter(snapshot, (s) => sameIdentity(s.identity, pinned.identity))
      const prefix = Roots.displayPrefix(target)
      const gate = Order.budget(limit, budgets.searchMaxLines, budgets.searchMaxBytes)
      const matches: Array<string> = []
      let total = 0
      let unconfined: string | undefined
      let guard = GlobList.hostGuard("listed from the host's file index (the host's own walk, kept current)")
      if (Option.isSome(indexed)) {
        // the index is in search order already: admit from the front, count the rest
        let open = true
        const files = indexed.value.files
        for (let at = 0; at < files.length; at++) {
          // matching is linear per path, and the loop lets the event loop in between slices
          if (at > 0 && at % Order.FILES_PER_TURN === 0) yield* Order.eventLoopTurn
          const file = files[at]!
          if (!compiled.matches(file.relative)) continue
          total++
          if (open && gate.admit(Order.renderedBytes(prefix + file.relative)))
            matches.push(prefix + file.relative)
          else open = false
        }
      } else {
        const found = yield* GlobList.list(
          pinned,
          target.realPath,
          compiled,
          pattern,
          prefix,
          limit,
          yield* Roots.walkGuard
        )
        total = found.total
        unconfined = found.unconfined
        guard = found.guard
        for (let at = 0; ; at++) {
          const file = found.at(at)
          if (file === undefined || !gate.admit(Order.renderedBytes(file.display))) break
          matches.push(file.display)
        }
      }
      // each name answered is, by its own descriptor, where the listing put it: a directory below
      // exchanged with an outside one while it was listed (renameat2) gives no name
      const confirmed = Descriptor.confirmWithin(
        pinned.local,
        target.realPath,
        matches.map((display) => display.slice(prefix.length))
      )
      if (confirmed.length < matches.length) {
        total -= matches.length - confirmed.length
        matches.splice(0, matches.length, ...confirmed.map((at) => matches[at]!))
      }
      // what was listed is answered only if the directory stayed where it was resolved
      yield* Pin.stillInPlace(pinned, target)
      if (Option.isSome(index) && Option.isNone(indexed)) yield* index.value.warm(target.realPath)
      const told = Notice.glob({
        requestedLimit: requested,
        limit,
        maxLimit: budgets.globMaxLimit,
        clamped,
        shown: matches.length,
        total,
        stop: gate.stop(),
        keptBytes: gate.bytes(),
        maxLines: budgets.searchMaxLines,
        maxBytes: budgets.searchMaxBytes,
        target: target.display,
        pattern
      })
      return {
        matches,
        count: matches.length,
        ...told,
        ...(unconfined !== undefined ? { unconfined } : {}),
        guard
      }
    }).pipe(Effect.scoped),
    options?.signal
  ).pipe(Effect.withSpan("Glob.glob"))
