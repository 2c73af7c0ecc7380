/**
 * The live feed behind the viewer's event stream: call events in, one bounded queue per browser
 * out. A browser that reads slowly never slows a call: `publish` only appends to queues, and a
 * queue over its bound drops its OLDEST chunks (keeping the latest output, which is what a person
 * watching wants) and leaves a `gap` frame in their place naming the dropped seq range. All the
 * event streams together hold at most `FEED_MAX_BYTES`: past it, the streams whose browsers stopped
 * reading are closed, the largest backlog first, instead of being buffered for (a page that comes
 * back reconnects and gets the history).
 */
import type { ServerResponse } from "node:http"
import type { CallObserver } from "@toolcap/adapters"

/**
 * Bytes a browser may have queued before its oldest chunks are dropped: about a second of a fast
 * command's output over a slow link; a stalled tab then costs this much, not the command's output.
 */
export const CLIENT_QUEUE_MAX_BYTES = 1024 * 1024

/**
 * Bytes of recent events kept for a page opened after the calls started (same drop rule): enough
 * for the head and tail of a few calls, small enough to replay at once.
 */
export const HISTORY_MAX_BYTES = 2 * 1024 * 1024

/**
 * What every event stream together may hold (queued frames and bytes written but not yet taken by
 * the socket): the viewer's memory for its pages stays bounded however many pages stall. A few
 * pages' worth of queues, far below the memory of the host the viewer lives in.
 */
export const FEED_MAX_BYTES = 16 * 1024 * 1024

/** Consecutive chunks are merged into one frame up to this size, so a frame stays one quick write. */
const FRAME_MAX_BYTES = 64 * 1024

type Stream = "stdout" | "stderr"

export type Frame =
  | { readonly kind: "started" | "ended"; readonly callId: string; readonly json: string }
  | { readonly kind: "chunk"; callId: string; stream: Stream; seq: number; lastSeq: number; data: string }
  | { readonly kind: "gap"; callId: string; stream: Stream; fromSeq: number; toSeq: number; bytes: number }

const frameBytes = (frame: Frame): number =>
  frame.kind === "chunk" ? frame.data.length : frame.kind === "gap" ? 64 : frame.json.length

/** What a frame is on the wire: one server-sent event. */
export const encodeFrame = (frame: Frame): string => {
  switch (frame.kind) {
    case "started":
    case "ended":
      return `event: ${frame.kind}\ndata: ${frame.json}\n\n`
    case "chunk":
      return `event: chunk\ndata: ${JSON.stringify({ callId: frame.callId, stream: frame.stream, seq: frame.seq, lastSeq: frame.lastSeq, data: frame.data })}\n\n`
    case "gap":
      return `event: gap\ndata: ${JSON.stringify({ callId: frame.callId, stream: frame.stream, fromSeq: frame.fromSeq, toSeq: frame.toSeq, bytes: frame.bytes })}\n\n`
  }
}

/**
 * Frames in order with a byte bound. Over the bound, the oldest chunk frames become gap frames
 * (adjacent gaps of one stream merge); when no chunk is left, the oldest frames go.
 */
export class FrameQueue {
  frames: Array<Frame> = []
  bytes = 0
  /** Each frame's wire bytes, made once however many pages it is replayed to; dropped when it changes. */
  private readonly wire = new WeakMap<Frame, Buffer>()
  constructor(readonly maxBytes: number) {}

  /** The wire bytes of one of this queue's frames. */
  encoded(frame: Frame): Buffer {
    let bytes = this.wire.get(frame)
    if (bytes === undefined) this.wire.set(frame, (bytes = Buffer.from(encodeFrame(frame))))
    return bytes
  }

  push(frame: Frame): void {
    const last = this.frames.at(-1)
    if (
      frame.kind === "chunk" &&
      last?.kind === "chunk" &&
      last.callId === frame.callId &&
      last.stream === frame.stream &&
      last.lastSeq + 1 === frame.seq &&
      last.data.length + frame.data.length <= Math.min(FRAME_MAX_BYTES, this.maxBytes / 4)
    ) {
      last.data += frame.data
      last.lastSeq = frame.lastSeq
      this.wire.delete(last)
    } else {
      // chunks and gaps change in place: each queue holds its own
      this.frames.push(frame.kind === "chunk" || frame.kind === "gap" ? { ...frame } : frame)
    }
    this.bytes += frameBytes(frame)
    if (this.bytes > this.maxBytes) this.trim()
  }

  shift(): Frame | undefined {
    const frame = this.frames.shift()
    if (frame !== undefined) this.bytes -= frameBytes(frame)
    return frame
  }

