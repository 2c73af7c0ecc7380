// The files of a SQLite store are ours: the database, its WAL, its shared-memory index and its
// rollback journal are never reached through a link, so a link planted beside the store (a Bash
// call can plant one) can neither create a file outside its directory nor change a file's bytes
// there.
//
// SQLite resolves every symbolic link in a database's name before it opens the file, then opens the
// resolved name, and its companions (named after the resolved name), with O_NOFOLLOW. So: the
// directory is resolved here (it is the trust root, like the data dir it usually is), the file and
// its companions are checked with lstat before the open (a symbolic link, anything but a regular
// file, or a second hard link is refused), and after the open the name SQLite resolved must be the
// one checked and the files must still pass. What remains is the window between the check and
// SQLite's own resolution: a link swapped in there is followed by SQLite, caught by the check after
// the open (nothing is written through it), but a link to a missing file has then made that file,
// empty. The package README says so.
import * as fs from "node:fs"
import * as path from "node:path"

/** The files SQLite keeps beside a database, named after it. */
const COMPANIONS = ["", "-wal", "-shm", "-journal"] as const

export interface Located {
  /** The database file under its directory's real path: the name SQLite opens. */
  readonly file: string
  /** Whether the directory exists yet (a store in a new directory creates it on its first save). */
  readonly directoryExists: boolean
  /** Why the directory cannot be made (it is a file, or its nearest existing ancestor is read-only). */
  readonly problem?: string | undefined
}

/** `lstat` that answers undefined for a name that does not exist (or has a file above it). */
const lstatOf = (name: string): fs.Stats | undefined => {
  try {
    return fs.lstatSync(name, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/** Why a directory that does not exist yet could not be created, checked without creating it. */
const uncreatable = (directory: string): string | undefined => {
  let existing = directory
  while (lstatOf(existing) === undefined && path.dirname(existing) !== existing)
    existing = path.dirname(existing)
  try {
    if (!fs.statSync(existing).isDirectory()) return `${existing} is not a directory`
    fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK)
    return undefined
  } catch (error) {
    return `${existing} cannot hold the directory ${directory} (${error instanceof Error ? error.message : String(error)})`
  }
}

/** Where a store's file is: its directory resolved (links above it are the host's choice). */
export const locate = (filename: string): Located => {
  const absolute = path.resolve(filename)
  const directory = path.dirname(absolute)
  try {
    const real = fs.realpathSync.native(directory)
    const file = path.join(real, path.basename(absolute))
    if (!fs.statSync(real).isDirectory())
      return { file, directoryExists: false, problem: `${directory} is not a directory` }
    return { file, directoryExists: true }
  } catch {
    return { file: absolute, directoryExists: false, problem: uncreatable(directory) }
  }
}

/** Why the file at `name` (which exists) is not one of ours to open, or undefined. */
const problemOf = (name: string, stats: fs.Stats): string | undefined => {
  if (stats.isSymbolicLink()) {
    const target = (() => {
      try {
        return fs.readlinkSync(name)
      } catch {
        return "?"
      }
    })()
    return `${name} is a symbolic link (to ${target})`
  }
  if (!stats.isFile()) return `${name} is not a regular file`
  if (stats.nlink > 1) return `${name} has ${stats.nlink} hard links`
  return undefined
}

/** The first problem of the database file or its companions, none of which needs to exist. */
export const check = (file: string): string | undefined => {
  for (const suffix of COMPANIONS) {
    const name = `${file}${suffix}`
    const stats = lstatOf(name)
    const problem = stats === undefined ? undefined : problemOf(name, stats)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** Whether the database file exists (as a name: a link counts, and is refused by `check`). */
export const exists = (file: string): boolean => lstatOf(file) !== undefined

/**
 * After the open: the problem when SQLite resolved `file` to another name (a link was swapped in
 * after the check) or the files no longer pass the check.
 */
export const checkOpened = (file: string, opened: string): string | undefined =>
  opened !== file ? `${file} was swapped for a link to ${opened} while the store opened it` : check(file)

/** The detail of a refusal: what is wrong and what to do. */
export const refusal = (problem: string): string =>
  `${problem}: toolcap opens the files of its store only as regular files of their own, never through a link, and wrote nothing through it; remove it (or name the real file as the store)`
