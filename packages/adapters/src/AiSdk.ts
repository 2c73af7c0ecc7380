/**
 * Vercel AI SDK (`ai` 6.x) tools built from the same definitions: description and input JSON
 * schema rendered from the budgets, `execute` running the host's tool. `execute` resolves to the
 * wire `Outcome` (errors are values here too); the model sees `ModelOutput`: Bash's bounded
 * combined text, the other results as JSON, a tool error as error text led by its stable `code`. The SDK's `abortSignal` stops the call (Bash: the
 * whole process tree).
 *
 * @since 0.1.0
 */
import type { JSONValue, Tool } from "ai"
import type { Bash } from "@toolcap/tools"
import * as ModelOutput from "./ModelOutput.js"
import type * as Outcome from "./Outcome.js"
import type * as PromiseHost from "./PromiseHost.js"
import type * as ToolDefs from "./ToolDefs.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolsOptions {
  /** Receives Bash's stdout/stderr chunks while it runs (e.g. to render them in a UI). */
  readonly onChunk?: ((chunk: Bash.BashChunk) => void) | undefined
}

/**
 * What the model sees of an outcome (see `ModelOutput`): Bash's bounded combined text, the other
 * tools' results as JSON, an error as error text with its code.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toModelOutput = (
  toolName: string,
  outcome: Outcome.Outcome
):
  | { readonly type: "text" | "error-text"; readonly value: string }
  | { readonly type: "json"; readonly value: JSONValue } => {
  if (!outcome.ok) return { type: "error-text", value: ModelOutput.errorText(outcome.error) }
  return toolName === "Bash"
    ? { type: "text", value: ModelOutput.text(toolName, outcome) }
    : { type: "json", value: outcome.result as JSONValue }
}

/**
 * The AI SDK tool set of a host: `{ Read, Glob, Grep, Bash }`, ready for `generateText({ tools })`.
 * Asynchronous because the AI SDK is loaded on first use: hosts (and the CLI) that never use it
 * do not pay for loading it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tools = async (
  host: PromiseHost.PromiseToolHost,
  options: ToolsOptions = {}
): Promise<Record<ToolDefs.ToolName, Tool<unknown, Outcome.Outcome>>> => {
  const { jsonSchema, tool } = await import("ai")
  const entries = host.definitions.map((def) => [
    def.name,
    tool<unknown, Outcome.Outcome>({
      description: def.description,
      inputSchema: jsonSchema<unknown>(def.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (input, { abortSignal, toolCallId }) =>
        host.call(def.name, input, { signal: abortSignal, callId: toolCallId, onChunk: options.onChunk }),
      toModelOutput: ({ output }) => toModelOutput(def.name, output)
    })
  ])
  return Object.fromEntries(entries) as Record<ToolDefs.ToolName, Tool<unknown, Outcome.Outcome>>
}
