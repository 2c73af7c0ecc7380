/**
 * What the model reads of an outcome, the same on every host surface (MCP text content, AI SDK
 * `toModelOutput`, the Promise API's `modelText`, the CLI's `--text`): plain text, never JSON, so
 * code reaches the model as code. Read gives the window's lines as they are in the file; Grep
 * `path:line:text` lines (`path-line-text` for context lines, `--` between groups), `path` lines
 * or `path:count` lines; Glob one path per line; each followed by its notice in brackets on a
 * line of its own. A path holding a control character is C-quoted (`PathQuote`: `"dir\n/x"`),
 * so no name forges a line; the structured result keeps the raw name. Bash gives its `output`: the bounded combined payload (exit status, stdout and
 * stderr excerpts with their markers). An error reads `CODE: message`, followed by the partial
 * output of a stopped Bash call. The typed result stays available to programs beside this text
 * (MCP `structuredContent`, the Promise API's `result`).
 *
 * @since 0.1.0
 */
import { PathQuote } from "@toolcap/limits"
import type * as Outcome from "./Outcome.js"
import type * as Specs from "./Specs.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface TextOptions {
  /**
   * Read: prefix each line with its number and a tab, as `cat -n` does (`     7\tconst x = 1`).
   * Default false: the lines stay exactly the file's, so text copied out of them matches it, and
   * the window's first line number is the `offset` the model asked for (the notice names the
   * next one). A window read from the end with an unknown line count is numbered from its
   * negative offset (`-3`, `-2`, `-1`), the offsets Read takes.
   */
  readonly lineNumbers?: boolean | undefined
}

const bashOutput = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const output = (value as { readonly output?: unknown }).output
  return typeof output === "string" ? output : undefined
}

/** The body, then the notice in brackets on a line of its own. */
const withNotice = (body: string, notice: string | undefined): string => {
  if (notice === undefined || notice.length === 0) return body
  if (body.length === 0) return `[${notice}]`
  return body.endsWith("\n") ? `${body}[${notice}]` : `${body}\n[${notice}]`
}

/** The lines of a text, without the empty piece after a final `\n`. */
const linesOf = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  return lines
}

/** `cat -n`'s format: the number right-aligned in six columns, then a tab. */
const numbered = (number: number, line: string): string => `${String(number).padStart(6)}\t${line}`

/**
 * The model-facing text of a Read result: the window's lines, then its notice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readText = (result: Specs.ToolResults["Read"], options: TextOptions = {}): string => {
  const body =
    result.content.length === 0
      ? result.fileBytes === 0
        ? "(empty file)"
        : "(no lines in this window)"
      : options.lineNumbers === true
        ? linesOf(result.content)
            .map((line, i) => numbered(result.offset + i, line))
            .join("\n")
        : result.content
  return withNotice(body, result.notice)
}

/** A Grep line without the line break ripgrep's lines may end with. */
const chomp = (text: string): string =>
  text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text

type GrepMatchLine = {
  readonly path: string
  readonly line: number
  readonly text: string
  readonly context?: true | undefined
}

const contentLines = (matches: ReadonlyArray<GrepMatchLine>): Array<string> => {
  const withContext = matches.some((match) => match.context === true)
  const out: Array<string> = []
  let previous: GrepMatchLine | undefined
  for (const match of matches) {
    // grep's separator between groups that do not touch, when there is context to tell apart
    if (
      withContext &&
      previous !== undefined &&
      (previous.path !== match.path || match.line > previous.line + 1)
    )
      out.push("--")
    out.push(
      `${PathQuote.quote(match.path)}${match.context === true ? "-" : ":"}${match.line}${match.context === true ? "-" : ":"}${chomp(match.text)}`
    )
    previous = match
  }
  return out
}

/**
 * The model-facing text of a Grep result: `path:line:text` lines (content), `path` lines (files
 * with matches) or `path:count` lines (count), then its notice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const grepText = (result: Specs.ToolResults["Grep"]): string => {
  const lines =
    "matches" in result
      ? contentLines(result.matches)
      : "files" in result
        ? result.files.map(PathQuote.quote)
        : result.counts.map((entry) => `${PathQuote.quote(entry.path)}:${entry.count}`)
  return withNotice(lines.length === 0 ? "No matches found" : lines.join("\n"), result.notice)
}

/**
 * The model-facing text of a Glob result: one path per line, then its notice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const globText = (result: Specs.ToolResults["Glob"]): string =>
  withNotice(
    result.matches.length === 0 ? "No files found" : result.matches.map(PathQuote.quote).join("\n"),
    result.notice
  )

/**
 * The model-facing text of a Bash result: its bounded combined `output`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bashText = (result: Specs.ToolResults["Bash"]): string => result.output

/**
 * The model-facing text of an error: its code and message, then any partial Bash output.
 *
 * @since 0.1.0
 * @category constructors
 */
export const errorText = (error: Outcome.WireError): string => {
  const partial = bashOutput(error["partial"])
  const head = `${error.code}: ${error.message}`
  return partial === undefined ? head : `${head}\n${partial}`
}

/**
 * The model-facing text of an outcome of `tool`. A result of a tool this package does not know
 * (a host's own) is shown as JSON.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (tool: string, outcome: Outcome.Outcome, options: TextOptions = {}): string => {
  if (!outcome.ok) return errorText(outcome.error)
  switch (tool) {
    case "Read":
      return readText(outcome.result as Specs.ToolResults["Read"], options)
    case "Grep":
      return grepText(outcome.result as Specs.ToolResults["Grep"])
    case "Glob":
      return globText(outcome.result as Specs.ToolResults["Glob"])
    case "Bash":
      return bashOutput(outcome.result) ?? JSON.stringify(outcome.result)
    default:
      return JSON.stringify(outcome.result)
  }
}
