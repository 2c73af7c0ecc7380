/**
 * The spec registry's compile-time guarantees (each `@ts-expect-error` below fails the typecheck
 * when the guarantee is lost) and what is derived from the four specs at run time.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Budgets, ToolError } from "@toolcap/limits"
import { Specs, ToolDefs, ToolSpec } from "@toolcap/adapters"
import type { ToolHost } from "@toolcap/adapters"

const Input = Schema.Struct({ path: Schema.String, depth: Schema.optional(Schema.Number) })
const Result = Schema.Struct({ lines: Schema.Number })

const described = ToolSpec.make({
  name: "Count",
  input: Input,
  result: Result,
  errors: { TOOL_INVALID_INPUT: "the input does not fit the schema" },
  description: (b) => `Counts lines, at most ${b.searchMaxLines}.`,
  parameters: () => ({ path: "File to count.", depth: "How deep." }),
  run: (input) =>
    Schema.decodeUnknown(Input)(input).pipe(
      Effect.mapError(
        (e) => new ToolError.ToolInvalidInput({ tool: "Count", field: "input", reason: e.message })
      ),
      Effect.as({ lines: 1 })
    )
})

// A field added to the input without a description does not compile.
// @ts-expect-error -- `depth` is not described
const undescribed: ToolSpec.Parameters<typeof Input.fields> = { path: "File to count." }

ToolSpec.make({
  ...described,
  // @ts-expect-error -- `depth` is not described
  parameters: () => ({ path: "File to count." })
})

ToolSpec.make({
  ...described,
  // @ts-expect-error -- `run` can fail with TOOL_INVALID_INPUT, which `errors` does not name
  errors: {}
})

ToolSpec.make({
  ...described,
  // @ts-expect-error -- `run` succeeds with something other than the result Schema's type
  run: () => Effect.succeed({ lines: "one" })
})

// Results are typed per tool name, on the Effect host and through the derived maps.
type ReadContent = Specs.ToolResults["Read"]["content"]
const content: ReadContent = "text"
type BashStdout = Effect.Effect.Success<ReturnType<typeof readBash>>["stdout"]
const readBash = (host: ToolHost.ToolHostService) => host.call("Bash", { command: "true" })
const stdout: BashStdout = "text"
// @ts-expect-error -- a Read result has no `stdout`
type NoStdout = Specs.ToolResults["Read"]["stdout"]
// @ts-expect-error -- Read never fails with a timeout
const readTimeout: Specs.ToolErrors["Read"]["code"] = "TOOL_TIMEOUT"

/** The toy spec's run uses none of the tool services a host provides. */
const contextFree = <A, E>(effect: Effect.Effect<A, E, ToolSpec.ToolContext>) => effect as Effect.Effect<A, E>

describe("ToolSpec", () => {
  it("the field descriptions land in the generated input schema", () => {
    assert.strictEqual(undescribed.path, "File to count.")
    assert.deepStrictEqual(ToolSpec.inputSchema(described, Budgets.defaults), {
      type: "object",
      required: ["path"],
      properties: {
        path: { type: "string", description: "File to count." },
        depth: { type: "number", description: "How deep." }
      },
      additionalProperties: false
    })
  })

  it.effect("run decodes its input and refuses what does not fit", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* contextFree(described.run({ path: "a" }, {})), { lines: 1 })
      const refused = yield* Effect.flip(contextFree(described.run({ depth: 1 }, {})))
      assert.strictEqual(refused.code, "TOOL_INVALID_INPUT")
      assert.strictEqual(content.length + stdout.length, 8)
      assert.strictEqual(readTimeout, "TOOL_TIMEOUT")
      const noStdout: NoStdout | undefined = undefined
      assert.isUndefined(noStdout)
    })
  )

  it("the builtin definitions are the specs, in order, every input field described", () => {
    assert.deepStrictEqual(
      ToolDefs.toolNames,
      Specs.all.map((spec) => spec.name)
    )
    for (const spec of Specs.all) {
      const schema = ToolSpec.inputSchema(spec, Budgets.defaults)
      const fields = Object.keys(spec.input.fields)
      assert.deepStrictEqual(Object.keys(schema.properties), fields)
      for (const field of fields) {
        const property = schema.properties[field] as { description?: unknown }
        assert.strictEqual(
          property.description,
          (spec.parameters(Budgets.defaults) as Record<string, string>)[field]
        )
      }
      assert.include(
        ToolDefs.toolDef(spec.name, Budgets.defaults).description,
        spec.description(Budgets.defaults)
      )
    }
  })

  it("every spec's error codes are wire codes", () => {
    for (const spec of Specs.all) {
      for (const code of Object.keys(spec.errors))
        assert.isTrue(Schema.is(ToolError.ToolErrorCode)(code), code)
    }
  })
})
