/**
 * One tool host: the four tools of one session, composed from their layers (budgets, workspace,
 * session scratch, checkpoint store) behind a single `call(name, input)`. Every adapter — the
 * Promise API, the MCP server, the AI SDK tools, the CLI — is a thin shell around this service,
 * so they all answer with the same bounded results and the same typed errors.
 *
 * Calls run in the host's scope: closing it (the end of the layer) interrupts whatever still
 * runs, which for Bash means its whole process tree is stopped before the scope is done.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as path from "node:path"
import { Checkpoint, CheckpointError, CheckpointStore, TokenEstimator, Transcript } from "@toolcap/checkpoint"
import { Budgets, ToolError } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { FileIndex, LineIndex, Workspace } from "@toolcap/tools"
import * as CallObserver from "./CallObserver.js"
import * as Specs from "./Specs.js"
import * as ToolDefs from "./ToolDefs.js"
import type * as ToolSpec from "./ToolSpec.js"

/**
 * What a caller may pass along with a call (`signal`, `onChunk`, `callId`).
 *
 * @since 0.1.0
 * @category models
 */
export type CallOptions = ToolSpec.RunOptions

/**
 * Any typed failure of a tool call (derived from the specs' `run`).
 *
 * @since 0.1.0
 * @category errors
 */
export type CallError = Specs.CallError

/**
 * Any typed failure of a checkpoint operation.
 *
 * @since 0.1.0
 * @category errors
 */
export type CheckpointFailure =
  | CheckpointError.CheckpointInvalid
  | CheckpointError.CheckpointConflict
  | CheckpointError.CheckpointStoreFailed

/**
 * Why a host could not start: the workspace or the data dir is not usable, or the session id is invalid.
 *
 * @since 0.1.0
 * @category errors
 */
export type StartError = ToolError.ToolPathDenied | ToolError.ToolInvalidInput

/**
 * @since 0.1.0
 * @category models
 */
