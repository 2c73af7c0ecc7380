/**
 * A spill file written while its stream runs (the recorder's disk mode): positioned synchronous
 * writes and reads on one descriptor, and the final head-and-tail copy composed into a sibling
 * that is renamed over it. Every path is taken through a checked descriptor of `tool-output/`
 * (see Scratch), so a link planted meanwhile cannot redirect a write.
 */
import * as nodeFs from "node:fs"
import * as path from "node:path"
import type { SpillFile } from "./recorder.js"

/** A checked, open `tool-output/`: its real path and the path to create through. */
export interface OutputDir {
  readonly fd: number
  readonly real: string
  readonly through: string
}

const writeAll = (fd: number, bytes: Uint8Array, position: number | null): void => {
  let written = 0
  while (written < bytes.length) {
    written += nodeFs.writeSync(
      fd,
      bytes,
      written,
      bytes.length - written,
      position === null ? null : position + written
    )
  }
}

/** The spill file open as `fd` at `file`; `openDir` opens (and checks) its directory again. */
export const make = (fd: number, file: string, openDir: () => OutputDir): SpillFile => {
  let open = true
  const name = path.basename(file)
  // hidden, and never a name the scratch gives out (those end in .log)
  const partName = `.${name}.part`
  const close = () => {
    if (!open) return
    open = false
    nodeFs.closeSync(fd)
  }
  const inDir = <A>(use: (dir: OutputDir) => A): A => {
    const dir = openDir()
    try {
      return use(dir)
    } finally {
      nodeFs.closeSync(dir.fd)
    }
  }
  return {
    path: file,
    writeAt: (bytes, position) => writeAll(fd, bytes, position),
    readAt: (position, length) => {
      const out = new Uint8Array(length)
      let filled = 0
      while (filled < length) {
        const read = nodeFs.readSync(fd, out, filled, length - filled, position + filled)
        if (read === 0) throw new Error(`${file} is shorter than what was written to it`)
        filled += read
      }
      return out
    },
    replace: (fill) =>
      inDir((dir) => {
        const part = path.join(dir.through, partName)
        const partFd = nodeFs.openSync(part, "wx", 0o600)
        try {
          fill((bytes) => writeAll(partFd, bytes, null))
        } finally {
          nodeFs.closeSync(partFd)
        }
        nodeFs.renameSync(part, path.join(dir.through, name))
      }),
    close,
    remove: () => {
      close()
      inDir((dir) => {
        for (const leftover of [name, partName])
          nodeFs.rmSync(path.join(dir.through, leftover), { force: true })
      })
    }
  }
}
