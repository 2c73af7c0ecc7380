/**
 * Where a clipped line's first match starts, found without asking ripgrep for columns.
 *
 * ripgrep's `--column` (like any per-match detail: colours, `--only-matching`, `--json`) makes it
 * find and store every match of a matching line before it prints the line: on a 100 MB line of a
 * common letter that is ten million matches, about 30 times the search's time and 3.5 times its
 * memory. Grep needs a match's position only on a line it clips, and only to tell whether the clip
 * shows that match (else the result shows a window around it). So content runs print no columns
 * (`columns` is false) and a clipped matching line's first match is placed, cheapest first:
 *
 * 1. `inHead`, here and at once: when the pattern is a literal, its first occurrence in the start
 *    of the line ripgrep printed (case-sensitive: exactly the first match; ignoring case: an
 *    ASCII-folded occurrence is a real match, so one inside the clip settles it);
 * 2. `locate`, step one: one ripgrep run over those starts on stdin, one per line,
 *    `--only-matching --byte-offset`. A first match that starts inside the clip and ends before
 *    the cut end of the start (where `$` or `\b` could read it otherwise) is a match of the line
 *    too, so the line's first match starts inside the clip; of a start that is the whole line, it
 *    is exactly the line's first match;
 * 3. step two, for what is still open (the match lies past the printed start, or a cut end could
 *    have fooled the search): ripgrep with `--column` over those files alone, the old price, paid
 *    only where a window is likely to be shown.
 *
 * A multiline search keeps `--column` on every run: a match there spans lines the starts do not hold.
 */
import * as Effect from "effect/Effect"
import { isUtf8 } from "node:buffer"
import { type ToolError, Utf8 } from "@toolcap/limits"
import type * as Supervisor from "../../Supervisor.js"
import type * as Memory from "./memory.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"

/** A clipped matching line whose first match is not placed yet. */
export interface Unplaced {
  /** File offset of the line's start. */
  readonly lineByte: number
  /** Bytes of the line the clip shows: a first match that starts before them is shown. */
  readonly keptBytes: number
  /** The line's first bytes as ripgrep printed them. */
  readonly head: Buffer
  /** `head` is the whole line. */
  readonly whole: boolean
}

/**
 * A first match placed: `inside` (it starts within the clip; its exact offset may be unknown) or
 * the line offset where it starts.
 */
export type Placed = "inside" | number

/** How a search places first matches. */
export interface Finder {
  /** Every content run asks ripgrep for columns (a multiline search). */
  readonly columns: boolean
  /** Places the first match from the line's printed start alone, or leaves it open (undefined). */
  readonly inHead: (line: Unplaced) => Placed | undefined
  /** Pattern flags for a run over the starts on stdin; undefined when the pattern itself goes on stdin. */
  readonly headFlags: ReadonlyArray<string> | undefined
}

/** Characters that make a pattern more than a literal to ripgrep's regex syntax. */
const REGEX_SYNTAX = /[\\.+*?()|[\]{}^$\n]/

const lowerAscii = (bytes: Buffer): Buffer => {
  const lowered = Buffer.from(bytes)
  for (let at = 0; at < lowered.length; at++) {
    const byte = lowered[at]!
    if (byte >= 0x41 && byte <= 0x5a) lowered[at] = byte + 0x20
  }
  return lowered
}

/**
 * The finder of a pattern: `patternFlags` are the flags that give ripgrep the pattern and its
 * case rule (`--regexp=...`, `--ignore-case`), `patternOnStdin` when the pattern is read from stdin.
 */
export const finder = (options: {
  readonly pattern: string
  readonly caseInsensitive: boolean
  readonly multiline: boolean
  readonly patternFlags: ReadonlyArray<string>
  readonly patternOnStdin: boolean
}): Finder => {
  const literal = !options.multiline && !REGEX_SYNTAX.test(options.pattern)
  const needle = options.caseInsensitive
    ? lowerAscii(Buffer.from(options.pattern))
    : Buffer.from(options.pattern)
  return {
    columns: options.multiline,
    headFlags: options.multiline || options.patternOnStdin ? undefined : options.patternFlags,
    inHead: (line) => {
      if (!literal) return undefined
      const at = (options.caseInsensitive ? lowerAscii(line.head) : line.head).indexOf(needle)
      if (at === -1) return undefined
      // case-sensitive, the first occurrence in the start is the first in the line: an earlier one
      // would end before this one does, inside the start too
      if (!options.caseInsensitive) return at < line.keptBytes ? "inside" : at
      // ignoring case, ripgrep folds more than ASCII (K and the Kelvin sign): an earlier match may
      // have been missed, so only a match inside the clip is known to be shown
      return at < line.keptBytes ? "inside" : undefined
    }
  }
}

/** A line whose first match `locate` places, with where ripgrep finds it again. */
export interface Pending {
  /** The file as the search run named it (relative to `cwd`). */
  readonly relative: string
  /** The file as a memory-limit error names it. */
  readonly file: Memory.RunFile
  /** 1-based line number. */
  readonly line: number
  /** Matching lines of the file up to and including this one. */
  readonly ordinal: number
  readonly at: Unplaced
}

export interface LocateInput {
  readonly rg: string
  readonly cwd: string
  readonly stdin: string | undefined
  readonly pattern: string
  /** Every flag of the search's content runs, but the mode's. */
  readonly flags: ReadonlyArray<string>
  readonly finder: Finder
  /** The flags that make ripgrep print content with columns. */
  readonly columnFlags: ReadonlyArray<string>
  readonly maxTextBytes: number
  /** The end of a run, as the search reports it. */
  readonly runFailure: (
    exit: Rg.Exit,
    files: Effect.Effect<ReadonlyArray<Memory.RunFile>, never, Supervisor.Supervisor>
  ) => Effect.Effect<
    void,
    ToolError.ToolPatternInvalid | ToolError.ToolSpawnFailed | ToolError.ToolMemoryLimit,
    Supervisor.Supervisor
  >
}

