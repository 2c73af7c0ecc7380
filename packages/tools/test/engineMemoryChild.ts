// One Grep in a process of its own, for the engine memory test: its parent reads the peak memory
// of this process's children (ripgrep) when it ends. Prints the call's outcome as one JSON line.
// Arguments: workspace, data dir, the Grep input as JSON.
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Grep, Supervisor, Workspace } from "@toolcap/tools"

const [workspace, dataDir, input] = process.argv.slice(2)
const layer = Layer.mergeAll(
  Budgets.layer,
  Supervisor.layer(),
  Workspace.layer({ root: workspace! }),
  Scratch.layer({ dataDir: dataDir!, sessionId: "engine-memory" }).pipe(
    Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Budgets.layer))
  )
)
const outcome = await Effect.runPromise(
  Grep.grep(JSON.parse(input!)).pipe(
    Effect.map((result) => ({ ok: true as const, result })),
    Effect.catchAll((error) =>
      Effect.succeed({ ok: false as const, error: { ...error, message: error.message } })
    ),
    Effect.provide(layer),
    Effect.scoped
  )
)
process.stdout.write(`${JSON.stringify(outcome)}\n`)
