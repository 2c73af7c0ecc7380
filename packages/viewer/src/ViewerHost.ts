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
 * `PromiseHost.createToolHost` with a viewer attached; `viewer` tunes it (port, assets).
 *
 * @since 0.1.0
 * @category constructors
 */
export const createToolHost = async (
  options: PromiseHost.ToolHostOptions & {
    readonly viewer?: Pick<Viewer.ViewerOptions, "port" | "assetsDir"> | undefined
  }
): Promise<PromiseToolHostWithViewer> => {
  const viewer = await Viewer.start({
    workspace: options.workspace,
    dataDir: options.dataDir,
    approvedExternalRoots: options.approvedExternalRoots,
    checkpointFile: options.checkpointFile,
    ...options.viewer
  })
  let host: PromiseHost.PromiseToolHost
  try {
    host = await PromiseHost.createToolHost({ ...options, observer: viewer.observer })
  } catch (cause) {
    await viewer.close()
    throw cause
  }
  let closing: Promise<void> | undefined
  const close = () => (closing ??= host.close().finally(() => viewer.close()))
  return { ...host, close, viewer }
}

/**
 * `ToolHost.layer` with a viewer for the layer's lifetime; the viewer is in its own tag too.
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
        Layer.merge(
          ToolHost.layer({ ...config, observer: viewer.observer }),
          Layer.succeed(Viewer.Viewer, viewer)
        )
    )
  )
