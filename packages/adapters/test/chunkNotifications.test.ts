import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EffectStream from "effect/Stream"
import * as fc from "effect/FastCheck"
import type { Bash } from "@toolcap/tools"
import * as ChunkNotifications from "../src/internal/chunkNotifications.js"
import * as JsonLine from "../src/internal/jsonLine.js"

type Stream = "stdout" | "stderr"

/** Chunk texts of both streams (ASCII, multi-byte, control characters, each escaped differently). */
const chunksArb = fc.array(
  fc.tuple(
    fc.constantFrom<Stream>("stdout", "stderr"),
    fc.oneof(
      fc.string({ maxLength: 3000 }),
      fc.string({ unit: "grapheme", maxLength: 500 }),
      fc.integer({ min: 1, max: 40_000 }).map((n) => 'x\n\t"é'.repeat(n / 5))
    )
  ),
  { maxLength: 30 }
)

const setupArb = fc.record({
  chunks: chunksArb,
  budget: fc.integer({ min: 0, max: 60_000 }),
  progress: fc.boolean(),
  // undefined: the client's level filters that stream out
  stdoutLevel: fc.constantFrom<ChunkNotifications.LoggingLevel | undefined>("info", undefined),
  stderrLevel: fc.constantFrom<ChunkNotifications.LoggingLevel | undefined>("warning", undefined)
})

/** Feeds chunks (with their bytes, as Bash gives them) and records every notification line. */
const run = (setup: typeof setupArb extends fc.Arbitrary<infer A> ? A : never) =>
  Effect.gen(function* () {
    const lines: Array<{ readonly notification: ChunkNotifications.Notification; readonly bytes: number }> =
      []
    const seq = { stdout: 0, stderr: 0 }
    const forwarder = ChunkNotifications.make({
      callId: "c",
      budget: { stdout: setup.budget, stderr: setup.budget },
      progressToken: setup.progress ? "token" : undefined,
      logLevel: (stream) => (stream === "stdout" ? setup.stdoutLevel : setup.stderrLevel),
      logger: "toolcap/bash",
      send: async (notification) => {
        const bytes = JsonLine.encode({ ...notification, jsonrpc: "2.0" }).length
        lines.push({ notification, bytes })
      }
    })
    const chunks: Array<Bash.BashChunk> = setup.chunks.map(([stream, data]) => ({
      callId: "c",
      stream,
      seq: seq[stream]++,
      data
    }))
    if (forwarder !== undefined) {
      const outcome = yield* forwarder.forward(
        EffectStream.fromIterable([
          ...chunks.map((chunk) => ({ _tag: "Chunk" as const, chunk })),
          { _tag: "Result" as const, result: "done" }
        ])
      )
      assert.strictEqual(outcome, "done")
    }
    return { lines, chunks, forwarder }
  })

const streamOf = (notification: ChunkNotifications.Notification): Stream =>
  notification.method === "notifications/message"
    ? (notification.params["data"] as { stream: Stream }).stream
    : (notification.params["message"] as string).startsWith("stdout: ")
      ? "stdout"
      : "stderr"

describe("chunk notifications", () => {
  it.effect.prop(
    "each stream's notification lines, envelopes included, add up to at most its budget",
    [setupArb],
    ([setup]) =>
      Effect.map(run(setup), ({ lines }) => {
        for (const stream of ["stdout", "stderr"] as const) {
          const spent = lines
            .filter((line) => streamOf(line.notification) === stream)
            .reduce((sum, line) => sum + line.bytes, 0)
          assert.isAtMost(spent, setup.budget, stream)
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "the log data forwarded is a prefix of the stream, its seq runs contiguous, and with the notice's omittedBytes it adds up to every byte",
    [setupArb],
    ([setup]) =>
      Effect.map(run(setup), ({ lines, chunks }) => {
        for (const stream of ["stdout", "stderr"] as const) {
          const level = stream === "stdout" ? setup.stdoutLevel : setup.stderrLevel
          const logs = lines
            .map((line) => line.notification)
            .filter((n) => n.method === "notifications/message" && streamOf(n) === stream)
            .map((n) => n.params["data"] as Record<string, unknown>)
          const whole = chunks
            .filter((chunk) => chunk.stream === stream)
            .map((chunk) => chunk.data)
            .join("")
          if (level === undefined) {
            assert.deepStrictEqual(logs, [])
            continue
          }
          const runs = logs.filter((log) => log["notice"] === undefined)
          const notices = logs.filter((log) => log["notice"] !== undefined)
          const forwarded = runs.map((log) => String(log["data"])).join("")
          assert.isTrue(whole.startsWith(forwarded), "a prefix")
          for (const [i, log] of runs.entries())
            if (i > 0) assert.strictEqual(log["seq"], Number(runs[i - 1]!["lastSeq"]) + 1)
          const omitted = Buffer.byteLength(whole) - Buffer.byteLength(forwarded)
          assert.isAtMost(notices.length, 1)
          const notice = notices[0]
          if (omitted === 0) assert.isUndefined(notice, "no notice when nothing was left out")
          else if (notice !== undefined) {
            assert.strictEqual(notice["omittedBytes"], omitted)
            assert.include(String(notice["notice"]), `${omitted} bytes of ${stream} were left out`)
          } else {
            // only a budget too small for the notice itself goes without one
            const fits = setup.budget >= 2_000
            assert.isFalse(fits, `a notice for ${omitted} bytes left out`)
          }
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "progress numbers count up from 1 without a gap",
    [setupArb],
    ([setup]) =>
      Effect.map(run(setup), ({ lines }) => {
        const numbers = lines
          .map((line) => line.notification)
          .filter((n) => n.method === "notifications/progress")
          .map((n) => n.params["progress"])
        assert.deepStrictEqual(
          numbers,
          numbers.map((_, i) => i + 1)
        )
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("nothing is made when the client asked for no notification", () =>
    Effect.sync(() => {
      const made = ChunkNotifications.make({
        callId: "c",
        budget: { stdout: 1000, stderr: 1000 },
        logLevel: () => undefined,
        logger: "toolcap/bash",
        send: async () => undefined
      })
      assert.isUndefined(made)
    })
  )
})
