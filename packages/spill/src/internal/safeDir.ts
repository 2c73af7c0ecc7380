/**
 * The scratch directories are real directories owned by this process's user, with no symlink
 * between the data dir and a spill file: a link planted at `<dataDir>/scratch/<session>` (Bash can
 * plant one) must neither widen what Read and Grep may reach as "scratch" nor redirect spill
 * writes. The data dir itself may be a symlink (a host's choice); everything below it is checked.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** What is wrong with a level of the chain, for the error message. */
export type Problem = string

const ownUid = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined)

/** Why `dir` (which exists) is not a real directory of ours, or undefined when it is. */
export const problemOf = (dir: string, stats: fs.Stats): Problem | undefined => {
  if (stats.isSymbolicLink()) return `${dir} is a symlink, not a directory`
  if (!stats.isDirectory()) return `${dir} is not a directory`
  const uid = ownUid()
  if (uid !== undefined && stats.uid !== uid) return `${dir} belongs to another user (uid ${stats.uid})`
  return undefined
}

/**
 * Checks `<dataDir>/scratch/<session>[/<below>...]` level by level without following links.
 * Answers the real path (the data dir resolved, the rest as named) and how many levels exist, or
 * the first problem. Levels that do not exist yet are fine (they are created on the first spill).
 */
export const verifyChain = (
  sessionDir: string,
  below: ReadonlyArray<string> = []
):
  | { readonly ok: true; readonly real: string; readonly existing: number; readonly levels: Array<string> }
  | { readonly ok: false; readonly problem: Problem } => {
  const absolute = path.resolve(sessionDir)
  const dataDir = path.dirname(path.dirname(absolute))
  let base: string
  try {
    base = fs.realpathSync.native(dataDir)
  } catch {
    base = dataDir
  }
  const levels: Array<string> = []
  let current = base
  for (const name of [path.basename(path.dirname(absolute)), path.basename(absolute), ...below]) {
    current = path.join(current, name)
    levels.push(current)
  }
  let existing = 0
  for (const level of levels) {
    const stats = fs.lstatSync(level, { throwIfNoEntry: false })
    if (stats === undefined) break
    const problem = problemOf(level, stats)
    if (problem !== undefined) return { ok: false, problem }
    existing++
  }
  return { ok: true, real: levels[1]!, existing, levels }
}
