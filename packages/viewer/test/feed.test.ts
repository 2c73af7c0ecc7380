import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Feed, type Frame, FrameQueue } from "../src/internal/feed.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

/** The seq ranges a stream's frames stand for, chunk or gap, in queue order. */
const ranges = (frames: ReadonlyArray<Frame>, stream: "stdout" | "stderr") =>
  frames.flatMap((frame) =>
    frame.kind === "chunk" && frame.stream === stream
      ? [{ from: frame.seq, to: frame.lastSeq, gap: false }]
      : frame.kind === "gap" && frame.stream === stream
        ? [{ from: frame.fromSeq, to: frame.toSeq, gap: true }]
        : []
  )

/** Serves `feed` as the event stream of a local server (closed after the test); answers how to open a page. */
const serve = async (feed: Feed) => {
  const server = http.createServer((_, response) => feed.attach(response))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        feed.close()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  )
  const port = (server.address() as AddressInfo).port
  return () =>
    new Promise<http.IncomingMessage>((resolve) => http.get({ host: "127.0.0.1", port, path: "/" }, resolve))
}

/** The end of call "c". */
const ended = {
  type: "ended",
  callId: "c",
  tool: "Bash",
  outcome: { ok: true, result: null },
  at: 1
} as const

describe("FrameQueue", () => {
  it.prop(
    "stays within its bound, keeps the newest chunk, and accounts for every seq once, in order, as chunk or gap",
    [
      fc.array(
        fc.record({
          stream: fc.constantFrom("stdout" as const, "stderr" as const),
          size: fc.integer({ min: 1, max: 3000 })
        }),
        { maxLength: 300 }
      )
    ],
    ([chunks]) => {
      const queue = new FrameQueue(8 * 1024)
      const next = { stdout: 0, stderr: 0 }
      queue.push({ kind: "started", callId: "c", json: "{}" })
      for (const { stream, size } of chunks) {
        const seq = next[stream]++
        queue.push({ kind: "chunk", callId: "c", stream, seq, lastSeq: seq, data: "x".repeat(size) })
        assert.isAtMost(queue.bytes, 8 * 1024)
        const last = queue.frames.at(-1)
        assert.isTrue(last?.kind === "chunk" && last.stream === stream && last.lastSeq === seq)
      }
      for (const stream of ["stdout", "stderr"] as const) {
        let expected = 0
        for (const range of ranges(queue.frames, stream)) {
          assert.strictEqual(range.from, expected)
          assert.isAtLeast(range.to, range.from)
          expected = range.to + 1
        }
        assert.strictEqual(expected, next[stream])
      }
      assert.strictEqual(queue.frames[0]?.kind, "started")
    }
  )
})

describe("Feed", () => {
  it("a page that does not read never holds the call: its queue stays bounded, the oldest chunks become a gap, the newest arrive", async () => {
    const feed = new Feed(256 * 1024)
    const open = await serve(feed)
    const response = await open()
    response.pause()
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.strictEqual(feed.clientCount, 1)

    const line = `${"y".repeat(1023)}\n`
    const chunks = 16 * 1024 // 16 MiB through a reader that reads nothing
    feed.observer.onEvent({ type: "started", callId: "c", tool: "Bash", input: {}, at: 0 })
    for (let seq = 0; seq < chunks; seq++) {
      feed.observer.onEvent({
        type: "chunk",
        callId: "c",
        stream: "stdout",
        seq,
        data: seq === chunks - 1 ? "last line\n" : line
      })
      assert.isAtMost(feed.maxQueuedBytes, 256 * 1024)
    }
    feed.observer.onEvent(ended)

    let text = ""
    response.setEncoding("utf8")
    response.on("data", (data: string) => (text += data))
    response.resume()
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (text.includes("event: ended")) {
          clearInterval(poll)
          resolve()
        }
      }, 20)
    })
    const events = text.split("\n\n").filter((block) => block.startsWith("event:"))
    const parsed = events.map((block) => ({
      type: block.split("\n")[0]!.slice(7),
      data: JSON.parse(block.split("\n")[1]!.slice(6))
    }))
    const gaps = parsed.filter((event) => event.type === "gap")
    assert.isAtLeast(gaps.length, 1)
    let expected = 0
    for (const event of parsed.filter((e) => e.type === "chunk" || e.type === "gap")) {
      const from = event.type === "gap" ? event.data.fromSeq : event.data.seq
      const to = event.type === "gap" ? event.data.toSeq : event.data.lastSeq
      assert.strictEqual(from, expected)
      expected = to + 1
    }
    assert.strictEqual(expected, chunks)
    const lastChunk = parsed.filter((e) => e.type === "chunk").at(-1)
    assert.isTrue(lastChunk?.data.data.endsWith("last line\n"))
    assert.strictEqual(parsed.at(-1)?.type, "ended")
  })
})

describe("Feed: every page together", () => {
  it("many stalled pages never make the feed hold more than its bound: they are closed, largest backlog first, and a page that reads stays connected to the end", async () => {
    const bound = 2 * 1024 * 1024
    const feed = new Feed(256 * 1024, bound)
    const open = await serve(feed)
    const stalled = await Promise.all(Array.from({ length: 30 }, open))
    for (const response of stalled) response.pause()
    const reader = await open()
    let text = ""
    reader.setEncoding("utf8")
    reader.on("data", (data: string) => (text += data))
    cleanups.push(() => {
      for (const response of [...stalled, reader]) response.destroy()
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.strictEqual(feed.clientCount, 31)

    const line = `${"z".repeat(1023)}\n`
    const chunks = 16 * 1024
    let most = 0
    feed.observer.onEvent({ type: "started", callId: "c", tool: "Bash", input: {}, at: 0 })
    for (let seq = 0; seq < chunks; seq++) {
      feed.observer.onEvent({ type: "chunk", callId: "c", stream: "stdout", seq, data: line })
      most = Math.max(most, feed.heldBytes)
      assert.isAtMost(feed.heldBytes, bound, `after chunk ${seq}`)
      // the reader reads: give its socket a turn now and then
      if (seq % 256 === 0) await new Promise((resolve) => setImmediate(resolve))
    }
    feed.observer.onEvent(ended)
    while (!text.includes("event: ended")) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.isAtLeast(feed.dropped, 1, "stalled pages were closed")
    assert.isAtMost(feed.clientCount, 31 - feed.dropped)
    console.log(`feed: most held ${most} bytes of ${bound}; ${feed.dropped} stalled pages closed`)
  })
})
