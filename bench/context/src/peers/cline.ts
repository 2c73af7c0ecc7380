/**
 * Cline (cline/cline), the shell, file-read and search executors of its SDK core (`@cline/core`),
 * which the Cline CLI runs and the VS Code extension uses for background commands, and the
 * session's message builder, which caps every tool result before it reaches the provider.
 *
 * @since 0.1.0
 */
import { type Location, matchingLines, type PeerPolicy, type View } from "../Peer.js"
import { headChars, type RawOutput, splitLines, tailChars } from "../Text.js"

const COMMIT = "21cb8d2525bc (2026-08-22)"
const at = (file: string): string => `cline/cline \`${file}\` at ${COMMIT}`

/** `MAX_COMMAND_OUTPUT_CHARS`: characters of command output kept, the middle elided past it. */
export const CLINE_MAX_OUTPUT_CHARS = 48_000
/** `MAX_READ_LINES`, `MAX_LINE_CHARS`, `MAX_READ_OUTPUT_CHARS` of one read window. */
export const CLINE_READ_LINES = 2000
export const CLINE_LINE_CHARS = 2000
export const CLINE_READ_CHARS = 48_000
/** `MAX_UNRANGED_LINE_SCAN`: a read without an end line counts the file's lines this far only. */
const UNRANGED_LINE_SCAN = 50_000
/** `MAX_SEARCH_OUTPUT_CHARS`: a search result is middle-truncated past it. */
export const CLINE_SEARCH_CHARS = 48_000

/**
 * `DEFAULT_MAX_TOOL_RESULT_CHARS`: every tool result's text (each string of a structured result:
 * a command's output, a file's content, a search's result) is middle-truncated to this many
 * characters when the session's messages are built for the provider, after the executors' own caps.
 */
export const CLINE_TOOL_RESULT_CHARS = 8000

/** `TRUNCATE_MARKER_DEFAULT`. */
const resultMarker = (removed: number): string => `\n\n...[truncated ${removed} chars]...\n\n`

/**
 * `truncateMiddleByChars`: the marker's length depends on the count it names, so the count is
 * taken twice; the same number of UTF-16 units is kept from each end (a plain `slice`, which can
 * split a surrogate pair).
 */
export const clineResultCut = (
  text: string
): { readonly text: string; readonly keep: number; readonly marker?: string } => {
  const max = CLINE_TOOL_RESULT_CHARS
  if (text.length <= max) return { text, keep: text.length }
  const tentative = resultMarker(text.length - max)
  const tentativeKeep = Math.max(0, Math.floor((max - tentative.length) / 2))
  const marker = resultMarker(Math.max(0, text.length - tentativeKeep * 2))
  const keep = Math.max(0, Math.floor((max - marker.length) / 2))
  const end = keep > 0 ? text.slice(-keep) : ""
  return { text: `${text.slice(0, keep)}${marker}${end}`, keep, marker: marker.trim() }
}

/** The lines of `body` shown whole by a cut text: those inside its first or its last `keep` units. */
const wholeLinesKept = (
  body: string,
  keep: number
): Array<{ readonly at: number; readonly text: string }> => {
  const out: Array<{ readonly at: number; readonly text: string }> = []
  let offset = 0
  for (const text of body.split("\n")) {
    const end = offset + text.length
    if (end <= keep || offset >= body.length - keep) out.push({ at: offset, text })
    offset = end + 1
  }
  return out
}

const half = (max: number) => ({ head: Math.ceil(max / 2), tail: Math.max(1, max - Math.ceil(max / 2)) })

/** A stream's rolling collector: its first half of the budget verbatim, then its latest half. */
const collect = (
  stream: string
): { readonly text: string; readonly total: number; readonly dropped: boolean } => {
  const { head, tail } = half(CLINE_MAX_OUTPUT_CHARS)
  if (stream.length <= head + tail) return { text: stream, total: stream.length, dropped: false }
  return {
    text: headChars(stream, head) + tailChars(stream.slice(head), tail),
    total: stream.length,
    dropped: true
  }
}

