/**
 * Roo Code (RooCodeInc/Roo-Code), from its sources at one commit.
 *
 * @since 0.1.0
 */
import { type Location, matchingLines, type PeerPolicy, type View } from "../Peer.js"
import {
  byteLength,
  arrivalText,
  headBytes,
  type RawOutput,
  sizeText,
  splitLines,
  tailBytes
} from "../Text.js"

const COMMIT = "cb836567180a (2026-04-14)"
const at = (file: string): string => `RooCodeInc/Roo-Code \`${file}\` at ${COMMIT}`

/** `TERMINAL_PREVIEW_BYTES.medium`, the default `terminalOutputPreviewSize`. */
export const ROO_PREVIEW_BYTES = 10 * 1024
/** read_file: `DEFAULT_LINE_LIMIT` lines and `MAX_LINE_LENGTH` characters per line. */
export const ROO_READ_LINES = 2000
export const ROO_LINE_CHARS = 2000
/** read_command_output: bytes of matching lines a search returns (`DEFAULT_LIMIT`). */
export const ROO_SEARCH_BYTES = 40 * 1024
/** search_files: `MAX_RESULTS` and `MAX_LINE_LENGTH` of the ripgrep service. */
export const ROO_SEARCH_FILES_RESULTS = 300
export const ROO_SEARCH_FILES_LINE_CHARS = 500

/** The artifact the excerpt names by id (`cmd-<timestamp>.txt`). */
const ARTIFACT_ID = "cmd-1760000000000.txt"

const exitStatus = (exitCode: number): string =>
  `${exitCode === 0 ? "" : "Command execution was not successful, inspect the cause and adjust as needed.\n"}Exit code: ${exitCode}`

const shell = (raw: RawOutput): View => {
  // execa `all: true`: both streams interleaved as they arrive
  const text = arrivalText(raw)
  const status = exitStatus(raw.exitCode ?? 0)
  const total = byteLength(text)
  if (total <= ROO_PREVIEW_BYTES)
    return {
      text: `Command executed in terminal within working directory '/workspace'. ${status}\nOutput:\n${text}`,
      truncated: false,
      head: text,
      tail: ""
    }
  // the preview keeps the first and the last half of the budget, cut at characters, not lines
  const head = headBytes(text, ROO_PREVIEW_BYTES / 2)
  const tail = tailBytes(text, ROO_PREVIEW_BYTES / 2)
  const marker = `[...${total - byteLength(head) - byteLength(tail)} bytes omitted...]`
  return {
    text: [
      `Command executed in '/workspace'. ${status}`,
      "",
      `Output (${sizeText(total)}) persisted. Artifact ID: ${ARTIFACT_ID}`,
      "",
      "Preview:",
      `${head}\n${marker}\n${tail}`,
      "",
      "Use read_command_output tool to view full output if needed."
    ].join("\n"),
    truncated: true,
    head,
    tail,
    marker,
    location: { kind: "copy", path: ARTIFACT_ID, content: text }
  }
}

const read = (file: Location): View => {
  // the file's lines as `content.split("\n")`: a final newline makes one more, empty line
  const lines = file.content.split("\n")
  const selected = lines.slice(0, ROO_READ_LINES)
  const width = String(selected.length).length
  const shown = selected.map((line) =>
    line.length > ROO_LINE_CHARS ? `${line.substring(0, ROO_LINE_CHARS - 3)}...` : line
  )
  const body = shown.map((line, i) => `${String(i + 1).padStart(width, " ")} | ${line}`).join("\n")
  const head = selected.join("\n")
  if (selected.length === lines.length) {
    // a line clipped to 1997 characters and `...` is a cut the model can see
    const clipped = shown.some((line, i) => line !== selected[i])
    const text = `File: ${file.path}\n${body}`
    return clipped
      ? { text, truncated: true, head, tail: "", marker: "...", location: file, shown }
      : { text, truncated: false, head, tail: "", shown }
  }
  const marker = `IMPORTANT: File content truncated.\n\tStatus: Showing lines 1-${selected.length} of ${lines.length} total lines.\n\tTo read more: Use the read_file tool with offset=${selected.length + 1} and limit=${ROO_READ_LINES}.`
  return {
    text: `File: ${file.path}\n${marker}\n\t\n\t${body}`,
    truncated: true,
    head,
    tail: "",
    marker,
    location: file,
    shown
  }
}

