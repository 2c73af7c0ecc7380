/**
 * Gemini CLI (google-gemini/gemini-cli), from its sources at one commit.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import { type Location, matchingLines, type PeerPolicy, type View, whole } from "../Peer.js"
import { arrivalText, headChars, type RawOutput, tailChars } from "../Text.js"

const COMMIT = "5411f113cafa (2026-08-21)"
const at = (file: string): string => `google-gemini/gemini-cli \`${file}\` at ${COMMIT}`

/** `DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD`, in characters (UTF-16 units). */
export const GEMINI_THRESHOLD_CHARS = 40_000
/** `formatTruncatedToolOutput` shows the first 20% of the threshold and the last 80%. */
export const GEMINI_HEAD_SHARE = 0.2
/** `DEFAULT_MAX_LINES_TEXT_FILE`, `MAX_LINE_LENGTH_TEXT_FILE`, `MAX_FILE_SIZE_MB`. */
export const GEMINI_READ_LINES = 2000
export const GEMINI_LINE_CHARS = 2000
export const GEMINI_READ_MAX_MB = 20
/** `DEFAULT_TOTAL_MAX_MATCHES` of the grep tool. */
export const GEMINI_GREP_MAX_MATCHES = 100
/** Context lines the grep tool adds around 1 match, and around 2 or 3 matches. */
const AUTO_CONTEXT_ONE = 50
const AUTO_CONTEXT_FEW = 15

const byLine = Order.mapInput(Order.number, ([line]: readonly [number, boolean]) => line)

/** The shell tool's `llmContent` for a finished command (its process group id is per call). */
const llmContent = (raw: RawOutput): string => {
  // one buffer of both streams as they arrive (a pty, or the two pipes appended in turn)
  const output = arrivalText(raw)
  const parts = [`Output: ${output === "" ? "(empty)" : output}`]
  if ((raw.exitCode ?? 0) !== 0) parts.push(`Exit Code: ${raw.exitCode}`)
  parts.push("Process Group PGID: 1000")
  return `<untrusted_context>\n${parts.join("\n")}\n</untrusted_context>`
}

/** The label the output's first line follows; the model reads that line after it, not as part of it. */
const OUTPUT_LABEL = "<untrusted_context>\nOutput: "

/** The text as lines of output: the label before the first one taken off. */
const unlabelled = (text: string): ReadonlyArray<string> => [
  text.replace(OUTPUT_LABEL, "<untrusted_context>\n")
]

const shell = (raw: RawOutput, savedPath: string): View => {
  const content = llmContent(raw)
  if (content.length <= GEMINI_THRESHOLD_CHARS) return { ...whole(content), shown: unlabelled(content) }
  const headLength = Math.floor(GEMINI_THRESHOLD_CHARS * GEMINI_HEAD_SHARE)
  const tailLength = GEMINI_THRESHOLD_CHARS - headLength
  const head = headChars(content, headLength)
  const tail = tailChars(content, tailLength)
  const omitted = content.length - headLength - tailLength
  const marker = `Output too large. Showing first ${headLength.toLocaleString("en-US")} and last ${tailLength.toLocaleString("en-US")} characters. For full output see: ${savedPath}`
  const text = `${marker}\n${head}\n\n... [${omitted.toLocaleString("en-US")} characters omitted] ...\n\n${tail}`
  return {
    text,
    truncated: true,
    head,
    tail,
    marker,
    location: { kind: "copy", path: savedPath, content },
    shown: unlabelled(text)
  }
}

const clip = (line: string): string =>
  line.length > GEMINI_LINE_CHARS ? `${line.substring(0, GEMINI_LINE_CHARS)}... [truncated]` : line

const read = (file: Location): View => {
  if (Buffer.byteLength(file.content) > GEMINI_READ_MAX_MB * 1024 * 1024) {
    const marker = `File size exceeds the ${GEMINI_READ_MAX_MB}MB limit.`
    return { text: marker, truncated: true, head: "", tail: "", marker, location: file }
  }
  const lines = file.content.split(/\r?\n/)
  const selected = lines.slice(0, GEMINI_READ_LINES)
  const formatted = selected.map(clip)
  const clipped = formatted.some((line, i) => line !== selected[i])
  const body = formatted.join("\n")
  const head = selected.join("\n")
  if (selected.length === lines.length && !clipped)
    return { text: body, truncated: false, head, tail: "", shown: formatted }
  const marker = `IMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-${selected.length} of ${lines.length} total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: ${selected.length + 1}.`
  return {
    text: `\n${marker}\n\n--- FILE CONTENT (truncated) ---\n${body}`,
    truncated: true,
    head,
    tail: "",
    marker,
    location: file,
    shown: formatted
  }
}

