/**
 * The definitions of the four builtin tools — name, description, input JSON schema — rendered
 * from the budgets in force (spec §2, DECISIONS §8). Descriptions carry the numbers and scoping
 * parameters verbatim, so change a budget and the description changes with it; input schemas are
 * generated from the tools' own effect Schemas. Also in the Anthropic and OpenAI shapes.
 *
 * @since 0.1.0
 */
import * as JSONSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"
import type { Budgets } from "@toolcap/limits"
import { Bash, Glob, Grep, Read } from "@toolcap/tools"
import * as Describe from "./internal/descriptions.js"

/**
 * The names of the builtin tools.
 *
 * @since 0.1.0
 * @category models
 */
export const toolNames = ["Read", "Glob", "Grep", "Bash"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type ToolName = (typeof toolNames)[number]

/**
 * The result of each tool, by name: what `ToolHost.call("Read", ...)` succeeds with, and what the
 * Promise API's `call("Read", ...)` carries as `result` (results are plain JSON data).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResults {
  readonly Read: Read.ReadResult
  readonly Glob: Glob.GlobResult
  readonly Grep: Grep.GrepResult
  readonly Bash: Bash.BashResult
}

/**
 * Whether a string names a builtin tool.
 *
 * @since 0.1.0
 * @category models
 */
export const isToolName = (name: string): name is ToolName =>
  (toolNames as ReadonlyArray<string>).includes(name)

/**
 * A JSON Schema object describing a tool's input.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputSchema {
  readonly type: "object"
  readonly properties: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly [keyword: string]: unknown
}

/**
 * A provider-neutral tool definition.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDef {
  readonly name: ToolName
  readonly description: string
  readonly inputSchema: InputSchema
}

const inputSchemaOf = (name: ToolName): Schema.Schema.AnyNoContext => {
  switch (name) {
    case "Read":
      return Read.ReadInput
    case "Glob":
      return Glob.GlobInput
    case "Grep":
      return Grep.GrepInput
    case "Bash":
      return Bash.BashInput
  }
}

const descriptions: Record<ToolName, (budgets: Budgets.BudgetsValue) => string> = {
  Read: Describe.read,
  Glob: Describe.glob,
  Grep: Describe.grep,
  Bash: Describe.bash
}

/**
 * The JSON schema of a tool's input, generated from its effect Schema (what a caller sends, i.e.
 * the encoded side), each parameter described with the budgets in force, without the `$schema`
 * keyword some providers reject.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inputSchema = (name: ToolName, budgets: Budgets.BudgetsValue): InputSchema => {
  const { $schema: _, ...schema } = JSONSchema.make(inputSchemaOf(name)) as unknown as Record<string, unknown>
  const properties = schema["properties"]
  if (schema["type"] !== "object" || typeof properties !== "object" || properties === null) {
    throw new Error(`the ${name} input schema is not a JSON object schema`)
  }
  const notes = Describe.parameters(budgets)[name] ?? {}
  const described: Record<string, unknown> = {}
  for (const [key, property] of Object.entries(properties)) {
    const note = notes[key]
    described[key] =
      note !== undefined && typeof property === "object" && property !== null
        ? { ...property, description: note }
        : property
  }
  return { ...schema, type: "object", properties: described }
}

/**
 * The definition of one tool under the given budgets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolDef = (name: ToolName, budgets: Budgets.BudgetsValue): ToolDef => ({
  name,
  description: descriptions[name](budgets),
  inputSchema: inputSchema(name, budgets)
})

/**
 * The definitions of Read, Glob, Grep and Bash under the given budgets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const builtinToolDefs = (budgets: Budgets.BudgetsValue): ReadonlyArray<ToolDef> =>
  toolNames.map((name) => toolDef(name, budgets))

/**
 * An Anthropic Messages API tool definition.
 *
 * @since 0.1.0
 * @category models
 */
export interface AnthropicToolDef {
  readonly name: string
  readonly description: string
  readonly input_schema: InputSchema
}

/**
 * Definitions in the Anthropic Messages API shape (`tools` of a request).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toAnthropic = (defs: ReadonlyArray<ToolDef>): Array<AnthropicToolDef> =>
  defs.map((def) => ({ name: def.name, description: def.description, input_schema: def.inputSchema }))

/**
 * An OpenAI Chat Completions function tool definition.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAIToolDef {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description: string; readonly parameters: InputSchema }
}

/**
 * Definitions in the OpenAI Chat Completions shape (`tools` of a request).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toOpenAI = (defs: ReadonlyArray<ToolDef>): Array<OpenAIToolDef> =>
  defs.map((def) => ({
    type: "function",
    function: { name: def.name, description: def.description, parameters: def.inputSchema }
  }))

/**
 * An OpenAI Responses API function tool definition.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenAIResponsesToolDef {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: InputSchema
  readonly strict: false
}

/**
 * Definitions in the OpenAI Responses API shape. `strict` is off: optional parameters stay optional.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toOpenAIResponses = (defs: ReadonlyArray<ToolDef>): Array<OpenAIResponsesToolDef> =>
  defs.map((def) => ({
    type: "function",
    name: def.name,
    description: def.description,
    parameters: def.inputSchema,
    strict: false
  }))
