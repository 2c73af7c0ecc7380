/**
 * Glob's fallback listing, for hosts where ripgrep cannot be confined by the kernel (no Landlock):
 * a walk in this process, from the pinned directory, with the ignore rules of `IgnoreRules`
 * applied as each directory is read (ignored directories are never entered), every directory read
 * through a descriptor whose real path is checked against the roots (`Roots.walkGuard`), and the
 * pattern matched in linear time as the walk goes down (a directory no match can lie below is not
 * read). It yields to the event loop every few reads, and stops once `signal` aborts.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as IgnoreRules from "../../IgnoreRules.js"
import type * as Roots from "../../Roots.js"
import * as Order from "./order.js"
import type * as Pattern from "./pattern/glob.js"
import type { State } from "./pattern/automaton.js"

/** A file found by the walk. */
export interface WalkedFile {
  /** `prefix` + the path relative to the walk's root (with `/`): how results name it. */
  readonly display: string
  /** Modification time in ms (fractional), from `lstat`. */
  readonly mtimeMs: number
}

/**
 * Directory reads between two turns of the event loop. Each read is one short `getdents` call
 * made on the calling thread (a thread-pool round trip per directory cost more than the read);
 * yielding every so often keeps timers, I/O and interruption responsive during a large walk.
 */
const READS_PER_TURN = 64

/** `lstat` calls between two turns of the event loop, for the same reason. */
const STATS_PER_TURN = 2048

/** Entries judged by the ignore rules between two turns (a directory of many entries included). */
const ENTRIES_PER_TURN = 2048

/**
 * The literal every matching file name ends with, when the pattern's last segment is `*` and a
 * literal (`**\/*.ts` -> `.ts`): most files of a tree lack it and are dropped unmatched.
 */
export const fileSuffixOf = (pattern: string): string | undefined => {
  const last = pattern.slice(pattern.lastIndexOf("/") + 1)
  const match = /^\*([^*?[\]{}()!+@\\]+)$/.exec(last)
  return match?.[1]
}

const isIgnoreFileName = (name: string): boolean =>
  name === ".gitignore" || name === ".ignore" || name === ".rgignore" || name === IgnoreRules.gitDirName

const turn = () => new Promise<void>((resume) => setImmediate(resume))

const aborted = (signal: AbortSignal | undefined) => signal?.aborted === true

interface Pending {
  /** Path relative to the root, `""` for the root itself. */
  readonly relative: string
  /** The pattern's state after `relative + "/"`, when the pattern can be followed incrementally. */
  readonly state: State | undefined
}

/**
 * Lists the files below `root` (a directory this process can read by that path: the pinned one)
 * that match `glob` and survive the ignore rules. Hidden files are included, `.git` never is,
 * symlinks are not followed. Unreadable directories are skipped.
 */
export const walk = async (
  root: string,
  glob: Pattern.Glob,
  prefix: string,
  signal: AbortSignal | undefined,
  guard: Roots.WalkGuard,
  suffix: string | undefined
): Promise<Array<WalkedFile>> => {
  const tree = IgnoreRules.tree(root)
  const automaton = glob.automaton?.incremental
  const files: Array<WalkedFile> = []
  let reads = 0
  let stats = 0
  let entries = 0
  const startRelative = glob.base.join("/")
  let startState = automaton?.start()
  if (automaton !== undefined && startRelative !== "")
    startState = automaton.advance(startState!, `${startRelative}/`)
  const stack: Array<Pending> = [{ relative: startRelative, state: startState }]
  while (stack.length > 0) {
    if (signal?.aborted === true) break
    const { relative: dir, state } = stack.pop()!
    const absolute = dir === "" ? root : root + path.sep + dir
    if (++reads % READS_PER_TURN === 0) await turn()
    let dirents: Array<fs.Dirent>
    try {
      dirents = guard.readDirectory(absolute)
    } catch {
      continue
    }
    let names: Array<string> | undefined
    for (const dirent of dirents) if (isIgnoreFileName(dirent.name)) (names ??= []).push(dirent.name)
    const level = tree.levelOf(absolute, names ?? [])
    if (level === "excluded") continue
    for (const dirent of dirents) {
      if (++entries % ENTRIES_PER_TURN === 0) {
        await turn()
        if (aborted(signal)) break
      }
      if (dirent.name === IgnoreRules.gitDirName) continue
      const isDirectory = dirent.isDirectory()
      // symlinks, sockets, FIFOs and devices are never listed (symlinks are not followed)
      if (!isDirectory && (!dirent.isFile() || (suffix !== undefined && !dirent.name.endsWith(suffix))))
        continue
      const child = absolute + path.sep + dirent.name
      if (level !== undefined && IgnoreRules.judge(level, child, isDirectory) === "ignore") continue
      const relative = dir === "" ? dirent.name : `${dir}/${dirent.name}`
      if (isDirectory) {
        const next = automaton === undefined ? undefined : automaton.advance(state!, `${dirent.name}/`)
        // nothing below this directory can match
        if (next !== undefined && automaton!.dead(next)) continue
        stack.push({ relative, state: next })
        continue
      }
      const matched =
        automaton === undefined
          ? glob.matches(relative)
          : automaton.accepts(automaton.advance(state!, dirent.name))
      if (!matched) continue
      if (++stats % STATS_PER_TURN === 0) await turn()
      // a file that vanished since its directory was read is dropped
      const found = Order.statsOf(child)
      if (found === undefined || !found.isFile()) continue
      files.push({ display: prefix + relative, mtimeMs: found.mtimeMs })
    }
  }
  return files
}
