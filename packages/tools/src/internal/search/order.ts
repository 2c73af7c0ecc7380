/**
 * Relevance order and the result budget shared by Glob and Grep (rules S1, L4).
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { Abort, PathQuote } from "@toolcap/limits"

/** A file with what the order needs. */
export interface Dated {
  /** The path as results show it. */
  readonly display: string
  readonly mtimeMs: number
}

/**
 * Newest modification time first; equal times by path ascending (fresh checkouts share one mtime,
 * and a stable order keeps capped results reproducible).
 */
export const newestFirst = (a: Dated, b: Dated): number =>
  b.mtimeMs - a.mtimeMs || (a.display < b.display ? -1 : a.display > b.display ? 1 : 0)

/** What stopped a bounded list. */
export type Stop = "entries" | "lines" | "bytes"

/**
 * Admits rendered entries while they fit: at most `maxEntries` entries (the tool's own cap), at
 * most `maxLines` lines and `maxBytes` bytes (the search budget). The first entry is always
 * admitted, so a result is never empty because of one oversized entry.
 */
export const budget = (maxEntries: number, maxLines: number, maxBytes: number) => {
  let entries = 0
  let bytes = 0
  let stop: Stop | undefined
  return {
    /** Admits an entry of `size` rendered bytes, or records why not. */
    admit(size: number): boolean {
      if (stop !== undefined) return false
      if (entries >= maxEntries) {
        stop = maxEntries <= maxLines ? "entries" : "lines"
        return false
      }
      if (entries >= maxLines) {
        stop = "lines"
        return false
      }
      if (entries > 0 && bytes + size > maxBytes) {
        stop = "bytes"
        return false
      }
      entries++
      bytes += size
      return true
    },
    /** Whether no further entry can be admitted. */
    full(): boolean {
      return stop !== undefined || entries >= Math.min(maxEntries, maxLines)
    },
    stop: () => stop ?? (entries >= maxEntries ? "entries" : entries >= maxLines ? "lines" : undefined),
    entries: () => entries,
    bytes: () => bytes
  }
}

/** UTF-8 size of an entry rendered as one line of text (its path C-quoted when it holds a control character). */
export const renderedBytes = (text: string): number => Buffer.byteLength(PathQuote.quote(text)) + 1

/** Interrupts `effect` when `signal` aborts (an already aborted signal interrupts at once). */
export const interruptOnAbort = Abort.interruptOnAbort

/**
 * Files matched against a pattern between two turns of the event loop: a slice of a large index
 * takes a few milliseconds, so a host stays responsive (an MCP `ping`, a timeout) while it matches.
 */
export const FILES_PER_TURN = 8192

/**
 * One turn of the event loop (`setImmediate`): long work in the host's own thread takes one
 * between slices, so timers, I/O (an MCP `ping`) and interruption are served meanwhile.
 */
export const eventLoopTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** `lstat` of a listed path; undefined when it is gone or cannot be examined (not an error of the call). */
export const statsOf = (file: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}