/**
 * Places the first match of each pending line (same order): the line offset where it starts when
 * that is past the clip, undefined when the clip shows it or it cannot be found again (the file
 * changed: the line is shown clipped).
 */
export const locate = (
  c: LocateInput,
  pending: ReadonlyArray<Pending>
): Effect.Effect<
  Array<number | undefined>,
  ToolError.ToolPatternInvalid | ToolError.ToolSpawnFailed | ToolError.ToolMemoryLimit,
  Supervisor.Supervisor
> =>
  Effect.gen(function* () {
    const placed: Array<Placed | undefined> = pending.map(() => undefined)
    if (pending.length === 0) return []
    if (c.finder.headFlags !== undefined) yield* inStarts(c, c.finder.headFlags, pending, placed)
    const open = pending.flatMap((entry, index) => (placed[index] === undefined ? [index] : []))
    if (open.length > 0) yield* withColumns(c, pending, open, placed)
    return placed.map((at, index) =>
      at === undefined || at === "inside" || at < pending[index]!.at.keptBytes ? undefined : at
    )
  })

/** Step one: the starts on stdin, one per line; fills `placed` where a start settles it. */
const inStarts = (
  c: LocateInput,
  headFlags: ReadonlyArray<string>,
  pending: ReadonlyArray<Pending>,
  placed: Array<Placed | undefined>
) =>
  Effect.gen(function* () {
    // stdin is text: a start that is not valid UTF-8 is left to the column run
    const lines: Array<{ readonly index: number; readonly start: number; readonly bytes: number }> = []
    const texts: Array<string> = []
    let offset = 0
    pending.forEach((entry, index) => {
      // a cut start loses its last character, which the cut may have split
      const bytes = entry.at.whole
        ? entry.at.head
        : entry.at.head.subarray(0, Utf8.prefixBoundary(entry.at.head, entry.at.head.length - 1))
      if (bytes.length === 0 || !isUtf8(bytes)) return
      lines.push({ index, start: offset, bytes: bytes.length })
      texts.push(bytes.toString("utf8"))
      offset += bytes.length + 1
    })
    if (lines.length === 0) return
    let line = 0
    let seen = -1
    let rest: Array<Buffer> = []
    const onMatch = (record: Buffer) => {
      const colon = record.indexOf(0x3a)
      if (colon <= 0) return
      const at = Number(record.subarray(0, colon).toString("latin1"))
      const length = record.length - colon - 1
      while (line < lines.length - 1 && lines[line + 1]!.start <= at) line++
      // only the first match of a line counts: ripgrep reports a line's matches in order
      if (line === seen) return
      seen = line
      const target = lines[line]!
      const entry = pending[target.index]!
      const start = at - target.start
      if (entry.at.whole) placed[target.index] = start
      else if (start < entry.at.keptBytes && start + length < target.bytes) placed[target.index] = "inside"
    }
    const exit = yield* Rg.run(
      c.rg,
      [
        "--no-config",
        "--text",
        "--only-matching",
        "--byte-offset",
        "--no-line-number",
        "--no-heading",
        "--color=never",
        ...headFlags,
        "-"
      ],
      {
        cwd: c.cwd,
        stdin: texts.join("\n") + "\n",
        onData: (chunk) => {
          let from = 0
          for (;;) {
            const end = chunk.indexOf(0x0a, from)
            if (end === -1) {
              if (from < chunk.length) rest.push(chunk.subarray(from))
              return
            }
            const piece = chunk.subarray(from, end)
            onMatch(rest.length === 0 ? piece : Buffer.concat([...rest, piece]))
            rest = []
            from = end + 1
          }
        }
      }
    )
    // stdin holds no file: a failure names none
    yield* c.runFailure(exit, Effect.succeed([]))
  })

/** Step two: ripgrep with `--column` over the files of the lines still open. */
const withColumns = (
  c: LocateInput,
  pending: ReadonlyArray<Pending>,
  open: ReadonlyArray<number>,
  placed: Array<Placed | undefined>
) =>
  Effect.gen(function* () {
    const wanted = new Map<string, number>()
    const files = new Map<string, Memory.RunFile>()
    let maxCount = 0
    for (const index of open) {
      const entry = pending[index]!
      wanted.set(`${entry.line}\0${entry.relative}`, index)
      files.set(entry.relative, entry.file)
      maxCount = Math.max(maxCount, entry.ordinal)
    }
    let left = wanted.size
    let stopRun: (() => void) | undefined
    const decoder = Records.decoder(
      "content",
      c.maxTextBytes,
      (record) => {
        if (!record.isMatch || left === 0) return
        const index = wanted.get(`${record.line}\0${record.path}`)
        if (index === undefined || placed[index] !== undefined) return
        // a line that moved (the file changed since) is left open: it is shown clipped
        if (record.byte === pending[index]!.at.lineByte) placed[index] = record.column - 1
        if (--left === 0) stopRun?.()
      },
      true
    )
    const exit = yield* Rg.run(
      c.rg,
      [...c.flags, ...c.columnFlags, `--max-count=${maxCount}`, "--threads=1", "--", ...files.keys()],
      {
        cwd: c.cwd,
        stdin: c.stdin,
        onData: (chunk, stop) => {
          stopRun = stop
          decoder.push(chunk)
          if (left === 0) stop()
        }
      }
    )
    if (!exit.stopped) decoder.end()
    yield* c.runFailure(exit, Effect.succeed([...files.values()]))
  })
