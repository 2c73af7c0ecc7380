/**
 * What a tool is, in one value: its name, input Schema, result Schema, the codes it fails with,
 * its model-facing description and one description per input field (both rendered from the
 * budgets in force), and how it runs. The four builtin specs (`Specs`) are the only registry:
 * tool definitions for every provider, dispatch in `ToolHost`, the typed results and error
 * unions are all derived from them.
 *
 * The field descriptions are typed against the input Schema's fields: a spec whose input gains a
 * field its `parameters` does not describe does not compile.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"
import type { Budgets } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import type { Bash, LineIndex, Supervisor, Workspace } from "@toolcap/tools"

/**
 * What a caller may pass along with a call.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /** Identifies the call in Bash chunk events; generated when omitted. */
  readonly callId?: string | undefined
  /**
   * Receives Bash's ordered stdout/stderr chunks while it runs. When it returns an effect, the
   * next chunk waits for it, and a slow consumer pauses the command's pipes (backpressure): a
   * host forwarding chunks to a slow reader holds a bounded number of them, not all of them.
   */
  readonly onChunk?: ((chunk: Bash.BashChunk) => Effect.Effect<void> | void) | undefined
  /** Aborting stops the call; for Bash, the whole process tree, answering `TOOL_ABORTED`. */
  readonly signal?: AbortSignal | undefined
}

/**
 * The services a tool runs with; a host provides them once per session.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolContext =
  Budgets.Budgets | Scratch.Scratch | Workspace.Workspace | LineIndex.LineIndex | Supervisor.Supervisor

/**
 * A typed tool failure: it carries its stable wire code.
 *
 * @since 0.1.0
 * @category models
 */
export interface CodedError {
  readonly code: string
  readonly message: string
}

/**
 * One description per field of an input Schema, every field required: a field added to the
 * input without a description here is a compile error.
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters<Fields extends Schema.Struct.Fields> = { readonly [K in keyof Fields]-?: string }

/**
 * One tool. `errors` names every code `run` can fail with (exactly those: the record is typed
 * against the error channel of `run`), each with when it happens.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSpec<
  Name extends string,
  Fields extends Schema.Struct.Fields,
  A,
  I,
  E extends CodedError
> {
  readonly name: Name
  readonly input: Schema.Struct<Fields>
  readonly result: Schema.Schema<A, I>
  readonly errors: { readonly [Code in E["code"]]: string }
  /** The model-facing description, with the budgets' numbers verbatim. */
  readonly description: (budgets: Budgets.BudgetsValue) => string
  /** The description of each input field, merged into the input JSON schema. */
  readonly parameters: (budgets: Budgets.BudgetsValue) => Parameters<Fields>
  /** Decodes `input` (refusing it with `TOOL_INVALID_INPUT`) and runs the tool. */
  readonly run: (input: unknown, options: RunOptions) => Effect.Effect<A, E, ToolContext>
}

/**
 * Any tool spec.
 *
 * @since 0.1.0
 * @category models
 */
// oxlint-disable-next-line typescript/no-explicit-any -- the widest spec: variance of each parameter differs
export type Any = ToolSpec<string, any, any, any, any>

/**
 * The result type of a spec.
 *
 * @since 0.1.0
 * @category models
 */
export type Result<S extends Any> = Schema.Schema.Type<S["result"]>

/**
 * The error union of a spec's `run`.
 *
 * @since 0.1.0
 * @category models
 */
export type Error<S extends Any> = Effect.Effect.Error<ReturnType<S["run"]>>

/**
 * A spec, checked: the error codes and the field descriptions must match `run` and `input`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  const Name extends string,
  Fields extends Schema.Struct.Fields,
  A,
  I,
  E extends CodedError
>(
  spec: ToolSpec<Name, Fields, A, I, E>
): ToolSpec<Name, Fields, A, I, E> => spec

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
 * The JSON schema of a spec's input, generated from its Schema (what a caller sends, i.e. the
 * encoded side), each field described by `parameters` under the given budgets, without the
 * `$schema` keyword some providers reject.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inputSchema = (spec: Any, budgets: Budgets.BudgetsValue): InputSchema => {
  const { $schema: _, ...schema } = JSONSchema.make(spec.input) as unknown as Record<string, unknown>
  const properties = schema["properties"]
  if (schema["type"] !== "object" || typeof properties !== "object" || properties === null) {
    throw new Error(`the ${spec.name} input schema is not a JSON object schema`)
  }
  const notes: Record<string, string> = spec.parameters(budgets)
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
