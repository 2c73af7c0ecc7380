/**
 * A Bash call whose launcher server went away (TOOL_LAUNCHER_LOST) reaches every surface as an
 * error with its code, never as a result with an exit status: the host's outcome (what the CLI
 * prints), the MCP result and the AI SDK's model output. The loss itself, on a real server killed
 * mid-call, is proven in the tools package (cgroupEntry.test.ts); here the supervisor's tree
 * processes report it as a real one does, through their exit.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { CheckpointStore } from "@toolcap/checkpoint"
import { Budgets, ToolError } from "@toolcap/limits"
import { Supervisor } from "@toolcap/tools"
import { Outcome, ToolHost } from "@toolcap/adapters"
import * as AiSdk from "@toolcap/adapters/AiSdk"
import * as Mcp from "@toolcap/adapters/Mcp"
import { makeDirs } from "./fixtures/dirs.js"

const dirs = makeDirs("toolcap-lost-")
afterAll(() => dirs.remove())

const lost = new ToolError.ToolLauncherLost({
  command: "bash",
  reason: "the launcher server ended while the command ran (launcher pid 4242)"
})

/** The real supervisor, whose trees' exits are lost as a killed launcher server's are. */
const losingSupervisor = Layer.scoped(
  Supervisor.Supervisor,
  Effect.map(Supervisor.make(), (real) => ({
    ...real,
    start: (command: Supervisor.Command) =>
      command.tree === undefined
        ? real.start(command)
        : Effect.map(real.start(command), (proc) => ({ ...proc, exit: Effect.fail(lost) }))
  }))
)

describe("a lost launcher call on every surface", () => {
  it.live(
    "fails with TOOL_LAUNCHER_LOST: an error outcome, MCP isError, AI SDK error text; no exit status",
    () =>
      Effect.gen(function* () {
        const host = yield* ToolHost.makeWith({
          workspace: dirs.workspace,
          dataDir: dirs.dataDir,
          sessionId: "lost"
        })
        const exit = yield* Effect.exit(host.call("Bash", { command: "echo hi" }))
        const wire = Either.getOrThrow(Outcome.fromExit("Bash", exit))
        assert.isFalse(wire.ok)
        if (wire.ok) return
        assert.strictEqual(wire.error.code, "TOOL_LAUNCHER_LOST")
        assert.notProperty(wire.error, "exitCode")
        assert.notProperty(wire.error, "signal")
        const mcp = Mcp.toCallToolResult("Bash", wire)
        assert.isTrue(mcp.isError)
        assert.match((mcp.content as Array<{ text: string }>)[0]!.text, /^TOOL_LAUNCHER_LOST: /)
        const model = AiSdk.toModelOutput("Bash", wire)
        assert.strictEqual(model.type, "error-text")
        assert.match(model.value, /^TOOL_LAUNCHER_LOST: bash was lost/)
      }).pipe(
        Effect.scoped,
        Effect.provide(
          Layer.mergeAll(
            Budgets.layer,
            NodeFileSystem.layer,
            CheckpointStore.layerMemory,
            losingSupervisor.pipe(Layer.provide(Budgets.layer))
          )
        )
      )
  )
})
