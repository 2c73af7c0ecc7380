/**
 * Real temp directories for the scratch tests, and a real read-only directory.
 *
 * Tests run as root in CI, and root ignores permission bits, so `chmod 0500` makes no read-only
 * directory there. In order, the first mechanism that really refuses a write is used:
 *  1. not root: `chmod 0500` (permission bits bind an ordinary user);
 *  2. a read-only tmpfs mount (`mount -t tmpfs -o ro`): writes fail with EROFS even for root;
 *  3. `chattr +i` (immutable directory): writes fail with EPERM even for root.
 * Each is verified with a probe write; if none refuses, `readOnlyDir` fails the test.
 */
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const tempDir = (prefix = "toolcap-spill-") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), prefix))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

const run = (cmd: string, args: Array<string>): boolean =>
  spawnSync(cmd, args, { stdio: "ignore" }).status === 0

const refusesWrites = (dir: string): boolean => {
  const probe = path.join(dir, ".probe")
  try {
    fs.writeFileSync(probe, "x")
    fs.rmSync(probe)
    return false
  } catch {
    return true
  }
}

export interface ReadOnlyDir {
  readonly path: string
  readonly mechanism: "chmod" | "tmpfs-ro" | "chattr+i"
}

/**
 * A real directory that refuses writes. `prepare` runs while it is still writable, to lay out
 * what should already exist (e.g. a session directory).
 */
export const readOnlyDir = (prepare: (dir: string) => void = () => {}) =>
  Effect.acquireRelease(
    Effect.sync((): ReadOnlyDir & { readonly undo: () => void } => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-ro-"))
      const uid = process.getuid?.() ?? 0
      if (uid !== 0) {
        prepare(dir)
        fs.chmodSync(dir, 0o500)
        for (const entry of fs.readdirSync(dir, { recursive: true, encoding: "utf8" })) {
          fs.chmodSync(path.join(dir, entry), 0o500)
        }
        if (refusesWrites(dir)) return { path: dir, mechanism: "chmod", undo: () => fs.chmodSync(dir, 0o700) }
        fs.chmodSync(dir, 0o700)
      }
      if (run("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", dir])) {
        prepare(dir)
        if (run("mount", ["-o", "remount,ro", dir]) && refusesWrites(dir)) {
          return { path: dir, mechanism: "tmpfs-ro", undo: () => void run("umount", [dir]) }
        }
        run("umount", [dir])
      }
      prepare(dir)
      const entries = fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).map((e) => path.join(dir, e))
      if (run("chattr", ["+i", ...entries, dir]) && refusesWrites(dir)) {
        return { path: dir, mechanism: "chattr+i", undo: () => void run("chattr", ["-i", dir, ...entries]) }
      }
      run("chattr", ["-i", dir, ...entries])
      fs.rmSync(dir, { recursive: true, force: true })
      throw new Error("no mechanism made a read-only directory here (tried chmod, tmpfs ro mount, chattr +i)")
    }),
    (ro) =>
      Effect.sync(() => {
        ro.undo()
        fs.rmSync(ro.path, { recursive: true, force: true })
      })
  )

/**
 * A real directory on a file system of `bytes` bytes, so writes past that fail with ENOSPC
 * (a tmpfs mount; tests run as root in CI). Unmounted and removed afterwards.
 */
export const smallDisk = (bytes: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-full-"))
      if (!run("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700`, "tmpfs", dir])) {
        fs.rmSync(dir, { recursive: true, force: true })
        throw new Error("could not mount a small tmpfs (needs root, as in CI) to fill a disk")
      }
      return dir
    }),
    (dir) =>
      Effect.sync(() => {
        run("umount", [dir])
        fs.rmSync(dir, { recursive: true, force: true })
      })
  )