export interface CheckpointOptions {
  /** The host's summary of the dropped history; follows the retained user messages. */
  readonly summary?: string | undefined
  /** The transcript's shape; guessed when omitted (`Transcript.detect`). */
  readonly format?: Transcript.Format | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolHostService {
  readonly sessionId: string
  /** The session's scratch directory (where spill files go). */
  readonly sessionDir: string
  readonly workspace: Workspace.WorkspaceValue
  readonly budgets: Budgets.BudgetsValue
  /** The tool definitions rendered from `budgets`. */
  readonly definitions: ReadonlyArray<ToolDefs.ToolDef>
  /**
   * Runs a tool by name, succeeding with that tool's result (`ToolDefs.ToolResults`); an unknown
   * name fails with `TOOL_INVALID_INPUT`.
   */
  readonly call: {
    <N extends ToolDefs.ToolName>(
      name: N,
      input: unknown,
      options?: CallOptions
    ): Effect.Effect<ToolDefs.ToolResults[N], CallError>
    (name: string, input: unknown, options?: CallOptions): Effect.Effect<unknown, CallError>
  }
  /**
   * Builds a checkpoint of a transcript (neutral, Anthropic or OpenAI shape) and persists it with
   * the transcript for this session, in one transaction.
   */
  readonly checkpoint: (
    transcript: unknown,
    options?: CheckpointOptions
  ) => Effect.Effect<CheckpointStore.StoredCheckpoint, CheckpointFailure>
  /** The newest persisted checkpoint of this session. */
  readonly latestCheckpoint: Effect.Effect<Option.Option<CheckpointStore.StoredCheckpoint>, CheckpointFailure>
  /** Ends the session: stops running calls, removes its scratch directory. */
  readonly endSession: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category services
 */
export class ToolHost extends Context.Tag("@toolcap/adapters/ToolHost")<ToolHost, ToolHostService>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolHostConfig {
  /** The workspace directory (Bash's cwd, base of relative paths). */
  readonly workspace: string
  /** Holds `scratch/<sessionId>/` and the checkpoint database. */
  readonly dataDir: string
  readonly sessionId: string
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
  /**
   * Where checkpoints persist: a SQLite file, or a `postgres://` URL for a store shared by many
   * hosts; default `<dataDir>/checkpoints.sqlite`.
   */
  readonly checkpointFile?: string | undefined
  /** Remove the session's scratch directory when the layer closes (default false). */
  readonly endSessionOnClose?: boolean | undefined
  /**
   * Keep a watched file index of the searched directories, so a capped Glob/Grep walks it newest
   * first instead of listing the tree on every call (default true: hosts that live for many
   * calls). A one-shot host (one call per process) sets false and lists instead.
   */
  readonly fileIndex?: boolean | undefined
  /**
   * When set, sweep at startup (spec §3a): remove other sessions' scratch directories whose owner
   * process is gone and that did not change for this long. Unset: no sweep.
   */
  readonly sweepStaleAfterMs?: number | undefined
  /** Sees every call: its input, Bash's chunks, its outcome (a live viewer, a log). */
  readonly observer?: CallObserver.CallObserver | undefined
}

/**
 * The checkpoint database file of a data dir.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkpointFileOf = (dataDir: string): string =>
  path.join(path.resolve(dataDir), CheckpointStore.defaultFileName)

/**
 * A checkpoint store that opens `location` on first use, in the layer's scope: a host that never
 * checkpoints never creates (or connects to) its database.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStoreOnFirstUse = (location: string): Layer.Layer<CheckpointStore.CheckpointStore> =>
  Layer.scoped(
    CheckpointStore.CheckpointStore,
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const opened = yield* Effect.cached(
        Effect.map(Layer.buildWithScope(CheckpointStore.layerFromLocation(location), scope), (context) =>
          Context.get(context, CheckpointStore.CheckpointStore)
        )
      )
      return {
        save: (sessionId, transcript, checkpoint) =>
          Effect.flatMap(opened, (store) => store.save(sessionId, transcript, checkpoint)),
        latest: (sessionId) => Effect.flatMap(opened, (store) => store.latest(sessionId)),
        get: (checkpointId) => Effect.flatMap(opened, (store) => store.get(checkpointId)),
        list: (sessionId) => Effect.flatMap(opened, (store) => store.list(sessionId)),
        transcript: (sessionId) => Effect.flatMap(opened, (store) => store.transcript(sessionId))
      }
    })
  )

/**
 * The default file system and checkpoint store of a host: Node's file system, and the SQLite
 * file (or `postgres://` URL) of `config.checkpointFile`, default `<dataDir>/checkpoints.sqlite`,
 * opened on first use.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefaults = (
  config: Pick<ToolHostConfig, "dataDir" | "checkpointFile">
): Layer.Layer<FileSystem.FileSystem | CheckpointStore.CheckpointStore> =>
  Layer.merge(
    NodeFileSystem.layer,
    layerStoreOnFirstUse(config.checkpointFile ?? checkpointFileOf(config.dataDir))
  )

/**
 * Builds the host in the current scope on the file system and checkpoint store of the context
 * (`CheckpointStore.layerMemory` in tests, `layerDefaults` otherwise).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (
  config: ToolHostConfig
): Effect.Effect<
  ToolHostService,
  ToolError.ToolPathDenied | ToolError.ToolInvalidInput,
  Budgets.Budgets | FileSystem.FileSystem | CheckpointStore.CheckpointStore | Scope.Scope
> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    const fileSystem = Layer.succeed(FileSystem.FileSystem, yield* FileSystem.FileSystem)
    const store = yield* CheckpointStore.CheckpointStore
    // refused at start: a data dir that is not a normal writable directory (/proc/1, a file, read-only)
    yield* Scratch.checkDataDir(config.dataDir)
    const scope = yield* Effect.scope
    const toolContext = yield* Layer.buildWithScope(
      Layer.mergeAll(
        Workspace.layer({ root: config.workspace, approvedExternalRoots: config.approvedExternalRoots }),
        Scratch.layer({ dataDir: config.dataDir, sessionId: config.sessionId }).pipe(
          Layer.provide(fileSystem)
        ),
        Layer.succeed(Budgets.Budgets, budgets),
        LineIndex.layer(),
        config.fileIndex === false ? Layer.empty : FileIndex.layer()
      ),
      scope
    )
    const workspace = Context.get(toolContext, Workspace.Workspace)
    const scratch = Context.get(toolContext, Scratch.Scratch)
    if (config.sweepStaleAfterMs !== undefined) {
      yield* Scratch.sweep(config.dataDir, { staleAfterMs: config.sweepStaleAfterMs }).pipe(
        Effect.provide(fileSystem)
      )
    }

    // Ending the session (explicitly or at close) runs after the running calls were stopped:
    // finalizers run in reverse order, and the fiber set is created after this one.
    let ended = false
    const endScratch = Effect.suspend(() => {
      if (ended) return Effect.void
      ended = true
      return scratch.removeSession
    })
    if (config.endSessionOnClose === true) yield* Effect.addFinalizer(() => endScratch)
    const running = yield* FiberSet.make<unknown, CallError>()

    const estimation = Layer.merge(TokenEstimator.layer, Layer.succeed(Budgets.Budgets, budgets))

    const run = (
      name: ToolDefs.ToolName,
      input: unknown,
      options: CallOptions
    ): Effect.Effect<unknown, CallError> => Effect.provide(Specs.run(name, input, options), toolContext)

    const observer = config.observer
    const observed = (name: ToolDefs.ToolName, input: unknown, options: CallOptions) =>
      observer === undefined
        ? run(name, input, options)
        : CallObserver.observe(observer, name, input, options, (opts) => run(name, input, opts))

    const call = (
      name: string,
      input: unknown,
      options: CallOptions = {}
    ): Effect.Effect<unknown, CallError> => {
      if (!ToolDefs.isToolName(name)) {
        return Effect.fail(
          new ToolError.ToolInvalidInput({
            tool: name,
            field: "name",
            reason: `no such tool; use one of ${ToolDefs.toolNames.join(", ")}`
          })
        )
      }
      // Run in the host's fiber set so closing the host stops it; interrupting the caller stops it too.
      // The fork happens in an uninterruptible region (so the fiber is always tracked); the call
      // itself must stay interruptible, or it could never be stopped.
      return Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(FiberSet.run(running, Effect.interruptible(observed(name, input, options))), (fiber) =>
          Effect.onInterrupt(restore(Fiber.join(fiber)), () => Fiber.interrupt(fiber))
        )
      )
    }

    const checkpoint = (transcript: unknown, options: CheckpointOptions = {}) =>
      Effect.gen(function* () {
        const neutral = yield* Transcript.fromAny(transcript, options.format)
        const built = yield* Checkpoint.build(neutral, { summary: options.summary }).pipe(
          Effect.provide(estimation)
        )
        return yield* store.save(config.sessionId, neutral, built)
      })

    const latestCheckpoint = store.latest(config.sessionId)

    const endSession = Effect.zipRight(FiberSet.clear(running), endScratch)

    // rendered on first use: a one-shot call never lists the tools
    let definitions: ReadonlyArray<ToolDefs.ToolDef> | undefined
    return {
      sessionId: config.sessionId,
      sessionDir: scratch.sessionDir,
      workspace,
      budgets,
      get definitions() {
        return (definitions ??= ToolDefs.builtinToolDefs(budgets))
      },
      call: call as ToolHostService["call"],
      checkpoint,
      latestCheckpoint,
      endSession
    } satisfies ToolHostService
  })

/**
 * Builds the host in the current scope on the default file system and checkpoint store
 * (`layerDefaults`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: ToolHostConfig
): Effect.Effect<
  ToolHostService,
  ToolError.ToolPathDenied | ToolError.ToolInvalidInput,
  Budgets.Budgets | Scope.Scope
> =>
  // built in the caller's scope: the store opened on first use lives as long as the host
  Effect.flatMap(Layer.build(layerDefaults(config)), (defaults) => Effect.provide(makeWith(config), defaults))

/**
 * The host as a layer on the file system and checkpoint store it is given; its scope is the
 * session's lifetime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  config: ToolHostConfig
): Layer.Layer<
  ToolHost,
  ToolError.ToolPathDenied | ToolError.ToolInvalidInput,
  Budgets.Budgets | FileSystem.FileSystem | CheckpointStore.CheckpointStore
> => Layer.scoped(ToolHost, makeWith(config))

/**
 * The host as a layer on the default file system and checkpoint store; its scope is the
 * session's lifetime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: ToolHostConfig
): Layer.Layer<ToolHost, ToolError.ToolPathDenied | ToolError.ToolInvalidInput, Budgets.Budgets> =>
  Layer.provide(layerWith(config), layerDefaults(config))
