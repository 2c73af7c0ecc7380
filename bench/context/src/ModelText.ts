/**
 * What the model reads of a Read, Grep or Glob result. `json` is the result object serialised;
 * `plain` is what toolcap's host surfaces send: the file's lines, `path:line:text` lines, or one
 * path per line, each followed by the notice, with or without `cat -n` line numbers on a Read.
 *
 * `toolcapModelText` is the one seam the benchmark counts toolcap's results through.
 *
 * @since 0.1.0
 */
import { ModelOutput } from "@toolcap/adapters"
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

/**
 * Plain text as toolcap's host surfaces render it (`ModelOutput` of `@toolcap/adapters`): Read's
 * lines (numbered like `cat -n` when `lineNumbers`), Grep's `path:line:text` / `path` /
 * `path:count` lines, Glob's paths, each followed by its notice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const plain =
  (options: { readonly lineNumbers: boolean }): ModelText =>
  (call) => {
    switch (call.tool) {
      case "Read":
        return ModelOutput.readText(call.result, options)
      case "Grep":
        return ModelOutput.grepText(call.result)
      case "Glob":
        return ModelOutput.globText(call.result)
    }
  }

/**
 * What toolcap's hosts send the model for Read, Grep and Glob: plain text, without line numbers
 * (their default).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolcapModelText: ModelText = plain({ lineNumbers: false })
