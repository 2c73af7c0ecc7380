/**
 * Ignore files with git's semantics, decided the way ripgrep decides them (rules S2–S4), so that
 * Glob's walk and Grep's ripgrep agree file for file.
 *
 * Each directory of a walk may hold `.rgignore`, `.ignore`, `.gitignore` and `.git/info/exclude`;
 * their rules apply to paths below that directory, matched relative to it. For a path, each kind
 * is asked from the deepest directory up and the first directory whose rules match decides that
 * kind (the last matching rule of a file wins, `!` re-includes). Kinds rank
 * `.rgignore` > `.ignore` > `.gitignore` > `.git/info/exclude`. A walk never descends into an
 * ignored directory and never into `.git`. Git rules apply whether or not a repository exists
 * (ripgrep's `--no-require-git`); ignore files above the walk's root never apply
 * (`--no-ignore-parent`), and neither does the user's global git excludes file.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Gitignore from "./internal/search/pattern/gitignore.js"

/**
 * How the rules of one kind judge a path.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = "ignore" | "whitelist" | "none"

/**
 * The ignore files of a walk, in ripgrep's order of precedence (highest first).
 *
 * @since 0.1.0
 * @category models
 */
export const ignoreFileNames = [".rgignore", ".ignore", ".gitignore"] as const

/**
 * The name that is never walked into nor listed.
 *
 * @since 0.1.0
 * @category models
 */
export const gitDirName = ".git"

type Kind = 0 | 1 | 2 | 3
const KINDS = 4

/**
 * One ignore file's rules. A path is judged by these rules ALONE (the last rule that matches it
 * decides): a parent directory these rules exclude does not decide for its children, because
 * another ignore file may have re-included that directory (ripgrep and git judge each path by
 * itself and get the parent rule from never walking into an excluded directory). All the rules
 * of a file are matched together, in time linear in the path (`internal/search/pattern`), so no
 * ignore file can stall a walk, whatever it holds and however long it is.
 */
interface Matcher {
  readonly judge: (relative: string, isDirectory: boolean) => Verdict
}

const compile = (text: string): Matcher | undefined => Gitignore.compileFile(text)

/**
 * The ignore rules in force in one directory: its own files and, through `parent`, those of the
 * directories above it up to the walk's root.
 *
 * @since 0.1.0
 * @category models
 */
export interface Level {
  /** Absolute directory, without a trailing separator (except the file system root). */
  readonly dir: string
  /** The nearest directory above with rules of its own. */
  readonly parent: Level | undefined
  /** Matchers per kind: `.rgignore`, `.ignore`, `.gitignore`, `.git/info/exclude`. */
  readonly matchers: ReadonlyArray<Matcher | undefined>
}

/**
 * Bytes of one ignore file read at most (a decision): the host compiles every line it reads, and
 * real ignore files are a few kilobytes; the lines of a larger one past this are not read
 * (ripgrep, in its own process, reads them all: only such files can make Glob and Grep differ).
 */
const MAX_IGNORE_FILE_BYTES = 256 * 1024

