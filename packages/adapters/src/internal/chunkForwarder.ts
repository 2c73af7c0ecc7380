/**
 * Coalesces a Bash call's event stream for a slow sink (a client behind a pipe) with bounded
 * memory: one `Stream.aggregate` between the process and the client. While the sink is busy with
 * a send, chunks that arrive are folded into the next batch; once that batch reaches its byte
 * bound the stream stops pulling, which pauses the command's pipes. The outcome ends the last
 * batch, so it always comes after every chunk.
 */
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import { Bash } from "@toolcap/tools"
import { Utf8Text } from "./jsonLine.js"

/**
 * Bytes of chunk data folded into one batch while the sink is busy: a pipe read (64 KiB), so a
 * fast client gets whole reads per message. A stalled client holds the batch it is being sent,
 * one full batch ready for the next send and one being folded (plus the chunk that did not fit
 * it): about 3 × 64 KiB per call, whatever the command writes.
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

/**
 * What a call's stream carries: its chunks in order, then its outcome as the last element
 * (`Bash.BashEvent` is one).
 *
 * @internal
 */
export type Event<A> =
  { readonly _tag: "Chunk"; readonly chunk: Bash.BashChunk } | { readonly _tag: "Result"; readonly result: A }

/** Chunks that arrived while the sink was busy, and the outcome when it arrived among them. @internal */
export interface Batch<A> {
  readonly chunks: ReadonlyArray<Bash.BashChunk>
  readonly result: { readonly value: A } | undefined
}

interface Folding<A> {
  readonly chunks: Array<Bash.BashChunk>
  result: { readonly value: A } | undefined
}

/**
 * The events of a call as batches for a sink that takes one batch at a time: while the sink
 * (downstream) is busy, events are folded into the next batch, up to `COALESCE_MAX_BYTES` of
 * chunk data; past that the stream stops pulling (backpressure reaches the process). `admit`
 * sees every chunk in order and keeps it out of the batches when it answers false (a stream past
 * its budget is counted, never held).
 *
 * @internal
 */
export const batches = <A, E, R>(
  events: Stream.Stream<Event<A>, E, R>,
  admit: (chunk: Bash.BashChunk) => boolean = () => true
): Stream.Stream<Batch<A>, E, R> =>
  events.pipe(
    Stream.filter((event) => "result" in event || admit(event.chunk)),
    Stream.aggregate(
      Sink.foldWeighted<Folding<A>, Event<A>>({
        initial: { chunks: [], result: undefined },
        maxCost: COALESCE_MAX_BYTES,
        cost: (_, event) => ("chunk" in event ? sizeOf(event.chunk) : 0),
        body: (batch, event) => {
          // a fresh batch per fold: the sink's initial value is shared between batches
          const next =
            batch.chunks.length === 0 && batch.result === undefined
              ? ({ chunks: [], result: undefined } as Folding<A>)
              : batch
          if ("chunk" in event) next.chunks.push(event.chunk)
          else next.result = { value: event.result }
          return next
        }
      })
    )
  )
