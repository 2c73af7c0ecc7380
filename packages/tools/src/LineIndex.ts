/**
 * A sparse line-offset index per file, so that the next page of an unchanged file seeks instead of
 * rescanning from line 1 (rules R4).
 *
 * A checkpoint says "line L starts at byte B". Read records one per chunk while it scans towards
 * an offset, and one exactly where each window ends (the next page's offset), plus the total line
 * count once it has seen end of file. An entry is trusted only while the file's identity
 * (device, inode, size, modification and change times in nanoseconds) is unchanged; any write
 * changes it and the entry is dropped.
 *
 * The index is a service the host provides (`layer`, one per host): bounded in files, and in
 * checkpoints per file by thinning, so it never grows with file size.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * What identifies one version of a file.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileIdentity {
  readonly dev: bigint
  readonly ino: bigint
  readonly size: bigint
  readonly mtimeNs: bigint
  readonly ctimeNs: bigint
}

/**
 * Line `line` (1-based) starts at byte `byte`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Checkpoint {
  readonly line: number
  readonly byte: number
}

interface Entry {
  identity: FileIdentity
  /** Sorted by line; always starts with line 1 at byte 0. */
  checkpoints: Array<Checkpoint>
  totalLines: number | undefined
}

/**
 * Files remembered at once by default; the least recently used is forgotten first. An agent pages
 * through a handful of files at a time; 64 entries of at most 4096 checkpoints stay under ~6 MB.
 */
export const DEFAULT_MAX_FILES = 64

/**
 * Checkpoints kept per file. Past this, every other one is dropped: spacing doubles and the cost
 * of a seek (a scan from the nearest checkpoint) grows, but memory stays bounded. 4096 checkpoints
 * of the 4 MiB scan chunk cover 16 GiB before any thinning.
 */
const MAX_CHECKPOINTS = 4096

const sameIdentity = (a: FileIdentity, b: FileIdentity): boolean =>
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.size === b.size &&
  a.mtimeNs === b.mtimeNs &&
  a.ctimeNs === b.ctimeNs

const origin: Checkpoint = { line: 1, byte: 0 }

/** Index of the last checkpoint whose line is <= `line`. */
const floorIndex = (checkpoints: ReadonlyArray<Checkpoint>, line: number): number => {
  let low = 0
  let high = checkpoints.length - 1
  while (low < high) {
    const mid = (low + high + 1) >>> 1
    if (checkpoints[mid]!.line <= line) low = mid
    else high = mid - 1
  }
  return low
}

/**
 * @since 0.1.0
 * @category models
 */
export interface LineIndexService {
  /** The nearest known line start at or before `line` (line 1 at byte 0 when nothing is known). */
  readonly seek: (key: string, identity: FileIdentity, line: number) => Checkpoint
  /** Remembers that `checkpoint.line` starts at `checkpoint.byte`. */
  readonly record: (key: string, identity: FileIdentity, checkpoint: Checkpoint) => void
  /** Remembers the file's total line count (seen at end of file). */
  readonly recordTotal: (key: string, identity: FileIdentity, totalLines: number) => void
  /** The file's total line count, when a scan has already seen its end. */
  readonly totalLines: (key: string, identity: FileIdentity) => number | undefined
  /** How many checkpoints the index holds for a file (for tests and diagnostics). */
  readonly size: (key: string, identity: FileIdentity) => number
  /** How many files it remembers. */
  readonly files: () => number
  /** Forgets everything. */
  readonly clear: () => void
}

/**
 * @since 0.1.0
 * @category services
 */
export class LineIndex extends Context.Tag("@toolcap/tools/LineIndex")<LineIndex, LineIndexService>() {}

/**
 * A fresh index remembering at most `maxFiles` files (least recently used forgotten first).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeUnsafe = (maxFiles: number = DEFAULT_MAX_FILES): LineIndexService => {
  const entries = new Map<string, Entry>()
  /** The live entry for `key`, touched as most recently used; a stale one is dropped. */
  const current = (key: string, identity: FileIdentity): Entry | undefined => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    entries.delete(key)
    if (!sameIdentity(entry.identity, identity)) return undefined
    entries.set(key, entry)
    return entry
  }
  const ensure = (key: string, identity: FileIdentity): Entry => {
    const existing = current(key, identity)
    if (existing !== undefined) return existing
    const created: Entry = { identity, checkpoints: [origin], totalLines: undefined }
    entries.set(key, created)
    while (entries.size > maxFiles) {
      const oldest = entries.keys().next()
      if (oldest.done === true) break
      entries.delete(oldest.value)
    }
    return created
  }
  return {
    seek: (key, identity, line) => {
      const entry = current(key, identity)
      if (entry === undefined) return origin
      return entry.checkpoints[floorIndex(entry.checkpoints, line)]!
    },
    record: (key, identity, checkpoint) => {
      const entry = ensure(key, identity)
      const list = entry.checkpoints
      const at = floorIndex(list, checkpoint.line)
      if (list[at]!.line === checkpoint.line) return
      list.splice(at + 1, 0, checkpoint)
      if (list.length > MAX_CHECKPOINTS) {
        // keep line 1 and every other checkpoint after it
        entry.checkpoints = list.filter((_, index) => index % 2 === 0)
      }
    },
    recordTotal: (key, identity, totalLines) => {
      ensure(key, identity).totalLines = totalLines
    },
    totalLines: (key, identity) => current(key, identity)?.totalLines,
    size: (key, identity) => current(key, identity)?.checkpoints.length ?? 0,
    files: () => entries.size,
    clear: () => entries.clear()
  }
}

/**
 * A fresh index per layer build: each host gets its own, dropped with it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: { readonly maxFiles?: number | undefined }): Layer.Layer<LineIndex> =>
  Layer.sync(LineIndex, () => makeUnsafe(options?.maxFiles))
