// Rules E1 and E2: one tagged error per failure, each with a stable wire code and a message saying
// what was wrong and what to do next.
import { assert, describe, it } from "@effect/vitest"
import { ToolError } from "@toolcap/limits"
import { Effect, Schema } from "effect"

describe("ToolError", () => {
  const errors = [
    [new ToolError.ToolBinaryContent({ path: "a.png", size: 10, reason: "NUL byte" }), "TOOL_BINARY_CONTENT"],
    [
      new ToolError.ToolInvalidInput({ tool: "Bash", field: "timeout", reason: "301 is outside 1..300" }),
      "TOOL_INVALID_INPUT"
    ],
    [new ToolError.ToolPathDenied({ path: "/etc/passwd", reason: "outside every root" }), "TOOL_PATH_DENIED"],
    [new ToolError.ToolNotFound({ path: "nope.txt" }), "TOOL_NOT_FOUND"],
    [new ToolError.ToolIsDirectory({ path: "src" }), "TOOL_IS_DIRECTORY"],
    [new ToolError.ToolSpawnFailed({ command: "bash", reason: "ENOENT" }), "TOOL_SPAWN_FAILED"],
    [new ToolError.ToolPatternInvalid({ pattern: "(", reason: "unclosed group" }), "TOOL_PATTERN_INVALID"]
  ] as const

  it("each error carries its stable code, one of ToolErrorCode", () => {
    for (const [error, code] of errors) {
      assert.strictEqual(error.code, code)
      assert.isTrue(Schema.is(ToolError.ToolErrorCode)(error.code))
    }
  })

  it("messages name the subject and say what to do next", () => {
    assert.include(errors[0][0].message, "a.png")
    assert.include(errors[3][0].message, "Use Glob")
    assert.include(errors[4][0].message, "Use Glob")
    assert.include(errors[1][0].message, "timeout")
    const long = new ToolError.ToolPatternInvalid({ pattern: "x".repeat(500), reason: "too long" })
    assert.isBelow(long.message.length, 400)
  })

  it.effect("they travel in the error channel and can be caught by tag", () =>
    Effect.gen(function* () {
      const caught = yield* Effect.fail(new ToolError.ToolNotFound({ path: "gone" })).pipe(
        Effect.catchTag("ToolNotFound", (error) => Effect.succeed(error.path))
      )
      assert.strictEqual(caught, "gone")
    })
  )
})
