import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { Abort } from "@toolcap/limits"

describe("Abort", () => {
  it.effect("an already aborted signal interrupts at once; none never does", () =>
    Effect.gen(function* () {
      const controller = new AbortController()
      controller.abort()
      const exit = yield* Effect.exit(Abort.interruptOnAbort(Effect.never, controller.signal))
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(yield* Abort.interruptOnAbort(Effect.succeed(1), undefined), 1)
    })
  )

  it.live(
    "aborting later interrupts the waiting effect; an effect that finishes first is not interrupted",
    () =>
      Effect.gen(function* () {
        const controller = new AbortController()
        assert.strictEqual(
          yield* Abort.interruptOnAbort(Effect.sleep("1 millis").pipe(Effect.as("done")), controller.signal),
          "done"
        )
        const fiber = yield* Effect.fork(Abort.interruptOnAbort(Effect.never, controller.signal))
        yield* Effect.sleep("5 millis")
        controller.abort()
        assert.isTrue(Exit.isInterrupted(yield* Fiber.await(fiber)))
      })
  )
})
