import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import { Budgets, Utf8 } from "@toolcap/limits"
import { Binary } from "@toolcap/tools"

const ratio = Budgets.defaults.binaryNonPrintableRatio
const sniff = (bytes: Uint8Array) => Binary.sniff(bytes, ratio)

/** Binary detection as rules R7 states it, computed byte by byte with the platform's own UTF-8 decoder. */
const oracle = (bytes: Uint8Array): boolean => {
  if (bytes.includes(0)) return true
  if (
    bytes.length >= 2 &&
    ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
  ) {
    return true
  }
  let bad = 0
  let at = 0
  while (at < bytes.length) {
    const byte = bytes[at]!
    if ((byte >= 0x20 && byte < 0x7f) || (byte >= 0x09 && byte <= 0x0d)) {
      at++
      continue
    }
    // a well-formed sequence, or the start of one cut by the end of the sniff
    const length =
      byte >= 0xc2 && byte <= 0xdf
        ? 2
        : byte >= 0xe0 && byte <= 0xef
          ? 3
          : byte >= 0xf0 && byte <= 0xf4
            ? 4
            : 0
    let valid = 0
    if (length > 0) {
      const available = bytes.subarray(at, Math.min(bytes.length, at + length))
      const completions = available.length === length ? [0] : Array.from({ length: 0x40 }, (_, k) => 0x80 + k)
      for (const filler of completions) {
        const candidate = Uint8Array.from({ length }, (_, k) =>
          k < available.length ? available[k]! : k === available.length ? filler : 0x80
        )
        const decoded = Utf8.decode(candidate)
        if (!decoded.includes("\ufffd") && [...decoded].length === 1) valid = available.length
      }
    }
    if (valid > 0) {
      at += valid
      continue
    }
    bad++
    at++
  }
  return bytes.length > 0 && bad / bytes.length > ratio
}

describe("Binary", () => {
  it("a NUL byte anywhere in the sniff makes a file binary", () => {
    assert.isTrue(Option.isSome(sniff(Buffer.from("plain text\0more"))))
    assert.include(Option.getOrThrow(sniff(Buffer.from("ab\0"))).reason, "NUL byte at offset 2")
  })

  it("UTF-16 counts as binary, by its byte-order mark or its NUL bytes", () => {
    assert.isTrue(Option.isSome(sniff(Buffer.from("\ufeffhi", "utf16le"))))
    assert.isTrue(Option.isSome(sniff(Buffer.from([0xfe, 0xff, 0x00, 0x68]))))
    assert.isTrue(Option.isSome(sniff(Buffer.from("hello", "utf16le"))))
  })

  it("UTF-8 text in any script, with tabs, form feeds and CRLF, is text", () => {
    const text = "naïve café\t— 日本語\f🎉 Привет\r\n\v".repeat(100)
    assert.isTrue(Option.isNone(sniff(Utf8.encode(text))))
    assert.isTrue(Option.isNone(sniff(new Uint8Array(0))))
  })

  it("more than 30% bytes outside printable text makes a file binary; 30% or less does not", () => {
    // 3 control bytes in 10 is exactly 30%: text; 4 in 10: binary
    assert.isTrue(Option.isNone(sniff(Buffer.from([1, 2, 3, 65, 65, 65, 65, 65, 65, 65]))))
    assert.isTrue(Option.isSome(sniff(Buffer.from([1, 2, 3, 4, 65, 65, 65, 65, 65, 65]))))
    // invalid UTF-8 (lone continuation bytes, overlongs, surrogates) counts against the text
    assert.isTrue(Option.isSome(sniff(Buffer.from([0x80, 0x80, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 65, 65, 65]))))
  })

  it("a multi-byte sequence cut by the end of the sniff window still counts as text", () => {
    const emoji = Utf8.encode("🎉")
    assert.isTrue(Option.isNone(sniff(emoji.subarray(0, 3))))
  })

  it("the extension blocklist decides for never-text formats and leaves text-like names alone", () => {
    for (const name of ["a.png", "b.JPG", "dir/c.zip", "d.woff2", "e.sqlite", "f.pdf", "g.wasm"]) {
      assert.isTrue(Option.isSome(Binary.byName(name)), name)
    }
    for (const name of ["a.svg", "b.ts", "Makefile", "c.lock", "d.dat", "e.bin.txt", ".gitignore"]) {
      assert.isTrue(Option.isNone(Binary.byName(name)), name)
    }
  })

  it.prop(
    "the sniff agrees with the rule computed byte by byte",
    [
      FastCheck.oneof(
        FastCheck.uint8Array({ maxLength: 64 }),
        FastCheck.string({ unit: "binary", maxLength: 40 }).map((s) => Utf8.encode(s)),
        FastCheck.array(
          FastCheck.constantFrom(0x41, 0x0a, 0x09, 0x1b, 0x7f, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f),
          {
            maxLength: 40
          }
        ).map((bytes) => Uint8Array.from(bytes))
      )
    ],
    ([bytes]) => {
      assert.strictEqual(Option.isSome(sniff(bytes)), oracle(bytes), Buffer.from(bytes).toString("hex"))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "valid UTF-8 text without NUL is never binary",
    [FastCheck.string({ unit: "grapheme", maxLength: 200 })],
    ([text]) => {
      // control characters other than \t \n \v \f \r are not printable text: replace them
      const printable = Array.from(text, (c) => {
        const code = c.codePointAt(0)!
        return code < 0x09 || (code > 0x0d && code < 0x20) || (code >= 0x7f && code <= 0x9f) ? "a" : c
      }).join("")
      assert.isTrue(Option.isNone(sniff(Utf8.encode(printable))))
    },
    { fastCheck: { numRuns: 300 } }
  )
})
