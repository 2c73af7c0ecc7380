/**
 * What the viewer reads, and only through toolcap's own tools and store: file windows through the
 * real Read tool, searches through the real Grep tool (both confined by the tools' roots: the
 * workspace, the data dir's scratch directory, the host's approved roots), spill file listings of
 * the data dir's sessions, and checkpoints from the checkpoint store.
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Outcome, ToolHost } from "@toolcap/adapters"
import { CheckpointStore } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"

export interface SpillFile {
  readonly path: string
  readonly name: string
  readonly bytes: number
  readonly modifiedMs: number
}

export interface SessionInfo {
  readonly sessionId: string
  readonly spills: ReadonlyArray<SpillFile>
}

export interface SourcesConfig {
  readonly dataDir: string
  readonly workspace: string
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
  readonly checkpointFile?: string | undefined
}

/** Checkpoints of one session shown at most: the newest ones, which are the ones a person debugs. */
export const CHECKPOINTS_SHOWN = 20

export interface Sources {
  readonly read: (input: { path: string; offset: number; limit: number }) => Promise<Outcome.Outcome>
  readonly grep: (input: {
    path: string
    pattern: string
    caseInsensitive: boolean
  }) => Promise<Outcome.Outcome>
  readonly sessions: () => Promise<ReadonlyArray<SessionInfo>>
  readonly checkpoints: (sessionId: string) => Promise<Outcome.Outcome>
  readonly close: () => Promise<void>
}

/** Matches per search: one screen of hits; the count says when there are more. */
export const SEARCH_HEAD_LIMIT = 200

const settle = (tool: string, exit: Exit.Exit<unknown, unknown>): Outcome.Outcome => {
  const settled = Outcome.fromExit(tool, exit)
  if (Either.isRight(settled)) return settled.right
  return Outcome.fail({
    code: "VIEWER_FAILED",
    message: `${tool} failed unexpectedly; see the viewer's log.`
  })
}

export const make = async (config: SourcesConfig): Promise<Sources> => {
  const dataDir = path.resolve(config.dataDir)
  const scratchRoot = Scratch.scratchRoot(dataDir)
  // The scratch root must exist to be a root of the tools; sessions made later appear inside it.
  fs.mkdirSync(scratchRoot, { recursive: true, mode: 0o700 })
  const hostRuntime = ManagedRuntime.make(
    ToolHost.layer({
      workspace: config.workspace,
      dataDir,
      // never written: Read and Grep do not spill
      sessionId: `viewer-${process.pid}`,
      approvedExternalRoots: [scratchRoot, ...(config.approvedExternalRoots ?? [])],
      fileIndex: false
    }).pipe(Layer.provide(Budgets.layer))
  )
  const built = await hostRuntime.runPromiseExit(ToolHost.ToolHost)
  if (Exit.isFailure(built)) {
    await hostRuntime.dispose()
    throw new Error(`the viewer cannot read ${config.workspace} / ${dataDir}: ${String(built.cause)}`)
  }
  const host = built.value

  const storeLocation = config.checkpointFile ?? ToolHost.checkpointFileOf(dataDir)
  // Opened on first use and only when it exists: the viewer never creates a database.
  let storeRuntime: ManagedRuntime.ManagedRuntime<CheckpointStore.CheckpointStore, unknown> | undefined
  const store = () => {
    if (storeRuntime !== undefined) return storeRuntime
    if (!CheckpointStore.isPostgresUrl(storeLocation) && !fs.existsSync(storeLocation)) return undefined
    storeRuntime = ManagedRuntime.make(CheckpointStore.layerFromLocation(storeLocation))
    return storeRuntime
  }

  const read: Sources["read"] = async (input) =>
    settle("Read", await hostRuntime.runPromiseExit(host.call("Read", input)))

  const grep: Sources["grep"] = async (input) =>
    settle(
      "Grep",
      await hostRuntime.runPromiseExit(
        host.call("Grep", {
          pattern: input.pattern,
          path: input.path,
          outputMode: "content",
          caseInsensitive: input.caseInsensitive,
          headLimit: SEARCH_HEAD_LIMIT
        })
      )
    )

  const sessions: Sources["sessions"] = async () => {
    const entries = await fsp.readdir(scratchRoot, { withFileTypes: true }).catch(() => [])
    const found = await Promise.all(
      entries
        .filter((entry) => entry.isDirectory() && Scratch.sessionIdPattern.test(entry.name))
        .map(async (entry): Promise<SessionInfo> => {
          const outputDir = path.join(scratchRoot, entry.name, Scratch.toolOutputDirName)
          const names = await fsp.readdir(outputDir).catch(() => [] as Array<string>)
          const spills = await Promise.all(
            names.map(async (name) => {
              const file = path.join(outputDir, name)
              const stat = await fsp.stat(file).catch(() => undefined)
              return stat?.isFile() === true
                ? [{ path: file, name, bytes: stat.size, modifiedMs: Math.trunc(stat.mtimeMs) }]
                : []
            })
          )
          return {
            sessionId: entry.name,
            spills: Arr.sort(
              spills.flat(),
              Order.combine(
                Order.reverse(Order.mapInput(Order.number, (file: SpillFile) => file.modifiedMs)),
                Order.mapInput(Order.string, (file: SpillFile) => file.name)
              )
            )
          }
        })
    )
    return Arr.sort(
      found,
      Order.mapInput(Order.string, (session: SessionInfo) => session.sessionId)
    )
  }

  const checkpoints: Sources["checkpoints"] = async (sessionId) => {
    const runtime = store()
    if (runtime === undefined) return Outcome.succeed({ sessionId, checkpoints: [] })
    const exit = await runtime.runPromiseExit(
      Effect.gen(function* () {
        const checkpointStore = yield* CheckpointStore.CheckpointStore
        const ids = yield* checkpointStore.list(sessionId)
        const shown = Arr.reverse(ids.slice(-CHECKPOINTS_SHOWN))
        const found = yield* Effect.forEach(shown, (id) => checkpointStore.get(id))
        return { sessionId, checkpoints: found.flatMap(Option.toArray) }
      })
    )
    return settle("checkpoint", exit)
  }

  const close = async () => {
    await hostRuntime.dispose()
    if (storeRuntime !== undefined) await storeRuntime.dispose()
  }

  return { read, grep, sessions, checkpoints, close }
}
