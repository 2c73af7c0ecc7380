import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { ToolHost } from "@toolcap/adapters"
import { Budgets } from "@toolcap/limits"
import { Viewer, ViewerHost } from "@toolcap/viewer"
import { get, makeDirs } from "./fixtures.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

/** Collects the viewer's event stream until `done` holds for what arrived. */
const events = (viewer: Viewer.ViewerHandle) => {
  let text = ""
  const request = http.get(
    { host: "127.0.0.1", port: viewer.port, path: `/api/events?token=${viewer.token}` },
    (response) => response.setEncoding("utf8").on("data", (data: string) => (text += data))
  )
  cleanups.push(() => void request.destroy())
  return {
    until: async (done: (text: string) => boolean) => {
      while (!done(text)) await new Promise((resolve) => setTimeout(resolve, 20))
      return text
    }
  }
}

/** How many lines the viewer's Read window of a 100-line file holds. */
const windowOf = async (viewer: Viewer.ViewerHandle) => {
  const answer = await get(viewer.port, `/api/read?path=many.txt&limit=2000&token=${viewer.token}`)
  return (JSON.parse(answer.body) as { result: { lineCount: number } }).result.lineCount
}

describe("ViewerHost", () => {
  it("createToolHost: the Promise host with a viewer its calls stream into; close() stops both", async () => {
    const dirs = makeDirs()
    cleanups.push(dirs.remove)
    const host = await ViewerHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "vh"
    })
    cleanups.push(host.close)
    const feed = events(host.viewer)
    await feed.until((text) => text.startsWith(": toolcap viewer"))
    const outcome = await host.call("Bash", { command: "echo promise-host" })
    assert.isTrue(outcome.ok)
    const text = await feed.until((seen) => seen.includes("event: ended"))
    assert.include(text, '"data":"promise-host\\n"')
    await host.close()
    await get(host.viewer.port, "/").then(
      () => assert.fail("the viewer still answers after close()"),
      (error: NodeJS.ErrnoException) => assert.strictEqual(error.code, "ECONNREFUSED")
    )
  })

  it.live("layer: the Effect host with its viewer for the layer's lifetime", () => {
    const dirs = makeDirs()
    return Effect.gen(function* () {
      const host = yield* ToolHost.ToolHost
      const viewer = yield* Viewer.Viewer
      const feed = events(viewer)
      yield* Effect.promise(() => feed.until((text) => text.startsWith(": toolcap viewer")))
      yield* host.call("Bash", { command: "echo effect-host" })
      const text = yield* Effect.promise(() => feed.until((seen) => seen.includes("event: ended")))
      assert.include(text, '"data":"effect-host\\n"')
    }).pipe(
      Effect.provide(
        ViewerHost.layer({ workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId: "vh-effect" }).pipe(
          Layer.provide(Budgets.layer)
        )
      ),
      Effect.ensuring(Effect.sync(dirs.remove))
    )
  })

  it("the viewer runs on the host's runtime and budgets: its Read window is the host's, Promise and Effect hosts alike", async () => {
    const dirs = makeDirs()
    cleanups.push(dirs.remove)
    fs.writeFileSync(
      path.join(dirs.workspace, "many.txt"),
      Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join("")
    )
    const host = await ViewerHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "vh-budgets",
      budgets: { readWindowLines: 7, searchMaxLines: 7 }
    })
    cleanups.push(host.close)
    assert.strictEqual(await windowOf(host.viewer), 7)
    const fromLayer = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(Viewer.Viewer, (viewer) => Effect.promise(() => windowOf(viewer))).pipe(
          Effect.provide(
            ViewerHost.layer({
              workspace: dirs.workspace,
              dataDir: dirs.dataDir,
              sessionId: "vh-budgets-effect"
            }).pipe(Layer.provide(Budgets.layerWith({ readWindowLines: 9, searchMaxLines: 9 })))
          )
        )
      )
    )
    assert.strictEqual(fromLayer, 9)
  })
})
