/**
 * What one ripgrep run of Grep found per file, and what every run of Grep shares: the flags that
 * make ripgrep print only what a mode returns, a content line kept as results show it, the binary
 * rule applied to a file with hits, and how a run's end is reported (a refused pattern, a run
 * ended by a signal).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Budgets, LineClip, ToolError, Utf8 } from "@toolcap/limits"
import * as Binary from "../../Binary.js"
import type * as Supervisor from "../../Supervisor.js"
import type * as FirstMatch from "./firstMatch.js"
import type { Candidate } from "./list.js"
import * as Memory from "./memory.js"
import * as Records from "./records.js"
import * as Rg from "./ripgrep.js"

export type Mode = Records.Mode

export interface Line {
  readonly line: number
  readonly text: string
  readonly context: boolean
  readonly clipped: boolean
  /** File offset of the first byte a clip left out. */
  readonly clipByte: number
  readonly size: number
  /**
   * A matching line whose clip does not reach its first match: the file offsets of the line's
   * start and of that match, so the result can show a window around the match instead.
   */
  readonly hidden?: { readonly lineByte: number; readonly matchByte: number } | undefined
  /**
   * A clipped matching line of a run without columns whose first match is not placed yet
   * (`./firstMatch.ts`): until it is, the line counts as shown by its clip.
   */
  readonly unplaced?: FirstMatch.Unplaced | undefined
}

export interface FileHits {
  /** Content mode: lines in file order (bounded). */
  readonly lines: Array<Line>
  bytes: number
  /** Count and files modes: matching lines, or 1 for "has a match". */
  matchedLines: number
  /** Known to be a text file (the binary sniff already ran on it). */
  text?: boolean
}

export const isBinary = (candidate: Candidate, budgets: Budgets.BudgetsValue): boolean =>
  Option.isSome(
    Binary.detectSync(candidate.absolute, budgets.binarySniffBytes, budgets.binaryNonPrintableRatio)
  )

/**
 * The flags that make ripgrep print only what `mode` returns; `columns`: content lines with their
 * first match's column (which costs ripgrep finding every match of the line, `./firstMatch.ts`).
 */
export const modeFlags = (mode: Mode, maxLineChars: number, columns: boolean): ReadonlyArray<string> =>
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
          ...(columns ? ["--column"] : []),
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
 * Adds a content record's line to `file`, clipped as results show it; its rendered size. A
 * clipped matching line whose record has no column is placed by `finder` from its printed start,
 * or left `unplaced`.
 */
export const addLine = (
  file: FileHits,
  record: Records.SearchRecord,
  columns: number,
  maxLineChars: number,
  finder: FirstMatch.Finder
): number => {
  const { bytes, preview } = Records.lineBytes(record.text, columns)
  const clip = LineClip.clipLine(Utf8.decode(bytes), maxLineChars)
  const size = Buffer.byteLength(`:${record.line}:${clip.text}`) + 1
  const clipped = preview || clip.clippedLines > 0
  const keptBytes = Buffer.byteLength(clip.text)
  let matchAt: number | undefined
  let unplaced: FirstMatch.Unplaced | undefined
  if (clipped && record.isMatch) {
    if (record.column > 0) matchAt = record.column - 1
    else {
      // a whole line keeps its final \r: the pattern sees it
      const line = { lineByte: record.byte, keptBytes, head: preview ? bytes : record.text, whole: !preview }
      const placed = finder.inHead(line)
      if (placed === undefined) unplaced = line
      else if (placed !== "inside") matchAt = placed
    }
  }
  file.lines.push({
    line: record.line,
    text: clip.text,
    context: !record.isMatch,
    clipped,
    clipByte: record.byte + keptBytes,
    size,
    ...(matchAt !== undefined && matchAt >= keptBytes
      ? { hidden: { lineByte: record.byte, matchByte: record.byte + matchAt } }
      : {}),
    ...(unplaced !== undefined ? { unplaced } : {})
  })
  file.bytes += size
  return size
}

/**
 * One ripgrep run, its output fed to `decoder` (ended with the run); `onStop` gets the way to
 * kill the run early once output has begun.
 */
export const runInto = (
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

/**
 * The run's end at its memory ceiling (the files it was searching, listed only then), the
 * pattern's refusal, or its end by a signal, as the tool reports them.
 */
export const runFailure = (
  c: { readonly pattern: string },
  exit: Rg.Exit,
  files: Effect.Effect<ReadonlyArray<Memory.RunFile>, never, Supervisor.Supervisor>
): Effect.Effect<
  void,
  ToolError.ToolPatternInvalid | ToolError.ToolSpawnFailed | ToolError.ToolMemoryLimit,
  Supervisor.Supervisor
> =>
  exit.memoryExhausted
    ? Effect.flatMap(files, (listed) => Effect.fail(Memory.limitError("Grep", exit.memoryBytes, listed)))
    : // ripgrep refuses a bad pattern before it searches: exit 2 and its reason (file errors are
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

/** Bytes of the UTF-8 sequence a byte starts (1 for a continuation or an invalid byte). */
const sequenceLength = (byte: number): number =>
  byte < 0xc0 ? 1 : byte < 0xe0 ? 2 : byte < 0xf0 ? 3 : byte < 0xf8 ? 4 : 1

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80

/** Reads `length` bytes of a file from `from` (fewer at its end); undefined when it cannot. */
export type ReadRange = (absolute: string, from: number, length: number) => Buffer | undefined

/**
 * A window of a long line around its first match: a quarter of `maxLineChars` characters before
 * the match and the rest after it, cut at character boundaries and at the line's end. `column` is
 * the 1-based byte column of the line where the window starts, `endByte` the file offset after it.
 * Undefined when the file cannot be read there any more (changed, gone, outside the roots now).
 */
export const windowAround = (
  read: ReadRange,
  absolute: string,
  hidden: { readonly lineByte: number; readonly matchByte: number },
  maxLineChars: number
): { readonly text: string; readonly column: number; readonly endByte: number } | undefined => {
  const lead = Math.floor(maxLineChars / 4)
  const from = Math.max(hidden.lineByte, hidden.matchByte - 4 * lead)
  const bytes = read(absolute, from, hidden.matchByte - from + 4 * maxLineChars)
  const match = hidden.matchByte - from
  if (bytes === undefined || match >= bytes.length || isContinuation(bytes[match])) return undefined
  // back from the match, `lead` characters (not before the line's start nor into a cut sequence)
  let start = match
  for (let chars = 0; chars < lead && start > 0; chars++) {
    let previous = start - 1
    while (previous > 0 && isContinuation(bytes[previous])) previous--
    if (isContinuation(bytes[previous]) || previous + sequenceLength(bytes[previous]!) !== start) break
    start = previous
  }
  let end = start
  for (let chars = 0; chars < maxLineChars && end < bytes.length && bytes[end] !== 0x0a; chars++) {
    const next = end + sequenceLength(bytes[end]!)
    // a sequence the read cut in two is left out whole
    if (next > bytes.length) break
    end = next
  }
  // a CRLF line's \r is not part of its text
  if (bytes[end] === 0x0a && end > start && bytes[end - 1] === 0x0d) end--
  return {
    text: Utf8.decode(bytes.subarray(start, end)),
    column: from + start - hidden.lineByte + 1,
    endByte: from + end
  }
}
