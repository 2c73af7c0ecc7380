/**
 * Claude Code 2.1.332, read from the JavaScript bundle inside its published native package
 * (`@anthropic-ai/claude-code-linux-x64@2.1.332`, the platform binary `@anthropic-ai/claude-code`
 * installs).
 *
 * @since 0.1.0
 */
import { TokenEstimator } from "@toolcap/checkpoint"
import { type Location, matchingLines, type PeerPolicy, type View, whole } from "../Peer.js"
import {
  arrivalText,
  byteLength,
  headBytes,
  headChars,
  type RawOutput,
  sizeText,
  splitLines,
  tailChars
} from "../Text.js"

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

/**
 * Commands whose exit code 1 is an answer, not a failure (`z9i`, and `git diff` / `git grep`):
 * for them only an exit code of 2 or more fails the call.
 */
export const CLAUDE_CODE_EXIT_ONE_OK: ReadonlyArray<string> = [
  "grep",
  "rg",
  "egrep",
  "fgrep",
  "find",
  "diff",
  "test",
  "[",
  "git diff",
  "git grep"
]

/**
 * The simple command the exit code belongs to: the last one of a list or pipeline (split at
 * unquoted `;`, `&`, `|` and newlines; `&&` and `||` are two of them), as the host classifies.
 */
const lastSimpleCommand = (command: string): string => {
  let quote: string | undefined
  let start = 0
  let last = ""
  for (let i = 0; i <= command.length; i++) {
    const c = command[i]
    if (quote !== undefined) {
      if (c === "\\" && quote === '"') i++
      else if (c === quote) quote = undefined
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === "\\") i++
    else if (c === undefined || c === ";" || c === "&" || c === "|" || c === "\n") {
      const piece = command.slice(start, i).trim()
      if (piece !== "") last = piece
      start = i + 1
    }
  }
  return last
}

/** The git subcommand: the first word after `git` that is not an option (`-C dir`, `-c k=v` skip their value). */
const gitSubcommand = (words: ReadonlyArray<string>): string | undefined => {
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    if (word.startsWith("-")) {
      if (word === "-C" || word === "-c") i++
      continue
    }
    return word
  }
  return undefined
}

/** Whether the host counts the command's exit as a failure (`yQo` over `z2t`). */
export const claudeCodeFails = (command: string | undefined, exitCode: number): boolean => {
  const words = lastSimpleCommand(command ?? "")
    .split(/\s+/)
    .filter((word) => word !== "")
  const name = words[0] ?? ""
  const kind = name === "git" ? `git ${gitSubcommand(words) ?? ""}` : name
  return CLAUDE_CODE_EXIT_ONE_OK.includes(kind) ? exitCode >= 2 : exitCode !== 0
}

/** Bytes of the output file a failed command's error carries: `BASH_MAX_OUTPUT_LENGTH` default (`Q1()`). */
export const CLAUDE_CODE_FAILED_CAPTURE_BYTES = 30_000
/** Characters an error message keeps, half from each end (`K9t`) ... */
export const CLAUDE_CODE_ERROR_KEEP_CHARS = 10_000
/** ... once it is longer than that plus this slack (`lI`), so a message just over the cap stays whole. */
export const CLAUDE_CODE_ERROR_SLACK_CHARS = 1024

/** The marker of a cut error message, and the counts of markers already inside a cut middle (`uI`). */
const errorMarker = (removed: number): string => `\n\n... [${removed} characters truncated] ...\n\n`
const EARLIER_MARKER = /\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n/g

/**
 * A failed command (`ShellError`): `Exit code N` and the head of the one output file on the next
 * line, trimmed, cut to its first and last 5,000 characters past 11,024 (`cp`); no copy is saved.
 */
const failure = (exitCode: number, file: string): View => {
  const captured = headBytes(file, CLAUDE_CODE_FAILED_CAPTURE_BYTES)
  const message =
    [`Exit code ${exitCode}`, captured]
      .filter((part) => part !== "")
      .join("\n")
      .trim() || "Command failed with no output"
  const body = message.slice(message.indexOf("\n") + 1)
  const output = message.includes("\n") ? body : ""
  const capturedAll = captured.length === file.length
  if (message.length <= CLAUDE_CODE_ERROR_KEEP_CHARS + CLAUDE_CODE_ERROR_SLACK_CHARS)
    return capturedAll ? whole(message) : { text: message, truncated: true, head: output, tail: "" }
  const headLength = Math.floor(CLAUDE_CODE_ERROR_KEEP_CHARS / 2)
  const first = headChars(message, headLength)
  const last = tailChars(message, CLAUDE_CODE_ERROR_KEEP_CHARS - headLength)
  // a middle that holds an earlier cut's marker counts what that cut removed too
  let carried = 0
  for (const match of message.slice(first.length, message.length - last.length).matchAll(EARLIER_MARKER)) {
    const count = match[1]!.length <= 15 ? Number(match[1]) : Number.NaN
    if (Number.isSafeInteger(count) && count >= match[0].length) carried += count - match[0].length
  }
  const marker = errorMarker(message.length - first.length - last.length + carried)
  return {
    text: `${first}${marker}${last}`,
    truncated: true,
    head: first.slice(first.indexOf("\n") + 1),
    tail: last,
    marker: marker.trim()
  }
}

const success = (file: string, savedPath: string): View => {
  // the tool drops leading blank lines and trailing whitespace before measuring
  const text = file.replace(/^(\s*\n)+/, "").trimEnd()
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

/** Both streams go to one output file in the order they arrive; the exit code picks the path. */
const shell = (raw: RawOutput, savedPath: string): View => {
  const file = arrivalText(raw)
  const exitCode = raw.exitCode ?? 0
  return claudeCodeFails(raw.command, exitCode) ? failure(exitCode, file) : success(file, savedPath)
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
      "both streams into one output file in the order they arrive. A command that fails (a non-zero exit; for grep, rg, egrep, fgrep, find, diff, test, `[`, `git diff` and `git grep` an exit of 2 or more) ends in an error: `Exit code N`, then the first 30,000 bytes of the file, trimmed, cut to its first 5,000 and last 5,000 characters around `... [N characters truncated] ...` when longer than 11,024; nothing is saved. Otherwise (leading blank lines and trailing whitespace dropped) up to 30,000 characters pass whole; a longer output is saved whole to a file and the model gets `<persisted-output>` naming it with a preview of the first 2,000 characters (cut back to a line end past half of them).",
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
    { numbers: "Grep `--max-columns 500`, `head_limit` default 250", from: PACKAGE },
    {
      numbers:
        'failure path: exit interpretation `yQo`/`z2t` (`uj`: exit 1 not an error for grep, rg, egrep, fgrep, find, diff, test, `[`; `git diff`/`git grep` by the subcommand), `throw new HA({stdout: "", stderr: <output file>})`, message `$Cr` (`Exit code ${code}`, stderr, stdout joined by newlines, trimmed), `cp` with `K9t = 1e4`, `lI = 1024`, marker `pBr`; the head kept `Q1()` = `BASH_MAX_OUTPUT_LENGTH` default 30,000 bytes ("kept only the first ${Q1()} bytes")',
      from: PACKAGE
    }
  ]
}
