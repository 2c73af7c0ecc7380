/**
 * A tool host with its viewer: the `ui` option of the Promise and Effect hosts. The viewer serves
 * the host's data dir and workspace, and the host's calls stream into it through its observer.
 *
 * ```ts
 * const host = await ViewerHost.createToolHost({ workspace, dataDir, sessionId })
 * process.stderr.write(`viewer: ${host.viewer.url}\n`)
 * await host.call("Bash", { command: "make test" })   // watch it in the page
 * await host.close()                                   // closes the host, then the viewer
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { PromiseHost, ToolHost } from "@toolcap/adapters"
import type { Budgets } from "@toolcap/limits"
import * as Viewer from "./Viewer.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface PromiseToolHostWithViewer extends PromiseHost.PromiseToolHost {
  readonly viewer: Viewer.ViewerHandle
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ViewerToolHostOptions extends PromiseHost.ToolHostOptions {
  /** Tunes the viewer (port, assets). */
  readonly viewer?: Pick<Viewer.ViewerOptions, "port" | "assetsDir"> | undefined
}

/**
 * `PromiseHost.createToolHost` with a viewer attached. Host and viewer are one runtime: the viewer's
 * Read and Grep run under the host's budgets, and `close()` stops the host's calls, then the viewer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createToolHost = async (options: ViewerToolHostOptions): Promise<PromiseToolHostWithViewer> => {
  const runtime = ManagedRuntime.make(
    PromiseHost.layerWith(options, (config) => layer(config, options.viewer ?? {}))
  )
  const host = await PromiseHost.fromRuntime(runtime)
  const viewer = await runtime.runPromise(Viewer.Viewer)
  return { ...host, viewer }
}

/**
 * `ToolHost.layer` with a viewer for the layer's lifetime; the viewer is in its own tag too. The
 * viewer runs on the layer's runtime and the `Budgets` it is given, like the host.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: ToolHost.ToolHostConfig,
  viewerOptions: Pick<Viewer.ViewerOptions, "port" | "assetsDir"> = {}
): Layer.Layer<
  ToolHost.ToolHost | Viewer.Viewer,
  ToolHost.StartError | Viewer.ViewerStartFailed,
  Budgets.Budgets
> =>
  Layer.unwrapScoped(
    Effect.map(
      Viewer.make({
        workspace: config.workspace,
        dataDir: config.dataDir,
        approvedExternalRoots: config.approvedExternalRoots,
        checkpointFile: config.checkpointFile,
        ...viewerOptions
      }),
      (viewer) =>
        // the viewer first, so it closes after the host: the host's last calls still reach the page
        Layer.merge(
          ToolHost.layer({ ...config, observer: viewer.observer }),
          Layer.succeed(Viewer.Viewer, viewer)
        )
    )
  )
