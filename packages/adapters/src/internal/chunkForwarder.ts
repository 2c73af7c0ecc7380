/**
 * Forwards Bash chunks to a slow sink (a client behind a pipe) with bounded memory: chunks that
 * arrive while a send is in flight are coalesced into the next send, and once the coalesced
 * backlog reaches its bound the producer waits for the send in flight — which, through the
 * tool host's stream, pauses the command's pipes.
 */
import * as Effect from "effect/Effect"
import { Abort } from "@toolcap/limits"
import { Bash } from "@toolcap/tools"
import { Utf8Text } from "./jsonLine.js"

/**
 * Bytes of chunk data held back while a send is in flight before the producer has to wait: a
 * pipe read (64 KiB): a fast client gets whole reads per message, a stalled one
 * costs at most this much per call.
 */
export const COALESCE_MAX_BYTES = 64 * 1024

/** A run of consecutive chunks of one stream, merged. @internal */
export interface ChunkRun {
  readonly callId: string
  readonly stream: "stdout" | "stderr"
  /** Sequence number of the first merged chunk. */
  readonly seq: number
  /** Sequence number of the last merged chunk (equal to `seq` for a single chunk). */
  readonly lastSeq: number
  /**
   * The merged text; as its UTF-8 bytes when every merged chunk still had its bytes (nobody read
   * its `data`), so a run that only passes through to the transport is never a JS string.
   */
  readonly data: string | Utf8Text
}

/** The bytes of a chunk, or its text when it has none left. */
const payloadOf = (chunk: Bash.BashChunk): string | Uint8Array => Bash.chunkBytes(chunk) ?? chunk.data

/** Merges consecutive chunks of the same stream, keeping the order. @internal */
export const coalesce = (chunks: ReadonlyArray<Bash.BashChunk>): Array<ChunkRun> => {
  const runs: Array<{
    callId: string
    stream: "stdout" | "stderr"
    seq: number
    lastSeq: number
    data: Array<string | Uint8Array>
  }> = []
  for (const chunk of chunks) {
    const last = runs.at(-1)
    if (last !== undefined && last.stream === chunk.stream && last.callId === chunk.callId) {
      last.data.push(payloadOf(chunk))
      last.lastSeq = chunk.seq
    } else {
      runs.push({
        callId: chunk.callId,
        stream: chunk.stream,
        seq: chunk.seq,
        lastSeq: chunk.seq,
        data: [payloadOf(chunk)]
      })
    }
  }
  return runs.map((run) => ({ ...run, data: merge(run.data) }))
}

/** Pieces of a run as one text: the pieces themselves while every one is bytes (each whole UTF-8). */
const merge = (pieces: ReadonlyArray<string | Uint8Array>): string | Utf8Text => {
  if (pieces.every((piece) => typeof piece !== "string"))
    return new Utf8Text(...(pieces as Array<Uint8Array>))
  return pieces.map((piece) => (typeof piece === "string" ? piece : new Utf8Text(piece).toString())).join("")
}

/** The size of a chunk, counted without decoding it (bytes when it has them, else UTF-16 units). */
const sizeOf = (chunk: Bash.BashChunk): number => Bash.chunkBytes(chunk)?.length ?? chunk.data.length

/** @internal */
export interface ChunkForwarder {
  /** The `onChunk` of a call: returns at once, or waits while the backlog is at its bound. */
  readonly onChunk: (chunk: Bash.BashChunk) => Effect.Effect<void>
  /** Completes once every chunk received so far was sent (or dropped); call before answering. */
  readonly flushed: Effect.Effect<void>
}

/**
 * A chunk consumer for `ToolHost`'s `onChunk`: `send` delivers coalesced runs and resolves once
 * the sink took them (e.g. the transport's write drained). A failed send drops its runs (the
 * client is gone or refused them); the call goes on. Once `signal` aborts (the call was
 * cancelled, nobody waits for its chunks), later chunks are dropped and nothing waits any more.
 *
 * @internal
 */
export const make = (
  send: (runs: ReadonlyArray<ChunkRun>) => Promise<void>,
  signal?: AbortSignal | undefined
): ChunkForwarder => {
  let pending: Array<Bash.BashChunk> = []
  let pendingBytes = 0
  let inflight: Promise<void> | undefined
  const stopped = () => signal?.aborted === true

  const flush = (): void => {
    const batch = pending
    pending = []
    pendingBytes = 0
    inflight = send(coalesce(batch))
      .catch(() => undefined)
      .then(() => {
        inflight = undefined
        if (pending.length > 0 && !stopped()) flush()
      })
  }

  /** Waits for the send in flight, or for the cancellation, whichever comes first. */
  const sendInFlight = Effect.suspend(() => {
    const waitFor = inflight
    if (waitFor === undefined || stopped()) return Effect.void
    return Effect.raceFirst(
      Effect.promise(() => waitFor),
      Abort.aborted(signal)
    )
  })

  const onChunk = (chunk: Bash.BashChunk) =>
    Effect.suspend(() => {
      if (stopped()) return Effect.void
      pending.push(chunk)
      pendingBytes += sizeOf(chunk)
      if (inflight === undefined) {
        flush()
        return Effect.void
      }
      return pendingBytes < COALESCE_MAX_BYTES ? Effect.void : sendInFlight
    })

  const flushed: Effect.Effect<void> = Effect.suspend(() =>
    inflight === undefined || stopped() ? Effect.void : Effect.zipRight(sendInFlight, flushed)
  )

  return { onChunk, flushed }
}
