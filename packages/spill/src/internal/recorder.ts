/**
 * Records one stream for its spill copy while the stream runs, in memory bounded by the budgets
 * whatever the stream's size and `spillMaxBytes`:
 *
 * - While the stream fits `memoryBytes`, its reads are kept as they came (no copy: a read is
 *   owned by whoever made it and never changed) and nothing touches the disk; a stream that never
 *   needs a copy costs nothing more.
 * - When the copy itself fits `memoryBytes` (`spillMaxBytes` does), only the copy's ends are kept
 *   once the stream outgrew it: the first half and a ring of the last half.
 * - Otherwise the copy is streamed to its file as it comes: bytes `[0, S/2)` in place, the rest
 *   into a ring of `S - S/2` bytes after them, so the file holds the whole stream while it fits
 *   and its newest half after that. Writes are synchronous, one pipe read at a time, which slows
 *   the reader instead of queueing its output.
 *
 * `save` lays the copy out (./copy.ts) and writes it: from memory in one write, or on disk by
 * composing head, gap line and tail into a sibling file renamed over the ring.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Marker } from "@toolcap/limits"
import * as Copy from "./copy.js"

/** A file of the disk mode, written and read synchronously; every method throws when the file system fails. */
export interface SpillFile {
  readonly path: string
  readonly writeAt: (bytes: Uint8Array, position: number) => void
  readonly readAt: (position: number, length: number) => Uint8Array
  /** Replaces the file's content with what `fill` appends, through a sibling renamed over it. */
  readonly replace: (fill: (append: (bytes: Uint8Array) => void) => void) => void
  /** Closes the file (kept). */
  readonly close: () => void
  /** Closes and removes the file (and a sibling left by a failed `replace`). */
  readonly remove: () => void
}

/** What a recorder needs from its scratch. */
export interface RecorderEnv {
  readonly spillMaxBytes: number
  /** Most bytes of a stream kept in memory; past it, a copy larger than this goes to disk. */
  readonly memoryBytes: number
  /** Creates the stream's spill file for the disk mode; throws when it cannot. */
  readonly createFile: () => SpillFile
  /** Writes a copy held in memory to a new spill file; its path, or None. */
  readonly writeWhole: (bytes: Uint8Array) => Effect.Effect<Option.Option<string>>
}

/**
 * One stream's recording.
 *
 * @internal
 */
export interface Recorder {
  /** Feeds the next read. The bytes are kept as they are: the caller must not change them afterwards. */
  readonly push: (bytes: Uint8Array) => void
  /**
   * Writes the copy of everything fed (`totalLines` counted by the caller) and answers what the
   * file holds; None when it could not be written. Ends the recording.
   */
  readonly save: (totalLines: number) => Effect.Effect<Option.Option<Marker.SavedCopy>>
  /** Ends the recording without a copy, removing a file begun on disk. */
  readonly discard: () => void
}

/** Reads shorter than this are copied into a block, so a slow writer's many tiny reads stay few objects. */
const SMALL_READ = 8 * 1024

/** The block small reads are gathered in: one pipe read's worth. */
const BLOCK_BYTES = 64 * 1024

/** A block's first size: most commands write less than this in all. */
const FIRST_BLOCK_BYTES = 4 * 1024

interface Segment {
  readonly at: number
  readonly bytes: Uint8Array
}

/** Bytes `[from, to)` out of segments in stream order (each wholly or partly inside the range). */
const readSegments = (segments: ReadonlyArray<Segment>, from: number, to: number): Uint8Array => {
  // most ranges lie within one read: a view of it, not a copy
  const within = segments.find((segment) => segment.at <= from && to <= segment.at + segment.bytes.length)
  if (within !== undefined) return within.bytes.subarray(from - within.at, to - within.at)
  const out = new Uint8Array(to - from)
  for (const segment of segments) {
    const start = Math.max(from, segment.at)
    const end = Math.min(to, segment.at + segment.bytes.length)
    if (start < end) out.set(segment.bytes.subarray(start - segment.at, end - segment.at), start - from)
  }
  return out
}

const savedCopy = (path: string, copy: Copy.Layout): Marker.SavedCopy => ({
  path,
  complete: copy.complete,
  totalBytes: copy.total,
  ranges: Copy.ranges(copy)
})

