/**
 * The launcher server's client on servers that misbehave: a small Node program stands in for
 * `toolcap-confine --server` (the real one: cgroupEntry.test.ts), speaking the same protocol —
 * framed requests on stdin, answer lines on stdout — but answering out of order, not at all, or
 * with a line the protocol has no place for.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Launcher from "../src/internal/supervisor/launcherServer.js"
import { processesNamed } from "./bashFixtures.js"

/** Reads the requests' ids (the field after the kind) as they arrive and calls `onIds(ids)`. */
const readRequests = `
let buffer = Buffer.alloc(0)
const ids = []
process.stdin.on("data", (data) => {
  buffer = Buffer.concat([buffer, data])
  for (;;) {
    const newline = buffer.indexOf(10)
    if (newline < 0) break
    const size = Number(buffer.subarray(0, newline).toString())
    if (buffer.length < newline + 1 + size) break
    ids.push(buffer.subarray(newline + 1, newline + 1 + size).toString().split("\\0")[1])
    buffer = buffer.subarray(newline + 1 + size)
  }
  onIds(ids)
})
`

/** A fake server running `program` (after `readRequests`), removed with the scope. */
const fakeServer = (name: string, program: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-fake-server-"))
      const file = path.join(dir, name)
      fs.writeFileSync(file, `#!${process.execPath}\n${program}\n${readRequests}`, { mode: 0o755 })
      return file
    }),
    (file) => Effect.sync(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }))
  )

/** The fields of a request (the client adds the id after the kind). */
const fields = ["run", "/nonexistent-cgroup", "/", "1", "true"]

const lostReason = (answer: Launcher.Answer): string | undefined =>
  answer === "not started" ? undefined : answer.exit.lost()?.reason

describe("the launcher server's client", () => {
  it.scopedLive("answers go to the call their id names, not to the oldest call waiting", () =>
    Effect.gen(function* () {
      // answers the second call (nothing started), then exits with the first unanswered
      const file = yield* fakeServer(
        "answers-second",
        `const onIds = (ids) => { if (ids.length === 2) process.stdout.write("S " + ids[1] + " -1 0 0\\n", () => process.exit(0)) }`
      )
      const server = yield* Launcher.make(file)
      const first = yield* Effect.fork(server.call(fields, "first"))
      // the first call started the server and was sent before the second
      yield* Effect.yieldNow()
      const second = yield* server.call(fields, "second")
      assert.strictEqual(second, "not started")
      const lost = yield* Fiber.join(first)
      assert.notStrictEqual(lost, "not started")
      if (lost === "not started") return
      // nothing to wait on and nothing made up: the exit is lost, the pipes are empty
      assert.strictEqual(lost.pid, 0)
      assert.strictEqual(lost.exit.status(), undefined)
      assert.strictEqual(lost.exit.lost()?.code, "TOOL_LAUNCHER_LOST")
      assert.strictEqual(
        lostReason(lost),
        "the launcher server ended before it said whether the command started"
      )
      assert.strictEqual(lost.exit.lost()?.command, "first")
    })
  )

  it.scopedLive(
    "a server that ends before it answered anything loses the call and is not replaced: later calls are the host's to start",
    () =>
      Effect.gen(function* () {
        const file = yield* fakeServer("ends-at-once", `const onIds = () => process.exit(0)`)
        const server = yield* Launcher.make(file)
        const lost = yield* server.call(fields, "sh")
        assert.strictEqual(
          lostReason(lost),
          "the launcher server ended before it said whether the command started"
        )
        assert.strictEqual(yield* server.call(fields, "sh"), "not started")
        // no second server was started for it
        assert.deepStrictEqual(processesNamed(file), [])
      })
  )

  it.scopedLive("a line the protocol has no place for loses the calls in hand and ends the server", () =>
    Effect.gen(function* () {
      const file = yield* fakeServer("garbles", `const onIds = () => process.stdout.write("S x 1 2 3\\n")`)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Launcher.make(file)
          const lost = yield* server.call(fields, "sh")
          assert.strictEqual(
            lostReason(lost),
            "the launcher server wrote an answer it should not have before it said whether the command started"
          )
        })
      )
      // its stdin was closed: it exited, and closing the scope waited for it
      assert.deepStrictEqual(processesNamed(file), [])
    })
  )
})
