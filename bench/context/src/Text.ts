/**
 * Text cuts the peer models share: heads and tails by bytes (at a code point boundary or at a
 * line end) and by UTF-16 units (never half of a surrogate pair), line counts, and the one text a
 * host that merges the streams shows.
 *
 * @since 0.1.0
 */

/**
 * A tool call's raw output: the two streams of a command and its exit code, or a file's text (in
 * `stdout`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RawOutput {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode?: number
  /** The command line the agent ran (absent for a file's text): hosts that rewrite or classify by command read it. */
  readonly command?: string
  /**
   * Both streams as they arrived, chunk by chunk, for hosts that capture them into one file in
   * arrival order; absent for a file's text. Joined, the `stdout` chunks are `stdout`, the `stderr`
   * chunks `stderr`.
   */
  readonly arrival?: ReadonlyArray<{ readonly stream: "stdout" | "stderr"; readonly data: string }>
  /** The outputs of the command lines a host runs itself in place of this one (`ShellModel.hostRuns`). */
  readonly hostRuns?: ReadonlyArray<RawOutput>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * UTF-8 size of a text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")

/**
 * The one text a host that merges the streams shows: stdout, then stderr (on a line of its own).
 *
 * @since 0.1.0
 * @category constructors
 */
export const combined = (raw: RawOutput): string =>
  raw.stderr === ""
    ? raw.stdout
    : raw.stdout === "" || raw.stdout.endsWith("\n")
      ? raw.stdout + raw.stderr
      : `${raw.stdout}\n${raw.stderr}`

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80

/** The longest prefix of `bytes` within `budget` bytes that ends at a code point boundary. */
const prefixEnd = (bytes: Uint8Array, budget: number): number => {
  let end = Math.max(Math.min(budget, bytes.length), 0)
  while (end > 0 && isContinuation(bytes[end])) end--
  return end
}

/** The start of the longest suffix of `bytes` within `budget` bytes that starts at a boundary. */
const suffixStart = (bytes: Uint8Array, budget: number): number => {
  let start = Math.min(Math.max(bytes.length - Math.max(budget, 0), 0), bytes.length)
  while (start < bytes.length && isContinuation(bytes[start])) start++
  return start
}

/**
 * The longest prefix within `budget` bytes, cut at a code point boundary.
 *
 * @since 0.1.0
 * @category constructors
 */
export const headBytes = (text: string, budget: number): string => {
  const bytes = encoder.encode(text)
  return bytes.length <= budget ? text : decoder.decode(bytes.subarray(0, prefixEnd(bytes, budget)))
}

/**
 * The longest suffix within `budget` bytes, cut at a code point boundary.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tailBytes = (text: string, budget: number): string => {
  const bytes = encoder.encode(text)
  return bytes.length <= budget ? text : decoder.decode(bytes.subarray(suffixStart(bytes, budget)))
}

/**
 * The head within `budget` bytes, ending after the last newline that fits; when no newline fits,
 * cut at a code point boundary instead (so one huge line still shows its start).
 *
 * @since 0.1.0
 * @category constructors
 */
export const headAtLine = (text: string, budget: number): string => {
  const bytes = encoder.encode(text)
  if (bytes.length <= budget) return text
  const end = prefixEnd(bytes, budget)
  const newline = end > 0 ? bytes.lastIndexOf(10, end - 1) : -1
  return decoder.decode(bytes.subarray(0, newline >= 0 ? newline + 1 : end))
}

/**
 * The tail within `budget` bytes, starting after the first newline inside it; when there is none,
 * at a code point boundary.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tailAtLine = (text: string, budget: number): string => {
  const bytes = encoder.encode(text)
  if (bytes.length <= budget) return text
  const start = suffixStart(bytes, budget)
  const newline = bytes.indexOf(10, start)
  return decoder.decode(
    bytes.subarray(newline >= 0 && newline + 1 < bytes.length ? newline + 1 : start, bytes.length)
  )
}

const isHighSurrogate = (unit: string | undefined): boolean =>
  unit !== undefined && /[\uD800-\uDBFF]/.test(unit)
const isLowSurrogate = (unit: string | undefined): boolean =>
  unit !== undefined && /[\uDC00-\uDFFF]/.test(unit)

/**
 * The first `n` UTF-16 units (a JavaScript `slice`), one fewer rather than half of a surrogate pair.
 *
 * @since 0.1.0
 * @category constructors
 */
export const headChars = (text: string, n: number): string => {
  if (n <= 0) return ""
  if (n >= text.length) return text
  return text.slice(0, isHighSurrogate(text[n - 1]) ? n - 1 : n)
}

/**
 * The last `n` UTF-16 units, one fewer rather than half of a surrogate pair.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tailChars = (text: string, n: number): string => {
  if (n <= 0) return ""
  if (n >= text.length) return text
  const start = text.length - n
  return text.slice(isLowSurrogate(text[start]) ? start + 1 : start)
}

/**
 * Lines of a text: pieces ending in `\n`, and a last piece without one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const lineCount = (text: string): number => {
  if (text === "") return 0
  let lines = 0
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++
  return text.endsWith("\n") ? lines : lines + 1
}

/**
 * The lines of a text without their line ends (`\r\n` or `\n`); no empty last line for a final
 * newline.
 *
 * @since 0.1.0
 * @category constructors
 */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
}

/**
 * A size as the hosts print it: bytes, KB with one decimal, or MB with one decimal.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sizeText = (bytes: number): string =>
  bytes < 1024
    ? `${bytes}B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)}KB`
      : `${(bytes / 1024 / 1024).toFixed(1)}MB`

/**
 * The one text a host that captures both streams into one file (or one pipe) sees: the chunks in
 * the order they arrived; stdout then stderr when the arrival order is not known (a file's text).
 *
 * @since 0.1.0
 * @category constructors
 */
export const arrivalText = (raw: RawOutput): string =>
  raw.arrival === undefined ? combined(raw) : raw.arrival.map((chunk) => chunk.data).join("")

/**
 * The tail cut opencode and pi share: whole lines from the end until `maxLines` lines or
 * `maxBytes` bytes (a newline between two kept lines counts one byte), or the end of the last line
 * (from a code point boundary) when that line alone is larger. Lines are split at `\n` only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tailLines = (
  text: string,
  maxLines: number,
  maxBytes: number
): { readonly text: string; readonly cut: boolean; readonly lines: number; readonly partial: boolean } => {
  const lines = text.split("\n")
  if (lines.length <= maxLines && byteLength(text) <= maxBytes)
    return { text, cut: false, lines: lines.length, partial: false }
  const kept: Array<string> = []
  let bytes = 0
  let partial = false
  for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
    const size = byteLength(lines[i]!) + (kept.length > 0 ? 1 : 0)
    if (bytes + size > maxBytes) {
      if (kept.length === 0) {
        kept.unshift(tailBytes(lines[i]!, maxBytes))
        partial = true
      }
      break
    }
    kept.unshift(lines[i]!)
    bytes += size
  }
  return { text: kept.join("\n"), cut: true, lines: kept.length, partial }
}
