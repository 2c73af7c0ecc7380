/**
 * The Read tool (rules R1–R9, M11): a window of a text file, byte-faithful, no
 * line numbers and no marker in `content`, with the window's metadata beside it.
 *
 * - `offset` is the 1-based first line (default 1), `limit` a line count (default and maximum the
 *   `readWindowLines` budget; larger values are clamped and the notice says so).
 * - The window stops at whichever comes first: `limit`, `searchMaxLines`, `searchMaxBytes`
 *   (measured after clipping). It always holds at least one line when the file has one at `offset`.
 * - Lines longer than `maxLineChars` code points are clipped (their line ending kept) and counted.
 * - `totalLines` appears only when the window reached end of file; `truncated` is true when the
 *   window stopped before it or clipped a line; `notice` names the next offset.
 * - Never refuses on size: the file is streamed, memory does not depend on its size, and a sparse
 *   line index lets the next page of an unchanged file seek instead of rescanning (`LineIndex`).
 * - Refuses binary content (`Binary`), directories, FIFOs and other non-regular files, paths
 *   outside every root (`Roots`) and offsets past end of file, each with a typed error.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import { Budgets, ToolError, Truncation } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Binary from "./Binary.js"
import * as LineIndex from "./LineIndex.js"
import * as Roots from "./Roots.js"
import type { Workspace } from "./Workspace.js"
import * as Input from "./internal/input.js"
import * as Notice from "./internal/notice.js"
import * as Window from "./internal/read/window.js"

const TOOL = "Read"

/**
 * @since 0.1.0
 * @category models
 */