const readText = (file: string): string | undefined => {
  let fd: number | undefined
  try {
    // never waits: an ignore file that is a FIFO (or a device) would block the host on its open
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const stats = fs.fstatSync(fd)
    if (!stats.isFile()) return undefined
    const buffer = Buffer.alloc(Math.min(MAX_IGNORE_FILE_BYTES, stats.size))
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0)
    return buffer.toString("utf8", 0, read)
  } catch {
    // unreadable or absent ignore files are skipped, as ripgrep does
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * The level of `dir` below `parent`. `names` are the directory's entry names when a walk already
 * read them; without them the ignore files are probed on disk. Answers `parent` itself when `dir`
 * holds no ignore rules, so chains only link directories that have some.
 *
 * @since 0.1.0
 * @category constructors
 */
export const enter = (
  parent: Level | undefined,
  dir: string,
  names?: ReadonlyArray<string>
): Level | undefined => {
  // most directories hold no ignore file: nothing to read, nothing to allocate
  if (names !== undefined && names.length === 0) return parent
  const has = (name: string) => names === undefined || names.includes(name)
  const matchers: Array<Matcher | undefined> = []
  let any = false
  for (const name of ignoreFileNames) {
    const text = has(name) ? readText(path.join(dir, name)) : undefined
    const matcher = text === undefined ? undefined : compile(text)
    matchers.push(matcher)
    any ||= matcher !== undefined
  }
  const exclude = has(gitDirName) ? readText(path.join(dir, gitDirName, "info", "exclude")) : undefined
  const excludeMatcher = exclude === undefined ? undefined : compile(exclude)
  matchers.push(excludeMatcher)
  any ||= excludeMatcher !== undefined
  return any ? { dir, parent, matchers } : parent
}

const relativeTo = (dir: string, absolute: string): string | undefined => {
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep
  if (!absolute.startsWith(prefix)) return undefined
  const relative = absolute.slice(prefix.length)
  return path.sep === "/" ? relative : relative.split(path.sep).join("/")
}

/**
 * The verdict of every rule in force at `level` for an absolute path directly or deeply below it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const judge = (level: Level | undefined, absolute: string, isDirectory: boolean): Verdict => {
  if (level === undefined) return "none"
  const found: Array<Verdict> = ["none", "none", "none", "none"]
  let open = KINDS
  for (let at: Level | undefined = level; at !== undefined && open > 0; at = at.parent) {
    const relative = relativeTo(at.dir, absolute)
    if (relative === undefined || relative === "") continue
    for (let kind = 0 as Kind; kind < KINDS; kind = (kind + 1) as Kind) {
      if (found[kind] !== "none") continue
      const matcher = at.matchers[kind]
      if (matcher === undefined) continue
      const verdict = matcher.judge(relative, isDirectory)
      if (verdict !== "none") {
        found[kind] = verdict
        open--
      }
    }
  }
  for (const verdict of found) if (verdict !== "none") return verdict
  return "none"
}

/**
 * Whether a walk leaves out the entry `name` at `absolute` (an ignored path, or `.git`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const isExcluded = (
  level: Level | undefined,
  absolute: string,
  name: string,
  isDirectory: boolean
): boolean => name === gitDirName || judge(level, absolute, isDirectory) === "ignore"

/**
 * A walk's ignore state: the level of every directory entered, built lazily from the root (whose
 * own ignore files apply; those above it do not).
 *
 * @since 0.1.0
 * @category models
 */
export interface Tree {
  readonly root: string
  /**
   * The level in force inside `dir`, or `"excluded"` when `dir` (or a directory above it, up to the
   * root) is ignored or is `.git`. `names` saves probing when the caller has just read `dir`.
   */
  readonly levelOf: (dir: string, names?: ReadonlyArray<string>) => Level | undefined | "excluded"
  /** Whether a file at `absolute` (below the root) survives the ignore rules. */
  readonly keepsFile: (absolute: string) => boolean
}

/**
 * Starts the ignore state of a walk rooted at the real directory `root`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tree = (root: string): Tree => {
  // `null`: entered, no rules in force; a directory is looked up far more often than entered
  const levels = new Map<string, Level | null | "excluded">()
  const rootPrefix = root.endsWith(path.sep) ? root : root + path.sep
  const levelOf = (dir: string, names?: ReadonlyArray<string>): Level | undefined | "excluded" => {
    const known = levels.get(dir)
    if (known !== undefined) return known === null ? undefined : known
    let result: Level | undefined | "excluded"
    if (dir === root) {
      result = enter(undefined, dir, names)
    } else if (!dir.startsWith(rootPrefix)) {
      result = "excluded"
    } else {
      const cut = dir.lastIndexOf(path.sep)
      const parent = levelOf(cut === 0 ? path.sep : dir.slice(0, cut))
      result =
        parent === "excluded" || isExcluded(parent, dir, dir.slice(cut + 1), true)
          ? "excluded"
          : enter(parent, dir, names)
    }
    levels.set(dir, result === undefined ? null : result)
    return result
  }
  const keepsFile = (absolute: string): boolean => {
    const level = levelOf(path.dirname(absolute))
    return level !== "excluded" && !isExcluded(level, absolute, path.basename(absolute), false)
  }
  return { root, levelOf, keepsFile }
}
