/**
 * pi (`@mariozechner/pi-coding-agent` 0.73.1), read from the JavaScript its npm package ships
 * (`dist/core/tools/`): the bash, read and grep tools.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { type Location, matchingLines, type PeerPolicy, type View } from "../Peer.js"
import { arrivalText, byteLength, type RawOutput, sizeText, tailLines } from "../Text.js"

const VERSION = "0.73.1"
const at = (file: string): string => `npm \`@mariozechner/pi-coding-agent@${VERSION}\` \`${file}\``

/** `DEFAULT_MAX_LINES`: lines a bash or read result keeps. */
export const PI_MAX_LINES = 2000
/** `DEFAULT_MAX_BYTES` (50 * 1024): bytes a bash, read or grep result keeps. */
export const PI_MAX_BYTES = 50 * 1024
/** The grep tool's `DEFAULT_LIMIT` of matches. */
export const PI_GREP_LIMIT = 100
/** `GREP_MAX_LINE_LENGTH`: characters of a match line the grep tool shows. */
export const PI_GREP_LINE_CHARS = 500

/** The line count the output accumulator keeps: one more than the newlines it saw. */
const totalLines = (text: string): number => text.split("\n").length

/**
 * The bash tool: both streams into one accumulator in the order they arrive; past 2000 lines or
 * 50 KB, the tail (`truncateTail`) and a notice naming the lines shown and the temp file that holds
 * the whole output. A non-zero exit throws the same text with `Command exited with code N` after it.
 */
const shell = (raw: RawOutput, savedPath: string): View => {
  const output = arrivalText(raw)
  const exitCode = raw.exitCode ?? 0
  const status = exitCode === 0 ? "" : `\n\nCommand exited with code ${exitCode}`
  const total = totalLines(output)
  const truncated = total > PI_MAX_LINES || byteLength(output) > PI_MAX_BYTES
  if (!truncated) {
    const text = `${output === "" ? "(no output)" : output}${status}`
    return { text, truncated: false, head: output, tail: "" }
  }
  const tail = tailLines(output, PI_MAX_LINES, PI_MAX_BYTES)
  const start = total - tail.lines + 1
  const byLines = !tail.partial && tail.lines >= PI_MAX_LINES && byteLength(tail.text) <= PI_MAX_BYTES
  const lastLine = output.slice(output.lastIndexOf("\n") + 1)
  const marker = tail.partial
    ? `[Showing last ${sizeText(byteLength(tail.text))} of line ${total} (line is ${sizeText(byteLength(lastLine))}). Full output: ${savedPath}]`
    : byLines
      ? `[Showing lines ${start}-${total} of ${total}. Full output: ${savedPath}]`
      : `[Showing lines ${start}-${total} of ${total} (${sizeText(PI_MAX_BYTES)} limit). Full output: ${savedPath}]`
  return {
    text: `${tail.text}\n\n${marker}${status}`,
    truncated: true,
    head: "",
    tail: tail.text,
    marker,
    location: { kind: "copy", path: savedPath, content: output }
  }
}

/**
 * The read tool without offset or limit (`truncateHead`): whole lines from the start within 2000
 * lines and 50 KB, no line numbers, a notice naming the next offset; a first line over 50 KB is
 * replaced by a notice pointing at `sed`.
 */
const read = (file: Location): View => {
  const lines = file.content.split("\n")
  if (lines.length <= PI_MAX_LINES && byteLength(file.content) <= PI_MAX_BYTES)
    return { text: file.content, truncated: false, head: file.content, tail: "" }
  if (byteLength(lines[0]!) > PI_MAX_BYTES) {
    const marker = `[Line 1 is ${sizeText(byteLength(lines[0]!))}, exceeds ${sizeText(PI_MAX_BYTES)} limit. Use bash: sed -n '1p' ${file.path} | head -c ${PI_MAX_BYTES}]`
    return { text: marker, truncated: true, head: "", tail: "", marker, location: file }
  }
  const kept: Array<string> = []
  let bytes = 0
  let byBytes = false
  for (const line of lines.slice(0, PI_MAX_LINES)) {
    const size = byteLength(line) + (kept.length > 0 ? 1 : 0)
    if (bytes + size > PI_MAX_BYTES) {
      byBytes = true
      break
    }
    kept.push(line)
    bytes += size
  }
  const head = kept.join("\n")
  const limit = byBytes ? ` (${sizeText(PI_MAX_BYTES)} limit)` : ""
  const marker = `[Showing lines 1-${kept.length} of ${lines.length}${limit}. Use offset=${kept.length + 1} to continue.]`
  return { text: `${head}\n\n${marker}`, truncated: true, head, tail: "", marker, location: file }
}

