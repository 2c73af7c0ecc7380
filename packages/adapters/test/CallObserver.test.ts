import { afterEach, assert, describe, it } from "@effect/vitest"
import { CallObserver, PromiseHost } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

const setup = async (onEvent: (event: CallObserver.CallEvent) => void) => {
  const dirs = makeDirs()
  cleanups.push(dirs.remove)
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "observer-test",
    observer: { onEvent }
  })
  cleanups.push(host.close)
  return host
}

describe("CallObserver", () => {
  it("sees a Bash call start with its input, every chunk in seq order per stream, and end with the outcome", async () => {
    const events: Array<CallObserver.CallEvent> = []
    const host = await setup((event) => events.push(event))
    const input = { command: "seq 1 20000; echo oops >&2; seq 1 3 >&2" }
    const outcome = await host.call("Bash", input)
    assert.isTrue(outcome.ok)
    const started = events[0]
    assert.strictEqual(started?.type, "started")
    if (started?.type !== "started") return
    assert.deepStrictEqual(started.input, input)
    assert.strictEqual(started.tool, "Bash")
    const ended = events.at(-1)
    assert.strictEqual(ended?.type, "ended")
    if (ended?.type !== "ended") return
    assert.strictEqual(ended.callId, started.callId)
    assert.deepStrictEqual(ended.outcome, outcome)
    const chunks = events.filter((e) => e.type === "chunk")
    assert.isAbove(chunks.length, 1)
    for (const stream of ["stdout", "stderr"] as const) {
      const own = chunks.filter((c) => c.stream === stream)
      assert.deepStrictEqual(
        own.map((c) => c.seq),
        own.map((_, i) => i)
      )
      assert.isTrue(own.every((c) => c.callId === started.callId))
    }
    const stdout = chunks
      .filter((c) => c.stream === "stdout")
      .map((c) => c.data)
      .join("")
    assert.strictEqual(stdout.split("\n").length - 1, 20000)
    assert.strictEqual(
      chunks
        .filter((c) => c.stream === "stderr")
        .map((c) => c.data)
        .join(""),
      "oops\n1\n2\n3\n"
    )
  })

  it("reports a timeout's stopped pids, a tool error, and ignores an observer that throws", async () => {
    const events: Array<CallObserver.CallEvent> = []
    const host = await setup((event) => {
      events.push(event)
      throw new Error("observer bug")
    })
    const timedOut = await host.call("Bash", { command: "sleep 30 & sleep 30", timeout: 1 })
    assert.isFalse(timedOut.ok)
    const denied = await host.call("Read", { path: "../../etc/passwd" })
    assert.isFalse(denied.ok)
    const ended = events.filter((e) => e.type === "ended")
    assert.strictEqual(ended.length, 2)
    const [timeout, read] = ended
    if (timeout?.type !== "ended" || read?.type !== "ended" || timeout.outcome.ok || read.outcome.ok) {
      return assert.fail("expected two failed outcomes")
    }
    assert.strictEqual(timeout.outcome.error.code, "TOOL_TIMEOUT")
    assert.isAtLeast((timeout.outcome.error.killedPids as Array<number>).length, 2)
    assert.strictEqual(read.outcome.error.code, "TOOL_PATH_DENIED")
    assert.strictEqual(read.tool, "Read")
  })
})
