import { assert, describe, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Order from "effect/Order"
import { Truncate, Utf8 } from "@toolcap/limits"
import { StringDecoder } from "node:string_decoder"
import * as BashChunk from "../src/internal/bash/chunk.js"
import * as Output from "../src/internal/bash/output.js"

/** A string and cut points splitting its UTF-8 bytes anywhere, also inside a sequence. */
const splitText = FastCheck.string({ unit: "binary", maxLength: 80 }).chain((text) => {
  const bytes = Utf8.encode(text)
  return FastCheck.uniqueArray(FastCheck.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), {
    maxLength: 12
  }).map((cuts) => ({
    text,
    bytes,
    cuts: Arr.sort(
      cuts.filter((c) => c < bytes.length),
      Order.number
    )
  }))
})

const pieces = (bytes: Uint8Array, cuts: ReadonlyArray<number>) =>
  [0, ...cuts, bytes.length].slice(1).map((end, i, ends) => bytes.slice(i === 0 ? 0 : ends[i - 1], end))

/** How many U+FFFD a text holds. */
const replacements = (s: string) => s.split("\uFFFD").length - 1

interface Chunk {
  readonly seq: number
  readonly data: string
}

/** The text of a chunk payload, as a chunk made of it gives it. */
const textOf = (payload: BashChunk.Payload | undefined): string | undefined =>
  payload === undefined ? undefined : BashChunk.make("c", "stdout", 0, payload).data

/** Feeds pieces to a decoding output and collects its chunks with their seq. */
const collect =
  (output: Output.StreamOutput, chunks: Array<Chunk>) => (payload: BashChunk.Payload | undefined) => {
    const data = textOf(payload)
    if (data !== undefined) chunks.push({ seq: output.lastSeq()!, data })
  }

const orNone = (text: string) => (text.length === 0 ? undefined : text)

/** Any bytes (invalid UTF-8 included) and cut points. */
const splitBytes = FastCheck.oneof(
  FastCheck.uint8Array({ maxLength: 80 }),
  FastCheck.array(
    FastCheck.oneof(
      FastCheck.string({ unit: "binary", maxLength: 8 }).map((text) => Utf8.encode(text)),
      FastCheck.constantFrom(
        new Uint8Array([0xe2, 0x82]),
        new Uint8Array([0xf0, 0x9f]),
        new Uint8Array([0xed, 0xa0, 0x80]),
        new Uint8Array([0xc0, 0xaf]),
        new Uint8Array([0xff]),
        new Uint8Array([0xef, 0xbb, 0xbf])
      )
    ),
    { maxLength: 12 }
  ).map((parts) => Uint8Array.from(parts.flatMap((part) => [...part])))
).chain((bytes) =>
  FastCheck.uniqueArray(FastCheck.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), {
    maxLength: 12
  }).map((cuts) => ({
    bytes,
    cuts: Arr.sort(
      cuts.filter((c) => c < bytes.length),
      Order.number
    )
  }))
)

