import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
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

  it.effect("a stalled sink holds at most one batch plus the coalescing bound, and the producer waits", () =>
    Effect.gen(function* () {
      const piece = "x".repeat(16 * 1024)
      const total = 64
      let pulled = 0
      // one element per pull, as Bash's stream gives them
      const events = Stream.repeatEffectOption(
        Effect.suspend(() => {
          const seq = pulled++
          if (seq < total)
            return Effect.succeed<ChunkForwarder.Event<string>>({
              _tag: "Chunk",
              chunk: { callId: "c", stream: "stdout", seq, data: piece }
            })
          return seq === total
            ? Effect.succeed<ChunkForwarder.Event<string>>({ _tag: "Result", result: "done" })
            : Effect.fail(Option.none())
        })
      )
      const release = yield* Deferred.make<void>()
      const stalled = yield* Deferred.make<void>()
      const sizes: Array<number> = []
      let result: string | undefined
      const sink = yield* ChunkForwarder.batches(events).pipe(
        Stream.runForEach((batch) =>
          Effect.gen(function* () {
            sizes.push(batch.chunks.length)
            if (batch.result !== undefined) result = batch.result.value
            // the first batch stalls until released, as a client that stopped reading
            if (sizes.length === 1) {
              yield* Deferred.succeed(stalled, undefined)
              yield* Deferred.await(release)
            }
          })
        ),
        Effect.fork
      )
      yield* Deferred.await(stalled)
      // the producer runs until the batch being folded is full, then waits: no timer involved
      const bound = ChunkForwarder.COALESCE_MAX_BYTES / piece.length
      let previous = -1
      while (previous !== pulled) {
        previous = pulled
        for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      }
      // held while the sink stalls: the batch in the stalled send (one chunk), a full batch ready
      // for the next send, a full batch being folded and the chunk that did not fit it
      assert.strictEqual(pulled, 1 + 2 * bound + 1)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(sink)
      assert.strictEqual(result, "done")
      assert.strictEqual(
        sizes.reduce((a, b) => a + b, 0),
        total
      )
      assert.isTrue(sizes.every((size) => size <= bound))
      // coalesced: fewer batches than chunks once the sink was busy
      assert.isBelow(sizes.length, total)
    })
  )

  it.effect.prop(
    "the outcome comes in the last batch, after every chunk, in order",
    [chunkArb],
    ([pairs]) =>
      Effect.gen(function* () {
        const chunks = numbered(pairs)
        const events = Stream.fromIterable([
          ...chunks.map((chunk) => ({ _tag: "Chunk" as const, chunk })),
          { _tag: "Result" as const, result: 42 }
        ])
        const batches = Chunk.toReadonlyArray(yield* Stream.runCollect(ChunkForwarder.batches(events)))
        assert.deepStrictEqual(
          batches.flatMap((batch) => batch.chunks),
          chunks
        )
        assert.strictEqual(batches.at(-1)?.result?.value, 42)
        for (const batch of batches.slice(0, -1)) assert.isUndefined(batch.result)
      }),
    { fastCheck: { numRuns: 30 } }
  )
})
