// The rules of the cuts on concrete inputs: budgets (rules L3–L5), markers (rules M1–M4), stderr's tail (rules B4).
import { assert, describe, it } from "@effect/vitest"
import { Budgets, Truncate } from "@toolcap/limits"
import { Chunk, Effect, Stream } from "effect"

const KB = 1024
const stdout = {
  keep: "head" as const,
  maxBytes: Budgets.defaults.shellStdoutMaxBytes,
  maxLines: Budgets.defaults.shellStdoutMaxLines
}
const stderr = {
  keep: "tail" as const,
  maxBytes: Budgets.defaults.shellStderrMaxBytes,
  maxLines: Budgets.defaults.shellStderrMaxLines
}
const capture = { maxBytes: Budgets.defaults.captureMaxBytes, maxLines: Budgets.defaults.captureMaxLines }

/** `seq from to`: one number per line, each ending in a newline. */
const seq = (from: number, to: number): string => {
  const lines: Array<string> = []
  for (let n = from; n <= to; n++) lines.push(`${n}\n`)
  return lines.join("")
}

/** Feeds `input` in chunks of `size` bytes, as a pipe would. */
const streamed = (input: Uint8Array, options: Truncate.CutOptions, size = 64 * KB): Truncate.Cut => {
  const stream = Truncate.stream(options)
  for (let at = 0; at < input.length; at += size) stream.push(input.subarray(at, at + size))
  return stream.result()
}

const encode = (text: string) => new TextEncoder().encode(text)

describe("Truncate: a single line larger than the whole budget", () => {
  const line = "x".repeat(4_200_000)

  it("a 4,200,000-byte line cut to the 96KB head budget keeps 98304 bytes, with the exact marker", () => {
    const cut = Truncate.cutString(line, stdout)
    assert.strictEqual(
      Truncate.marker(cut),
      "[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 4200000-byte line. Narrow the request to see more.]"
    )
    assert.strictEqual(cut.text, "x".repeat(98304))
    assert.deepInclude(cut, {
      keep: "head",
      truncated: true,
      keptLines: 0,
      totalLines: 1,
      keptBytes: 98304,
      totalBytes: 4_200_000,
      singleLineBytes: 4_200_000
    })
    assert.strictEqual(Truncate.render(cut), `${cut.text}\n${Truncate.marker(cut)}`)
  })

  it("the same line through the streaming form, 64 KiB chunks, names the spill file", () => {
    const cut = streamed(encode(line), stdout)
    assert.strictEqual(
      Truncate.marker(cut, "/s/bash-stdout-1-0.log"),
      "[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 4200000-byte line. Full output saved to /s/bash-stdout-1-0.log \u2014 Grep it, or Read it with offset/limit.]"
    )
    assert.strictEqual(cut.text, "x".repeat(98304))
  })

  it("a tail cut keeps the line's last 98304 bytes and prepends the marker", () => {
    const input = "a" + line.slice(1)
    const cut = Truncate.cutString(input, stderr)
    assert.strictEqual(cut.text, "x".repeat(98304))
    assert.strictEqual(
      Truncate.render(cut),
      "[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 4200000-byte line. Narrow the request to see more.]\n" +
        cut.text
    )
  })

  it("a head cut backs off to the last whole code point", () => {
    const input = "a" + "\u20ac".repeat(1_400_000) // 1 + 3 * 1,400,000 = 4,200,001 bytes
    const cut = Truncate.cutString(input, stdout)
    // 1 + 3k <= 98304 -> k = 32767: 98302 bytes
    assert.strictEqual(cut.keptBytes, 98302)
    assert.strictEqual(cut.text, "a" + "\u20ac".repeat(32767))
    assert.strictEqual(
      Truncate.marker(cut),
      "[truncated: no complete line fits the 96KB limit; kept 98302 bytes of a single 4200001-byte line. Narrow the request to see more.]"
    )
    assert.deepStrictEqual(streamed(encode(input), stdout).text, cut.text)
  })

  it("a tail cut moves forward to the next whole code point (4-byte emoji)", () => {
    const input = "\u{1F600}".repeat(1_050_000) + "a" // 4,200,001 bytes
    const cut = Truncate.cutString(input, stderr)
    // the budget starts 1 byte into an emoji: skip its other 3 bytes
    assert.strictEqual(cut.keptBytes, 98301)
    assert.strictEqual(cut.text, "\u{1F600}".repeat(24575) + "a")
    assert.strictEqual(streamed(encode(input), stderr, 1000).text, cut.text)
  })

  it("never an empty payload: a 5-byte line at the 4-byte minimum budget keeps one code point", () => {
    const cut = Truncate.cutString("\u{1F600}\u{1F600}\n", { keep: "head", maxBytes: 4, maxLines: 1 })
    assert.strictEqual(cut.text, "\u{1F600}")
    const tail = Truncate.cutString("b\u{1F600}\u{1F600}", { keep: "tail", maxBytes: 5, maxLines: 1 })
    assert.strictEqual(tail.text, "\u{1F600}")
  })

  it("a line that fits but is followed by one that does not keeps the whole first line", () => {
    const cut = Truncate.cutString("short\n" + "y".repeat(200_000) + "\n", stdout)
    assert.strictEqual(cut.text, "short\n")
    assert.strictEqual(
      Truncate.marker(cut),
      "[truncated: kept the first 1 of 2 lines; limit 4000 lines / 96KB. Narrow the request to see more.]"
    )
  })
})

