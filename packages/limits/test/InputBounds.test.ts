// Bounded work per input: depth, path and glob length and brace expansions are refused up front
// naming the budget field; error messages quote a short prefix of the value, so stay under 2KB.
import { assert, describe, it } from "@effect/vitest"
import { Budgets, InputBounds, ToolError } from "@toolcap/limits"
import { Either, FastCheck as fc } from "effect"

/** A naive brace expander (commas and numeric ranges), the oracle for small patterns. */
const expand = (pattern: string): Array<string> => {
  let depth = 0
  let open = -1
  for (let at = 0; at < pattern.length; at++) {
    if (pattern[at] === "{") {
      if (depth === 0) open = at
      depth++
    } else if (pattern[at] === "}" && depth > 0) {
      depth--
      if (depth === 0) {
        const body = pattern.slice(open + 1, at)
        const head = pattern.slice(0, open)
        const rest = expand(pattern.slice(at + 1))
        const parts: Array<string> = []
        let level = 0
        let from = 0
        for (let i = 0; i < body.length; i++) {
          if (body[i] === "{") level++
          else if (body[i] === "}") level--
          else if (body[i] === "," && level === 0) {
            parts.push(body.slice(from, i))
            from = i + 1
          }
        }
        parts.push(body.slice(from))
        const range = /^(\d+)\.\.(\d+)$/.exec(body)
        const alternatives =
          range !== null
            ? Array.from({ length: Math.abs(Number(range[2]) - Number(range[1])) + 1 }, (_, i) => String(i))
            : parts.length === 1
              ? expand(body).map((inner) => `{${inner}}`)
              : parts.flatMap(expand)
        return alternatives.flatMap((alternative) => rest.map((tail) => head + alternative + tail))
      }
    }
  }
  return [pattern]
}

/** Every `}` closes an open `{` and none stays open (unbalanced braces are literal text). */
const balanced = (pattern: string): boolean => {
  let depth = 0
  for (const char of pattern) {
    if (char === "{") depth++
    else if (char === "}" && --depth < 0) return false
  }
  return depth === 0
}

const budgets = Budgets.defaults

describe("InputBounds.braceExpansions", () => {
  it("counts what a brace expander produces", () => {
    assert.strictEqual(InputBounds.braceExpansions("**/*.{ts,tsx,js}", 1024), 3)
    assert.strictEqual(InputBounds.braceExpansions("{a,b}/{c,{d,e}}", 1024), 6)
    assert.strictEqual(InputBounds.braceExpansions("f{1..10}", 1024), 10)
    assert.strictEqual(InputBounds.braceExpansions("\\{a,b}", 1024), 1)
    assert.strictEqual(InputBounds.braceExpansions("{a,b}".repeat(20), 1024), 1025)
  })

  it.prop(
    "equals the expansion count of the oracle, saturating at cap + 1",
    [fc.stringMatching(/^[ab{},]{0,14}$/).filter((p) => !p.includes("{}") && balanced(p))],
    ([pattern]) => {
      const expected = expand(pattern).length
      assert.strictEqual(InputBounds.braceExpansions(pattern, 8), Math.min(expected, 9), pattern)
    },
    { fastCheck: { numRuns: 1000 } }
  )
})

describe("InputBounds checks", () => {
  it("refuse a deep input by depth, iteratively, naming inputMaxDepth", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const refused = InputBounds.checkDepth("Read", { path: deep }, budgets)
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) {
      assert.instanceOf(refused.left, ToolError.ToolInvalidInput)
      assert.include(refused.left.message, "inputMaxDepth")
    }
    assert.isTrue(Either.isRight(InputBounds.checkDepth("Read", { path: "a", limit: 3 }, budgets)))
  })

  it("refuse long paths and globs and exponential braces, naming the field", () => {
    const path = InputBounds.checkPath("Read", "path", "a/".repeat(300_000), budgets)
    assert.isTrue(Either.isLeft(path) && path.left.message.includes("inputMaxPathBytes"))
    const glob = InputBounds.checkGlob("Glob", "pattern", "{a,b}".repeat(20), budgets)
    assert.isTrue(Either.isLeft(glob) && glob.left.message.includes("globMaxBraceExpansions"))
    const long = InputBounds.checkGlob("Glob", "pattern", "*".repeat(5000), budgets)
    assert.isTrue(Either.isLeft(long) && long.left.message.includes("globMaxPatternBytes"))
    assert.isTrue(Either.isRight(InputBounds.checkGlob("Glob", "pattern", "src/**/*.{ts,tsx}", budgets)))
  })

  it.prop(
    "every error message stays under 2KB whatever it quotes",
    [fc.string({ minLength: 0, maxLength: 20_000, unit: "binary" })],
    ([value]) => {
      const errors = [
        new ToolError.ToolInvalidInput({ tool: value, field: value, reason: value }),
        new ToolError.ToolPathDenied({ path: value, reason: value }),
        new ToolError.ToolNotFound({ path: value }),
        new ToolError.ToolPatternInvalid({ pattern: value, reason: value }),
        new ToolError.ToolSpawnFailed({ command: value, reason: value })
      ]
      for (const error of errors) assert.isAtMost(Buffer.byteLength(error.message), 2048)
      const quoted = InputBounds.quote(value)
      assert.isTrue(value.startsWith(quoted.replace(/…\(\d+ more characters\)$/, "")))
    },
    { fastCheck: { numRuns: 300 } }
  )
})
