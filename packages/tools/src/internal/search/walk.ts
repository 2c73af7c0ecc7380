/**
 * Glob's walk: fast-glob over a real directory with the ignore rules of `IgnoreRules` applied as
 * each directory is read, so ignored directories are never entered (DECISIONS §4).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type FastGlob from "fast-glob"
import * as IgnoreRules from "../../IgnoreRules.js"
import type * as Roots from "../../Roots.js"

/** A file found by the walk. */
export interface WalkedFile {
  /** `prefix` + the path relative to the walk's root (with `/`): how results name it. */
  readonly display: string
  /** Modification time in ms (fractional), from `lstat`. */
  readonly mtimeMs: number
}

/**
 * Directories fast-glob asks for at once. Our reads answer from the calling thread, so this only
 * bounds fast-glob's own queue.
 */
const READDIR_CONCURRENCY = 16

/**
 * Directory reads between two turns of the event loop. Each read is one short `getdents` call
 * made on the calling thread (a thread-pool round trip per directory cost more than the read);
 * yielding every so often keeps timers, I/O and interruption responsive during a large walk.
 */
const READS_PER_TURN = 64

/** `lstat` calls between two turns of the event loop, for the same reason. */
const STATS_PER_TURN = 2048

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: Array<fs.Dirent>) => void

/**
 * The literal every matching file name ends with, when the pattern's last segment is `*` and a
 * literal (`**\/*.ts` -> `.ts`). Files without it are dropped as their directory is read, before
 * fast-glob sees them: they could not match anyway, and most files of a tree are such files.
 */
export const fileSuffixOf = (pattern: string): string | undefined => {
  const last = pattern.slice(pattern.lastIndexOf("/") + 1)
  const match = /^\*([^*?[\]{}()!+@\\]+)$/.exec(last)
  return match?.[1]
}

const isIgnoreFileName = (name: string): boolean =>
  name === ".gitignore" || name === ".ignore" || name === ".rgignore" || name === IgnoreRules.gitDirName

/**
 * Lists the files below `root` that match `pattern` (relative to `root`) and survive the ignore
 * rules. Hidden files are included, `.git` never is, symlinks are not followed. Stops early (with
 * what it found so far) once `signal` aborts. Unreadable directories are skipped.
 */
export const walk = async (
  root: string,
  pattern: string,
  prefix: string,
  signal?: AbortSignal,
  guard?: Roots.WalkGuard
): Promise<Array<WalkedFile>> => {
  const tree = IgnoreRules.tree(root)
  const suffix = fileSuffixOf(pattern)
  let reads = 0
  const readdir = (dir: string, _options: unknown, callback: ReaddirCallback): void => {
    const answer = (error: NodeJS.ErrnoException | null, entries: Array<fs.Dirent>) => {
      if (++reads % READS_PER_TURN === 0) setImmediate(callback, error, entries)
      else process.nextTick(callback, error, entries)
    }
    if (signal?.aborted === true) return answer(null, [])
    let dirents: Array<fs.Dirent>
    try {
      dirents = guard === undefined ? fs.readdirSync(dir, { withFileTypes: true }) : guard.readDirectory(dir)
    } catch (error) {
      return answer(error as NodeJS.ErrnoException, [])
    }
    let names: Array<string> | undefined
    for (const dirent of dirents) {
      if (isIgnoreFileName(dirent.name)) (names ??= []).push(dirent.name)
    }
    const level = tree.levelOf(dir, names ?? [])
    if (level === "excluded") return answer(null, [])
    const kept: Array<fs.Dirent> = []
    for (const dirent of dirents) {
      const isDirectory = dirent.isDirectory()
      // symlinks, sockets, FIFOs and devices are never listed (symlinks are not followed)
      if (!isDirectory && (!dirent.isFile() || (suffix !== undefined && !dirent.name.endsWith(suffix))))
        continue
      if (dirent.name === IgnoreRules.gitDirName) continue
      if (
        level !== undefined &&
        IgnoreRules.judge(level, path.join(dir, dirent.name), isDirectory) === "ignore"
      ) {
        continue
      }
      kept.push(dirent)
    }
    answer(null, kept)
  }
  // loaded on first use (it loads picomatch and micromatch): a Read or Bash call never walks
  // (typed by hand: the package's `export =` types do not describe a dynamic import's `default`)
  const { default: fg } = (await import("fast-glob")) as unknown as { readonly default: typeof FastGlob }
  const dynamic = fg.isDynamicPattern(pattern)
  const found = await fg(pattern, {
    cwd: root,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    suppressErrors: true,
    // one pattern cannot yield a path twice
    unique: false,
    concurrency: READDIR_CONCURRENCY,
    fs: { readdir: readdir as unknown as typeof fs.readdir }
  })
  const files: Array<WalkedFile> = []
  for (let at = 0; at < found.length; at++) {
    if (signal?.aborted === true) break
    // `lstat` on the calling thread: for metadata in the page cache it is several times cheaper
    // than a thread-pool round trip; yield now and then, as the walk does
    if (at > 0 && at % STATS_PER_TURN === 0) await new Promise((resume) => setImmediate(resume))
    const relative = found[at]!
    const absolute = root + path.sep + relative
    // a literal pattern is looked up directly, without a walk: judge its path here instead
    if (!dynamic && !tree.keepsFile(absolute)) continue
    // a name reached without a listing of its directory (a literal part) is judged by where it is
    if (guard !== undefined && !guard.holdsParentOf(absolute)) continue
    // a file that vanished since the walk saw it is dropped
    const stats = fs.lstatSync(absolute, { throwIfNoEntry: false })
    if (stats === undefined || !stats.isFile()) continue
    files.push({ display: prefix + relative, mtimeMs: stats.mtimeMs })
  }
  return files
}
