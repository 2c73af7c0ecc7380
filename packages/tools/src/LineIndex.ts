/**
 * A sparse line-offset index per file, so that the next page of an unchanged file seeks instead of
 * rescanning from line 1 (DECISIONS §3).
 *
 * A checkpoint says "line L starts at byte B". Read records one per chunk while it scans towards
 * an offset, and one exactly where each window ends (the next page's offset), plus the total line
 * count once it has seen end of file. An entry is trusted only while the file's identity
 * (device, inode, size, modification and change times in nanoseconds) is unchanged; any write
 * changes it and the entry is dropped.
 *
 * The index is a process-wide cache (shared by every toolcap copy in the process): bounded in
 * files, and in checkpoints per file by thinning, so it never grows with file size.
 *
 * @since 0.1.0
 */
import { globalValue } from "effect/GlobalValue"

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

/** Files remembered at once; the least recently used is forgotten first. */
const MAX_FILES = 64

/**
 * Checkpoints kept per file. Past this, every other one is dropped: spacing doubles and the cost
 * of a seek (a scan from the nearest checkpoint) grows, but memory stays bounded. 4096 checkpoints
 * of the 4 MiB scan chunk cover 16 GiB before any thinning.
 */
const MAX_CHECKPOINTS = 4096

const entries = globalValue(Symbol.for("@toolcap/tools/LineIndex"), () => new Map<string, Entry>())

const sameIdentity = (a: FileIdentity, b: FileIdentity): boolean =>
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.size === b.size &&
  a.mtimeNs === b.mtimeNs &&
  a.ctimeNs === b.ctimeNs

const origin: Checkpoint = { line: 1, byte: 0 }

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
  while (entries.size > MAX_FILES) {
    const oldest = entries.keys().next()
    if (oldest.done === true) break
    entries.delete(oldest.value)
  }
  return created
}

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
 * The nearest known line start at or before `line` (line 1 at byte 0 when nothing is known).
 *
 * @since 0.1.0
 * @category constructors
 */
export const seek = (key: string, identity: FileIdentity, line: number): Checkpoint => {
  const entry = current(key, identity)
  if (entry === undefined) return origin
  return entry.checkpoints[floorIndex(entry.checkpoints, line)]!
}

/**
 * Remembers that `checkpoint.line` starts at `checkpoint.byte`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const record = (key: string, identity: FileIdentity, checkpoint: Checkpoint): void => {
  const entry = ensure(key, identity)
  const list = entry.checkpoints
  const at = floorIndex(list, checkpoint.line)
  if (list[at]!.line === checkpoint.line) return
  list.splice(at + 1, 0, checkpoint)
  if (list.length > MAX_CHECKPOINTS) {
    // keep line 1 and every other checkpoint after it
    entry.checkpoints = list.filter((_, index) => index % 2 === 0)
  }
}

/**
 * Remembers the file's total line count (seen at end of file).
 *
 * @since 0.1.0
 * @category constructors
 */
export const recordTotal = (key: string, identity: FileIdentity, totalLines: number): void => {
  ensure(key, identity).totalLines = totalLines
}

/**
 * The file's total line count, when a scan has already seen its end.
 *
 * @since 0.1.0
 * @category constructors
 */
export const totalLines = (key: string, identity: FileIdentity): number | undefined =>
  current(key, identity)?.totalLines

/**
 * How many checkpoints the index holds for a file (for tests and diagnostics).
 *
 * @since 0.1.0
 * @category constructors
 */
export const size = (key: string, identity: FileIdentity): number =>
  current(key, identity)?.checkpoints.length ?? 0

/**
 * Forgets everything (for tests).
 *
 * @since 0.1.0
 * @category constructors
 */
export const clear = (): void => entries.clear()