/** read_command_output with `search`: matching lines, case-insensitive, within 40 KB. */
const searchCopy = (location: Location, pattern: RegExp) => {
  const insensitive = new RegExp(pattern.source, `${pattern.flags.replace(/[gi]/g, "")}i`)
  const matches: Array<{ readonly line: number; readonly text: string }> = []
  let bytes = 0
  for (const match of matchingLines(location.content, insensitive)) {
    if (bytes + byteLength(match.text) > ROO_SEARCH_BYTES) break
    matches.push(match)
    bytes += byteLength(match.text)
  }
  const header = `[Command Output: ${location.path}] (search: "${pattern.source}")`
  if (matches.length === 0)
    return {
      text: `${header}\nTotal size: ${sizeText(byteLength(location.content))}\n\nNo matches found for the search pattern.`,
      shown: []
    }
  return {
    text: `${header}\nTotal matches: ${matches.length} | Showing first ${matches.length}\n\n${matches
      .map((match) => `${String(match.line).padStart(5)} | ${match.text}`)
      .join("\n")}`,
    shown: matches.map((match) => match.text)
  }
}

const clipSearchLine = (line: string): string =>
  line.length > ROO_SEARCH_FILES_LINE_CHARS
    ? `${line.substring(0, ROO_SEARCH_FILES_LINE_CHARS)} [truncated...]`
    : line

/** search_files over one file: ripgrep with a line of context, lines clipped at 500 characters. */
const searchFile = (location: Location, pattern: RegExp) => {
  const lines = splitLines(location.content)
  const matches = matchingLines(location.content, pattern).slice(0, ROO_SEARCH_FILES_RESULTS)
  const blocks = matches.map((match) =>
    [match.line - 1, match.line, match.line + 1]
      .filter((n) => n >= 1 && n <= lines.length)
      .map((n) => `${String(n).padStart(3, " ")} | ${clipSearchLine(lines[n - 1]!).trimEnd()}`)
      .join("\n")
  )
  const count = matches.length === 1 ? "1 result" : `${matches.length.toLocaleString("en-US")} results`
  return {
    text: `Found ${count}.\n\n# ${location.path}\n${blocks.map((block) => `${block}\n----`).join("\n")}`.trim(),
    shown: matches.map((match) => clipSearchLine(match.text).trimEnd())
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const rooCode: PeerPolicy = {
  name: "Roo Code",
  version: COMMIT,
  shell: {
    describe:
      "both streams as one text in the order they arrive (execa `all: true`); up to 10 KB (the default `medium` preview) pass whole with the exit code; a longer output is saved whole as an artifact and the model gets its first 5 KB and last 5 KB (cut at characters, not lines) around `[...N bytes omitted...]`, the artifact id and a pointer to `read_command_output`.",
    apply: shell
  },
  read: {
    describe:
      "read_file: `N | line` for the first 2000 lines, lines over 2000 characters clipped to 1997 and `...`; a notice above names the next offset when more remains.",
    apply: read
  },
  search: {
    describe:
      "a saved output: `read_command_output` with `search`, `N | line` per match (case-insensitive) within 40 KB; a file: `search_files`, each match with a line either side, lines over 500 characters clipped.",
    apply: (location, pattern) =>
      location.kind === "copy" ? searchCopy(location, pattern) : searchFile(location, pattern)
  },
  sources: [
    {
      numbers: "`TERMINAL_PREVIEW_BYTES` (small 5 KB, medium 10 KB, large 20 KB), default `medium`",
      from: at("packages/types/src/global-settings.ts")
    },
    {
      numbers:
        "`OutputInterceptor`: 50/50 head and rolling tail, `[...N bytes omitted...]`, whole output to disk",
      from: at("src/integrations/terminal/OutputInterceptor.ts")
    },
    {
      numbers: "`formatPersistedOutput` and the inline result with the exit status",
      from: at("src/core/tools/ExecuteCommandTool.ts")
    },
    {
      numbers: "read_command_output search: 40 KB of matches",
      from: at("src/core/tools/ReadCommandOutputTool.ts")
    },
    {
      numbers:
        "read_file: `DEFAULT_LINE_LIMIT = 2000`, `MAX_LINE_LENGTH = 2000`, `N | ` prefixes, truncation notice",
      from: `${at("src/core/tools/ReadFileTool.ts")}, \`src/integrations/misc/indentation-reader.ts\`, \`src/core/prompts/tools/native-tools/read_file.ts\``
    },
    {
      numbers: "search_files: `MAX_RESULTS = 300`, `MAX_LINE_LENGTH = 500`, context 1",
      from: at("src/services/ripgrep/index.ts")
    },
    {
      numbers: "both streams interleaved as they arrive (execa `all: true`)",
      from: at("src/integrations/terminal/ExecaTerminalProcess.ts")
    }
  ]
}