/** @internal */
export const make = (env: RecorderEnv): Recorder => {
  const spillMax = env.spillMaxBytes
  const headBytes = Math.floor(spillMax / 2)
  // the ring holds the newest `ring` bytes, which the tail and its look-back always fit in
  const ring = spillMax - headBytes
  // a copy that fits in memory never touches the disk while the stream runs
  const inMemory = spillMax <= env.memoryBytes
  let total = 0
  let done = false
  // memory: the first segments up to headBytes + 1, then the rest (trimmed to the ring once the
  // stream no longer fits whole)
  const head: Array<Segment> = []
  let headCovered = 0
  let tail: Array<Segment> = []
  let tailFirst = 0
  // small reads gathered into one block before they become a segment (or a write)
  let block: Uint8Array | undefined
  let blockAt = 0
  let blockFill = 0
  // disk: the file once the stream outgrew memory, and the byte at `headBytes` (the ring overwrites it)
  let file: SpillFile | undefined
  let afterHead: number | undefined
  let failed = false

  const fail = () => {
    failed = true
    head.length = 0
    tail = []
    tailFirst = 0
    block = undefined
    if (file !== undefined) {
      const broken = file
      file = undefined
      try {
        broken.remove()
      } catch {
        // a spill that cannot be removed dies with its session
      }
    }
  }

  /** Writes stream bytes at stream position `at` to the file: in place below headBytes, else into the ring. */
  const writeToFile = (target: SpillFile, at: number, bytes: Uint8Array) => {
    if (at <= headBytes && headBytes < at + bytes.length) afterHead = bytes[headBytes - at]
    let position = at
    let rest = bytes
    if (position < headBytes) {
      const inPlace = Math.min(rest.length, headBytes - position)
      target.writeAt(rest.subarray(0, inPlace), position)
      position += inPlace
      rest = rest.subarray(inPlace)
    }
    if (rest.length === 0) return
    // only the newest `ring` bytes of a read can survive
    if (rest.length > ring) {
      position += rest.length - ring
      rest = rest.subarray(rest.length - ring)
    }
    const offset = (position - headBytes) % ring
    const first = Math.min(rest.length, ring - offset)
    target.writeAt(rest.subarray(0, first), headBytes + offset)
    if (first < rest.length) target.writeAt(rest.subarray(first), headBytes)
  }

  const trimTail = () => {
    // the whole stream is needed while it may still fit; after that, only the ring
    if (total <= spillMax) return
    while (tailFirst < tail.length) {
      const oldest = tail[tailFirst]!
      if (oldest.at + oldest.bytes.length > total - ring) break
      tailFirst++
    }
    if (tailFirst > 64 && tailFirst * 2 > tail.length) {
      tail = tail.slice(tailFirst)
      tailFirst = 0
    }
  }

  /** A segment of the stream (a whole read, or a block of small ones) reaches memory or the file. */
  const place = (segment: Segment) => {
    if (file !== undefined) {
      writeToFile(file, segment.at, segment.bytes)
      return
    }
    if (headCovered <= headBytes) {
      head.push(segment)
      headCovered = segment.at + segment.bytes.length
    } else {
      tail.push(segment)
    }
    if (inMemory) return trimTail()
    if (segment.at + segment.bytes.length <= env.memoryBytes) return
    // outgrew memory: the copy goes to its file from here on
    const opened = env.createFile()
    file = opened
    for (const kept of [...head, ...tail.slice(tailFirst)]) writeToFile(opened, kept.at, kept.bytes)
    head.length = 0
    tail = []
    tailFirst = 0
  }

  const flushBlock = () => {
    if (block === undefined || blockFill === 0) return
    // a block is copied out at its size, so a mostly empty one does not stay allocated
    place({ at: blockAt, bytes: blockFill === block.length ? block : block.slice(0, blockFill) })
    if (blockFill === block.length) block = undefined
    blockFill = 0
  }

  const guarded = (run: () => void) => {
    try {
      run()
    } catch {
      // rules F5: a spill that cannot be written costs the hint only
      fail()
    }
  }

  const read: Copy.Reader = (from, to) => {
    if (file === undefined) return readSegments([...head, ...tail.slice(tailFirst)], from, to)
    const opened = file
    const out = new Uint8Array(to - from)
    let at = from
    while (at < to) {
      if (at < headBytes) {
        const end = Math.min(to, headBytes)
        out.set(opened.readAt(at, end - at), at - from)
        at = end
      } else if (at === headBytes && total - ring > headBytes) {
        // overwritten in the ring; kept aside when it passed
        out[at - from] = afterHead ?? 0
        at++
      } else {
        const offset = (at - headBytes) % ring
        const end = Math.min(to, at + (ring - offset))
        out.set(opened.readAt(headBytes + offset, end - at), at - from)
        at = end
      }
    }
    return out
  }

  return {
    push(bytes) {
      if (done || failed || bytes.length === 0) return
      const at = total
      total += bytes.length
      guarded(() => {
        if (bytes.length >= SMALL_READ) {
          flushBlock()
          place({ at, bytes })
          return
        }
        if (block !== undefined && blockFill + bytes.length > block.length) {
          if (blockFill + bytes.length <= BLOCK_BYTES) {
            // grown by doubling, so a short output costs a few KB, not a whole block
            const grown = new Uint8Array(
              Math.min(BLOCK_BYTES, Math.max(block.length * 2, blockFill + bytes.length))
            )
            grown.set(block.subarray(0, blockFill))
            block = grown
          } else {
            flushBlock()
          }
        }
        block ??= new Uint8Array(Math.max(FIRST_BLOCK_BYTES, bytes.length))
        if (blockFill === 0) blockAt = at
        block.set(bytes, blockFill)
        blockFill += bytes.length
      })
    },
    save: (totalLines) =>
      Effect.suspend(() => {
        if (done || failed) return Effect.succeedNone
        done = true
        guarded(flushBlock)
        if (failed) return Effect.succeedNone
        if (file === undefined) {
          let content: Uint8Array | undefined
          let copy: Copy.Layout | undefined
          guarded(() => {
            copy = Copy.layout(read, total, totalLines, spillMax)
            const out = new Uint8Array(Copy.fileBytes(copy))
            let filled = 0
            Copy.emit(read, copy, (bytes) => {
              out.set(bytes, filled)
              filled += bytes.length
            })
            content = out
          })
          head.length = 0
          tail = []
          if (content === undefined || copy === undefined) return Effect.succeedNone
          const laidOut = copy
          return Effect.map(
            env.writeWhole(content),
            Option.map((path) => savedCopy(path, laidOut))
          )
        }
        const opened = file
        let saved: Marker.SavedCopy | undefined
        guarded(() => {
          const copy = Copy.layout(read, total, totalLines, spillMax)
          if (!copy.complete) opened.replace((append) => Copy.emit(read, copy, append))
          opened.close()
          saved = savedCopy(opened.path, copy)
        })
        file = undefined
        return Effect.succeed(Option.fromNullable(saved))
      }),
    discard: () => {
      if (done) return
      done = true
      fail()
    }
  }
}
