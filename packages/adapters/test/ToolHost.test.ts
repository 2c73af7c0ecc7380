import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { CheckpointStore } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import { Supervisor } from "@toolcap/tools"
import { ToolHost } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"
import { longTreeCommand, processesWithCookie, runIdOf } from "./fixtures/processes.js"

const dirs = makeDirs("toolcap-host-")
afterAll(() => dirs.remove())

const config = (sessionId: string): ToolHost.ToolHostConfig => ({
  workspace: dirs.workspace,
  dataDir: dirs.dataDir,
  sessionId
})

/** Starts the long tree through `host` and waits until it printed its run id. */
const startTree = (host: ToolHost.ToolHostService) =>
  Effect.gen(function* () {
    const started = yield* Deferred.make<string>()
    let seen = ""
    const fiber = yield* Effect.fork(
      Effect.exit(
        host.call(
          "Bash",
          { command: longTreeCommand },
          {
            onChunk: (chunk) => {
              seen += chunk.data
              const id = runIdOf(seen)
              if (id !== undefined) Deferred.unsafeDone(started, Exit.succeed(id))
            }
          }
        )
      )
    )
    const runId = yield* Deferred.await(started)
    return { fiber, runId }
  })

/** Runs a command big enough to spill and answers the spill file's path. */
const spillOf = (host: ToolHost.ToolHostService) =>
  host
    .call("Bash", { command: "seq 1 20000" })
    .pipe(Effect.map((result) => (result as { spill: { stdout?: string } }).spill.stdout!))

