/**
 * The workspace a tool host works in: its root (cwd of Bash, base of relative paths, the default
 * Glob/Grep root) and the external roots the host approved. Paths are resolved through symlinks
 * once, when the layer is built, so containment checks compare real paths.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"

/**
 * @since 0.1.0
 * @category models
 */
export interface WorkspaceConfig {
  /** The workspace directory. */
  readonly root: string
  /** Directories outside the workspace the host allows tools to reach (absolute or relative to cwd). */
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface WorkspaceValue {
  /** Real absolute path of the workspace root. */
  readonly root: string
  /** Real absolute paths of the approved external roots. */
  readonly approvedExternalRoots: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category services
 */
export class Workspace extends Context.Tag("@toolcap/tools/Workspace")<Workspace, WorkspaceValue>() {}

const realDirectory = (dir: string) =>
  Effect.try({
    try: () => {
      const real = fs.realpathSync(path.resolve(dir))
      if (!fs.statSync(real).isDirectory()) throw new Error("not a directory")
      return real
    },
    catch: (cause) =>
      new ToolError.ToolPathDenied({
        path: dir,
        reason: `it is not an accessible directory (${cause instanceof Error ? cause.message : String(cause)})`
      })
  })

/**
 * Builds the workspace from a config; fails with `ToolPathDenied` when a root is not a directory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: WorkspaceConfig): Effect.Effect<WorkspaceValue, ToolError.ToolPathDenied> =>
  Effect.gen(function* () {
    const root = yield* realDirectory(config.root)
    const approvedExternalRoots = yield* Effect.forEach(config.approvedExternalRoots ?? [], realDirectory)
    return { root, approvedExternalRoots }
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: WorkspaceConfig): Layer.Layer<Workspace, ToolError.ToolPathDenied> =>
  Layer.effect(Workspace, make(config))
