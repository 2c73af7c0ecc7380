/**
 * The live viewer: a local web page for one data dir. It shows each tool call as it happens
 * (input, Bash's stdout and stderr chunks, the bounded result with its marker, the `truncation`
 * object, timeout/abort with the pids stopped), opens a spill file or a workspace file in pages
 * of the real Read tool and searches it with the real Grep tool, and shows a session's
 * checkpoints (retained messages, the 75/25 cut, the batch before and after).
 *
 * Safe by default: bound to 127.0.0.1, a random token in the URL it prints (then a cookie), Host
 * and Origin checked on every request, read-only, nothing outside the tools' roots.
 *
 * ```ts
 * const viewer = await Viewer.start({ dataDir, workspace })
 * const host = await PromiseHost.createToolHost({ dataDir, workspace, sessionId, observer: viewer.observer })
 * console.error(`viewer: ${viewer.url}`)
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { CallObserver } from "@toolcap/adapters"
import { Feed } from "./internal/feed.js"
import * as Server from "./internal/server.js"
import * as Sources from "./internal/sources.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ViewerOptions {
  /** The data dir whose sessions (spill files, checkpoints) the viewer shows. */
  readonly dataDir: string
  /** The workspace whose files the full-output view may open. */
  readonly workspace: string
  /** Further directories the viewer may open files in (the host's approved roots). */
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
  /** SQLite file or `postgres://` URL of the checkpoint store; default `<dataDir>/checkpoints.sqlite`. */
  readonly checkpointFile?: string | undefined
  /** Port on 127.0.0.1; default: a free one. */
  readonly port?: number | undefined
  /** Whether a host feeds `observer` (the page then says calls appear live). Default true. */
  readonly live?: boolean | undefined
  /** The built front end; default the package's own `dist/ui`. */
  readonly assetsDir?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ViewerHandle {
  /** `http://127.0.0.1:<port>/?token=<token>`: the URL to open. Print it on stderr. */
  readonly url: string
  readonly port: number
  readonly token: string
  /** Pass as a host's `observer` option to stream its calls into the page. */
  readonly observer: CallObserver.CallObserver
  /** Stops the server and closes the page's event streams. */
  readonly close: () => Promise<void>
}

/**
 * The running viewer, as a service (provided by `ViewerHost.layer`).
 *
 * @since 0.1.0
 * @category services
 */
export class Viewer extends Context.Tag("@toolcap/viewer/Viewer")<Viewer, ViewerHandle>() {}

/**
 * The built front end: `dist/ui` of this package (from `src/` or `dist/`), or `ui/` beside a
 * bundle that inlined this package (its chunk directory's parent, or its own directory).
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultAssetsDir: string = ((): string => {
  const candidates = ["../dist/ui", "../ui", "./ui"].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url))
  )
  return candidates.find((dir) => fs.existsSync(path.join(dir, "app.js"))) ?? candidates[0]!
})()

/**
 * Starts the viewer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = async (options: ViewerOptions): Promise<ViewerHandle> => {
  const sources = await Sources.make(options)
  const feed = new Feed()
  try {
    const server = await Server.start({
      feed,
      sources,
      assetsDir: options.assetsDir ?? defaultAssetsDir,
      port: options.port,
      info: { dataDir: options.dataDir, workspace: options.workspace, live: options.live ?? true }
    })
    return {
      url: server.url,
      port: server.port,
      token: server.token,
      observer: feed.observer,
      close: async () => {
        await server.close()
        await sources.close()
      }
    }
  } catch (cause) {
    await sources.close()
    throw cause
  }
}

/**
 * The viewer could not start: its workspace or data dir is not a readable directory, or the port
 * is taken.
 *
 * @since 0.1.0
 * @category errors
 */
export class ViewerStartFailed extends Data.TaggedError("ViewerStartFailed")<{ readonly message: string }> {}

/**
 * The viewer for the current scope: started now, closed with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: ViewerOptions): Effect.Effect<ViewerHandle, ViewerStartFailed, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => start(options),
      catch: (cause) =>
        new ViewerStartFailed({
          message: `the viewer could not start: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    }),
    (viewer) => Effect.promise(() => viewer.close())
  )