describe("Truncate: the line budget (seq 1 100000)", () => {
  const input = seq(1, 100_000)

  it("stdout keeps the first 4000 of 100000 lines, marker appended", () => {
    const cut = Truncate.cutString(input, stdout)
    assert.strictEqual(cut.text, seq(1, 4000))
    assert.strictEqual(
      Truncate.render(cut),
      seq(1, 4000) +
        "[truncated: kept the first 4000 of 100000 lines; limit 4000 lines / 96KB. Narrow the request to see more.]"
    )
    assert.deepInclude(cut, { keptLines: 4000, totalLines: 100_000, totalBytes: input.length })
  })

  it("stderr keeps the last 4000 of 100000 lines, marker prepended", () => {
    const cut = Truncate.cutString(input, stderr)
    assert.strictEqual(cut.text, seq(96_001, 100_000))
    assert.strictEqual(
      Truncate.render(cut),
      "[truncated: kept the last 4000 of 100000 lines; limit 4000 lines / 96KB. Narrow the request to see more.]\n" +
        seq(96_001, 100_000)
    )
  })

  it("the streaming form gives the same cuts", () => {
    const bytes = encode(input)
    assert.strictEqual(streamed(bytes, stdout, 4096).text, seq(1, 4000))
    assert.strictEqual(streamed(bytes, stderr, 4096).text, seq(96_001, 100_000))
  })

  it("a failing command's last message survives 200000 lines of progress on stderr", () => {
    const noise = Array.from({ length: 200_000 }, (_, i) => `progress ${i}%\r\n`).join("")
    const cut = streamed(encode(noise + "error: disk full\n"), stderr)
    assert.isTrue(cut.text.endsWith("progress 199999%\r\nerror: disk full\n"))
    assert.strictEqual(cut.keptLines, 4000)
    assert.strictEqual(cut.totalLines, 200_001)
  })
})

describe("Truncate: the byte budget", () => {
  // 10000 lines of 100 bytes: 983 whole lines fit in 98304 bytes
  const input = Array.from(
    { length: 10_000 },
    (_, i) => `${String(i).padStart(5, "0")}${"-".repeat(94)}\n`
  ).join("")

  it("keeps as many whole lines as fit the bytes", () => {
    const cut = Truncate.cutString(input, stdout)
    assert.strictEqual(cut.keptLines, 983)
    assert.strictEqual(cut.keptBytes, 98_300)
    assert.isTrue(cut.text.endsWith(`00982${"-".repeat(94)}\n`))
    assert.strictEqual(
      Truncate.marker(cut),
      "[truncated: kept the first 983 of 10000 lines; limit 4000 lines / 96KB. Narrow the request to see more.]"
    )
    const tail = Truncate.cutString(input, stderr)
    assert.strictEqual(tail.keptLines, 983)
    assert.isTrue(tail.text.startsWith(`09017${"-".repeat(94)}\n`))
  })

  it("input exactly at both limits is not truncated; one more line or byte is", () => {
    const atLines = seq(1, 4000)
    assert.isFalse(Truncate.cutString(atLines, stdout).truncated)
    assert.isTrue(Truncate.cutString(atLines + "x", stdout).truncated)
    const atBytes = "z".repeat(96 * KB - 1) + "\n"
    const fit = Truncate.cutString(atBytes, stdout)
    assert.isFalse(fit.truncated)
    assert.strictEqual(Truncate.render(fit), atBytes)
    const over = Truncate.cutString(atBytes + "\n", stdout)
    assert.isTrue(over.truncated)
    assert.strictEqual(over.keptBytes, 96 * KB)
  })
})