describe("ToolHost (Effect layer)", () => {
  it.live("the layer provides the host; interrupting a Bash call stops its whole tree", () =>
    Effect.gen(function* () {
      const host = yield* ToolHost.ToolHost
      assert.deepStrictEqual(
        host.definitions.map((def) => def.name),
        ["Read", "Glob", "Grep", "Bash"]
      )
      const { fiber, runId } = yield* startTree(host)
      assert.isAtLeast(processesWithCookie(runId).length, 3)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(processesWithCookie(runId), [])
    }).pipe(Effect.provide(ToolHost.layer(config("host-a")).pipe(Layer.provide(Budgets.layer))))
  )

  it.live("closing the host's scope stops calls still running, before the scope is done", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const host = yield* ToolHost.make(config("host-b")).pipe(
        Effect.provide(Budgets.layer),
        Scope.extend(scope)
      )
      const { fiber, runId } = yield* startTree(host)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(processesWithCookie(runId), [])
      const exit = yield* Fiber.join(fiber)
      assert.isTrue(Exit.isFailure(exit))
    })
  )

  it.live("endSessionOnClose removes the scratch dir with its spill files; the default keeps it", () =>
    Effect.gen(function* () {
      const kept = yield* Effect.scoped(
        Effect.flatMap(ToolHost.make(config("host-keep")), spillOf).pipe(Effect.provide(Budgets.layer))
      )
      assert.isTrue(fs.existsSync(kept), "a CLI call's spill outlives the call, for a later Read")
      const removed = yield* Effect.scoped(
        Effect.flatMap(ToolHost.make({ ...config("host-end"), endSessionOnClose: true }), spillOf).pipe(
          Effect.provide(Budgets.layer)
        )
      )
      assert.isFalse(fs.existsSync(removed))
    })
  )

  it.live("Read, Glob and Grep answer through the host; an aborted signal stops them", () =>
    Effect.gen(function* () {
      fs.writeFileSync(`${dirs.workspace}/notes.txt`, "alpha\nbeta\n")
      const host = yield* ToolHost.make(config("host-d"))
      // results are typed per tool: no cast
      const read = yield* host.call("Read", { path: "notes.txt" })
      assert.strictEqual(read.content, "alpha\nbeta\n")
      const glob = yield* host.call("Glob", { pattern: "*.txt" })
      assert.deepStrictEqual(glob.matches, ["notes.txt"])
      const grep = yield* host.call("Grep", { pattern: "beta", outputMode: "count" })
      assert.strictEqual("count" in grep ? grep.count : undefined, 1)
      const aborted = AbortSignal.abort()
      for (const [tool, input] of [
        ["Read", { path: "notes.txt" }],
        ["Glob", { pattern: "*.txt" }],
        ["Grep", { pattern: "beta" }]
      ] as const) {
        const exit = yield* Effect.exit(host.call(tool, input, { signal: aborted }))
        assert.isTrue(Exit.isInterrupted(exit), `${tool} with an aborted signal`)
      }
    }).pipe(Effect.scoped, Effect.provide(Budgets.layer))
  )

  it.live(
    "the host's file index follows files created, modified, deleted and renamed between two calls",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const host = yield* ToolHost.make(config("host-index"))
          const dir = `${dirs.workspace}/indexed`
          fs.mkdirSync(dir, { recursive: true })
          fs.writeFileSync(`${dir}/a.txt`, "needle a\n")
          const files = (pattern: string) =>
            host
              .call("Grep", { pattern, path: "indexed" })
              .pipe(
                Effect.map((result) =>
                  Arr.sort("files" in result ? (result.files as ReadonlyArray<string>) : [], Order.string)
                )
              )
          const globbed = host
            .call("Glob", { pattern: "**/*", path: "indexed" })
            .pipe(Effect.map((result) => Arr.sort(result.matches, Order.string)))
          assert.deepStrictEqual(yield* files("needle"), ["indexed/a.txt"])
          // created by a Bash call of the same host, searched right after
          yield* host.call("Bash", { command: "mkdir -p indexed/sub && echo needle b > indexed/sub/b.txt" })
          assert.deepStrictEqual(yield* files("needle"), ["indexed/a.txt", "indexed/sub/b.txt"])
          fs.writeFileSync(`${dir}/a.txt`, "changed\n")
          assert.deepStrictEqual(yield* files("needle"), ["indexed/sub/b.txt"])
          assert.deepStrictEqual(yield* files("changed"), ["indexed/a.txt"])
          fs.renameSync(`${dir}/sub`, `${dir}/moved`)
          assert.deepStrictEqual(yield* globbed, ["indexed/a.txt", "indexed/moved/b.txt"])
          fs.rmSync(`${dir}/a.txt`)
          assert.deepStrictEqual(yield* globbed, ["indexed/moved/b.txt"])
        }).pipe(Effect.provide(Budgets.layer))
      )
  )

  it.live("an unknown tool fails with TOOL_INVALID_INPUT naming the tools", () =>
    Effect.gen(function* () {
      const host = yield* ToolHost.make(config("host-c"))
      const error = yield* Effect.flip(host.call("Write", {}))
      assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
    }).pipe(Effect.scoped, Effect.provide(Budgets.layer))
  )

  it.live(
    "the checkpoint store is a layer requirement: an injected memory store holds the checkpoints, no database is created",
    () =>
      Effect.gen(function* () {
        const dataDir = dirs.dataDir + "-memory"
        fs.mkdirSync(dataDir, { recursive: true })
        const layer = ToolHost.layerWith({ ...config("host-memory"), dataDir }).pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              Budgets.layer,
              NodeFileSystem.layer,
              CheckpointStore.layerMemory,
              Supervisor.layer()
            )
          )
        )
        const transcript = {
          messages: [
            { role: "user", id: "u1", text: "first question" },
            { role: "assistant", id: "a1", text: "an answer", toolCalls: [] },
            { role: "user", id: "u2", text: "second question" }
          ]
        }
        yield* Effect.gen(function* () {
          const host = yield* ToolHost.ToolHost
          assert.isTrue(Option.isNone(yield* host.latestCheckpoint))
          const saved = yield* host.checkpoint(transcript, { summary: "what happened" })
          const latest = yield* host.latestCheckpoint
          assert.deepStrictEqual(
            Option.map(latest, (stored) => stored.checkpointId),
            Option.some(saved.checkpointId)
          )
          // the store in the context is the one the host used
          const store = yield* CheckpointStore.CheckpointStore
          assert.deepStrictEqual(yield* store.list("host-memory"), [saved.checkpointId])
        }).pipe(Effect.provide(layer))
        assert.deepStrictEqual(
          fs.readdirSync(dataDir).filter((name) => name.includes("sqlite")),
          []
        )
        fs.rmSync(dataDir, { recursive: true, force: true })
      })
  )

  it.live("the default store's SQLite file is made by the first save, not by the host or a read", () =>
    Effect.gen(function* () {
      const host = yield* ToolHost.make(config("host-lazy-store"))
      yield* host.call("Read", { path: "." }).pipe(Effect.ignore)
      const file = ToolHost.checkpointFileOf(dirs.dataDir)
      const existed = fs.existsSync(file)
      yield* host.latestCheckpoint
      const afterRead = fs.existsSync(file)
      yield* host.checkpoint([{ role: "user", content: "hello" }])
      assert.deepStrictEqual([existed, afterRead, fs.existsSync(file)], [false, false, true])
    }).pipe(Effect.scoped, Effect.provide(Budgets.layer))
  )

  it("the default checkpoint file is the checkpoint package's (the host names it without loading the package)", () => {
    assert.strictEqual(ToolHost.checkpointFileOf("/data"), `/data/${CheckpointStore.defaultFileName}`)
  })
})
