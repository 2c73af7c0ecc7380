/**
 * The file index of one directory: every file Glob and Grep would list there (the ignore rules of
 * `IgnoreRules`, `.git` never, symlinks neither followed nor listed) with its modification time,
 * kept in search order (newest first, ties by path) and fresh through one `fs.watch` (inotify)
 * per directory.
 *
 * Freshness: a write that finished before a query started has already queued its inotify event in
 * the kernel (fsnotify runs inside the system call). Before answering, the query lets the event
 * loop run one full poll phase (`settle`), so every such event has reached the index; the paths
 * they name are then looked at again (`lstat`), so the index never trusts an event's meaning.
 * Anything the events cannot describe — a watcher error, an ignore file or `.git` changing, a
 * burst of events large enough that the kernel queue could have overflowed and dropped some —
 * marks the index stale: the next query is answered without it (by a listing) while it is built
 * again: never a stale answer.
 *
 * A build lists the tree in slices (`buildSome`), so the layer runs it in the background with the
 * event loop free between slices.
 */
import * as fs from "node:fs"
import { Procfs } from "@toolcap/spill"
import * as path from "node:path"
import * as IgnoreRules from "../../IgnoreRules.js"

/** A listed file: its path relative to the index root (with `/`) and its mtime. */
export interface IndexedFile {
  readonly relative: string
  readonly mtimeMs: number
}

const newestFirst = (a: IndexedFile, b: IndexedFile): number =>
  b.mtimeMs - a.mtimeMs || (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0)

/** Where `file` belongs in `sorted` (the first entry not before it). */
const insertionPoint = (sorted: ReadonlyArray<IndexedFile>, file: IndexedFile): number => {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (newestFirst(sorted[mid]!, file) < 0) low = mid + 1
    else high = mid
  }
  return low
}

const readQueuedEventsLimit = (): number => Procfs.kernelSetting("fs/inotify/max_queued_events") || 16384

/**
 * Events seen within one turn of the event loop beyond which the kernel's inotify queue
 * (`max_queued_events`, 16384 by default) may have overflowed and dropped events silently
 * (libuv does not report overflow): half the queue, to keep a margin.
 */
const BURST_LIMIT = Math.floor(readQueuedEventsLimit() / 2)

