import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import type { Bash } from "@toolcap/tools"
import * as ChunkForwarder from "../src/internal/chunkForwarder.js"

const chunkArb = fc.array(fc.tuple(fc.constantFrom("stdout" as const, "stderr" as const), fc.string()), {
  maxLength: 40
})

const numbered = (pairs: ReadonlyArray<readonly ["stdout" | "stderr", string]>): Array<Bash.BashChunk> => {
  const seq = { stdout: 0, stderr: 0 }
  return pairs.map(([stream, data]) => ({ callId: "c", stream, seq: seq[stream]++, data }))
}

describe("chunk forwarder", () => {
  it.prop(
    "coalescing keeps every byte, in order, per stream with contiguous seq runs",
    [chunkArb],
    ([pairs]) => {
      const chunks = numbered(pairs)
      const runs = ChunkForwarder.coalesce(chunks)
      for (const stream of ["stdout", "stderr"] as const) {
        const of = runs.filter((run) => run.stream === stream)
        assert.strictEqual(
          of.map((run) => run.data).join(""),
          chunks
            .filter((chunk) => chunk.stream === stream)
            .map((chunk) => chunk.data)
            .join("")
        )
        for (const [i, run] of of.entries()) if (i > 0) assert.strictEqual(run.seq, of[i - 1]!.lastSeq + 1)
      }
      for (const [i, run] of runs.entries()) if (i > 0) assert.notStrictEqual(run.stream, runs[i - 1]!.stream)
    }
  )

  it.live("a stalled sink holds at most one send plus the coalescing bound, and the producer waits", () =>
    Effect.gen(function* () {
      const sent: Array<string> = []
      let release!: () => void
      let stalled = new Promise<void>((resolve) => (release = resolve))
      const forwarder = ChunkForwarder.make(async (runs) => {
        await stalled
        for (const run of runs) sent.push(run.data.toString())
      })
      const piece = "x".repeat(16 * 1024)
      let delivered = 0
      const producer = yield* Effect.fork(
        Effect.forEach(
          Array.from({ length: 64 }, (_, seq) => ({
            callId: "c",
            stream: "stdout" as const,
            seq,
            data: piece
          })),
          (chunk) => Effect.tap(forwarder.onChunk(chunk), () => void delivered++),
          { discard: true }
        )
      )
      yield* Effect.sleep("20 millis")
      // the first chunk went out at once; the producer then stops at the coalescing bound
      assert.strictEqual(delivered, 1 + ChunkForwarder.COALESCE_MAX_BYTES / piece.length - 1)
      stalled = Promise.resolve()
      release()
      yield* producer.await
      yield* forwarder.flushed
      assert.strictEqual(sent.join("").length, 64 * piece.length)
    })
  )
})
