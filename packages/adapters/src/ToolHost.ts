/**
 * One tool host: the four tools of one session, composed from their layers (budgets, workspace,
 * session scratch, checkpoint store) behind a single `call(name, input)`. Every adapter — the
 * Promise API, the MCP server, the AI SDK tools, the CLI — is a thin shell around this service,
 * so they all answer with the same bounded results and the same typed errors.
 *
 * Calls run in the host's scope: closing it (the end of the layer) interrupts whatever still
 * runs, which for Bash means its whole process tree is stopped before the scope is done. Every
 * process a host's tools start goes through its `Supervisor` (one per host unless the context
 * gives one).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Deferred from "effect/Deferred"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as path from "node:path"
import type { CheckpointError, CheckpointStore, Transcript } from "@toolcap/checkpoint"
import { Budgets, type EnvPolicy, ToolError } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, FileIndex, LineIndex, Supervisor, Workspace } from "@toolcap/tools"
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
export type StartError = ToolError.ToolPathDenied | ToolError.ToolInvalidInput | EnvPolicy.EnvPolicyInvalid

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
   * Runs Bash as one stream: its chunks in order (`{ _tag: "Chunk", chunk }`), then its result as
   * the last element (`{ _tag: "Result", result }`); a typed failure (timeout, abort, bad input)
   * fails the stream. The stream is pulled by its consumer: a consumer that is slow to pull pauses
   * the command's pipes (at most `Bash.stream`'s bound of chunks is held). Ending the stream early,
   * interrupting it or closing the host stops the call and its whole process tree.
   */
  readonly bashStream: (
    input: unknown,
    options?: Omit<CallOptions, "onChunk">
  ) => Stream.Stream<Bash.BashEvent, CallError>
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
   * When set, sweep at startup (rules F6): remove other sessions' scratch directories whose owner
   * process is gone and that did not change for this long. Unset: no sweep.
   */
  readonly sweepStaleAfterMs?: number | undefined
  /** Sees every call: its input, Bash's chunks, its outcome (a live viewer, a log). */
  readonly observer?: CallObserver.CallObserver | undefined
  /**
   * How many Bash calls the host runs at once; the others wait for a slot (their results report
   * `admission.waitedMs`, their timeouts count from their start). Default:
   * `TOOLCAP_MAX_CONCURRENT_CALLS`, else 8 per core (`Supervisor.Options.maxConcurrentCalls`).
   */
  readonly maxConcurrentCalls?: number | undefined
  /**
   * Bash's environment policy (`EnvPolicy`: `inherit`, `exclude`, `includeOnly`, `include`,
   * `set`); default: the host's variables without the secret-looking names. A bad policy fails
   * the host's start with `EnvPolicyInvalid`.
   */
  readonly environment?: EnvPolicy.EnvPolicy | undefined
}

/**
 * The checkpoint database file of a data dir.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkpointFileOf = (dataDir: string): string =>
  path.join(path.resolve(dataDir), checkpointFileName)

/**
 * The checkpoint package, loaded the first time a host needs it: its transcript codecs and SQL
 * stores are most of what would otherwise be evaluated when a host starts, and a one-shot
 * `toolcap call` never checkpoints.
 */
const loadCheckpoint = Effect.promise(() => import("@toolcap/checkpoint"))

/**
 * The checkpoint package's `CheckpointStore.defaultFileName`, not imported: naming the file must
 * not load the package (`loadCheckpoint`). A test checks that the two agree.
 */
const checkpointFileName = "checkpoints.sqlite"

type StoreService = Context.Tag.Service<CheckpointStore.CheckpointStore>

