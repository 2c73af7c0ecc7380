/**
 * Where Read, Glob and Grep may look (rules P1–P4): the workspace, the session's scratch
 * directory (where spill files live) and the external roots the host approved. A path is resolved
 * through every symlink BEFORE the containment check, so a link pointing out of the workspace is
 * denied and a link between two places inside it is followed.
 *
 * The check that guards bytes is made where they are read: `openFile` and `readDirectory` check
 * the real path of the opened descriptor and read through it, so a symlink swapped in while a call
 * runs cannot lead a read outside (`resolve` alone is a name check, used to answer early and to
 * name results). A denial names the requested path and the rule, never where a link points, and a
 * path is denied whether or not its outside target exists.
 *
 * Relative paths resolve against the workspace root. Results name workspace paths relative to the
 * workspace root (with `/`), scratch and external paths absolutely.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as path from "node:path"
import { Budgets, InputBounds, PathQuote, ToolError } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Workspace } from "./Workspace.js"
import * as Descriptor from "./internal/roots/descriptor.js"

/**
 * The kind of root a path lies in.
 *
 * @since 0.1.0
 * @category models
 */
export type RootKind = "workspace" | "scratch" | "external"

/**
 * A root: its kind and its real absolute path.
 *
 * @since 0.1.0
 * @category models
 */
export interface Root {
  readonly kind: RootKind
  readonly path: string
}

/**
 * A resolved, contained, existing path.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  /** The path as the caller gave it. */
  readonly requested: string
  /** The real absolute path (every symlink resolved). */
  readonly realPath: string
  /** The root containing it (the innermost one when roots nest). */
  readonly root: Root
  /** The path as results name it: workspace-relative with `/`, or absolute. */
  readonly display: string
  /** `stat` of the real path. */
  readonly stats: fs.Stats
}

/**
 * Symlinks followed while resolving one path before it counts as a loop (the kernel's own limit,
 * MAXSYMLINKS).
 */
const MAX_SYMLINK_HOPS = 40

/** The components still pending (kept next-last), in path order. */
const inOrder = (pending: ReadonlyArray<string>): Array<string> => {
  const parts: Array<string> = []
  for (let at = pending.length - 1; at >= 0; at--) parts.push(pending[at]!)
  return parts
}

/**
 * The real path of a path that may not exist yet: resolved component by component, each symlink
 * followed (a dangling one too, to where it points), and the rest appended once a component is
 * missing (the scratch directory is only created on the first spill). A link leading outside is
 * therefore judged by where it leads whether or not its target exists. Linear in the path's
 * length (plus the links it meets, at most `MAX_SYMLINK_HOPS`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const realPathOf = (absolute: string): { readonly real: string; readonly exists: boolean } => {
  try {
    return { real: fs.realpathSync.native(absolute), exists: true }
  } catch {
    // missing, dangling, a loop, unreadable: walk it ourselves
  }
  // components still to resolve, the next one last
  const pending = absolute.split(path.sep).filter((part) => part !== "" && part !== ".")
  pending.reverse()
  let current: string = path.sep
  let hops = 0
  while (pending.length > 0) {
    const part = pending.pop()!
    if (part === ".") continue
    if (part === "..") {
      current = path.dirname(current)
      continue
    }
    const next = current === path.sep ? current + part : current + path.sep + part
    let stats: fs.Stats | undefined
    try {
      stats = fs.lstatSync(next, { throwIfNoEntry: false })
    } catch {
      stats = undefined
    }
    if (stats?.isSymbolicLink() === true && hops < MAX_SYMLINK_HOPS) {
      hops++
      let target: string
      try {
        target = fs.readlinkSync(next)
      } catch {
        return { real: path.join(next, ...inOrder(pending)), exists: false }
      }
      if (path.isAbsolute(target)) current = path.sep
      const parts = target.split(path.sep).filter((piece) => piece !== "" && piece !== ".")
      for (let at = parts.length - 1; at >= 0; at--) pending.push(parts[at]!)
      continue
    }
    current = next
    // a missing component, a loop, or a non-directory with more to come: the rest is lexical
    if (stats === undefined || stats.isSymbolicLink() || (pending.length > 0 && !stats.isDirectory())) {
      return { real: path.join(current, ...inOrder(pending)), exists: false }
    }
  }
  return { real: current, exists: true }
}

const isMissing = (error: unknown): boolean => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === "ENOENT" || code === "ENOTDIR"
}

/**
 * Whether `candidate` is `root` or lies below it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const isWithin = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)

/**
 * The roots in force: the workspace, the session scratch directory, the approved external roots.
 *
 * @since 0.1.0
 * @category constructors
 */
