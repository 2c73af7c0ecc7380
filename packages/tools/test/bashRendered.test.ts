// A Bash stream's rendered capture (rules T5): whatever the reads, and however much plain output
// comes before the first control byte, it holds exactly the renderer's text of the whole stream,
// while the raw capture keeps the bytes.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as fs from "node:fs"
import { Terminal, Utf8 } from "@toolcap/limits"
import { Bash } from "@toolcap/tools"
import * as Output from "../src/internal/bash/output.js"
import { testEnv } from "./bashFixtures.js"

const ESC = "\x1b"

/** Output with and without controls: progress frames, colour, cursor moves, long plain runs. */
const piece = FastCheck.oneof(
  FastCheck.string({ unit: FastCheck.constantFrom(..."ab é\t\n".split("")), maxLength: 40 }),
  FastCheck.constantFrom(
    "\r",
    "\rprogress 10%",
    `${ESC}[31m`,
    `${ESC}[0m`,
    `${ESC}[2K`,
    `${ESC}[1A`,
    "\x9b32m",
    "\n"
  ),
  // plain output larger than the window held back, so rendering begins after the hold released some
  FastCheck.integer({ min: 1, max: 3000 }).map((lines) => "plain line of output\n".repeat(lines)),
  // coloured lines only (the colour fast path), codes split across reads anywhere
  FastCheck.integer({ min: 1, max: 3000 }).map((lines) =>
    `${ESC}[32mcoloured é line${ESC}[0m\n`.repeat(lines)
  ),
  FastCheck.constantFrom(`${ESC}[1;38;5;208m`, `${ESC}[m`, `${ESC}[?25l`, "日")
)
const stream = FastCheck.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(""))
const reads = (bytes: Uint8Array, sizes: ReadonlyArray<number>): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  let at = 0
  for (const size of sizes) {
    if (at >= bytes.length) break
    out.push(bytes.subarray(at, Math.min(bytes.length, at + size)))
    at += size
  }
  if (at < bytes.length) out.push(bytes.subarray(at))
  return out
}

const budget = { captureMaxBytes: 16 * 1024 * 1024, captureMaxLines: 1_000_000 }

describe("Bash rendered capture", () => {
  it.prop(
    "equals the renderer's text of the whole stream, for any reads; the raw capture keeps the bytes",
    {
      text: stream,
      // reads of a few bytes (sequences and lines split anywhere) and of a pipe's 64 KiB
      sizes: FastCheck.array(
        FastCheck.oneof(FastCheck.integer({ min: 1, max: 24 }), FastCheck.integer({ min: 1, max: 70_000 })),
        { maxLength: 10 }
      )
    },
    ({ sizes, text }) => {
      const bytes = Utf8.encode(text)
      const output = Output.make({ keep: "head", ...budget, decode: false })
      for (const read of reads(bytes, sizes)) output.push(read)
      output.finish()
      const expected = Terminal.render(text)
      assert.strictEqual(output.renderedCapture().head!.text, expected.text)
      assert.deepStrictEqual(output.renderCounts(), expected.counts)
      assert.strictEqual(output.capture().head!.text, text)
    },
    { fastCheck: { numRuns: 200 } }
  )

  it("a stream with no control byte is never decoded for rendering: counts stay zero", () => {
    const output = Output.make({ keep: "tail", ...budget, decode: false })
    const plain = Utf8.encode("ünïcode line\n".repeat(20_000))
    for (let at = 0; at < plain.length; at += 65_536) output.push(plain.subarray(at, at + 65_536))
    output.finish()
    assert.deepStrictEqual(output.renderCounts(), Terminal.noCounts)
    assert.strictEqual(output.renderedCapture().tail!.totalBytes, plain.length)
  })

  it("a C1 control split across two reads (C2 | 9B) starts rendering", () => {
    const output = Output.make({ keep: "head", ...budget, decode: false })
    output.push(new Uint8Array([0x61, 0xc2]))
    output.push(new Uint8Array([0x9b, 0x33, 0x31, 0x6d, 0x62]))
    output.finish()
    assert.strictEqual(output.renderedCapture().head!.text, "ab")
    assert.strictEqual(output.renderCounts().colourCodes, 1)
  })
})

const PROGRESS = 'for i in $(seq 1 400); do printf "\\rstep %d of 400" $i; done; printf "\\n"'

describe("Bash rendered result (real processes)", () => {
  it.scopedLive(
    "budgets count rendered text: 400 frames fit a 64-byte budget as one line, the raw field is cut",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv({ shellStdoutMaxBytes: 64 })
        const result = yield* Bash.run({ command: PROGRESS }).pipe(Effect.provide(env.layer))
        assert.include(result.output, "--- stdout ---\nstep 400 of 400")
        assert.isUndefined(result.truncation.stdout)
        // the raw excerpt is cut to the same budget and marked
        assert.include(result.stdout, "[truncated: no complete line fits the 0.062KB limit")
        assert.isTrue(result.truncated)
        assert.strictEqual(result.rendering?.stdout.progressFrames, 399)
        assert.include(result.output, "stdout rendered as a terminal shows it: 399 progress frames collapsed")
      })
  )

  it.scopedLive(
    "more than colour changed: the raw copy is kept and named though nothing was cut; colour only keeps none",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv()
        const progress = yield* Bash.run({ command: PROGRESS }).pipe(Effect.provide(env.layer))
        const copy = progress.spill.stdout!
        assert.isFalse(progress.truncated)
        assert.include(progress.output, `Raw bytes: Full output saved to ${copy}`)
        assert.include(fs.readFileSync(copy, "utf8"), "\rstep 1 of 400\rstep 2 of 400")
        const colour = yield* Bash.run({ command: "printf '\\033[32mok\\033[0m\\n'" }).pipe(
          Effect.provide(env.layer)
        )
        assert.isUndefined(colour.spill.stdout)
        assert.include(
          colour.output,
          "stdout rendered as a terminal shows it: 2 colour codes removed.\n--- stdout ---\nok"
        )
        assert.strictEqual(colour.stdout, "\x1b[32mok\x1b[0m\n")
      })
  )

  it.scopedLive("stderr is rendered too, keeping its tail", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const result = yield* Bash.run({ command: "printf 'warn\\r\\033[Kerror: boom\\n' >&2" }).pipe(
        Effect.provide(env.layer)
      )
      assert.include(result.output, "--- stderr ---\nerror: boom")
      assert.notInclude(result.output, "\r")
      assert.strictEqual(result.rendering?.stderr.progressFrames, 1)
    })
  )
})
