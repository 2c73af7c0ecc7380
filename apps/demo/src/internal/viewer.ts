/**
 * The viewer of a data dir for a command's scope (`toolcap ui`, `toolcap mcp --ui`).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Budgets } from "@toolcap/limits"
import { Viewer } from "@toolcap/viewer"
import { type UsageError, usage } from "./usage.js"

/** Starts the viewer for the command's scope and prints its URL on stderr (stdout may be a protocol). @internal */
export const serveViewer = (config: {
  readonly workspace: string
  readonly dataDir: string
  readonly approvedExternalRoots: ReadonlyArray<string>
  readonly live: boolean
}): Effect.Effect<Viewer.ViewerHandle, UsageError, Budgets.Budgets | Scope.Scope> =>
  Effect.tap(Viewer.make(config).pipe(Effect.mapError(usage)), (viewer) =>
    Effect.sync(() => process.stderr.write(`toolcap viewer: ${viewer.url}\n`))
  )
