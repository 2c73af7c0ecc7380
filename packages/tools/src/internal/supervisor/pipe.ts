/**
 * One output pipe of a process: a `Stream` of its reads with backpressure (the canonical reader),
 * or a synchronous tap for a consumer that never waits (a capture, where the cost per read is the
 * whole cost). A pipe is read one way or the other, not both.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** What a pipe reads from: a Node `Readable` fits, and so does the fake supervisor's pipe. */
export interface Source {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown
  on(event: "error", listener: (error: Error) => void): unknown
  once(event: "end", listener: () => void): unknown
  off(event: "data", listener: (chunk: Uint8Array) => void): unknown
  pause(): unknown
  resume(): unknown
  destroy(): unknown
}

/**
 * Reads (one pipe read each, at most 64 KiB) buffered before the pipe is paused: enough to keep
 * the reader busy, small enough to bound the host's memory (about 1 MiB per pipe) whatever the
 * command writes.
 */
const BUFFER_READS = 16

/** @internal */
export interface Pipe {
  /** The reads in order; a consumer that pulls slowly pauses the pipe. */
  readonly stream: Stream.Stream<Uint8Array>
  /**
   * Hands every read to `onBytes` as it arrives (what was read before first), no backpressure;
   * `onEnd` once the pipe ended or was closed (at once when it has).
   */
  readonly tap: (onBytes: (bytes: Uint8Array) => void, onEnd?: () => void) => void
  /** Whether the writers closed the pipe (end of file reached). */
  readonly ended: () => boolean
  /** Stops reading: the pipe is closed on this side, the stream ends after what it read. Idempotent. */
  readonly close: () => void
}

/**
 * A pipe over `source`; `onDone` runs once, when it reached end of file, failed or was closed.
 * Reads are buffered until the consumer pulls, which takes everything buffered at once (one
 * wake-up per batch, not per read).
 *
 * @internal
 */
export const make = (source: Source, onDone: () => void): Pipe => {
  let buffer: Array<Uint8Array> = []
  let ended = false
  let done = false
  let paused = false
  let wake: (() => void) | undefined
  // set while a synchronous consumer reads: every read goes straight to it
  let direct: ((bytes: Uint8Array) => void) | undefined
  let onTapEnd: (() => void) | undefined
  const notify = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  const onData = (chunk: Uint8Array) => {
    if (direct !== undefined) {
      direct(chunk)
      return
    }
    buffer.push(chunk)
    if (buffer.length >= BUFFER_READS && !paused) {
      paused = true
      source.pause()
    }
    notify()
  }
  const finish = () => {
    if (done) return
    done = true
    notify()
    onTapEnd?.()
    onDone()
  }
  source.on("data", onData)
  source.once("end", () => {
    ended = true
    finish()
  })
  // a read error ends the stream; the supervisor still stops the tree
  source.on("error", finish)
  const pull: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>> = Effect.suspend(() => {
    if (buffer.length > 0) {
      const batch = buffer
      buffer = []
      if (paused && !done) {
        paused = false
        source.resume()
      }
      return Effect.succeed(Chunk.unsafeFromArray(batch))
    }
    if (done) return Effect.fail(Option.none())
    return Effect.async<void>((resume) => {
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    }).pipe(Effect.zipRight(pull))
  })
  const tap = (onBytes: (bytes: Uint8Array) => void, onEnd?: () => void): void => {
    const before = buffer
    buffer = []
    for (const chunk of before) onBytes(chunk)
    if (done) {
      onEnd?.()
      return
    }
    direct = onBytes
    onTapEnd = onEnd
    if (paused) {
      paused = false
      source.resume()
    }
  }
  // built when first asked for: a process read through its tap never makes one
  let stream: Stream.Stream<Uint8Array> | undefined
  return {
    get stream() {
      return (stream ??= Stream.repeatEffectChunkOption(pull))
    },
    tap,
    ended: () => ended,
    // what was read before stays for the stream (at most BUFFER_READS reads)
    close: () => {
      if (done) return
      source.off("data", onData)
      source.destroy()
      finish()
    }
  }
}