/** A store that opens `location` on first use, in the current scope. */
const openOnFirstUse = (location: string): Effect.Effect<StoreService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const opened = yield* Effect.cached(
      Effect.flatMap(loadCheckpoint, ({ CheckpointStore: Store }) =>
        Effect.map(Layer.buildWithScope(Store.layerFromLocation(location), scope), (context) =>
          Context.get(context, Store.CheckpointStore)
        )
      )
    )
    return {
      save: (sessionId, transcript, checkpoint) =>
        Effect.flatMap(opened, (store) => store.save(sessionId, transcript, checkpoint)),
      latest: (sessionId) => Effect.flatMap(opened, (store) => store.latest(sessionId)),
      get: (checkpointId) => Effect.flatMap(opened, (store) => store.get(checkpointId)),
      list: (sessionId) => Effect.flatMap(opened, (store) => store.list(sessionId)),
      transcript: (sessionId) => Effect.flatMap(opened, (store) => store.transcript(sessionId))
    } satisfies StoreService
  })

/**
 * A checkpoint store that opens `location` on first use, in the layer's scope: a host that never
 * checkpoints never creates (or connects to) its database.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStoreOnFirstUse = (location: string): Layer.Layer<CheckpointStore.CheckpointStore> =>
  Layer.unwrapEffect(
    Effect.map(loadCheckpoint, ({ CheckpointStore: Store }) =>
      Layer.scoped(Store.CheckpointStore, openOnFirstUse(location))
    )
  )

/** The supervisor options a host's configuration names. */
const supervisorOptions = (config: Pick<ToolHostConfig, "maxConcurrentCalls">): Supervisor.Options =>
  config.maxConcurrentCalls === undefined ? {} : { maxConcurrentCalls: config.maxConcurrentCalls }

/**
 * The default file system, checkpoint store and supervisor of a host: Node's file system, the
 * SQLite file (or `postgres://` URL) of `config.checkpointFile`, default
 * `<dataDir>/checkpoints.sqlite`, opened on first use, and a `Supervisor` of its own.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDefaults = (
  config: Pick<ToolHostConfig, "dataDir" | "checkpointFile" | "maxConcurrentCalls">
): Layer.Layer<FileSystem.FileSystem | CheckpointStore.CheckpointStore | Supervisor.Supervisor> =>
  Layer.mergeAll(
    NodeFileSystem.layer,
    layerStoreOnFirstUse(config.checkpointFile ?? checkpointFileOf(config.dataDir)),
    Supervisor.layer(supervisorOptions(config))
  )

/**
 * Builds the host in the current scope on the file system, checkpoint store and supervisor of the
 * context (`CheckpointStore.layerMemory` or `Supervisor.layerTest` in tests, `layerDefaults`
 * otherwise).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (
  config: ToolHostConfig
): Effect.Effect<
  ToolHostService,
  StartError,
  | Budgets.Budgets
  | FileSystem.FileSystem
  | CheckpointStore.CheckpointStore
  | Supervisor.Supervisor
  | Scope.Scope
> =>
  Effect.flatMap(loadCheckpoint, ({ CheckpointStore: Store }) =>
    Effect.flatMap(Store.CheckpointStore, (store) => makeOn(config, store))
  )

/** The host on `store` (given, not looked up: `make` gives one without loading the checkpoint package). */
const makeOn = (
  config: ToolHostConfig,
  store: StoreService
): Effect.Effect<
  ToolHostService,
  StartError,
  Budgets.Budgets | FileSystem.FileSystem | Supervisor.Supervisor | Scope.Scope
> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    const fs = yield* FileSystem.FileSystem
    const supervisor = yield* Supervisor.Supervisor
    // a bad policy is refused before anything is made
    const environment =
      config.environment === undefined
        ? Bash.Environment.defaultValue()
        : yield* Bash.environment(config.environment, "environment")
    // refused at start: a data dir that is not a normal writable directory (/proc/1, a file, read-only)
    yield* Scratch.checkDataDir(config.dataDir)
    // The tools' services, made one after the other rather than as merged layers: building
    // layers forks a fiber per layer and memoises each, a visible part of a one-shot call's start.
    const workspace = yield* Workspace.make({
      root: config.workspace,
      approvedExternalRoots: config.approvedExternalRoots
    })
    const scratch = yield* Scratch.make({ dataDir: config.dataDir, sessionId: config.sessionId }).pipe(
      Effect.provideService(FileSystem.FileSystem, fs)
    )
    const services = Context.make(Workspace.Workspace, workspace).pipe(
      Context.add(Bash.Environment, environment),
      Context.add(Scratch.Scratch, scratch),
      Context.add(Budgets.Budgets, budgets),
      Context.add(Supervisor.Supervisor, supervisor),
      Context.add(LineIndex.LineIndex, LineIndex.makeUnsafe())
    )
    const toolContext =
      config.fileIndex === false
        ? services
        : Context.merge(services, yield* Layer.buildWithScope(FileIndex.layer(), yield* Effect.scope))
    if (config.sweepStaleAfterMs !== undefined) {
      yield* Scratch.sweep(config.dataDir, { staleAfterMs: config.sweepStaleAfterMs }).pipe(
        Effect.provideService(FileSystem.FileSystem, fs)
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

    // completes when the host closes: every Bash stream still pulled stops (its tree with it)
    const closing = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(closing, undefined))

    const bashStream = (
      input: unknown,
      options: Omit<CallOptions, "onChunk"> = {}
    ): Stream.Stream<Bash.BashEvent, CallError> =>
      Stream.suspend(() => {
        const callId = options.callId ?? globalThis.crypto.randomUUID()
        const events = Bash.stream(input, { callId, signal: options.signal }).pipe(
          Stream.provideContext(toolContext),
          Stream.interruptWhen(Deferred.await(closing))
        )
        return observer === undefined
          ? events
          : CallObserver.observeStream(observer, "Bash", input, callId, events)
      })

    const checkpoint = (transcript: unknown, options: CheckpointOptions = {}) =>
      Effect.gen(function* () {
        const checkpointPackage = yield* loadCheckpoint
        const neutral = yield* checkpointPackage.Transcript.fromAny(transcript, options.format)
        const built = yield* checkpointPackage.Checkpoint.build(neutral, { summary: options.summary }).pipe(
          Effect.provide(
            Layer.merge(checkpointPackage.TokenEstimator.layer, Layer.succeed(Budgets.Budgets, budgets))
          )
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
      bashStream,
      checkpoint,
      latestCheckpoint,
      endSession
    } satisfies ToolHostService
  })

/**
 * Builds the host in the current scope on the default file system and checkpoint store
 * (`layerDefaults`), and a supervisor of its own in that scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: ToolHostConfig
): Effect.Effect<ToolHostService, StartError, Budgets.Budgets | Scope.Scope> =>
  // the store opens on first use in the caller's scope, so it lives as long as the host; the
  // checkpoint package is not loaded before then
  Effect.flatMap(openOnFirstUse(config.checkpointFile ?? checkpointFileOf(config.dataDir)), (store) =>
    Effect.flatMap(Supervisor.make(supervisorOptions(config)), (supervisor) =>
      makeOn(config, store).pipe(
        Effect.provideService(Supervisor.Supervisor, supervisor),
        Effect.provide(NodeFileSystem.layer)
      )
    )
  )

/**
 * The host as a layer on the file system, checkpoint store and supervisor it is given; its scope
 * is the session's lifetime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  config: ToolHostConfig
): Layer.Layer<
  ToolHost,
  StartError,
  Budgets.Budgets | FileSystem.FileSystem | CheckpointStore.CheckpointStore | Supervisor.Supervisor
> => Layer.scoped(ToolHost, makeWith(config))

/**
 * The host as a layer on the default file system, checkpoint store and supervisor; its scope is
 * the session's lifetime.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: ToolHostConfig): Layer.Layer<ToolHost, StartError, Budgets.Budgets> =>
  Layer.provide(layerWith(config), layerDefaults(config))