export const roots: Effect.Effect<ReadonlyArray<Root>, never, Workspace | Scratch.Scratch> = Effect.gen(
  function* () {
    const workspace = yield* Workspace
    const scratch = yield* Scratch.Scratch
    return [
      { kind: "workspace", path: workspace.root },
      ...scratchRoots(scratch.sessionDir),
      ...workspace.approvedExternalRoots.map((root): Root => ({ kind: "external", path: root }))
    ]
  }
)

/**
 * The scratch root, unless a symlink or a foreign directory sits between the data dir and the
 * session directory: then nothing is reachable as scratch (a planted link must not widen the roots).
 */
const scratchRoots = (sessionDir: string): ReadonlyArray<Root> => {
  const verified = Scratch.verifySessionDir(sessionDir)
  return Either.isRight(verified) ? [{ kind: "scratch", path: verified.right }] : []
}

const kindRank: Record<RootKind, number> = { workspace: 0, scratch: 1, external: 2 }

/**
 * The innermost root containing a real path, if any.
 *
 * @since 0.1.0
 * @category constructors
 */
export const containing = (all: ReadonlyArray<Root>, real: string): Root | undefined => {
  let best: Root | undefined
  for (const root of all) {
    if (!isWithin(root.path, real)) continue
    if (
      best === undefined ||
      root.path.length > best.path.length ||
      (root.path.length === best.path.length && kindRank[root.kind] < kindRank[best.kind])
    ) {
      best = root
    }
  }
  return best
}

/**
 * How results name a real path inside a root.
 *
 * @since 0.1.0
 * @category constructors
 */
export const display = (root: Root, real: string): string => {
  if (root.kind !== "workspace") return real
  const relative = path.relative(root.path, real)
  return relative === "" ? "." : relative.split(path.sep).join("/")
}

/**
 * What to put before a path relative to the directory `resolved` to name it in results: the
 * directory's own name and a `/` (nothing for the workspace root itself).
 *
 * @since 0.1.0
 * @category constructors
 */
export const displayPrefix = (resolved: Resolved): string =>
  resolved.display === "." ? "" : resolved.display.endsWith("/") ? resolved.display : `${resolved.display}/`

/**
 * Checks the shape of a path argument: a non-empty string without NUL bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkPathArgument = (
  tool: string,
  field: string,
  value: string
): Effect.Effect<string, ToolError.ToolInvalidInput> => {
  if (value.length === 0) {
    return Effect.fail(
      new ToolError.ToolInvalidInput({
        tool,
        field,
        reason: "the path is empty; give a file or directory path"
      })
    )
  }
  if (value.includes("\0")) {
    return Effect.fail(
      new ToolError.ToolInvalidInput({
        tool,
        field,
        reason: "the path contains a NUL byte, which no file name can hold; remove it"
      })
    )
  }
  return Effect.succeed(value)
}

/** The one denial: the requested path and the rule, never where a link leads. */
const denied = (requested: string, workspace: { readonly root: string }) =>
  new ToolError.ToolPathDenied({
    path: requested,
    reason: `it lies outside the workspace ${PathQuote.quote(workspace.root)}, the session scratch directory and the approved external roots`
  })