describe("Truncate: lines", () => {
  it("a final piece without a newline is a line", () => {
    const cut = Truncate.cutString("a\nb\nc", { keep: "tail", maxBytes: 1024, maxLines: 1 })
    assert.strictEqual(cut.text, "c")
    assert.strictEqual(cut.totalLines, 3)
    assert.strictEqual(Truncate.cutString("a\nb\n", { ...stdout }).totalLines, 2)
  })

  it("empty input is zero lines and never truncated", () => {
    const cut = Truncate.cutString("", stdout)
    assert.deepInclude(cut, { text: "", truncated: false, totalLines: 0, totalBytes: 0, keptLines: 0 })
    assert.strictEqual(Truncate.render(cut), "")
  })

  it("\\r\\n is kept byte-faithful", () => {
    const cut = Truncate.cutString("one\r\ntwo\r\nthree\r\n", { keep: "head", maxBytes: 1024, maxLines: 2 })
    assert.strictEqual(cut.text, "one\r\ntwo\r\n")
  })

  it("a byte order mark and U+FFFD in the input are kept as they are", () => {
    const cut = Truncate.cutString("\uFEFFa\uFFFD\n", stdout)
    assert.strictEqual(cut.text, "\uFEFFa\uFFFD\n")
  })
})

describe("Truncate: invalid UTF-8 input", () => {
  it("invalid bytes render as U+FFFD; the budget counts the input bytes kept", () => {
    // 0xff is never valid; 0xe2 0x82 is an incomplete euro sign (one U+FFFD)
    const input = Uint8Array.from([0x61, 0xff, 0x62, 0xe2, 0x82, 0x0a, 0x63, 0x0a])
    const cut = Truncate.cutBytes(input, { keep: "head", maxBytes: 6, maxLines: 10 })
    assert.strictEqual(cut.text, "a\uFFFDb\uFFFD\n")
    assert.strictEqual(cut.keptBytes, 6)
    assert.strictEqual(cut.keptLines, 1)
  })

  it("a cut never splits an incomplete sequence the decoder reads as one unit", () => {
    // F0 9F 98 is the start of a 4-byte emoji without its last byte: one unit, one U+FFFD
    const input = Uint8Array.from([0x41, 0x41, 0x41, 0xf0, 0x9f, 0x98, 0x42, 0x42])
    const head = Truncate.cutBytes(input, { keep: "head", maxBytes: 5, maxLines: 1 })
    assert.strictEqual(head.keptBytes, 3)
    const tail = Truncate.cutBytes(input, { keep: "tail", maxBytes: 4, maxLines: 1 })
    assert.strictEqual(tail.keptBytes, 2)
    assert.strictEqual(tail.text, "BB")
  })
})

describe("Truncate.narrow", () => {
  it("capture budget narrowed to the result budget equals the direct cut, with true totals", () => {
    const input = encode(seq(1, 300_000))
    for (const result of [stdout, stderr]) {
      const captured = streamed(input, { keep: result.keep, ...capture })
      assert.strictEqual(captured.keptLines, result.keep === "head" ? 89_232 : 74_898)
      const narrowed = Truncate.narrow(captured, result)
      const direct = Truncate.cutBytes(input, result)
      assert.deepStrictEqual({ ...narrowed, bytes: null }, { ...direct, bytes: null })
      assert.strictEqual(narrowed.totalLines, 300_000)
      assert.strictEqual(narrowed.totalBytes, input.length)
    }
  })

  it("refuses a budget looser than the cut's own (the kept bytes could not answer it)", () => {
    const cut = Truncate.cutString(seq(1, 10), { keep: "head", maxBytes: 8, maxLines: 2 })
    assert.throws(() => Truncate.narrow(cut, { maxBytes: 9, maxLines: 2 }), RangeError)
    assert.throws(() => Truncate.narrow(cut, { maxBytes: 8, maxLines: 3 }), RangeError)
  })
})

describe("Truncate: budgets are checked", () => {
  it("a byte budget below 4 or a line budget below 1 is a defect (RangeError)", () => {
    for (const options of [
      { keep: "head" as const, maxBytes: 3, maxLines: 1 },
      { keep: "tail" as const, maxBytes: 4, maxLines: 0 },
      { keep: "head" as const, maxBytes: 4.5, maxLines: 1 },
      { keep: "head" as const, maxBytes: Number.NaN, maxLines: 1 }
    ]) {
      assert.throws(() => Truncate.cutString("abc", options), RangeError)
      assert.throws(() => Truncate.stream(options), RangeError)
    }
  })
})

describe("Truncate.sink", () => {
  it.effect("cuts an effect Stream of chunks like the one-shot function", () =>
    Effect.gen(function* () {
      const input = encode(seq(1, 100_000))
      const chunks = Chunk.fromIterable(
        Array.from({ length: 100 }, (_, i) => input.subarray(i * 6000, (i + 1) * 6000))
      )
      const cut = yield* Stream.fromChunk(chunks).pipe(Stream.rechunk(7), Stream.run(Truncate.sink(stderr)))
      assert.strictEqual(cut.text, seq(96_001, 100_000))
      assert.strictEqual(cut.totalLines, 100_000)
    })
  )
})
