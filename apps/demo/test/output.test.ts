/**
 * The CLI's wait for stdout to be flushed before its answer line (and between `--stream` lines):
 * it must end once everything queued was written, also when the last write returned true (a
 * short line queued behind a full pipe), where no `drain` event ever comes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Writable } from "node:stream"
import { flushed } from "../src/internal/output.js"

/** A stream whose writes complete only when `release` is called, like a pipe its reader left full. */
const heldStream = () => {
  const held: Array<() => void> = []
  const stream = new Writable({
    highWaterMark: 16 * 1024,
    write: (_chunk, _encoding, callback) => void held.push(() => callback())
  })
  const release = () => {
    while (held.length > 0) held.shift()!()
  }
  return { stream, release, held: () => held.length }
}

describe("output: waiting for stdout to be flushed", () => {
  it.live(
    "a short line queued behind a full pipe: the wait ends when it is written, without a drain event",
    () =>
      Effect.gen(function* () {
        const { stream, release, held } = heldStream()
        let drains = 0
        stream.on("drain", () => drains++)
        assert.isTrue(stream.write("a short line\n"), "the write was accepted without asking for a drain")
        assert.isAbove(stream.writableLength, 0)
        const waiting = yield* Effect.fork(flushed(stream))
        yield* Effect.sleep("20 millis")
        assert.isTrue(Option.isNone(yield* Fiber.poll(waiting)), "still waiting while the line is held")
        assert.strictEqual(held(), 1)
        release()
        yield* Effect.sleep("5 millis")
        release()
        yield* Fiber.join(waiting)
        assert.strictEqual(stream.writableLength, 0)
        assert.strictEqual(drains, 0, "no drain was emitted: waiting for one would never have ended")
        assert.strictEqual(stream.listenerCount("close"), 0, "no listener is left behind per wait")
      })
  )

  it.effect("an empty or destroyed stream needs no wait", () =>
    Effect.gen(function* () {
      const { stream } = heldStream()
      yield* flushed(stream)
      stream.write("queued\n")
      stream.destroy()
      yield* flushed(stream)
    })
  )
})