export const ReadInput = Schema.Struct({
  /** File to read: relative to the workspace, or absolute inside an allowed root. */
  path: Schema.String,
  /** 1-based line to start at (default 1); `-N` starts N lines before the end (the last N lines). */
  offset: Schema.optional(Schema.Number),
  /** Lines to return (default and maximum: the read window, 2000). */
  limit: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ReadInput = typeof ReadInput.Type

/**
 * The Read result: the window and its metadata, plus the machine-readable `truncation` (present exactly when
 * `truncated` is true).
 *
 * @since 0.1.0
 * @category models
 */
export const ReadResult = Schema.Struct({
  /** Workspace-relative path (with `/`), or absolute for scratch and external files. */
  path: Schema.String,
  root: Schema.Literal("workspace", "scratch", "external"),
  /** The window, byte-faithful (line endings kept) except for clipped lines. */
  content: Schema.String,
  /**
   * The window's first line number; negative (`-N`: N lines before the end) when it was asked
   * from the end and the file's line count is not known.
   */
  offset: Schema.Number,
  lineCount: Schema.Number,
  /** Present only when the window reached end of file. */
  totalLines: Schema.optional(Schema.Number),
  fileBytes: Schema.Number,
  truncated: Schema.Boolean,
  notice: Schema.optional(Schema.String),
  truncation: Schema.optional(Truncation.Truncation)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ReadResult = typeof ReadResult.Type

/**
 * Everything `read` can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type ReadError =
  | ToolError.ToolInvalidInput
  | ToolError.ToolPathDenied
  | ToolError.ToolNotFound
  | ToolError.ToolIsDirectory
  | ToolError.ToolBinaryContent

/** What a non-regular file is, for the error message. */
const describeSpecial = (stats: {
  isFIFO(): boolean
  isSocket(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
}) =>
  stats.isFIFO()
    ? "a FIFO (named pipe)"
    : stats.isSocket()
      ? "a socket"
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? "a device"
        : "not a regular file"

const notRegular = (shown: string, what: string) =>
  new ToolError.ToolInvalidInput({
    tool: TOOL,
    field: "path",
    reason: `${shown} is ${what}; Read only reads regular files (reading it could block or never end)`
  })

/** Opens without blocking (a FIFO would block a plain open) and without following a late symlink. */
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW

const ioError = (shown: string, requested: string) => (cause: unknown) => {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code
  if (code === "ENOENT") return new ToolError.ToolNotFound({ path: shown })
  if (code === "EISDIR") return new ToolError.ToolIsDirectory({ path: shown })
  if (code === "ELOOP") {
    return new ToolError.ToolPathDenied({
      path: requested,
      reason: "it was replaced by a symlink while being read"
    })
  }
  if (code === "EACCES" || code === "EPERM") {
    return new ToolError.ToolPathDenied({ path: requested, reason: "the file system denies reading it" })
  }
  return undefined
}

/** Runs a file operation; known errno codes become typed errors, anything else is a defect. */
const attempt = <A>(
  shown: string,
  requested: string,
  run: (signal: AbortSignal) => Promise<A>
): Effect.Effect<A, ToolError.ToolNotFound | ToolError.ToolIsDirectory | ToolError.ToolPathDenied> =>
  Effect.tryPromise({ try: run, catch: (cause) => cause }).pipe(
    Effect.catchAll((cause) => {
      const mapped = ioError(shown, requested)(cause)
      return mapped === undefined ? Effect.die(cause) : Effect.fail(mapped)
    })
  )

/** `attempt` for a synchronous file operation. */
const attemptSync = <A>(
  shown: string,
  requested: string,
  run: () => A
): Effect.Effect<A, ToolError.ToolNotFound | ToolError.ToolIsDirectory | ToolError.ToolPathDenied> =>
  Effect.try({ try: run, catch: (cause) => cause }).pipe(
    Effect.catchAll((cause) => {
      const mapped = ioError(shown, requested)(cause)
      return mapped === undefined ? Effect.die(cause) : Effect.fail(mapped)
    })
  )

const pastEnd = (shown: string, offset: number, totalLines: number) =>
  new ToolError.ToolInvalidInput({
    tool: TOOL,
    field: "offset",
    reason:
      totalLines === 0
        ? `${shown} is empty; read it without an offset (or with offset 1)`
        : `offset ${offset} is past the end of ${shown}, which has ${Input.plural(totalLines, "line")}; use an offset from 1 to ${totalLines}`
  })

/**
 * Reads a window of a file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (
  input: unknown
): Effect.Effect<
  ReadResult,
  ReadError,
  Budgets.Budgets | Workspace | Scratch.Scratch | LineIndex.LineIndex
> =>
  Effect.gen(function* () {
    const decoded = yield* Input.decode(TOOL, ReadInput, input)
    const budgets = yield* Budgets.Budgets
    const requestedOffset = decoded.offset ?? 1
    if (!Number.isSafeInteger(requestedOffset) || requestedOffset === 0) {
      return yield* new ToolError.ToolInvalidInput({
        tool: TOOL,
        field: "offset",
        reason: `${String(requestedOffset)} is not allowed: offset is the 1-based line number to start at (1 is the first line), or -N for the last N lines`
      })
    }
    const limit = yield* Input.positiveInteger(
      TOOL,
      "limit",
      decoded.limit,
      `limit is the number of lines to return, from 1 to ${budgets.readWindowLines}`
    )
    const windowLines = Math.min(budgets.readWindowLines, budgets.searchMaxLines)
    const clamped = limit !== undefined && limit > windowLines
    const maxLines = limit === undefined || clamped ? windowLines : limit

    const target = yield* Roots.resolve(TOOL, "path", decoded.path)
    const shown = target.display
    if (target.stats.isDirectory()) return yield* new ToolError.ToolIsDirectory({ path: shown })
    if (!target.stats.isFile()) return yield* notRegular(shown, describeSpecial(target.stats))
    const named = Binary.byName(target.realPath)
    if (Option.isSome(named)) {
      return yield* new ToolError.ToolBinaryContent({
        path: shown,
        size: target.stats.size,
        reason: named.value.reason
      })
    }

    return yield* Effect.scoped(
      Effect.gen(function* () {
        const fd = yield* Effect.acquireRelease(Roots.openFile(TOOL, target, OPEN_FLAGS), (opened) =>
          Effect.sync(() => fs.closeSync(opened))
        )
        const stats = fs.fstatSync(fd, { bigint: true })
        if (!stats.isFile()) return yield* notRegular(shown, describeSpecial(stats))
        const size = Number(stats.size)
        const identity: LineIndex.FileIdentity = {
          dev: stats.dev,
          ino: stats.ino,
          size: stats.size,
          mtimeNs: stats.mtimeNs,
          ctimeNs: stats.ctimeNs
        }
        const head = yield* attemptSync(shown, decoded.path, () =>
          Binary.readHead(fd, Math.min(budgets.binarySniffBytes, size))
        )
        const sniffed = Binary.sniff(head, budgets.binaryNonPrintableRatio)
        if (Option.isSome(sniffed)) {
          return yield* new ToolError.ToolBinaryContent({ path: shown, size, reason: sniffed.value.reason })
        }

        const key = target.realPath
        const lineIndex = yield* LineIndex.LineIndex
        const known = lineIndex.totalLines(key, identity)
        // from the end: a known line count turns it into a line number, else find it backwards
        let offset = requestedOffset
        let fromEnd: { readonly start: number } | undefined
        if (requestedOffset < 0) {
          if (known !== undefined) offset = Math.max(1, known + requestedOffset + 1)
          else {
            const last = yield* attempt(shown, decoded.path, (signal) =>
              Window.lastLines(fd, size, -requestedOffset, signal)
            )
            if (last.fromStart) {
              offset = 1
              if (last.totalLines !== undefined) lineIndex.recordTotal(key, identity, last.totalLines)
            } else fromEnd = { start: last.byte }
          }
        }
        if (known !== undefined && offset > Math.max(known, 1)) return yield* pastEnd(shown, offset, known)

        // a window found from the end is numbered from 1 internally; its real numbers are unknown
        const outcome = yield* attempt(shown, decoded.path, (signal) =>
          Window.scan({
            fd,
            size,
            from:
              fromEnd !== undefined
                ? { line: 1, byte: fromEnd.start }
                : lineIndex.seek(key, identity, offset),
            offset: fromEnd !== undefined ? 1 : offset,
            maxLines,
            maxBytes: budgets.searchMaxBytes,
            maxLineChars: budgets.maxLineChars,
            onCheckpoint: (checkpoint) => {
              if (fromEnd === undefined) lineIndex.record(key, identity, checkpoint)
            },
            signal
          })
        )

        if (outcome.kind === "PastEnd") {
          lineIndex.recordTotal(key, identity, outcome.totalLines)
          return yield* pastEnd(shown, offset, outcome.totalLines)
        }
        if (fromEnd === undefined) {
          if (outcome.atEof) lineIndex.recordTotal(key, identity, outcome.next.line - 1)
          else lineIndex.record(key, identity, outcome.next)
        }
        return buildResult({
          shown,
          shellPath: target.root.kind === "workspace" ? target.display : target.realPath,
          root: target.root.kind,
          offset: fromEnd !== undefined ? requestedOffset : offset,
          offsetKnown: fromEnd === undefined,
          size,
          maxLines,
          maxBytes: budgets.searchMaxBytes,
          maxLineChars: budgets.maxLineChars,
          requestedLimit: limit,
          clampedTo: clamped ? windowLines : undefined,
          window: outcome
        })
      })
    )
  }).pipe(Effect.withSpan("Read.read"))

interface BuildInput {
  readonly shown: string
  readonly shellPath: string
  readonly root: Roots.RootKind
  readonly offset: number
  readonly offsetKnown: boolean
  readonly size: number
  readonly maxLines: number
  readonly maxBytes: number
  readonly maxLineChars: number
  readonly requestedLimit: number | undefined
  readonly clampedTo: number | undefined
  readonly window: Window.Window
}

const buildResult = (b: BuildInput): ReadResult => {
  const w = b.window
  // lines of a window found from the end count up towards 0: -N, -N+1, ...
  const nextOffset = b.offsetKnown ? w.next.line : b.offset + w.lineCount
  const told = Notice.read({
    offset: b.offset,
    offsetKnown: b.offsetKnown,
    lineCount: w.lineCount,
    atEof: w.atEof,
    stoppedBy: w.stoppedBy,
    nextOffset,
    maxLines: b.maxLines,
    maxBytes: b.maxBytes,
    maxLineChars: b.maxLineChars,
    requestedLimit: b.requestedLimit,
    clampedTo: b.clampedTo,
    singleLineBytes: w.singleLineBytes,
    contentBytes: w.contentBytes,
    clippedLines: w.clippedLines,
    firstClip:
      w.firstClippedLine !== undefined && w.firstClippedByte !== undefined
        ? {
            shellPath: b.shellPath,
            line: b.offsetKnown ? w.firstClippedLine : b.offset + w.firstClippedLine - 1,
            byte: w.firstClippedByte
          }
        : undefined,
    fileBytes: b.size
  })
  return {
    path: b.shown,
    root: b.root,
    content: w.content,
    offset: b.offset,
    lineCount: w.lineCount,
    ...(w.atEof && b.offsetKnown ? { totalLines: b.offset + w.lineCount - 1 } : {}),
    fileBytes: b.size,
    ...told
  }
}
