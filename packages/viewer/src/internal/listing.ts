/**
 * The spill listing of one session (rules V10): only regular files directly inside its
 * `tool-output/` directory, never following a link. The session directory and `tool-output/` are
 * opened with O_NOFOLLOW | O_DIRECTORY, each beneath the descriptor of the one above it
 * (`/proc/self/fd/N/<name>`), so a link planted in their place, or swapped in while the listing
 * runs, is refused rather than followed; each entry is `lstat`ed beneath that descriptor and only
 * a regular file with one link is listed (a spill file toolcap wrote never has a second name: a
 * hard link to a file elsewhere would show that file's size and time). Where /proc is missing,
 * each level is `lstat`ed and its real path checked after the listing instead.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"

/** One listed spill file. */
export interface Listed {
  readonly path: string
  readonly name: string
  readonly bytes: number
  readonly modifiedMs: number
}

const DIRECTORY_NO_FOLLOW = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW

const listedOf = (shown: string, name: string, stats: fs.Stats): ReadonlyArray<Listed> =>
  stats.isFile() && stats.nlink === 1
    ? [{ path: path.join(shown, name), name, bytes: stats.size, modifiedMs: Math.trunc(stats.mtimeMs) }]
    : []

/** Through descriptors: each level opened no-follow beneath the one above. */
const throughDescriptors = async (root: string, levels: ReadonlyArray<string>, shown: string) => {
  const held: Array<fsp.FileHandle> = []
  try {
    let at = root
    for (const level of [undefined, ...levels]) {
      const handle = await fsp.open(level === undefined ? at : path.join(at, level), DIRECTORY_NO_FOLLOW)
      held.push(handle)
      at = Procfs.descriptorPath(handle.fd)
    }
    const names = await fsp.readdir(at)
    const listed = await Promise.all(
      names.map(async (name) => {
        const stats = await fsp.lstat(path.join(at, name)).catch(() => undefined)
        return stats === undefined ? [] : listedOf(shown, name, stats)
      })
    )
    return listed.flat()
  } finally {
    for (const handle of held.toReversed()) await handle.close().catch(() => {})
  }
}

/** Without /proc: each level lstat-ed, the real path checked once the names are read. */
const throughPaths = async (root: string, levels: ReadonlyArray<string>, shown: string) => {
  let at = root
  for (const level of levels) {
    at = path.join(at, level)
    const stats = await fsp.lstat(at)
    if (!stats.isDirectory()) return []
  }
  const names = await fsp.readdir(at)
  const listed = await Promise.all(
    names.map(async (name) => {
      const stats = await fsp.lstat(path.join(at, name)).catch(() => undefined)
      return stats === undefined ? [] : listedOf(shown, name, stats)
    })
  )
  if ((await fsp.realpath(at)) !== path.join(await fsp.realpath(root), ...levels)) return []
  return listed.flat()
}

/**
 * The regular files of `<scratchRoot>/<session>/<outputDir>/`, none when a level is a link, not a
 * directory, or missing. Never fails.
 */
export const spillFiles = async (
  scratchRoot: string,
  session: string,
  outputDir: string
): Promise<ReadonlyArray<Listed>> => {
  const shown = path.join(scratchRoot, session, outputDir)
  const levels = [session, outputDir]
  return (
    Procfs.hasDescriptorPaths()
      ? throughDescriptors(scratchRoot, levels, shown)
      : throughPaths(scratchRoot, levels, shown)
  ).catch(() => [])
}

/** Forces the path fallback (for the tests of hosts without /proc). @internal */
export const spillFilesWithoutProc = (
  scratchRoot: string,
  session: string,
  outputDir: string
): Promise<ReadonlyArray<Listed>> =>
  throughPaths(scratchRoot, [session, outputDir], path.join(scratchRoot, session, outputDir)).catch(() => [])

/** The names of the directories directly inside `at` (not following links). */
const directoryEntries = async (at: string): Promise<Array<string>> =>
  (await fsp.readdir(at, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)

/**
 * The names of the real directories directly inside `scratchRoot` (itself opened no-follow where
 * /proc is there, else `lstat`ed), none when it is a link or missing. Never fails.
 */
export const directoryNames = async (scratchRoot: string): Promise<ReadonlyArray<string>> => {
  if (!Procfs.hasDescriptorPaths())
    return (await fsp.lstat(scratchRoot).catch(() => undefined))?.isDirectory() === true
      ? directoryEntries(scratchRoot).catch(() => [])
      : []
  const handle = await fsp.open(scratchRoot, DIRECTORY_NO_FOLLOW).catch(() => undefined)
  if (handle === undefined) return []
  try {
    return await directoryEntries(Procfs.descriptorPath(handle.fd)).catch(() => [])
  } finally {
    await handle.close().catch(() => {})
  }
}
