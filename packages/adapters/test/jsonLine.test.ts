import { assert, describe, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as JsonLine from "../src/internal/jsonLine.js"

const expected = (value: unknown) => Buffer.from(`${JSON.stringify(value)}\n`)

/** Long strings (past the direct-escaping threshold) of every kind of character JSON cares about. */
const longString = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", minLength: 1, maxLength: 64 }),
      fc.string({ unit: "grapheme", maxLength: 64 }),
      fc.constantFrom(
        '"',
        "\\",
        "\n",
        "\u0000",
        "\u001f",
        "\u007f",
        "\u2028",
        "\ud83d\ude00",
        "\ud800",
        "\udc00",
        "é"
      )
    ),
    { minLength: 20, maxLength: 200 }
  )
  .map((parts) => parts.join("").padEnd(1024, "x"))

const message = fc.record({
  jsonrpc: fc.constant("2.0"),
  method: fc.string(),
  params: fc.record({
    level: fc.string(),
    data: fc.record({ seq: fc.integer(), data: fc.oneof(longString, fc.string({ unit: "binary" })) }),
    more: fc.array(fc.oneof(longString, fc.jsonValue()), { maxLength: 3 })
  })
})

describe("JSON lines written from bytes", () => {
  it.prop(
    "a message's line is exactly the bytes of JSON.stringify(message) + newline",
    [message],
    ([value]) => {
      assert.deepStrictEqual(JsonLine.encode(value), expected(value))
    }
  )

  it.prop("any JSON value encodes like JSON.stringify", [fc.jsonValue()], ([value]) => {
    assert.deepStrictEqual(JsonLine.encode(value), expected(value))
  })

  it("a short string that equals the stand-in of a long one does not confuse the line", () => {
    // the stand-in is not exported; a string that merely looks like one is an ordinary string
    const value = { a: "\u0000toolcap-0000000000000000", b: "y".repeat(5000), c: ["\n".repeat(2000)] }
    assert.deepStrictEqual(JsonLine.encode(value), expected(value))
  })

  it("200 KB of Bash-like output with a newline every 100 bytes round-trips", () => {
    const data = `${"x".repeat(99)}\n`.repeat(2000)
    const value = { jsonrpc: "2.0", method: "notifications/message", params: { data: { data } } }
    const line = JsonLine.encode(value)
    assert.deepStrictEqual(line, expected(value))
    assert.deepStrictEqual(JSON.parse(line.toString("utf8")), value)
  })
})
