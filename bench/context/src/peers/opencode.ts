/**
 * opencode 1.18.33, read from the JavaScript bundle inside its published native package
 * (`opencode-linux-x64@1.18.33`, the platform binary `opencode-ai` installs).
 *
 * @since 0.1.0
 */
import { type Location, matchingLines, type PeerPolicy, type View, whole } from "../Peer.js"
import { arrivalText, byteLength, type RawOutput, splitLines, tailLines } from "../Text.js"

const PACKAGE = "npm `opencode-linux-x64@1.18.33` (bundle embedded in `package/bin/opencode`)"

/** `Truncate.MAX_LINES` */
export const OPENCODE_MAX_LINES = 2000
/** `Truncate.MAX_BYTES` (50 * 1024) */
export const OPENCODE_MAX_BYTES = 50 * 1024
/** Read: lines per window (`DEFAULT_READ_LIMIT`) and characters per line (`MAX_LINE_LENGTH`). */
export const OPENCODE_READ_LINES = 2000
export const OPENCODE_LINE_CHARS = 2000
/** The grep tool's match cap. */
export const OPENCODE_GREP_LIMIT = 100
/** A ripgrep JSON record (one match) over this many bytes fails the grep call. */
export const OPENCODE_GREP_RECORD_BYTES = 65_536

/** What a clipped line ends with (`MAX_LINE_SUFFIX`). */
const CLIP_NOTE = `... (line truncated to ${OPENCODE_LINE_CHARS} chars)`

const shell = (raw: RawOutput, savedPath: string): View => {
  // both streams come through one decoded stream (`all`) in the order they arrive; the exit code
  // goes to the call's metadata, not to the text the model reads
  const text = arrivalText(raw)
  const cut = tailLines(text, OPENCODE_MAX_LINES, OPENCODE_MAX_BYTES)
  if (!cut.cut) return whole(text === "" ? "(no output)" : text)
  const marker = `...output truncated...\nFull output saved to: ${savedPath}`
  return {
    text: `${marker}\n${cut.text === "" ? "(no output)" : cut.text}`,
    truncated: true,
    head: "",
    tail: cut.text,
    marker,
    location: { kind: "copy", path: savedPath, content: text }
  }
}

const read = (file: Location): View => {
  const lines = splitLines(file.content)
  const shown: Array<string> = []
  let bytes = 0
  let capped = false
  for (const line of lines) {
    if (shown.length >= OPENCODE_READ_LINES) break
    const clipped =
      line.length > OPENCODE_LINE_CHARS ? `${line.slice(0, OPENCODE_LINE_CHARS)}${CLIP_NOTE}` : line
    const size = byteLength(clipped) + (shown.length > 0 ? 1 : 0)
    if (bytes + size > OPENCODE_MAX_BYTES) {
      capped = true
      break
    }
    shown.push(clipped)
    bytes += size
  }
  const last = shown.length
  const more = capped || last < lines.length
  const marker = capped
    ? `(Output capped at 50 KB. Showing lines 1-${last}. Use offset=${last + 1} to continue.)`
    : more
      ? `(Showing lines 1-${last} of ${lines.length}. Use offset=${last + 1} to continue.)`
      : undefined
  const body = shown.map((line, i) => `${i + 1}: ${line}`).join("\n")
  const text = `<path>${file.path}</path>\n<type>file</type>\n<content>\n${body}\n\n${marker ?? `(End of file - total ${lines.length} lines)`}\n</content>`
  const head = lines.slice(0, last).join("\n")
  // a clipped line says so inline; the window is cut even when every line is in it
  const clip = shown.some((line, i) => line !== lines[i]) ? CLIP_NOTE : undefined
  const cut = marker ?? clip
  return cut === undefined
    ? { text, truncated: false, head, tail: "", shown }
    : { text, truncated: true, head, tail: "", marker: cut, location: file, shown }
}

const search = (location: Location, pattern: RegExp) => {
  const all = matchingLines(location.content, pattern)
  if (all.some((match) => byteLength(match.text) + 200 > OPENCODE_GREP_RECORD_BYTES))
    return { text: `Ripgrep JSON record exceeded ${OPENCODE_GREP_RECORD_BYTES} bytes`, shown: [] }
  const matches = all.slice(0, OPENCODE_GREP_LIMIT)
  if (matches.length === 0) return { text: "No files found", shown: [] }
  const more = all.length > OPENCODE_GREP_LIMIT
  const text = [
    `Found ${matches.length} matches${more ? " (more matches available)" : ""}`,
    `${location.path}:`,
    ...matches.map((match) => `  Line ${match.line}: ${match.text}`),
    ...(more ? ["", "(Results truncated. Consider using a more specific path or pattern.)"] : [])
  ].join("\n")
  return { text, shown: matches.map((match) => match.text) }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const opencode: PeerPolicy = {
  name: "opencode",
  version: "1.18.33",
  shell: {
    describe:
      "both streams as one text in the order they arrive (the exit code is not in the text, failed or not); up to 2000 lines and 50 KB pass whole; otherwise the tail is kept, whole lines from the end until either limit (the end of the last line when it alone is larger), after `...output truncated...` and the path of the saved whole output.",
    apply: shell
  },
  read: {
    describe:
      "`N: line` for the first 2000 lines within 50 KB, lines over 2000 characters clipped with a note, wrapped in `<path>/<type>/<content>`, with a notice naming the next offset when more remains.",
    apply: read
  },
  search: {
    describe:
      "grep: `Found N matches`, the file, then `  Line N: text` per match, at most 100; a match line of a 64 KB ripgrep record or more fails the call.",
    apply: search
  },
  sources: [
    {
      numbers:
        "shell tool `ShellTool.run`: one decoded stream of both (`D.all`), tail cut of 2000 lines / 51,200 bytes (`es`), whole output saved, `...output truncated...\\nFull output saved to: P\\n` before the tail, the exit code only in `metadata.exit`",
      from: PACKAGE
    },
    { numbers: "`Truncate`: `MAX_LINES = 2000`, `MAX_BYTES = 51200`", from: PACKAGE },
    {
      numbers:
        "read tool: `DEFAULT_READ_LIMIT = 2000`, `MAX_LINE_LENGTH = 2000`, `MAX_BYTES = 51200`, `N: ` prefixes, notices",
      from: PACKAGE
    },
    { numbers: "grep tool: `limit: 100`, ripgrep record cap 65,536 bytes", from: PACKAGE }
  ]
}