/** `truncateCommandOutput`: the first and last half of the budget around a notice. */
const middleCut = (text: string, totalChars: number, notice: (total: number) => string) => {
  const { head, tail } = half(CLINE_MAX_OUTPUT_CHARS)
  const kept = { head: headChars(text, head), tail: tailChars(text, tail) }
  return { ...kept, marker: notice(totalChars) }
}

const commandNotice = (total: number): string =>
  `[... output truncated: ${total} chars total. Refine the command (grep, head, tail) to view the elided middle ...]`

/** The run_commands executor's result for one command (before the tool-result cap). */
const commandResult = (raw: RawOutput): View => {
  const out = collect(raw.stdout)
  const err = collect(raw.stderr)
  const output = out.text + (err.text === "" ? "" : `\n[stderr]\n${err.text}`)
  const exit = (raw.exitCode ?? 0) === 0 ? "" : `[Command exited with code ${raw.exitCode}]\n`
  if (!out.dropped && !err.dropped && output.length <= CLINE_MAX_OUTPUT_CHARS)
    return { text: `${exit}${output}`, truncated: false, head: output, tail: "" }
  const cut = middleCut(output, out.total + err.total, commandNotice)
  return {
    text: `${exit}${cut.head}\n${cut.marker}\n${cut.tail}`,
    truncated: true,
    head: cut.head,
    tail: cut.tail,
    marker: cut.marker
  }
}

/** A command's result as the model gets it: the executor's text, then the tool-result cap. */
const shell = (raw: RawOutput): View => {
  const view = commandResult(raw)
  const cut = clineResultCut(view.text)
  if (cut.marker === undefined) return view
  // the failure prefix is not output: the head the model sees starts after it
  const prefix = (raw.exitCode ?? 0) === 0 ? 0 : `[Command exited with code ${raw.exitCode}]\n`.length
  return {
    text: cut.text,
    truncated: true,
    head: cut.text.slice(prefix, cut.keep),
    tail: cut.text.slice(cut.text.length - cut.keep),
    marker: cut.marker
  }
}

/** The read_files executor's window over one file (before the tool-result cap). */
const readWindow = (file: Location): View => {
  const lines = splitLines(file.content)
  const maxLine = Math.min(lines.length, CLINE_READ_LINES)
  const prefix = String(CLINE_READ_LINES).length + 3
  const shown: Array<string> = []
  let chars = 0
  for (const line of lines.slice(0, maxLine)) {
    const clipped =
      line.length > CLINE_LINE_CHARS ? `${line.slice(0, CLINE_LINE_CHARS)} [line truncated]` : line
    const next = chars + clipped.length + prefix + 1
    if (next > CLINE_READ_CHARS && shown.length > 0) break
    shown.push(clipped)
    chars = next
  }
  const width = String(shown.length).length
  const body = shown.map((line, i) => `${String(i + 1).padStart(width, " ")} | ${line}`).join("\n")
  const head = lines.slice(0, shown.length).join("\n")
  if (shown.length === lines.length) {
    const clipped = shown.some((line, i) => line !== lines[i])
    return clipped
      ? { text: body, truncated: true, head, tail: "", marker: "[line truncated]", location: file, shown }
      : { text: body, truncated: false, head, tail: "", shown }
  }
  // a window that stopped early counts the file's lines only up to the unranged scan
  const total = lines.length > UNRANGED_LINE_SCAN ? `${UNRANGED_LINE_SCAN}+ lines` : String(lines.length)
  const marker = `[Showing lines 1-${shown.length} of ${total}. Use start_line/end_line to read other sections.]`
  return { text: `${body}\n\n${marker}`, truncated: true, head, tail: "", marker, location: file, shown }
}

/** `N | line`: a line of the window, its number taken off. */
const NUMBERED = /^ *\d+ \| (.*)$/s