  private trim(): void {
    // drop down to 3/4 of the bound, so a steady stream does not trim on every push
    const target = (this.maxBytes * 3) / 4
    // Every chunk before `index` was already turned into a gap: a stream's gap found before it
    // can grow, which keeps at most one gap per stream of a call. The newest frame always stays.
    const gaps = new Map<string, Extract<Frame, { kind: "gap" }>>()
    let index = 0
    while (this.bytes > target && index < this.frames.length - 1) {
      const frame = this.frames[index]!
      if (frame.kind === "gap") gaps.set(`${frame.stream}:${frame.callId}`, frame)
      if (frame.kind !== "chunk") {
        index++
        continue
      }
      this.bytes -= frameBytes(frame)
      const key = `${frame.stream}:${frame.callId}`
      const gap = gaps.get(key)
      if (gap !== undefined) {
        gap.toSeq = frame.lastSeq
        gap.bytes += frame.data.length
        this.wire.delete(gap)
        this.frames.splice(index, 1)
      } else {
        const made: Extract<Frame, { kind: "gap" }> = {
          kind: "gap",
          callId: frame.callId,
          stream: frame.stream,
          fromSeq: frame.seq,
          toSeq: frame.lastSeq,
          bytes: frame.data.length
        }
        gaps.set(key, made)
        this.frames[index] = made
        this.bytes += frameBytes(made)
        index++
      }
    }
    // only the history gets here (it may hold more started/ended frames than its bound)
    while (this.bytes > this.maxBytes && this.frames.length > 1) this.shift()
  }
}

interface Client {
  readonly response: ServerResponse
  readonly queue: FrameQueue
  blocked: boolean
}

const toFrame = (event: CallObserver.CallEvent): Frame =>
  event.type === "chunk"
    ? {
        kind: "chunk",
        callId: event.callId,
        stream: event.stream,
        seq: event.seq,
        lastSeq: event.seq,
        data: event.data
      }
    : { kind: event.type, callId: event.callId, json: JSON.stringify(event) }

/** What a client holds: its queue and what its socket has not taken yet. */
const heldBy = (client: Client): number => client.queue.bytes + client.response.writableLength

/** The hub: an observer for hosts, and the event stream of every connected page. */
export class Feed {
  private readonly clients = new Set<Client>()
  readonly history = new FrameQueue(HISTORY_MAX_BYTES)
  /** Event streams closed because their pages stopped reading while the feed was full. */
  dropped = 0

  constructor(
    private readonly clientQueueMaxBytes = CLIENT_QUEUE_MAX_BYTES,
    private readonly feedMaxBytes = FEED_MAX_BYTES
  ) {}

  readonly observer: CallObserver.CallObserver = {
    onEvent: (event) => this.publish(toFrame(event))
  }

  get clientCount(): number {
    return this.clients.size
  }

  /** Bytes queued for the slowest client (for tests and diagnostics). */
  get maxQueuedBytes(): number {
    let max = 0
    for (const client of this.clients) max = Math.max(max, client.queue.bytes)
    return max
  }

  /** Frames queued for each client, oldest first (for tests). */
  queuedFrames(): ReadonlyArray<ReadonlyArray<Frame>> {
    return [...this.clients].map((client) => client.queue.frames)
  }

  /** Bytes all event streams hold together (for tests and diagnostics). */
  get heldBytes(): number {
    let total = 0
    for (const client of this.clients) total += heldBy(client)
    return total
  }

  publish(frame: Frame): void {
    this.history.push(frame)
    // encoded once for every page that keeps up: the same bytes go to each socket, not a copy each
    let encoded: Buffer | undefined
    let total = 0
    for (const client of this.clients) {
      if (!client.blocked && client.queue.frames.length === 0) {
        encoded ??= Buffer.from(encodeFrame(frame))
        this.write(client, encoded)
      } else {
        client.queue.push(frame)
        this.flush(client)
      }
      total += heldBy(client)
    }
    if (total > this.feedMaxBytes) this.shed(total)
  }

  /** Closes stalled streams, largest backlog first, until the feed holds 3/4 of its bound. */
  private shed(total: number): void {
    const target = (this.feedMaxBytes * 3) / 4
    const stalled = [...this.clients].filter((client) => client.blocked)
    stalled.sort((a, b) => heldBy(b) - heldBy(a))
    for (const client of stalled) {
      if (total <= target) return
      total -= heldBy(client)
      this.clients.delete(client)
      this.dropped++
      client.response.destroy()
    }
  }

  /** Starts the event stream on `response`: the history first, then live frames. */
  attach(response: ServerResponse): void {
    const client: Client = { response, queue: new FrameQueue(this.clientQueueMaxBytes), blocked: false }
    response.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive"
    })
    response.write(": toolcap viewer\n\n")
    // the replay: the history's own bytes while the socket takes them, queued past that
    for (const frame of this.history.frames) {
      if (!client.blocked && client.queue.frames.length === 0) this.write(client, this.history.encoded(frame))
      else client.queue.push(frame)
    }
    this.clients.add(client)
    const detach = () => this.clients.delete(client)
    response.on("close", detach)
    response.on("error", detach)
    const total = this.heldBytes
    if (total > this.feedMaxBytes) this.shed(total)
  }

  /** Ends every event stream (the server is closing). */
  close(): void {
    for (const client of this.clients) client.response.end()
    this.clients.clear()
  }

  private flush(client: Client): void {
    while (!client.blocked) {
      const frame = client.queue.shift()
      if (frame === undefined) return
      this.write(client, encodeFrame(frame))
    }
  }

  /** Writes to a page's stream; a socket that takes no more marks it blocked until it drains. */
  private write(client: Client, bytes: string | Buffer): void {
    if (client.response.write(bytes)) return
    client.blocked = true
    client.response.once("drain", () => {
      client.blocked = false
      this.flush(client)
    })
  }
}
