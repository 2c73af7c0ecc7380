/**
 * What the model reads of an outcome, shared by the MCP and AI SDK adapters. Bash answers with
 * its `output`: the bounded combined payload (exit status, stdout excerpt and stderr excerpt with
 * their markers) — not the structured result, which repeats both excerpts and would double what
 * reaches the context. Read, Glob and Grep answer with their result as JSON: `content` stays
 * byte-faithful and `offset`, `truncated`, `notice`... travel as sibling fields (spec §3). An
 * error reads `CODE: message`, followed by the partial output of a stopped Bash call.
 *
 * @since 0.1.0
 */
import type * as Outcome from "./Outcome.js"

const bashOutput = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const output = (value as { readonly output?: unknown }).output
  return typeof output === "string" ? output : undefined
}

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
 * The model-facing text of an outcome.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (tool: string, outcome: Outcome.Outcome): string => {
  if (!outcome.ok) return errorText(outcome.error)
  const output = tool === "Bash" ? bashOutput(outcome.result) : undefined
  return output ?? JSON.stringify(outcome.result)
}
