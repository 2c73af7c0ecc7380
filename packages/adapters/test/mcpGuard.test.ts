import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { PassThrough } from "node:stream"
import * as McpGuard from "../src/internal/mcpGuard.js"

/** Sends `lines` through a guard; answers what it passed on and what it answered itself. */
const guarded = (lines: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const validate = await McpGuard.sdkValidate()
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const answered: Array<string> = []
    stdout.setEncoding("utf8")
    stdout.on("data", (text: string) => answered.push(...text.split("\n").filter((l) => l.length > 0)))
    const passed: Array<string> = []
    const out = McpGuard.guard(stdin, stdout, validate)
    out.setEncoding("utf8")
    out.on("data", (text: string) => passed.push(...text.split("\n").filter((l) => l.length > 0)))
    const ended = new Promise((resolve) => out.on("end", resolve))
    for (const line of lines) stdin.write(`${line}\n`)
    stdin.end()
    await ended
    return {
      passed: passed.map((l) => JSON.parse(l) as unknown),
      answered: answered.map(
        (l) => JSON.parse(l) as { id: unknown; error: { code: number; message: string } }
      )
    }
  })

const methods = ["initialize", "ping", "tools/list", "tools/call", "logging/setLevel", "nope"]

/** Requests with ids, most of them with something wrong in the envelope or the params. */
const request = fc.record(
  {
    jsonrpc: fc.constantFrom<unknown>("2.0", "2.0", "2.0", "1.0", 2),
    method: fc.oneof(fc.constantFrom<unknown>(...methods), fc.anything({ maxDepth: 0 })),
    params: fc.oneof(
      fc.record(
        {
          name: fc.oneof(fc.constantFrom<unknown>("Read", "Bash"), fc.anything({ maxDepth: 1 })),
          arguments: fc.anything({ maxDepth: 2 }),
          level: fc.oneof(fc.constantFrom<unknown>("debug", "error"), fc.anything({ maxDepth: 1 })),
          cursor: fc.anything({ maxDepth: 1 }),
          _meta: fc.oneof(
            fc.record({ progressToken: fc.anything({ maxDepth: 1 }) }),
            fc.anything({ maxDepth: 1 })
          )
        },
        { requiredKeys: [] }
      ),
      fc.anything({ maxDepth: 2 })
    )
  },
  { requiredKeys: ["jsonrpc", "method"] }
)

const CODES = new Set([-32700, -32600, -32602])

describe("MCP input guard", () => {
  it.effect.prop(
    "a request with a string or integer id is passed on or answered, exactly once, with a short message",
    [fc.array(fc.tuple(request, fc.oneof(fc.string({ maxLength: 8 }), fc.integer())), { maxLength: 20 })],
    ([pairs]) =>
      Effect.map(
        guarded(pairs.map(([body], i) => JSON.stringify({ ...body, id: `${i}:${String(pairs[i]![1])}` }))),
        ({ passed, answered }) => {
          for (const [i, [body]] of pairs.entries()) {
            const id = `${i}:${String(pairs[i]![1])}`
            const through = passed.filter((m) => (m as { id: unknown }).id === id).length
            const answers = answered.filter((a) => a.id === id)
            assert.strictEqual(through + answers.length, 1, JSON.stringify(body))
            for (const answer of answers) {
              assert.isTrue(CODES.has(answer.error.code), `code ${answer.error.code}`)
              assert.isAtMost(answer.error.message.length, McpGuard.PROBLEM_MAX_CHARS)
            }
          }
        }
      ),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "a wrong-typed field of a served request gets -32602 naming the field",
    [
      fc.oneof(
        fc
          .anything({ maxDepth: 1 })
          .filter((v) => typeof v !== "string")
          .map((name) => [{ method: "tools/call", params: { name } }, "params.name"] as const),
        fc
          .oneof(fc.string(), fc.integer(), fc.array(fc.anything({ maxDepth: 1 })), fc.constant(null))
          .map(
            (args) =>
              [
                { method: "tools/call", params: { name: "Read", arguments: args } },
                "params.arguments"
              ] as const
          ),
        fc
          .oneof(
            fc.integer(),
            fc
              .string()
              .filter(
                (s) =>
                  !["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"].includes(
                    s
                  )
              )
          )
          .map((level) => [{ method: "logging/setLevel", params: { level } }, "params.level"] as const)
      )
    ],
    ([[body, field]]) =>
      Effect.map(guarded([JSON.stringify({ jsonrpc: "2.0", id: 1, ...body })]), ({ passed, answered }) => {
        assert.deepStrictEqual(passed, [])
        assert.strictEqual(answered.length, 1)
        assert.strictEqual(answered[0]!.error.code, -32602)
        assert.include(answered[0]!.error.message, field)
        assert.isAtMost(answered[0]!.error.message.length, McpGuard.PROBLEM_MAX_CHARS)
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "a batch gets at least one -32600 answer and passes nothing on; each element with an id is answered",
    [
      fc.array(
        fc.oneof(
          fc.anything({ maxDepth: 2 }),
          request.map((r) => ({ ...r, id: "in-batch" }))
        ),
        { maxLength: 6 }
      )
    ],
    ([batch]) =>
      Effect.map(guarded([JSON.stringify(batch)]), ({ passed, answered }) => {
        assert.deepStrictEqual(passed, [])
        assert.isAtLeast(answered.length, 1)
        for (const answer of answered) assert.strictEqual(answer.error.code, -32600)
        const withId = batch.filter((e) => (e as { id?: unknown } | null)?.id === "in-batch").length
        assert.strictEqual(answered.filter((a) => a.id === "in-batch").length, withId)
      }),
    { fastCheck: { numRuns: 200 } }
  )
})
