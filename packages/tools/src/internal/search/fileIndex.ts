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
 * marks the index stale, and the next query rebuilds it from a fresh walk: never a stale answer.
 */
import * as fs from "node:fs"
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

const readQueuedEventsLimit = (): number => {
  try {
    return Number.parseInt(fs.readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8"), 10) || 16384
  } catch {
    return 16384
  }
}

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

export interface DirectoryIndex {
  readonly root: string
  /** Brings the index up to date and answers its files in search order (a snapshot). */
  readonly snapshot: () => Promise<ReadonlyArray<IndexedFile>>
  /** Files indexed now, for the bench and tests. */
  readonly size: () => number
  readonly close: () => void
}

/**
 * An index of the real directory `root`, built on the first `snapshot`. `maxWatches` bounds the
 * directories watched; a tree with more is not indexed (`snapshot` fails, callers list instead).
 */
export const make = (root: string, maxWatches: number): DirectoryIndex => {
  let files = new Map<string, number>()
  let sorted: Array<IndexedFile> = []
  /** Watched directories, by path relative to the root. */
  const watchers = new Map<string, fs.FSWatcher>()
  let rootIno = -1
  let tree = IgnoreRules.tree(root)
  let built = false
  let stale = false
  let pending = new Set<string>()
  let burst = 0
  let burstTurn = false
  let closed = false

  const absoluteOf = (relative: string) => (relative === "" ? root : root + path.sep + relative)

  const removeFile = (relative: string) => {
    const mtimeMs = files.get(relative)
    if (mtimeMs === undefined) return
    files.delete(relative)
    const at = insertionPoint(sorted, { relative, mtimeMs })
    if (sorted[at]?.relative === relative) sorted.splice(at, 1)
  }
  // while a walk builds the whole index, files are appended and sorted once at the end
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

  /** Watches and lists `dir` and everything below it; false when a watch could not be set. */
  const walk = (dir: string): boolean => {
    const stack = [dir]
    while (stack.length > 0) {
      const current = stack.pop()!
      const absolute = absoluteOf(current)
      // watch first: a file created after the listing still sends an event
      if (!watch(current)) return false
      let dirents: Array<fs.Dirent>
      try {
        dirents = fs.readdirSync(absolute, { withFileTypes: true })
      } catch {
        continue
      }
      const names = dirents.filter((d) => isRuleName(d.name)).map((d) => d.name)
      const level = tree.levelOf(absolute, names)
      if (level === "excluded") continue
      for (const dirent of dirents) {
        if (dirent.name === IgnoreRules.gitDirName) continue
        const isDirectory = dirent.isDirectory()
        if (!isDirectory && !dirent.isFile()) continue
        const child = absolute + path.sep + dirent.name
        if (level !== undefined && IgnoreRules.judge(level, child, isDirectory) === "ignore") continue
        const relative = join(current, dirent.name)
        if (isDirectory) stack.push(relative)
        else {
          const stats = fs.lstatSync(child, { throwIfNoEntry: false })
          if (stats !== undefined && stats.isFile()) putFile(relative, stats.mtimeMs)
        }
      }
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

  const rebuild = (): boolean => {
    unwatchAll()
    files = new Map()
    sorted = []
    pending = new Set()
    tree = IgnoreRules.tree(root)
    stale = false
    rootIno = fs.statSync(root).ino
    bulk = true
    built = walk("")
    bulk = false
    sorted.sort(newestFirst)
    if (!built) unwatchAll()
    return built
  }

  /** Looks again at every path an event named. */
  const apply = (): boolean => {
    const paths = pending
    pending = new Set()
    for (const relative of paths) {
      const absolute = absoluteOf(relative)
      const stats = fs.lstatSync(absolute, { throwIfNoEntry: false })
      if (stats === undefined || (!stats.isFile() && !stats.isDirectory())) {
        removeFile(relative)
        if (watchers.has(relative)) removeTree(relative)
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
      if (watchers.has(relative)) removeTree(relative)
      const level = tree.levelOf(path.dirname(absolute))
      if (level === "excluded" || IgnoreRules.isExcluded(level, absolute, path.basename(absolute), true))
        continue
      if (!walk(relative)) return false
    }
    return true
  }

  return {
    root,
    snapshot: async () => {
      if (closed) throw new Error("the file index was closed")
      if (built) await settle()
      // the root itself replaced (removed and made again): nothing below it can be trusted
      if (built && fs.statSync(root, { throwIfNoEntry: false })?.ino !== rootIno) stale = true
      if (!built || stale) {
        if (!rebuild()) throw new Error(`more than ${maxWatches} directories to watch`)
      } else if (pending.size > 0 && !apply()) {
        if (!rebuild()) throw new Error(`more than ${maxWatches} directories to watch`)
      }
      // a copy: the next query may change the index while this one still searches
      return sorted.slice()
    },
    size: () => files.size,
    close: () => {
      closed = true
      unwatchAll()
    }
  }
}