/** A file's window as the model gets it: the tool-result cap keeps the window's first and last lines. */
const read = (file: Location): View => {
  const view = readWindow(file)
  const cut = clineResultCut(view.text)
  if (cut.marker === undefined) return view
  const shown = wholeLinesKept(view.text, cut.keep).flatMap(({ text }) => {
    const match = NUMBERED.exec(text)
    return match === null ? [] : [match[1]!]
  })
  const lines = splitLines(file.content)
  let leading = 0
  while (leading < shown.length && leading < lines.length && view.shown![leading] === shown[leading])
    leading++
  return {
    text: cut.text,
    truncated: true,
    head: lines.slice(0, leading).join("\n"),
    tail: "",
    marker: cut.marker,
    location: file,
    shown
  }
}

const search = (location: Location, pattern: RegExp) => {
  const matches = matchingLines(location.content, pattern)
  const body = [
    `Found ${matches.length} result${matches.length === 1 ? "" : "s"} for pattern: ${pattern.source}`,
    "",
    ...matches.flatMap((match) => [`${location.path}:${match.line}:1`, `> ${match.line}: ${match.text}`, ""])
  ].join("\n")
  const searchCut =
    body.length <= CLINE_SEARCH_CHARS
      ? undefined
      : middleCut(
          body,
          body.length,
          (total) =>
            `[... search output truncated: ${total} chars total. Narrow the pattern or scope to view the elided matches ...]`
        )
  const text = clineResultCut(
    searchCut === undefined ? body : `${searchCut.head}\n${searchCut.marker}\n${searchCut.tail}`
  ).text
  return {
    text,
    shown: matches
      .filter((match) => text.includes(`> ${match.line}: ${match.text}\n`))
      .map((match) => match.text)
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const cline: PeerPolicy = {
  name: "Cline",
  version: COMMIT,
  shell: {
    describe:
      "each stream collected as its first 24,000 characters and its last 24,000, then stdout and `[stderr]` stderr as one text; past 48,000 characters the first 24,000 and the last 24,000 are kept (cut at characters) around a notice, a failed command prefixed with its exit code; no copy is saved. Then, as for every tool result, the text is cut to 8,000 characters: the same number (3,983 for a five-digit count) from each end around `...[truncated N chars]...`.",
    apply: shell
  },
  read: {
    describe:
      "read_files: `N | line` for up to 2000 lines within 48,000 characters, lines over 2000 characters clipped with `[line truncated]`, a notice naming the lines shown when more remains; the window's text is then cut to 8,000 characters like every tool result (its first and last lines kept).",
    apply: read
  },
  search: {
    describe:
      "search: `path:line:col` and `> N: line` per match, the whole result middle-truncated past 48,000 characters, then to 8,000 like every tool result.",
    apply: search
  },
  sources: [
    {
      numbers:
        "`MAX_COMMAND_OUTPUT_CHARS = 48_000`, `truncateCommandOutput`, `MAX_READ_LINES`, `MAX_LINE_CHARS`, `MAX_READ_OUTPUT_CHARS`, `MAX_SEARCH_OUTPUT_CHARS`",
      from: at("sdk/packages/core/src/extensions/tools/executors/output-limits.ts")
    },
    {
      numbers: "per-stream rolling collector, `[stderr]`, `[Command exited with code N]`",
      from: at("sdk/packages/core/src/extensions/tools/executors/bash.ts")
    },
    {
      numbers: "read window and notice",
      from: at("sdk/packages/core/src/extensions/tools/executors/file-read.ts")
    },
    {
      numbers: "search result format and cap",
      from: at("sdk/packages/core/src/extensions/tools/executors/search.ts")
    },
    {
      numbers:
        "`DEFAULT_MAX_TOOL_RESULT_CHARS = 8_000` over every tool result (each string of a structured `ToolOperationResult[]`: run_commands, read_files, search), `truncateMiddleByChars` (two-pass marker, `Math.floor((max - marker.length) / 2)` from each end), `TRUNCATE_MARKER_DEFAULT`",
      from: at("sdk/packages/core/src/session/services/message-builder.ts")
    }
  ]
}