/** Names whose change alters ignore decisions: the index is rebuilt. */
const isRuleName = (name: string): boolean =>
  name === ".gitignore" || name === ".ignore" || name === ".rgignore" || name === IgnoreRules.gitDirName

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`)

/** Lets the event loop pass one whole poll phase, delivering every inotify event already queued. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)))

/** A directory's device and inode: what the index was built from. */
export interface Identity {
  readonly dev: number
  readonly ino: number
}

/** The files in search order as of one query, and the directory they were listed from. */
export interface Snapshot {
  readonly files: ReadonlyArray<IndexedFile>
  readonly identity: Identity | undefined
}

/** The index could not be built: more directories than the watch budget. */
export class TooManyDirectories extends Error {}

export interface DirectoryIndex {
  readonly root: string
  /** Drops what was indexed and starts a build from scratch (nothing is read yet). */
  readonly startBuild: () => void
  /**
   * Goes on with the build for about `entries` directory entries; true once it is complete. Throws
   * `TooManyDirectories` past the watch budget.
   */
  readonly buildSome: (entries: number) => boolean
  /** Whether a complete build is there (it may still need `snapshot`'s freshening). */
  readonly built: () => boolean
  /**
   * Brings a built index up to date and answers its files in search order (a copy); undefined
   * when it cannot be trusted any more (the root replaced, rules changed, events possibly lost):
   * then it must be built again.
   */
  readonly snapshot: () => Promise<Snapshot | undefined>
  /** Files indexed now, for the bench and tests. */
  readonly size: () => number
  readonly close: () => void
}

/** `O_PATH` (Linux), the same on every architecture: names the root without opening it for reading. */
const O_PATH = 0o10000000

/**
 * What a query applies of the events at most before answering; past it, the index is built again
 * in the background instead (the query lists), so a query never waits for a large walk: paths
 * named by events (each an insertion into the sorted list), directories dropped (each a pass over
 * the files) or walked anew, and entries those walks list.
 */
const APPLY_LIMIT = 1024
const APPLY_TREES_LIMIT = 32
const APPLY_ENTRIES_LIMIT = 8192

/**
 * An index of the real directory `root`. It is read through a descriptor held on `root` (its
 * `/proc/self/fd` path): a directory exchanged into `root`'s place while the index is built is
 * never read, and the index is dropped when `root` no longer names the directory it holds.
 * `maxWatches` bounds the directories watched.
 */
export const make = (root: string, maxWatches: number): DirectoryIndex => {
  let files = new Map<string, number>()
  let sorted: Array<IndexedFile> = []
  /** Watched directories, by path relative to the root. */
  const watchers = new Map<string, fs.FSWatcher>()
  let pinned: number | undefined
  let base = root
  let identity: Identity | undefined
  let tree = IgnoreRules.tree(root)
  let built = false
  let building: Array<Frame> | undefined
  let stale = false
  let pending = new Set<string>()
  let burst = 0
  let burstTurn = false
  let closed = false

  const absoluteOf = (relative: string) => (relative === "" ? base : base + path.sep + relative)

  const removeFile = (relative: string) => {
    const mtimeMs = files.get(relative)
    if (mtimeMs === undefined) return
    files.delete(relative)
    const at = insertionPoint(sorted, { relative, mtimeMs })
    if (sorted[at]?.relative === relative) sorted.splice(at, 1)
  }
  // while a build lists the whole tree, files are appended and sorted once at the end
  let bulk = false
  const putFile = (relative: string, mtimeMs: number) => {
    if (files.get(relative) === mtimeMs) return
    if (bulk) {
      files.set(relative, mtimeMs)
      sorted.push({ relative, mtimeMs })
      return
    }
    removeFile(relative)
    files.set(relative, mtimeMs)
    const file = { relative, mtimeMs }
    sorted.splice(insertionPoint(sorted, file), 0, file)
  }
  const unwatchAll = () => {
    for (const watcher of watchers.values()) watcher.close()
    watchers.clear()
  }
  const unpin = () => {
    if (pinned !== undefined) fs.closeSync(pinned)
    pinned = undefined
  }
  const onEvent = (dir: string) => (_event: string, name: string | Buffer | null) => {
    if (!burstTurn) {
      burstTurn = true
      setImmediate(() => {
        burst = 0
        burstTurn = false
      })
    }
    if (++burst > BURST_LIMIT || name === null) {
      stale = true
      return
    }
    const text = typeof name === "string" ? name : name.toString("utf8")
    if (isRuleName(text)) stale = true
    else pending.add(join(dir, text))
  }
  const watch = (dir: string): boolean => {
    if (watchers.has(dir)) return true
    if (watchers.size >= maxWatches) return false
    try {
      const watcher = fs.watch(absoluteOf(dir), { persistent: false }, onEvent(dir))
      watcher.on("error", () => {
        stale = true
      })
      watchers.set(dir, watcher)
      return true
    } catch {
      return false
    }
  }

  /** A directory being listed: its entries, the ignore rules in force there, the next entry. */
  interface Frame {
    readonly relative: string
    listing?: {
      readonly absolute: string
      readonly dirents: ReadonlyArray<fs.Dirent>
      readonly level: IgnoreRules.Level | undefined
      at: number
    }
  }

  /**
   * Lists up to about `budget` entries of the directory on top of `stack` (watched first: a file
   * created after the listing still sends an event); its subdirectories go on `stack`, and it
   * stays there until its last entry is done. Answers the entries done, or false past the watch
   * budget. A directory of many entries is thus listed across slices of a build.
   */
  const visitSome = (stack: Array<Frame>, budget: number): number | false => {
    const frame = stack[stack.length - 1]!
    if (frame.listing === undefined) {
      const absolute = absoluteOf(frame.relative)
      if (!watch(frame.relative)) return false
      let dirents: Array<fs.Dirent>
      try {
        dirents = fs.readdirSync(absolute, { withFileTypes: true })
      } catch {
        stack.pop()
        return 1
      }
      const names = dirents.filter((d) => isRuleName(d.name)).map((d) => d.name)
      const level = tree.levelOf(absolute, names)
      if (level === "excluded") {
        stack.pop()
        return 1
      }
      frame.listing = { absolute, dirents, level, at: 0 }
    }
    const listing = frame.listing
    const startAt = listing.at
    const end = Math.min(listing.dirents.length, startAt + Math.max(1, budget))
    const found: Array<Frame> = []
    for (; listing.at < end; listing.at++) {
      const dirent = listing.dirents[listing.at]!
      if (dirent.name === IgnoreRules.gitDirName) continue
      const isDirectory = dirent.isDirectory()
      if (!isDirectory && !dirent.isFile()) continue
      const child = listing.absolute + path.sep + dirent.name
      if (listing.level !== undefined && IgnoreRules.judge(listing.level, child, isDirectory) === "ignore")
        continue
      const relative = join(frame.relative, dirent.name)
      if (isDirectory) found.push({ relative })
      else {
        const stats = fs.lstatSync(child, { throwIfNoEntry: false })
        if (stats !== undefined && stats.isFile()) putFile(relative, stats.mtimeMs)
      }
    }
    const done = end === listing.dirents.length
    if (done) stack.pop()
    stack.push(...found)
    return end - startAt + 1
  }

  /**
   * Watches and lists `dir` and everything below it (a directory an event named), at most
   * `entries` entries; false past them or past the watch budget.
   */
  const walk = (dir: string, entries: number): boolean => {
    const stack: Array<Frame> = [{ relative: dir }]
    let done = 0
    while (stack.length > 0) {
      const visited = visitSome(stack, entries - done)
      if (visited === false) return false
      done += visited
      if (done > entries && stack.length > 0) return false
    }
    return true
  }

  const removeTree = (relative: string) => {
    const prefix = `${relative}/`
    for (const [dir, watcher] of watchers) {
      if (dir === relative || dir.startsWith(prefix)) {
        watcher.close()
        watchers.delete(dir)
      }
    }
    // deleting the entry just visited is safe while iterating a Map
    for (const file of files.keys()) if (file.startsWith(prefix)) removeFile(file)
  }

  const startBuild = () => {
    if (closed) throw new Error("the file index was closed")
    unwatchAll()
    unpin()
    files = new Map()
    sorted = []
    pending = new Set()
    stale = false
    built = false
    base = root
    identity = undefined
    if (Procfs.hasDescriptorPaths()) {
      pinned = fs.openSync(root, O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW)
      if (Procfs.descriptorTarget(pinned) !== root) throw new Error(`${root} moved while it was indexed`)
      base = Procfs.descriptorPath(pinned)
      const stats = fs.fstatSync(pinned)
      identity = { dev: stats.dev, ino: stats.ino }
    } else {
      const stats = fs.statSync(root)
      identity = { dev: stats.dev, ino: stats.ino }
    }
    tree = IgnoreRules.tree(base)
    bulk = true
    building = [{ relative: "" }]
  }

  const buildSome = (entries: number): boolean => {
    if (building === undefined) return built
    let done = 0
    while (building.length > 0 && done < entries) {
      const visited = visitSome(building, entries - done)
      if (visited === false) {
        building = undefined
        bulk = false
        unwatchAll()
        throw new TooManyDirectories(`more than ${maxWatches} directories to watch`)
      }
      done += visited
    }
    if (building.length > 0) return false
    building = undefined
    bulk = false
    sorted.sort(newestFirst)
    built = true
    return true
  }

  /** Looks again at every path an event named; false when that is more than a query applies. */
  const apply = (): boolean => {
    const paths = pending
    pending = new Set()
    let trees = 0
    let entries = 0
    for (const relative of paths) {
      if (trees > APPLY_TREES_LIMIT) return false
      const absolute = absoluteOf(relative)
      const stats = fs.lstatSync(absolute, { throwIfNoEntry: false })
      if (stats === undefined || (!stats.isFile() && !stats.isDirectory())) {
        removeFile(relative)
        if (watchers.has(relative)) {
          trees++
          removeTree(relative)
        }
        continue
      }
      if (stats.isFile()) {
        if (tree.keepsFile(absolute)) putFile(relative, stats.mtimeMs)
        else removeFile(relative)
        continue
      }
      // a directory named by its parent's watcher was created, moved in, replaced or touched: it is
      // walked anew. Its inode cannot tell a replacement apart, since a directory removed and made
      // again at once often gets the freed inode number back.
      removeFile(relative)
      trees++
      if (watchers.has(relative)) removeTree(relative)
      const level = tree.levelOf(path.dirname(absolute))
      if (level === "excluded" || IgnoreRules.isExcluded(level, absolute, path.basename(absolute), true))
        continue
      const before = files.size
      if (!walk(relative, APPLY_ENTRIES_LIMIT - entries)) return false
      entries += Math.max(1, files.size - before)
    }
    return true
  }

  /** Whether `root` still names the directory the index holds. */
  const inPlace = (): boolean => {
    const now = fs.statSync(root, { throwIfNoEntry: false })
    if (now === undefined || identity === undefined || now.ino !== identity.ino || now.dev !== identity.dev)
      return false
    try {
      return pinned === undefined || fs.readlinkSync(base) === root
    } catch {
      return false
    }
  }

  return {
    root,
    startBuild,
    buildSome,
    built: () => built && !closed,
    snapshot: async () => {
      if (closed || !built) return undefined
      await settle()
      // another query may have found it stale meanwhile and started a build
      if (!built) return undefined
      if (stale || !inPlace() || pending.size > APPLY_LIMIT || !apply()) {
        built = false
        return undefined
      }
      // a copy: the next query may change the index while this one still searches
      return { files: sorted.slice(), identity }
    },
    size: () => files.size,
    close: () => {
      closed = true
      building = undefined
      unwatchAll()
      unpin()
    }
  }
}
