import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Budgets } from "@toolcap/limits"
import type { Bash } from "@toolcap/tools"
import { ToolHost } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"
import { longTreeCommand, processesWithCookie, runIdOf } from "./fixtures/processes.js"

const dirs = makeDirs("toolcap-bash-stream-")
afterAll(() => dirs.remove())

const hostLayer = (sessionId: string) =>
  ToolHost.layer({ workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId }).pipe(
    Layer.provide(Budgets.layer)
  )

const textOf = (chunks: ReadonlyArray<Bash.BashChunk>, stream: "stdout" | "stderr") =>
  chunks
    .filter((chunk) => chunk.stream === stream)
    .map((chunk) => chunk.data)
    .join("")

const lines = (prefix: string) => Array.from({ length: 300 }, (_, i) => `${prefix}-${i + 1}\n`).join("")

describe("ToolHost.bashStream (one stream from process to client)", () => {
  it.live("a Bash call streams its chunks in order and ends with its result, the last element", () =>
    Effect.gen(function* () {
      const host = yield* ToolHost.ToolHost
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(
          host.bashStream({ command: "for i in $(seq 1 300); do echo out-$i; echo err-$i >&2; done" })
        )
      )
      const last = events.at(-1)!
      assert.isTrue("result" in last)
      const chunks = events.slice(0, -1).map((event) => {
        assert.isTrue("chunk" in event)
        return (event as Extract<Bash.BashEvent, { chunk: unknown }>).chunk
      })
      assert.strictEqual(textOf(chunks, "stdout"), lines("out"))
      assert.strictEqual(textOf(chunks, "stderr"), lines("err"))
      for (const stream of ["stdout", "stderr"] as const) {
        const seqs = chunks.filter((chunk) => chunk.stream === stream).map((chunk) => chunk.seq)
        assert.deepStrictEqual(
          seqs,
          seqs.map((_, i) => i)
        )
      }
      if ("result" in last) assert.strictEqual(last.result.exitCode, 0)
    }).pipe(Effect.provide(hostLayer("stream-order")))
  )

  it.live("interrupting the stream, or ending it early, stops the call's whole process tree", () =>
    Effect.gen(function* () {
      const host = yield* ToolHost.ToolHost
      // interrupted while it runs
      const started = yield* Deferred.make<string>()
      let seen = ""
      const fiber = yield* host.bashStream({ command: longTreeCommand }).pipe(
        Stream.runForEach((event) =>
          Effect.suspend(() => {
            if (!("chunk" in event)) return Effect.void
            seen += event.chunk.data
            const id = runIdOf(seen)
            return id === undefined ? Effect.void : Deferred.succeed(started, id)
          })
        ),
        Effect.fork
      )
      const runId = yield* Deferred.await(started)
      assert.isAtLeast(processesWithCookie(runId).length, 3)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(processesWithCookie(runId), [])

      // the consumer takes what it wants and stops pulling
      let text = ""
      yield* host.bashStream({ command: longTreeCommand }).pipe(
        Stream.takeUntil((event) => "chunk" in event && runIdOf((text += event.chunk.data)) !== undefined),
        Stream.runDrain
      )
      const second = runIdOf(text)!
      assert.deepStrictEqual(processesWithCookie(second), [])
    }).pipe(Effect.provide(hostLayer("stream-interrupt")))
  )
})