/**
 * Resolves a path argument: shape check, symlinks resolved, containment in a root, existence.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (
  tool: string,
  field: string,
  requested: string
): Effect.Effect<
  Resolved,
  ToolError.ToolInvalidInput | ToolError.ToolPathDenied | ToolError.ToolNotFound,
  Budgets.Budgets | Workspace | Scratch.Scratch
> =>
  Effect.gen(function* () {
    yield* checkPathArgument(tool, field, requested)
    const budgets = yield* Budgets.Budgets
    yield* InputBounds.checkPath(tool, field, requested, budgets)
    const workspace = yield* Workspace
    const all = yield* roots
    const lexical = path.resolve(workspace.root, requested)
    const { real, exists } = realPathOf(lexical)
    const root = containing(all, real)
    if (root === undefined) return yield* denied(requested, workspace)
    const shown = display(root, real)
    if (!exists) return yield* new ToolError.ToolNotFound({ path: shown })
    const stats = yield* Effect.try({
      try: () => fs.statSync(real),
      catch: (error) =>
        isMissing(error)
          ? new ToolError.ToolNotFound({ path: shown })
          : new ToolError.ToolPathDenied({
              path: requested,
              reason: `it cannot be examined (${(error as NodeJS.ErrnoException).code ?? String(error)})`
            })
    })
    return { requested, realPath: real, root, display: shown, stats }
  })

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code

/**
 * Opens a resolved file for reading (`flags`; `O_NOFOLLOW` is ignored: every link is followed,
 * then judged) and answers the descriptor only once the real path of what was opened lies inside
 * a root. A symlink swapped in after `resolve` is refused with the same denial as any outside
 * path. The caller closes the descriptor.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openFile = (
  tool: string,
  target: Resolved,
  flags: number
): Effect.Effect<
  number,
  ToolError.ToolPathDenied | ToolError.ToolNotFound | ToolError.ToolIsDirectory | ToolError.ToolInvalidInput,
  Workspace | Scratch.Scratch
> =>
  Effect.gen(function* () {
    const workspace = yield* Workspace
    const all = yield* roots
    return yield* Effect.try({
      try: () => Descriptor.openWithin(target.realPath, flags, (real) => containing(all, real) !== undefined),
      catch: (error) => {
        const code = errnoOf(error)
        if (error instanceof Descriptor.Outside || code === "ELOOP")
          return denied(target.requested, workspace)
        if (code === "ENOENT" || code === "ENOTDIR")
          return new ToolError.ToolNotFound({ path: target.display })
        if (code === "EISDIR") return new ToolError.ToolIsDirectory({ path: target.display })
        if (code === "ESPECIAL") {
          return new ToolError.ToolInvalidInput({
            tool,
            field: "path",
            reason: `${PathQuote.quote(target.display)} is not a regular file; ${tool} only reads regular files (reading it could block or never end)`
          })
        }
        return new ToolError.ToolPathDenied({
          path: target.requested,
          reason: `it cannot be opened (${code ?? "error"})`
        })
      }
    })
  })

/**
 * Reads up to `length` bytes of a file from byte `from`, opened as `openFile` opens it (its real
 * path checked on the descriptor against `all`); undefined when it is gone, unreadable or outside.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readRangeWithin =
  (all: ReadonlyArray<Root>) =>
  (absolute: string, from: number, length: number): Buffer | undefined => {
    let fd: number
    try {
      fd = Descriptor.openWithin(
        absolute,
        fs.constants.O_RDONLY,
        (real) => containing(all, real) !== undefined
      )
    } catch {
      return undefined
    }
    try {
      const buffer = Buffer.alloc(length)
      return buffer.subarray(0, fs.readSync(fd, buffer, 0, length, from))
    } catch {
      return undefined
    } finally {
      fs.closeSync(fd)
    }
  }

/**
 * A walk's guard: lists directories only through a descriptor whose real path lies inside a
 * root, and tells whether a found file's directory does.
 *
 * @since 0.1.0
 * @category models
 */
export interface WalkGuard {
  /** Lists `dir` (absolute); throws (an errno error, or a denial) when it lies outside every root. */
  readonly readDirectory: (dir: string) => Array<fs.Dirent>
  /** Whether the directory holding `file` (absolute) was listed by this guard or lies inside a root. */
  readonly holdsParentOf: (file: string) => boolean
}

/**
 * The guard of one walk over the roots in force.
 *
 * @since 0.1.0
 * @category constructors
 */
export const walkGuard: Effect.Effect<WalkGuard, never, Workspace | Scratch.Scratch> = Effect.map(
  roots,
  (all): WalkGuard => {
    const contains = (real: string) => containing(all, real) !== undefined
    const listed = new Set<string>()
    const judged = new Map<string, boolean>()
    return {
      readDirectory: (dir) => {
        const entries = Descriptor.readDirectoryWithin(dir, contains)
        listed.add(path.resolve(dir))
        return entries
      },
      holdsParentOf: (file) => {
        const dir = path.dirname(path.resolve(file))
        if (listed.has(dir)) return true
        let inside = judged.get(dir)
        if (inside === undefined) {
          const { real, exists } = realPathOf(dir)
          inside = exists && contains(real)
          judged.set(dir, inside)
        }
        return inside
      }
    }
  }
)
