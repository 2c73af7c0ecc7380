/**
 * The searched directory, held by a descriptor for the length of a call. Glob and Grep resolve
 * `path` once, open it, check that the descriptor's real path is the one resolved (inside a root),
 * and then reach everything below it through that descriptor: ripgrep starts in it (its working
 * directory is `/proc/<host>/fd/<n>`, and every path it opens is relative to it), and the host's
 * own walk (the fallback without Landlock) reads through `/proc/self/fd/<n>/…`; names always come
 * from one of those, only dates are read by the real path. A directory exchanged into the path's place while
 * the call runs (`renameat2(RENAME_EXCHANGE)`, a rename) is therefore never read; the one that was
 * opened, moved out of the roots, is refused by the kernel (Landlock checks each open against
 * where the directory is then). After the listing, the descriptor's real path is read again: a
 * directory that is no longer where it was resolved fails the call instead of answering names
 * of a place outside.
 *
 * Without `/proc/self/fd` (not Linux) nothing is pinned: paths are used by name, as before.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { Procfs } from "@toolcap/spill"
import { ToolError } from "@toolcap/limits"
import type * as Roots from "../../Roots.js"

/** `O_PATH` (Linux): names the directory without opening it for reading; same on every architecture. */
const O_PATH = 0o10000000

/** A directory held for a call. */
export interface Pinned {
  /** How this process reaches the directory: the pinned path, or its real path when nothing is pinned. */
  readonly local: string
  /** How another process (ripgrep) reaches it: `/proc/<host>/fd/<n>`, or its real path. */
  readonly shared: string
  /** Device and inode of what was pinned. */
  readonly identity: { readonly dev: number; readonly ino: number } | undefined
  /** Whether the pinned directory is still at the real path it was resolved to. */
  readonly inPlace: () => boolean
}

const moved = (target: Roots.Resolved) =>
  new ToolError.ToolPathDenied({
    path: target.requested,
    reason: "it was moved or replaced while it was being searched (search again once it stays in place)"
  })

const unpinned = (target: Roots.Resolved): Pinned => ({
  local: target.realPath,
  shared: target.realPath,
  identity: undefined,
  inPlace: () => true
})

/** Opens `target` (a resolved directory) for the call's scope; fails when it is no longer in place. */
export const pin = (target: Roots.Resolved): Effect.Effect<Pinned, ToolError.ToolPathDenied, Scope.Scope> =>
  Procfs.hasDescriptorPaths()
    ? Effect.acquireRelease(
        Effect.try({
          try: () =>
            fs.openSync(target.realPath, O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW),
          catch: () => moved(target)
        }),
        (fd) => Effect.sync(() => fs.closeSync(fd))
      ).pipe(
        Effect.flatMap((fd) => {
          const local = Procfs.descriptorPath(fd)
          const inPlace = () => Procfs.descriptorTarget(fd) === target.realPath
          if (!inPlace()) return Effect.fail(moved(target))
          const stats = fs.fstatSync(fd)
          return Effect.succeed<Pinned>({
            local,
            shared: Procfs.descriptorPath(fd, process.pid),
            identity: { dev: stats.dev, ino: stats.ino },
            inPlace
          })
        })
      )
    : Effect.succeed(unpinned(target))

/** Fails the call when the pinned directory left its place while the call used it. */
export const stillInPlace = (
  pinned: Pinned,
  target: Roots.Resolved
): Effect.Effect<void, ToolError.ToolPathDenied> =>
  pinned.inPlace() ? Effect.void : Effect.fail(moved(target))
