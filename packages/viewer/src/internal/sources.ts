/**
 * What the viewer reads, and only through toolcap's own tools and store: file windows through the
 * real Read tool, searches through the real Grep tool (both confined by the tools' roots: the
 * workspace, the data dir's scratch directory, the host's approved roots), spill file listings of
 * the data dir's sessions, and checkpoints from the checkpoint store. Everything runs on the runtime
 * the viewer is made on (the host's: its budgets, its scope); a request still running when the
 * viewer closes is interrupted.
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { Outcome, ToolHost } from "@toolcap/adapters"
import { CheckpointStore } from "@toolcap/checkpoint"
import type { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import * as Listing from "./listing.js"

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

/** The viewer could not read its data dir or workspace. */
export class SourcesUnavailable extends Data.TaggedError("SourcesUnavailable")<{
  readonly message: string
}> {}

/**
 * The scratch root, made when missing (0700) so it can be a root of the tools; a planted link or
 * a file in its place is refused (the tools would take its target for a root).
 */
const scratchRootOf = (dataDir: string): string => {
  const scratchRoot = Scratch.scratchRoot(dataDir)
  fs.mkdirSync(scratchRoot, { recursive: true, mode: 0o700 })
  const stats = fs.lstatSync(scratchRoot)
  if (!stats.isDirectory())
    throw new SourcesUnavailable({
      message: `${scratchRoot} is ${stats.isSymbolicLink() ? "a symbolic link" : "not a directory"}: the viewer serves only a real scratch directory of the data dir; remove it`
    })
  return scratchRoot
}

export const make = (
  config: SourcesConfig
): Effect.Effect<Sources, SourcesUnavailable, Budgets.Budgets | Scope.Scope> =>
  Effect.gen(function* () {
    const dataDir = path.resolve(config.dataDir)
    const scratchRoot = yield* Effect.try({
      try: () => scratchRootOf(dataDir),
      catch: (cause) =>
        cause instanceof SourcesUnavailable
          ? cause
          : new SourcesUnavailable({ message: `the viewer cannot use ${dataDir}: ${String(cause)}` })
    })
    const host = yield* ToolHost.make({
      workspace: config.workspace,
      dataDir,
      // never written: Read and Grep do not spill
      sessionId: `viewer-${process.pid}`,
      approvedExternalRoots: [scratchRoot, ...(config.approvedExternalRoots ?? [])],
      fileIndex: false
    }).pipe(
      Effect.mapError(
        (error) =>
          new SourcesUnavailable({
            message: `the viewer cannot read ${config.workspace} / ${dataDir}: ${error.message}`
          })
      )
    )
    // opened on first use; a store that has no file yet answers empty and makes none
    const store = Context.get(
      yield* Layer.build(
        ToolHost.layerStoreOnFirstUse(config.checkpointFile ?? ToolHost.checkpointFileOf(dataDir))
      ),
      CheckpointStore.CheckpointStore
    )
    // requests run as fibers of the viewer's scope: closing it stops what still runs
    const run = yield* FiberSet.makeRuntimePromise<never>()
    const settled = <A, E>(tool: string, effect: Effect.Effect<A, E>) =>
      run(Effect.exit(effect)).then((exit) => settle(tool, exit))

    const read: Sources["read"] = (input) => settled("Read", host.call("Read", input))

    const grep: Sources["grep"] = (input) =>
      settled(
        "Grep",
        host.call("Grep", {
          pattern: input.pattern,
          path: input.path,
          outputMode: "content",
          caseInsensitive: input.caseInsensitive,
          headLimit: SEARCH_HEAD_LIMIT
        })
      )

    const sessions: Sources["sessions"] = async () => {
      const names = await Listing.directoryNames(scratchRoot)
      const found = await Promise.all(
        names
          .filter((name) => Scratch.sessionIdPattern.test(name))
          .map(async (name): Promise<SessionInfo> => {
            // regular files inside the spill directory only, never through a link (listing.ts)
            const spills = await Listing.spillFiles(scratchRoot, name, Scratch.toolOutputDirName)
            return {
              sessionId: name,
              spills: Arr.sort(
                spills,
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

    const checkpoints: Sources["checkpoints"] = (sessionId) =>
      settled(
        "checkpoint",
        Effect.gen(function* () {
          const ids = yield* store.list(sessionId)
          const shown = Arr.reverse(ids.slice(-CHECKPOINTS_SHOWN))
          const found = yield* Effect.forEach(shown, (id) => store.get(id))
          return { sessionId, checkpoints: found.flatMap(Option.toArray) }
        })
      )

    return { read, grep, sessions, checkpoints }
  })