/**
 * The grep tool over one file: `name:N: line` per match (the file's base name), at most 100, a line
 * over 500 characters clipped with `... [truncated]`, the whole within 50 KB of whole lines, and the
 * notices of each limit reached.
 */
const search = (location: Location, pattern: RegExp) => {
  const all = matchingLines(location.content.replace(/\r\n/g, "\n").replace(/\r/g, "\n"), pattern)
  if (all.length === 0) return { text: "No matches found", shown: [] }
  const matches = all.slice(0, PI_GREP_LIMIT)
  const name = path.basename(location.path)
  let clipped = false
  const rows = matches.map((match) => {
    if (match.text.length <= PI_GREP_LINE_CHARS) return { match, line: match.text }
    clipped = true
    return { match, line: `${match.text.slice(0, PI_GREP_LINE_CHARS)}... [truncated]` }
  })
  const kept: Array<(typeof rows)[number]> = []
  let bytes = 0
  let byBytes = false
  for (const row of rows) {
    const size = byteLength(`${name}:${row.match.line}: ${row.line}`) + (kept.length > 0 ? 1 : 0)
    if (bytes + size > PI_MAX_BYTES) {
      byBytes = true
      break
    }
    kept.push(row)
    bytes += size
  }
  const notices = [
    ...(all.length >= PI_GREP_LIMIT
      ? [`${PI_GREP_LIMIT} matches limit reached. Use limit=${PI_GREP_LIMIT * 2} for more, or refine pattern`]
      : []),
    ...(byBytes ? [`${sizeText(PI_MAX_BYTES)} limit reached`] : []),
    ...(clipped
      ? [`Some lines truncated to ${PI_GREP_LINE_CHARS} chars. Use read tool to see full lines`]
      : [])
  ]
  const body = kept.map((row) => `${name}:${row.match.line}: ${row.line}`).join("\n")
  return {
    text: notices.length === 0 ? body : `${body}\n\n[${notices.join(". ")}]`,
    shown: kept.map((row) => row.line)
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const pi: PeerPolicy = {
  name: "pi",
  version: VERSION,
  shell: {
    describe:
      "bash: both streams into one text in the order they arrive; up to 2000 lines and 50 KB pass whole; otherwise the tail, whole lines from the end within both limits (the end of the last line when it alone is larger), then `[Showing lines A-B of N. Full output: <temp file>]`; a non-zero exit adds `Command exited with code N` after it, and the saved file is kept either way.",
    apply: shell
  },
  read: {
    describe:
      "read: the file's first whole lines within 2000 lines and 50 KB, without line numbers, then `[Showing lines 1-N of M. Use offset=N+1 to continue.]`; a first line over 50 KB is replaced by a notice that points at `sed`.",
    apply: read
  },
  search: {
    describe:
      "grep: `file:N: line` per match, at most 100, lines over 500 characters clipped with `... [truncated]`, within 50 KB of whole lines, each limit reached named in a closing notice.",
    apply: search
  },
  sources: [
    {
      numbers:
        "`DEFAULT_MAX_LINES = 2000`, `DEFAULT_MAX_BYTES = 50 * 1024`, `GREP_MAX_LINE_LENGTH = 500`, `truncateTail`, `truncateHead`, `truncateLine`, `formatSize`",
      from: at("dist/core/tools/truncate.js")
    },
    {
      numbers:
        "bash: stdout and stderr into one `onData`, the notices `[Showing lines A-B of N. Full output: P]` / `(50.0KB limit)` / `[Showing last S of line N (line is S)...]`, `Command exited with code N` thrown after the output",
      from: at("dist/core/tools/bash.js")
    },
    {
      numbers: "the output accumulator: line count, the temp file `pi-bash-<id>.log` once past either limit",
      from: at("dist/core/tools/output-accumulator.js")
    },
    {
      numbers: "read: `truncateHead` without line numbers, `Use offset=N to continue`, the first-line notice",
      from: at("dist/core/tools/read.js")
    },
    {
      numbers: "grep: `DEFAULT_LIMIT = 100`, `file:N: text` rows, 50 KB of whole rows, the limit notices",
      from: at("dist/core/tools/grep.js")
    }
  ]
}
