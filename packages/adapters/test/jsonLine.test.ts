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

/** The text of byte pieces, each decoded on its own. */
const decoded = (...pieces: Array<Uint8Array>) =>
  pieces.map((piece) => Buffer.from(piece).toString("utf8")).join("")

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

  /** Bytes of every kind: arbitrary (mostly invalid UTF-8), encoded text, JSON's special characters. */
  const anyBytes = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc
      .array(
        fc.oneof(
          fc.string({ unit: "binary", maxLength: 64 }).map((text) => Buffer.from(text)),
          fc.constantFrom(
            Buffer.from('"\\\n\u0000\u001f\u007f\u2028é'),
            Buffer.from([0xe2, 0x82]),
            Buffer.from([0xed, 0xa0, 0x80]),
            Buffer.from([0xff]),
            Buffer.from([0xef, 0xbb, 0xbf])
          )
        ),
        { maxLength: 40 }
      )
      .map((parts) => new Uint8Array(Buffer.concat(parts)))
  )

  it.prop(
    "text held as bytes (valid UTF-8 or not) encodes like JSON.stringify of its decoded text",
    [anyBytes, fc.array(anyBytes, { maxLength: 4 }), fc.string(), fc.oneof(longString, fc.string())],
    ([more, pieces, short, other]) => {
      const value = {
        jsonrpc: "2.0",
        params: {
          before: other,
          data: { seq: 1, data: new JsonLine.Utf8Text(...pieces), short },
          after: other
        },
        list: [{ text: new JsonLine.Utf8Text(more) }, other]
      }
      const plain = {
        jsonrpc: "2.0",
        params: { before: other, data: { seq: 1, data: decoded(...pieces), short }, after: other },
        list: [{ text: decoded(more) }, other]
      }
      assert.deepStrictEqual(JsonLine.encode(value), expected(plain))
      assert.deepStrictEqual(expected(value), expected(plain))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "valid UTF-8 held as bytes is escaped from the bytes, never decoded",
    [
      fc.array(fc.string({ unit: "binary", maxLength: 64 }), { maxLength: 40 }),
      fc.array(fc.string(), { maxLength: 3 })
    ],
    ([parts, more]) => {
      let decodings = 0
      class Counted extends JsonLine.Utf8Text {
        override toString(): string {
          decodings++
          return super.toString()
        }
      }
      const text = parts.join("")
      const pieces = [Buffer.from(text), ...more.map((piece) => Buffer.from(piece))]
      const value = { params: { data: { data: new Counted(...pieces) } } }
      const plain = { params: { data: { data: pieces.map((piece) => piece.toString("utf8")).join("") } } }
      assert.deepStrictEqual(JsonLine.encode(value), expected(plain))
      assert.strictEqual(decodings, 0)
    }
  )
})
