import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import { Budgets } from "@toolcap/limits"
import { ToolDefs } from "@toolcap/adapters"

const defaults = Budgets.defaults
const byName = (budgets: Budgets.BudgetsValue) =>
  Object.fromEntries(ToolDefs.builtinToolDefs(budgets).map((def) => [def.name, def])) as Record<
    ToolDefs.ToolName,
    ToolDefs.ToolDef
  >

const override = (overrides: Partial<Record<Budgets.BudgetField, number>>) =>
  Either.getOrThrow(Budgets.make(overrides))

describe("ToolDefs.builtinToolDefs", () => {
  it("renders Read, Glob, Grep and Bash", () => {
    assert.deepStrictEqual(
      ToolDefs.builtinToolDefs(defaults).map((def) => def.name),
      ["Read", "Glob", "Grep", "Bash"]
    )
  })

  it("descriptions carry the budgets' numbers and the scoping parameters verbatim", () => {
    const defs = byName(defaults)
    const expect = (name: ToolDefs.ToolName, parts: ReadonlyArray<string>) => {
      for (const part of parts) assert.include(defs[name].description, part, `${name} description`)
    }
    expect("Read", [
      "`offset`",
      "`limit`",
      "default and maximum 2000",
      "2000 lines",
      "48KB",
      "2000 characters",
      "TOOL_BINARY_CONTENT",
      "never refused"
    ])
    expect("Glob", [
      "`pattern`",
      "`path`",
      "`limit`",
      "default 100, maximum 1000",
      "48KB",
      "newest",
      "node_modules"
    ])
    expect("Grep", [
      "`pattern`",
      "`path`",
      "`glob`",
      "`type`",
      "`outputMode`",
      "`headLimit`",
      "default 200",
      "at most 4KB",
      "2000 lines / 48KB",
      "2000 characters",
      "node_modules"
    ])
    expect("Bash", [
      "`command`",
      "`timeout`",
      "default 60",
      "1–300",
      "first 4000 lines / 96KB",
      "last 4000 lines / 96KB",
      "512KB",
      "TOOL_TIMEOUT",
      "Read it with offset/limit"
    ])
  })

  it("a changed budget changes the description", () => {
    const changed = byName(
      override({ searchMaxBytes: 32 * 1024, grepHeadLimit: 50, bashTimeoutDefaultSeconds: 30 })
    )
    const original = byName(defaults)
    assert.include(changed.Read.description, "32KB")
    assert.notInclude(changed.Read.description, "48KB")
    assert.include(changed.Grep.description, "default 50")
    assert.include(changed.Bash.description, "default 30")
    assert.notStrictEqual(changed.Read.description, original.Read.description)
    assert.strictEqual(changed.Glob.inputSchema.type, "object")
  })

  it.prop(
    "every description states the budget in force (any valid budgets)",
    {
      searchMaxLines: FastCheck.integer({ min: 1, max: 100_000 }),
      grepHeadLimit: FastCheck.integer({ min: 1, max: 100_000 }),
      globMaxLimit: FastCheck.integer({ min: 1, max: 100_000 }),
      stdoutLines: FastCheck.integer({ min: 1, max: 100_000 }),
      maxSeconds: FastCheck.integer({ min: 2, max: 10_000 })
    },
    ({ searchMaxLines, grepHeadLimit, globMaxLimit, stdoutLines, maxSeconds }) => {
      const budgets = override({
        searchMaxLines,
        grepHeadLimit,
        globMaxLimit,
        globLimit: Math.min(defaults.globLimit, globMaxLimit),
        shellStdoutMaxLines: stdoutLines,
        captureMaxLines: Math.max(defaults.captureMaxLines, stdoutLines),
        bashTimeoutMaxSeconds: maxSeconds,
        bashTimeoutDefaultSeconds: Math.min(defaults.bashTimeoutDefaultSeconds, maxSeconds)
      })
      const defs = byName(budgets)
      assert.include(defs.Read.description, `at ${searchMaxLines} lines`)
      assert.include(defs.Grep.description, `default ${grepHeadLimit}`)
      assert.include(defs.Glob.description, `maximum ${globMaxLimit}`)
      assert.include(defs.Bash.description, `first ${stdoutLines} lines`)
      assert.include(defs.Bash.description, `${budgets.bashTimeoutMinSeconds}–${maxSeconds}`)
      assert.include(
        String((defs.Bash.inputSchema.properties["timeout"] as { description: string }).description),
        `–${maxSeconds}`
      )
    },
    { fastCheck: { numRuns: 50 } }
  )

  it("input schemas come from the tools' Schemas: object, parameters, required fields", () => {
    const defs = byName(defaults)
    const shape = (name: ToolDefs.ToolName) => {
      const properties = Object.keys(defs[name].inputSchema.properties)
      properties.sort()
      const required = [...(defs[name].inputSchema.required ?? [])]
      required.sort()
      return { type: defs[name].inputSchema.type, properties, required }
    }
    assert.deepStrictEqual(shape("Read"), {
      type: "object",
      properties: ["limit", "offset", "path"],
      required: ["path"]
    })
    assert.deepStrictEqual(shape("Glob"), {
      type: "object",
      properties: ["limit", "path", "pattern"],
      required: ["pattern"]
    })
    assert.deepStrictEqual(shape("Bash"), {
      type: "object",
      properties: ["command", "digest", "timeout"],
      required: ["command"]
    })
    const grep = shape("Grep")
    assert.deepStrictEqual(grep.required, ["pattern"])
    for (const parameter of [
      "path",
      "glob",
      "type",
      "outputMode",
      "caseInsensitive",
      "contextBefore",
      "contextAfter",
      "multiline",
      "headLimit"
    ]) {
      assert.include(grep.properties, parameter)
    }
    for (const def of Object.values(defs)) assert.notProperty(def.inputSchema, "$schema")
    assert.include(
      String((defs.Read.inputSchema.properties["limit"] as { description: string }).description),
      "2000"
    )
  })

  it("renders the Anthropic and OpenAI shapes from the same definitions", () => {
    const defs = ToolDefs.builtinToolDefs(defaults)
    assert.deepStrictEqual(ToolDefs.toAnthropic(defs)[3], {
      name: "Bash",
      description: defs[3]!.description,
      input_schema: defs[3]!.inputSchema
    })
    assert.deepStrictEqual(ToolDefs.toOpenAI(defs)[0], {
      type: "function",
      function: { name: "Read", description: defs[0]!.description, parameters: defs[0]!.inputSchema }
    })
    assert.deepStrictEqual(ToolDefs.toOpenAIResponses(defs)[1], {
      type: "function",
      name: "Glob",
      description: defs[1]!.description,
      parameters: defs[1]!.inputSchema,
      strict: false
    })
    // JSON all the way down: a request body can carry them as they are
    assert.deepStrictEqual(JSON.parse(JSON.stringify(ToolDefs.toAnthropic(defs))), ToolDefs.toAnthropic(defs))
  })
})