describe("one output stream", () => {
  it.prop(
    "chunks reassemble the text, never end inside a sequence, and count seq 0, 1, 2 ... without gaps",
    [splitText, FastCheck.constantFrom<Array<"head" | "tail" | "both">>("head", "tail", "both")],
    ([{ text, bytes, cuts }, keep]) => {
      const chunks: Array<Chunk> = []
      const output = Output.make({ keep, captureMaxBytes: 16, captureMaxLines: 3, decode: true })
      const take = collect(output, chunks)
      for (const piece of pieces(bytes, cuts)) take(output.push(piece))
      take(output.finish())
      take(output.push(Utf8.encode("after the end")))
      assert.strictEqual(chunks.map((c) => c.data).join(""), Utf8.decode(bytes))
      // the input is well-formed (lone surrogates were encoded as U+FFFD up front), so no chunk
      // may hold a replacement character the input did not have
      assert.strictEqual(
        chunks.reduce((n, c) => n + replacements(c.data), 0),
        replacements(Utf8.decode(bytes))
      )
      chunks.forEach((chunk, i) => {
        assert.strictEqual(chunk.seq, i)
        assert.isAbove(chunk.data.length, 0)
      })
      assert.strictEqual(output.lastSeq(), chunks.length === 0 ? null : chunks.length - 1)
      // each end the capture keeps is the cut of the whole input
      const cutOf = (end: "head" | "tail") =>
        keep === end || keep === "both"
          ? Truncate.cutBytes(bytes, { keep: end, maxBytes: 16, maxLines: 3 })
          : undefined
      assert.deepStrictEqual(output.capture(), { head: cutOf("head"), tail: cutOf("tail") })
      assert.isTrue(text.length === 0 || chunks.length > 0)
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "without a consumer nothing is decoded, and the chunk count and capture are the same",
    [splitText],
    ([{ bytes, cuts }]) => {
      const decoding = Output.make({ keep: "head", captureMaxBytes: 16, captureMaxLines: 3, decode: true })
      const counting = Output.make({ keep: "head", captureMaxBytes: 16, captureMaxLines: 3, decode: false })
      for (const piece of pieces(bytes, cuts)) {
        decoding.push(piece)
        assert.isUndefined(counting.push(piece))
      }
      decoding.finish()
      assert.isUndefined(counting.finish())
      assert.strictEqual(counting.lastSeq(), decoding.lastSeq())
      assert.deepStrictEqual(counting.capture(), decoding.capture())
    },
    { fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "each read's chunk text is what a streaming decoder gives for it, whether kept as bytes or decoded, invalid UTF-8 included",
    [splitBytes],
    ([{ bytes, cuts }]) => {
      const output = Output.make({ keep: "head", captureMaxBytes: 16, captureMaxLines: 3, decode: true })
      const decoder = new StringDecoder("utf8")
      for (const piece of pieces(bytes, cuts)) {
        const payload = output.push(piece)
        assert.strictEqual(textOf(payload), orNone(decoder.write(Buffer.from(piece))))
        // bytes are kept only for a read that is whole UTF-8: they decode to the text as they are
        if (payload !== undefined && typeof payload !== "string") {
          assert.strictEqual(Buffer.from(payload.bytes).toString("utf8"), textOf(payload))
        }
      }
      assert.strictEqual(textOf(output.finish()), orNone(decoder.end()))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.effect("an incomplete sequence at the very end becomes one U+FFFD in a last chunk", () =>
    Effect.sync(() => {
      const chunks: Array<Chunk> = []
      const output = Output.make({ keep: "head", captureMaxBytes: 16, captureMaxLines: 3, decode: true })
      const take = collect(output, chunks)
      take(output.push(new Uint8Array([0x61, 0xe2, 0x82])))
      assert.deepStrictEqual(
        chunks.map((c) => c.data),
        ["a"]
      )
      take(output.finish())
      assert.deepStrictEqual(
        chunks.map((c) => [c.seq, c.data]),
        [
          [0, "a"],
          [1, "\uFFFD"]
        ]
      )
    })
  )

  it.effect(
    "a chunk kept as bytes looks like a plain chunk to every consumer, and lets its bytes go once read",
    () =>
      Effect.sync(() => {
        const bytes = Utf8.encode("héllo\n")
        const chunk = BashChunk.make("c", "stdout", 3, { bytes, ascii: false })
        assert.strictEqual(BashChunk.bytesOf(chunk), bytes)
        assert.strictEqual(
          JSON.stringify(chunk),
          JSON.stringify({ callId: "c", stream: "stdout", seq: 3, data: "héllo\n" })
        )
        assert.deepStrictEqual({ ...chunk }, { callId: "c", stream: "stdout", seq: 3, data: "héllo\n" })
        assert.deepStrictEqual(Object.keys(chunk), ["callId", "stream", "seq", "data"])
        assert.isUndefined(BashChunk.bytesOf(chunk))
        assert.isUndefined(BashChunk.bytesOf(BashChunk.make("c", "stdout", 0, "text")))
      })
  )
})
