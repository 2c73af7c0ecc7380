/**
 * Claude Code 2.1.332, read from the JavaScript bundle inside its published native package
 * (`@anthropic-ai/claude-code-linux-x64@2.1.332`, the platform binary `@anthropic-ai/claude-code`
 * installs).
 *
 * @since 0.1.0
 */
import { TokenEstimator } from "@toolcap/checkpoint"
import { type Location, matchingLines, type PeerPolicy, type View, whole } from "../Peer.js"
import { byteLength, combined, headChars, sizeText, splitLines } from "../Text.js"

const PACKAGE = "npm `@anthropic-ai/claude-code-linux-x64@2.1.332` (bundle embedded in `package/claude`)"

/** `bashOutputMaxChars` default: characters of a command's output the model receives inline. */
export const CLAUDE_CODE_MAX_CHARS = 30_000
/** Characters of the preview shown in place of a persisted output (`r$`). */
export const CLAUDE_CODE_PREVIEW_CHARS = 2000
/** A file larger than this is refused unless the call gives offset/limit (`maxSizeBytes`). */
export const CLAUDE_CODE_READ_MAX_BYTES = 256 * 1024
/** Tokens one Read may return; past it a whole-file read becomes a partial view (`maxTokens`). */
export const CLAUDE_CODE_READ_MAX_TOKENS = 25_000
/** The partial view keeps this share of the lines that would fit the cap, then shrinks by 0.7. */
const PARTIAL_VIEW_SHARE = 0.85
/** ripgrep's `--max-columns`: a longer matching line is replaced by a one-line note. */
export const CLAUDE_CODE_GREP_MAX_COLUMNS = 500
/** Grep's `head_limit` default. */
export const CLAUDE_CODE_GREP_HEAD_LIMIT = 250

/** The preview: the first 2000 characters, back to the last line end when it is past half of them. */
const preview = (text: string): { readonly text: string; readonly more: boolean } => {
  if (text.length <= CLAUDE_CODE_PREVIEW_CHARS) return { text, more: false }
  const newline = text.slice(0, CLAUDE_CODE_PREVIEW_CHARS).lastIndexOf("\n")
  const end = newline > CLAUDE_CODE_PREVIEW_CHARS * 0.5 ? newline : CLAUDE_CODE_PREVIEW_CHARS
  return { text: headChars(text, end), more: true }
}

const shell = (raw: Parameters<PeerPolicy["shell"]["apply"]>[0], savedPath: string): View => {
  // the tool drops leading blank lines and trailing whitespace before measuring
  const text = combined(raw)
    .replace(/^(\s*\n)+/, "")
    .trimEnd()
  if (text.length <= CLAUDE_CODE_MAX_CHARS) return whole(text)
  const shown = preview(text)
  const marker = `Output too large (${sizeText(byteLength(text))}). Full output saved to: ${savedPath}`
  return {
    text: `<persisted-output>\n${marker}\n\nPreview (first 2KB):\n${shown.text}${shown.more ? "\n...\n" : "\n"}</persisted-output>`,
    truncated: true,
    head: shown.text,
    tail: "",
    marker,
    location: { kind: "copy", path: savedPath, content: text }
  }
}

/** `cat -n` as this version renders it: the line number, a tab, the line. */
const numbered = (lines: ReadonlyArray<string>, first: number): string =>
  lines.map((line, i) => `${first + i}\t${line}`).join("\n")

const read = (file: Location): View => {
  const size = byteLength(file.content)
  if (size > CLAUDE_CODE_READ_MAX_BYTES) {
    const marker = `File content (${sizeText(size)}) exceeds maximum allowed size (256KB). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file.`
    return { text: marker, truncated: true, head: "", tail: "", marker, location: file }
  }
  const lines = splitLines(file.content)
  const tokens = TokenEstimator.estimate(lines.join("\n"))
  if (tokens <= CLAUDE_CODE_READ_MAX_TOKENS)
    return { text: numbered(lines, 1), truncated: false, head: lines.join("\n"), tail: "", shown: lines }
  let kept = Math.max(
    1,
    Math.min(
      lines.length,
      Math.floor(((lines.length * CLAUDE_CODE_READ_MAX_TOKENS) / tokens) * PARTIAL_VIEW_SHARE)
    )
  )
  for (let i = 0; i < 6 && kept > 1; i++) {
    if (TokenEstimator.estimate(lines.slice(0, kept).join("\n")) <= CLAUDE_CODE_READ_MAX_TOKENS) break
    kept = Math.max(1, Math.floor(kept * 0.7))
  }
  const shown = lines.slice(0, kept)
  const marker = `[Truncated: PARTIAL view — ${file.path}: showing lines 1-${kept} of ${lines.length} total (${tokens} tokens, cap ${CLAUDE_CODE_READ_MAX_TOKENS}). Call Read with offset=${kept + 1} limit=${kept} for the next page, or Grep to find a specific section. Do NOT answer from this page alone if the answer may be further in the file.]`
  return {
    text: `${numbered(shown, 1)}\n\n${marker}`,
    truncated: true,
    head: shown.join("\n"),
    tail: "",
    marker,
    location: file,
    shown
  }
}

const search = (location: Location, pattern: RegExp) => {
  const matches = matchingLines(location.content, pattern).slice(0, CLAUDE_CODE_GREP_HEAD_LIMIT)
  const shown = matches.map((match) =>
    byteLength(match.text) > CLAUDE_CODE_GREP_MAX_COLUMNS ? "[Omitted long line with 1 matches]" : match.text
  )
  return {
    text:
      matches.length === 0
        ? "No matches found"
        : matches.map((match, i) => `${match.line}:${shown[i]}`).join("\n"),
    shown
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const claudeCode: PeerPolicy = {
  name: "Claude Code",
  version: "2.1.332",
  shell: {
    describe:
      "stdout then stderr as one text (leading blank lines and trailing whitespace dropped); up to 30,000 characters pass whole; a longer output is saved whole to a file and the model gets `<persisted-output>` naming it with a preview of the first 2,000 characters (cut back to a line end past half of them).",
    apply: shell
  },
  read: {
    describe:
      "a file over 256 KB is refused without offset/limit (the error says to page or search); otherwise every line as `N<tab>line`, and a read over 25,000 tokens becomes a partial view of its first lines (85% of what fits, shrunk until it fits) with a notice naming the next offset.",
    apply: read
  },
  search: {
    describe:
      "Grep in content mode: `N:line` per match, at most 250, a line over 500 bytes replaced by `[Omitted long line with 1 matches]` (ripgrep `--max-columns 500`).",
    apply: search
  },
  sources: [
    {
      numbers:
        "`bashOutputMaxChars` default 30,000 (settings schema), persisted-output message, preview `r$ = 2000` cut by `h$e`",
      from: PACKAGE
    },
    {
      numbers: "Read `maxSizeBytes: 262144`, `maxTokens: 25000`, partial view, `${n}\\t${line}` (`f0t`)",
      from: PACKAGE
    },
    { numbers: "Grep `--max-columns 500`, `head_limit` default 250", from: PACKAGE }
  ]
}