const search = (location: Location, pattern: RegExp) => {
  const lines = location.content.split(/\r?\n/)
  const matches = matchingLines(location.content, pattern).slice(0, GEMINI_GREP_MAX_MATCHES)
  if (matches.length === 0)
    return { text: `No matches found for pattern "${pattern.source}" in path "${location.path}".`, shown: [] }
  // a search with 1 to 3 matches gets lines around them, to save the agent a read
  const context = matches.length === 1 ? AUTO_CONTEXT_ONE : matches.length <= 3 ? AUTO_CONTEXT_FEW : 0
  const shownLines = new Map<number, boolean>()
  for (const match of matches) {
    for (let n = Math.max(1, match.line - context); n <= Math.min(lines.length, match.line + context); n++)
      if (!shownLines.has(n)) shownLines.set(n, false)
    shownLines.set(match.line, true)
  }
  const body = Arr.sort([...shownLines.entries()], byLine).map(
    ([n, isMatch]) => `L${n}${isMatch ? ":" : "-"} ${clip(lines[n - 1]!.trimEnd())}`
  )
  const term = matches.length === 1 ? "match" : "matches"
  const limited =
    matches.length >= GEMINI_GREP_MAX_MATCHES
      ? ` (results limited to ${GEMINI_GREP_MAX_MATCHES} matches for performance)`
      : ""
  return {
    text: `Found ${matches.length} ${term} for pattern "${pattern.source}" in path "${location.path}"${limited}:\n---\nFile: ${location.path}\n${body.join("\n")}\n---`,
    shown: matches.map((match) => clip(match.text.trimEnd()))
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const geminiCli: PeerPolicy = {
  name: "Gemini CLI",
  version: COMMIT,
  shell: {
    describe:
      "both streams as one text in the order they arrive; the shell result `Output: … / Exit Code / Process Group PGID` inside `<untrusted_context>`; up to 40,000 characters pass whole; a longer one is saved whole to a file and the model gets its first 8,000 and last 32,000 characters (cut anywhere, not at lines) around `... [N characters omitted] ...`, under a line naming the file.",
    apply: shell
  },
  read: {
    describe:
      "read_file: the first 2000 lines, no line numbers, lines over 2000 characters clipped with `... [truncated]`; when anything was left out, a notice above the content names the next start line; files over 20 MB are refused.",
    apply: read
  },
  search: {
    describe:
      "grep: `L<n>: line` per match, at most 100, lines clipped at 2000 characters; with 1 match it adds 50 lines either side, with 2 or 3 matches 15.",
    apply: search
  },
  sources: [
    {
      numbers: "`DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 40_000`",
      from: at("packages/core/src/config/config.ts")
    },
    {
      numbers: "the shell tool's output truncated only, whole content saved (`saveTruncatedToolOutput`)",
      from: at("packages/core/src/scheduler/tool-executor.ts")
    },
    {
      numbers: "`formatTruncatedToolOutput`: first 20% / last 80% of the threshold, marker text",
      from: at("packages/core/src/utils/fileUtils.ts")
    },
    {
      numbers: "shell `llmContent` (`Output:`, `Exit Code:`, `wrapUntrusted`)",
      from: at("packages/core/src/tools/shell.ts")
    },
    {
      numbers:
        "one output buffer for both streams: a pty, or the child's two pipes appended as their chunks arrive (`handleOutput`)",
      from: at("packages/core/src/services/shellExecutionService.ts")
    },
    {
      numbers: "read_file: 2000 lines, 2000 characters per line, 20 MB",
      from: `${at("packages/core/src/utils/constants.ts")}, \`utils/fileUtils.ts\`, \`tools/read-file.ts\``
    },
    {
      numbers: "grep: 100 matches (`DEFAULT_TOTAL_MAX_MATCHES`), automatic context, line clip",
      from: `${at("packages/core/src/tools/grep-utils.ts")}, \`tools/constants.ts\``
    }
  ]
}
