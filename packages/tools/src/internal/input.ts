/**
 * Input decoding shared by Read, Glob and Grep: unknown input -> the tool's schema, or a
 * `ToolInvalidInput` naming the first offending field and what to do about it.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Budgets, InputBounds, ToolError } from "@toolcap/limits"

/** Decodes `input` with `schema`; excess fields are refused, so a misspelt option is not ignored. */
export const decode = <A, I>(
  tool: string,
  schema: Schema.Schema<A, I>,
  input: unknown
): Effect.Effect<A, ToolError.ToolInvalidInput, Budgets.Budgets> =>
  Effect.flatMap(Budgets.Budgets, (budgets) => decodeWithin(tool, schema, input, budgets))

const decodeWithin = <A, I>(
  tool: string,
  schema: Schema.Schema<A, I>,
  input: unknown,
  budgets: Budgets.BudgetsValue
): Effect.Effect<A, ToolError.ToolInvalidInput> => {
  const fields = Schema.isSchema(schema) && "fields" in schema ? Object.keys(schema.fields as object) : []
  // before any decoding: the schema's checks and messages recurse into the value
  const tooDeep = InputBounds.checkDepth(tool, input, budgets)
  if (Either.isLeft(tooDeep)) return Effect.fail(tooDeep.left)
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return Effect.fail(
      new ToolError.ToolInvalidInput({
        tool,
        field: "input",
        reason: `expected an object with the fields ${fields.join(", ")}`
      })
    )
  }
  return Either.match(
    Schema.decodeUnknownEither(schema)(input, { errors: "first", onExcessProperty: "error" }),
    {
      onRight: (value) => Effect.succeed(value),
      onLeft: (error) => {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        const field = issue?.path.length ? String(issue.path[0]) : "input"
        const unknownField = issue?.["_tag"] === "Unexpected"
        return Effect.fail(
          new ToolError.ToolInvalidInput({
            tool,
            field,
            reason: unknownField
              ? `${tool} has no field "${field}"; its fields are ${fields.join(", ")}`
              : (issue?.message ?? "invalid value")
          })
        )
      }
    }
  )
}

/** A positive integer (or absent), else a typed error saying what is allowed. */
export const positiveInteger = (
  tool: string,
  field: string,
  value: number | undefined,
  hint: string
): Effect.Effect<number | undefined, ToolError.ToolInvalidInput> =>
  value === undefined || (Number.isSafeInteger(value) && value >= 1)
    ? Effect.succeed(value)
    : Effect.fail(
        new ToolError.ToolInvalidInput({ tool, field, reason: `${String(value)} is not allowed: ${hint}` })
      )

/** A non-negative integer (or absent). */
export const nonNegativeInteger = (
  tool: string,
  field: string,
  value: number | undefined,
  hint: string
): Effect.Effect<number | undefined, ToolError.ToolInvalidInput> =>
  value === undefined || (Number.isSafeInteger(value) && value >= 0)
    ? Effect.succeed(value)
    : Effect.fail(
        new ToolError.ToolInvalidInput({ tool, field, reason: `${String(value)} is not allowed: ${hint}` })
      )

export { plural } from "./notice.js"
