// Rules E1 and E2: one tagged error per failure, each with a stable wire code and a message saying
// what was wrong and what to do next.
import { assert, describe, it } from "@effect/vitest"
import { ToolError } from "@toolcap/limits"
import { Effect, Schema } from "effect"

/** A memory error of `certainty` over a 128 MiB ceiling. */
const memoryError = (
  certainty: typeof ToolError.MemoryLimitCertainty.Type,
  others: ReadonlyArray<string> = []
) =>
  new ToolError.ToolMemoryLimit({
    tool: "Grep",
    limitBytes: 128 * 1024 * 1024,
    certainty,
    ...(certainty === "unknown" ? {} : { path: "a.min.js" }),
    others
  })

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
    [new ToolError.ToolPatternInvalid({ pattern: "(", reason: "unclosed group" }), "TOOL_PATTERN_INVALID"],
    [
      new ToolError.ToolMemoryLimit({
        tool: "Grep",
        limitBytes: 512 * 1024 * 1024,
        certainty: "certain",
        path: "logs/big.log",
        fileBytes: 2 * 1024 ** 3,
        others: []
      }),
      "TOOL_MEMORY_LIMIT"
    ],
    [
      new ToolError.ToolLauncherLost({
        command: "bash -c",
        reason: "the launcher server ended while it ran"
      }),
      "TOOL_LAUNCHER_LOST"
    ]
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
    const lost = errors[8][0].message
    assert.include(lost, "bash -c was lost: the launcher server ended while it ran")
    assert.include(lost, "no exit status is reported")
    assert.include(lost, "run it again")
  })

  it("a memory error names the file, how sure it is, and the way round it", () => {
    const certain = errors[7][0].message
    assert.include(certain, "524288KB")
    assert.include(certain, "while searching logs/big.log (2097152KB)")
    assert.include(certain, "Read logs/big.log with offset/limit")
    assert.include(certain, 'glob "!big.log"')
    assert.include(memoryError("likely").message, "almost certainly in a.min.js")
    const possible = memoryError(
      "possible",
      Array.from({ length: 9 }, (_, i) => `f${i}.log`)
    )
    assert.include(possible.message, "most likely the largest, a.min.js")
    assert.include(possible.message, "f4.log")
    assert.deepStrictEqual(possible.others.length, 5, "at most five others are kept")
    const unknown = memoryError("unknown").message
    assert.include(unknown, "the pattern itself probably needed the memory")
    assert.notInclude(unknown, "undefined")
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
