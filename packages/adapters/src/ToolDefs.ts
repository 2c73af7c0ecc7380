/**
 * The definitions of the four builtin tools — name, description, input JSON schema — rendered
 * from their specs (`Specs`) under the budgets in force (rules D1, D2). Descriptions
 * carry the numbers and scoping parameters verbatim, so change a budget and the description
 * changes with it; input schemas are generated from the tools' own effect Schemas. Also in the
 * Anthropic, OpenAI Chat and OpenAI Responses shapes; the MCP server and the AI SDK tools list
 * the same definitions.
 *
 * @since 0.1.0
 */
import type { Budgets } from "@toolcap/limits"
import * as Specs from "./Specs.js"
import * as ToolSpec from "./ToolSpec.js"

/**
 * The names of the builtin tools, in the order of `Specs.all`.
 *
 * @since 0.1.0
 * @category models
 */
export const toolNames: ReadonlyArray<ToolName> = Specs.all.map((spec) => spec.name)

/**
 * @since 0.1.0
 * @category models
 */
export type ToolName = Specs.ToolName

/**
 * The result of each tool, by name (derived from the specs' result Schemas).
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResults = Specs.ToolResults

/**
 * Whether a string names a builtin tool.
 *
 * @since 0.1.0
 * @category models
 */
export const isToolName = (name: string): name is ToolName => Object.hasOwn(Specs.byName, name)

/**
 * A JSON Schema object describing a tool's input.
 *
 * @since 0.1.0
 * @category models
 */
export type InputSchema = ToolSpec.InputSchema

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

/**
 * The JSON schema of a tool's input under the given budgets (see `ToolSpec.inputSchema`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const inputSchema = (name: ToolName, budgets: Budgets.BudgetsValue): InputSchema =>
  ToolSpec.inputSchema(Specs.byName[name], budgets)

/**
 * The definition of one tool under the given budgets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolDef = (name: ToolName, budgets: Budgets.BudgetsValue): ToolDef => ({
  name,
  description: Specs.byName[name].description(budgets),
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
