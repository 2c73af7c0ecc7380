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
 * const viewer = yield* Viewer.make({ dataDir, workspace })            // on the host's runtime and budgets
 * const host = yield* ToolHost.make({ dataDir, workspace, sessionId, observer: viewer.observer })
 * yield* Console.error(`viewer: ${viewer.url}`)
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { CallObserver } from "@toolcap/adapters"
import { Budgets } from "@toolcap/limits"
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
 * The viewer could not start: its workspace or data dir is not a readable directory, or the port
 * is taken.
 *
 * @since 0.1.0
 * @category errors
 */
export class ViewerStartFailed extends Data.TaggedError("ViewerStartFailed")<{ readonly message: string }> {}

const startFailed = (cause: unknown) =>
  new ViewerStartFailed({
    message: `the viewer could not start: ${cause instanceof Error || cause instanceof Sources.SourcesUnavailable ? cause.message : String(cause)}`
  })

/**
 * The viewer for the current scope, on the runtime it runs in: its Read and Grep use the
 * context's `Budgets` (the host's, when a host makes it), its requests are fibers of the scope.
 * Started now, closed with the scope (or by the handle's `close`, which closes the same).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: ViewerOptions
): Effect.Effect<ViewerHandle, ViewerStartFailed, Budgets.Budgets | Scope.Scope> =>
  Effect.gen(function* () {
    // a scope of the viewer's own, so its handle can close it before the caller's scope ends
    const scope = yield* Scope.make(ExecutionStrategy.sequential)
    yield* Effect.addFinalizer((end) => Scope.close(scope, end))
    const closeScope = Scope.close(scope, Exit.void)
    const started = Effect.gen(function* () {
      const sources = yield* Sources.make(options)
      const feed = new Feed()
      const server = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            Server.start({
              feed,
              sources,
              assetsDir: options.assetsDir ?? defaultAssetsDir,
              port: options.port,
              info: { dataDir: options.dataDir, workspace: options.workspace, live: options.live ?? true }
            }),
          catch: startFailed
        }),
        (running) => Effect.promise(() => running.close())
      )
      const runtime = yield* Effect.runtime<never>()
      return {
        url: server.url,
        port: server.port,
        token: server.token,
        observer: feed.observer,
        close: () => Runtime.runPromise(runtime)(closeScope)
      } satisfies ViewerHandle
    })
    return yield* Scope.extend(started, scope).pipe(
      Effect.mapError((error) => (error instanceof ViewerStartFailed ? error : startFailed(error))),
      Effect.tapError(() => closeScope)
    )
  })

/**
 * @since 0.1.0
 * @category models
 */
export interface StartOptions extends ViewerOptions {
  /** Per-field overrides of the limit table for the viewer's Read and Grep (default: none). */
  readonly budgets?: Partial<Record<Budgets.BudgetField, number>> | undefined
}

/**
 * Starts a viewer of its own, for a program that is not an Effect host (a viewer that serves a
 * host's calls is better made by that host: `ViewerHost`, or `make` on the host's runtime).
 * Rejects with `ViewerStartFailed` (or `BudgetsInvalid` for a bad override).
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = async (options: StartOptions): Promise<ViewerHandle> => {
  const runtime = ManagedRuntime.make(Budgets.layerWith(options.budgets ?? {}))
  const scope = await runtime.runPromise(Scope.make())
  const exit = await runtime.runPromiseExit(Scope.extend(make(options), scope))
  if (Exit.isFailure(exit)) {
    await runtime.dispose()
    throw Cause.squash(exit.cause)
  }
  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= runtime.runPromise(Scope.close(scope, Exit.void)).finally(() => runtime.dispose()))
  return { ...exit.value, close }
}
