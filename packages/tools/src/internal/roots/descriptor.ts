/**
 * Containment checked on what was opened, not on a name: a path is opened first, then the opened
 * descriptor's real path (`/proc/self/fd/N`) is checked, and the bytes or the listing are read
 * through that same descriptor. A symlink swapped in at any component, at any moment, either
 * leads the open outside (and the check refuses the descriptor) or does not matter.
 *
 * Where `/proc` is not mounted, the fallback resolves the name before and after opening and
 * compares the opened file's identity with it: that narrows the race but cannot close it.
 */
import { Procfs } from "@toolcap/spill"
import * as fs from "node:fs"

/**
 * `O_PATH` (Linux): a descriptor that names a file without opening it for reading, so opening a
 * FIFO or a device outside the roots has no effect before the check refuses it. Node does not
 * export the constant; its value is the same on every Linux architecture Node supports.
 */
const O_PATH = 0o10000000

/** The path the kernel holds for an open descriptor (an errno error where it cannot be read). */
const realPathOfDescriptor = (fd: number): string => fs.readlinkSync(Procfs.descriptorPath(fd))

/** A denial: the opened file or directory lies outside every root. */
export class Outside extends Error {
  readonly code = "EOUTSIDE"
}

const sameFile = (a: fs.Stats, b: fs.Stats) => a.dev === b.dev && a.ino === b.ino

/**
 * Opens `file` for reading (`flags` without `O_NOFOLLOW`: every link is followed, then judged)
 * and returns the descriptor once its real path passed `contains`. Throws `Outside` for a file
 * outside the roots, an errno error otherwise (ENOENT, EACCES, ELOOP...).
 */
export const openWithin = (file: string, flags: number, contains: (real: string) => boolean): number => {
  const readFlags = flags & ~fs.constants.O_NOFOLLOW
  if (!Procfs.hasDescriptorPaths()) {
    const before = fs.realpathSync.native(file)
    if (!contains(before)) throw new Outside(file)
    const fd = fs.openSync(before, readFlags | fs.constants.O_NOFOLLOW)
    try {
      const after = fs.realpathSync.native(file)
      if (!contains(after) || !sameFile(fs.fstatSync(fd), fs.statSync(after))) throw new Outside(file)
      return fd
    } catch (error) {
      fs.closeSync(fd)
      throw error
    }
  }
  const handle = fs.openSync(file, O_PATH | (flags & fs.constants.O_DIRECTORY))
  try {
    if (!contains(realPathOfDescriptor(handle))) throw new Outside(file)
    const identity = fs.fstatSync(handle)
    // a FIFO, socket or device is described by the caller from this, never opened
    if (!identity.isFile() && !identity.isDirectory()) {
      const error = new Error("not a regular file") as NodeJS.ErrnoException
      error.code = "ESPECIAL"
      throw Object.assign(error, { stats: identity })
    }
    // reopening the descriptor's own /proc entry opens exactly the file that was checked
    const fd = fs.openSync(Procfs.descriptorPath(handle), readFlags)
    if (!sameFile(fs.fstatSync(fd), identity)) {
      fs.closeSync(fd)
      throw new Outside(file)
    }
    return fd
  } finally {
    fs.closeSync(handle)
  }
}

/**
 * Lists a directory after checking, on the open descriptor, that it lies inside the roots; the
 * listing is read through that descriptor. Throws `Outside` or an errno error.
 */
export const readDirectoryWithin = (dir: string, contains: (real: string) => boolean): Array<fs.Dirent> => {
  if (!Procfs.hasDescriptorPaths()) {
    if (!contains(fs.realpathSync.native(dir))) throw new Outside(dir)
    const entries = fs.readdirSync(dir, { withFileTypes: true })
    if (!contains(fs.realpathSync.native(dir))) throw new Outside(dir)
    return entries
  }
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)
  try {
    if (!contains(realPathOfDescriptor(fd))) throw new Outside(dir)
    const entries = fs.readdirSync(Procfs.descriptorPath(fd), { withFileTypes: true })
    // a directory exchanged in for the read (renameat2) and back out at once is outside now
    if (!contains(realPathOfDescriptor(fd))) throw new Outside(dir)
    return entries
  } finally {
    fs.closeSync(fd)
  }
}

/** Whether a held descriptor's real path is still the one expected of it. */
const inPlace = ({ expected, fd }: { readonly fd: number; readonly expected: string }): boolean =>
  Procfs.descriptorTarget(fd) === expected

/**
 * Which of `relatives` (files below the directory `base` names, `/`-separated) are, by the
 * descriptor of each, exactly where `realBase` + the relative path says: each is opened without
 * following its last component and its real path read at once, and again once all were (an
 * exchanger that put an outside directory in a listed one's place for the listing has swapped it
 * back by then, and the descriptor names the outside place). Answers the indexes that passed
 * both; a file gone since it was listed fails. Without `/proc`: every index.
 */
export const confirmWithin = (
  base: string,
  realBase: string,
  relatives: ReadonlyArray<string>
): Array<number> => {
  if (!Procfs.hasDescriptorPaths()) return relatives.map((_, index) => index)
  const held: Array<{ readonly index: number; readonly fd: number; readonly expected: string }> = []
  try {
    relatives.forEach((relative, index) => {
      let fd: number
      try {
        fd = fs.openSync(`${base}/${relative}`, O_PATH | fs.constants.O_NOFOLLOW)
      } catch {
        return
      }
      const expected = `${realBase}/${relative}`
      held.push({ index, fd, expected })
    })
    const first = held.filter(inPlace)
    return first.filter(inPlace).map((entry) => entry.index)
  } finally {
    for (const { fd } of held) fs.closeSync(fd)
  }
}
