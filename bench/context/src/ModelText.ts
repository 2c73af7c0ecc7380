/**
 * What the model reads of a Read, Grep or Glob result. `json` is the result object serialised;
 * `plain` is the file's lines, `path:line:text` lines, or one path per line, each followed by the
 * notice, with or without `cat -n` line numbers on a Read.
 *
 * `toolcapModelText` is the one seam the benchmark counts toolcap's results through: it is what
 * toolcap's host surfaces send today.
 *
 * @since 0.1.0
 */
import type { Glob, Grep, Read } from "@toolcap/tools"

/**
 * A tool result the model reads.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResult =
  | { readonly tool: "Read"; readonly result: Read.ReadResult }
  | { readonly tool: "Grep"; readonly result: Grep.GrepResult }
  | { readonly tool: "Glob"; readonly result: Glob.GlobResult }

/**
 * @since 0.1.0
 * @category models
 */
export type ModelText = (call: ToolResult) => string

/**
 * The result object as JSON (what the MCP and AI SDK adapters send for Read, Grep and Glob).
 *
 * @since 0.1.0
 * @category constructors
 */
export const json: ModelText = (call) => JSON.stringify(call.result)

/** `cat -n`: the line number right-aligned in 6 columns, a tab, the line. */
const catN = (content: string, first: number): string => {
  const lines = content.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines.map((line, i) => `${String(first + i).padStart(6, " ")}\t${line}`).join("\n")
}

const withNotice = (body: string, notice: string | undefined): string =>
  notice === undefined ? body : body === "" ? notice : `${body.replace(/\n$/, "")}\n\n${notice}`

const grepLines = (result: Grep.GrepResult): string => {
  if ("matches" in result)
    return result.matches
      .map(
        (match) =>
          `${match.path}${match.context ? "-" : ":"}${match.line}${match.context ? "-" : ":"}${match.text}`
      )
      .join("\n")
  if ("files" in result) return result.files.join("\n")
  return result.counts.map((entry) => `${entry.path}:${entry.count}`).join("\n")
}

/**
 * Plain text: Read's lines (numbered like `cat -n` when `lineNumbers`), Grep's `path:line:text`
 * (`path-line-text` for context lines) / `path` / `path:count` lines, Glob's paths, each followed
 * by the notice after a blank line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plain =
  (options: { readonly lineNumbers: boolean }): ModelText =>
  (call) => {
    switch (call.tool) {
      case "Read":
        return withNotice(
          options.lineNumbers && call.result.offset > 0
            ? catN(call.result.content, call.result.offset)
            : call.result.content,
          call.result.notice
        )
      case "Grep":
        return withNotice(grepLines(call.result), call.result.notice)
      case "Glob":
        return withNotice(call.result.matches.join("\n"), call.result.notice)
    }
  }

/**
 * What toolcap's hosts send the model for Read, Grep and Glob today: the result as JSON.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolcapModelText: ModelText = json
