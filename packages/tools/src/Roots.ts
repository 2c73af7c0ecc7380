/**
 * Where Read, Glob and Grep may look (DECISIONS §3): the workspace, the session's scratch
 * directory (where spill files live) and the external roots the host approved. A path is resolved
 * through every symlink BEFORE the containment check, so a link pointing out of the workspace is
 * denied and a link between two places inside it is followed.
 *
 * Relative paths resolve against the workspace root. Results name workspace paths relative to the
 * workspace root (with `/`), scratch and external paths absolutely.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Workspace } from "./Workspace.js"

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
 * The real path of a path that may not exist yet: the deepest existing ancestor is resolved and
 * the rest appended (the scratch directory is only created on the first spill).
 *
 * @since 0.1.0
 * @category constructors
 */
export const realPathOf = (absolute: string): { readonly real: string; readonly exists: boolean } => {
  // find the deepest existing ancestor first: existsSync answers without building an exception
  let existing = absolute
  const rest: Array<string> = []
  while (!fs.existsSync(existing)) {
    const parent = path.dirname(existing)
    if (parent === existing) break
    rest.unshift(path.basename(existing))
    existing = parent
  }
  try {
    const real = fs.realpathSync.native(existing)
    return { real: rest.length === 0 ? real : path.join(real, ...rest), exists: rest.length === 0 }
  } catch {
    // an unreadable ancestor, a symlink loop, a dangling link: containment is judged on the
    // lexical path, which is all there is to know
    return { real: absolute, exists: false }
  }
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
      { kind: "scratch", path: realPathOf(path.resolve(scratch.sessionDir)).real },
      ...workspace.approvedExternalRoots.map((root): Root => ({ kind: "external", path: root }))
    ]
  }
)

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
  Workspace | Scratch.Scratch
> =>
  Effect.gen(function* () {
    yield* checkPathArgument(tool, field, requested)
    const workspace = yield* Workspace
    const all = yield* roots
    const lexical = path.resolve(workspace.root, requested)
    const { real, exists } = realPathOf(lexical)
    const root = containing(all, real)
    if (root === undefined) {
      const via = real === lexical ? "" : ` (it resolves through a symlink to ${real})`
      return yield* new ToolError.ToolPathDenied({
        path: requested,
        reason: `it lies outside the workspace ${workspace.root}${via}`
      })
    }
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
