/**
 * The Promise API for hosts that do not use Effect: `createToolHost(...)` returns an object whose
 * `call(name, input, { signal, onChunk })` resolves to an `Outcome` — `{ ok: true, result }` or
 * `{ ok: false, error: { code, message, ... } }` — and never rejects for a tool error. Aborting
 * the `signal` stops the call (for Bash: the whole process tree, then `TOOL_ABORTED` with the
 * partial output). `close()` ends the session: running calls are stopped, the scratch directory
 * (spill files) is removed.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import type { CheckpointStore } from "@toolcap/checkpoint"
import { Budgets, type EnvPolicy } from "@toolcap/limits"
import { type Bash, Supervisor } from "@toolcap/tools"
import type * as CallObserver from "./CallObserver.js"
import * as ModelOutput from "./ModelOutput.js"
import * as Outcome from "./Outcome.js"
import type * as ToolDefs from "./ToolDefs.js"
import * as ToolHost from "./ToolHost.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolHostOptions {
  /** The workspace directory (Bash's cwd, base of relative paths). */
  readonly workspace: string
  /** Holds `scratch/<sessionId>/` (spill files) and the checkpoint database. */
  readonly dataDir: string
  /** `[A-Za-z0-9._-]{1,128}`, not `.` or `..`. */
  readonly sessionId: string
  /** Directories outside the workspace the tools may reach. */
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
  /**
   * The preset of budgets: `spec` (the default limit table) or `compact` (small
   * head-and-tail Bash excerpts, Read windows of a screenful); see `@toolcap/limits`.
   */
  readonly profile?: Budgets.Profile | undefined
  /** Per-field overrides of the preset's budgets. */
  readonly budgets?: Partial<Record<Budgets.BudgetField, number>> | undefined
  /** SQLite file of the checkpoint store; default `<dataDir>/checkpoints.sqlite`. */
  readonly checkpointFile?: string | undefined
  /** Sweep stale scratch directories of dead sessions at startup (see `ToolHost.ToolHostConfig`). */
  readonly sweepStaleAfterMs?: number | undefined
  /** Sees every call as it happens (e.g. the live viewer's `observer`). */
  readonly observer?: CallObserver.CallObserver | undefined
  /** Bash calls run at once; the others wait (see `ToolHost.ToolHostConfig`). Default: `TOOLCAP_MAX_CONCURRENT_CALLS`, else 8 per core. */
  readonly maxConcurrentCalls?: number | undefined
  /**
   * Bash's environment policy (`EnvPolicy` of `@toolcap/limits`), e.g. `{ inherit: "core",
   * include: ["ANTHROPIC_API_KEY"] }`; default: the host's variables without `*KEY*`,
   * `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`. A bad policy rejects `createToolHost`.
   */
  readonly environment?: EnvPolicy.EnvPolicy | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined
  /**
   * Receives Bash's chunks in order. Returning a promise makes the next chunk wait for it; a slow
   * consumer then pauses the command's pipes instead of queueing its output.
   */
  readonly onChunk?: ((chunk: Bash.BashChunk) => void | PromiseLike<void>) | undefined
  readonly callId?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PromiseToolHost {
  readonly sessionId: string
  /** The session's scratch directory, where spill files are written. */
  readonly sessionDir: string
  /** Real path of the workspace. */
  readonly workspace: string
  readonly budgets: Budgets.BudgetsValue
  /** The tool definitions rendered from `budgets`. */
  readonly definitions: ReadonlyArray<ToolDefs.ToolDef>
  /** The Effect host underneath (what `AiSdk.tools` and `Mcp.createServer` run on). */
  readonly toolHost: ToolHost.ToolHostService
  /** Runs Read, Glob, Grep or Bash. Tool errors resolve as `{ ok: false }`; only bugs reject. */
  readonly call: {
    <N extends ToolDefs.ToolName>(
      name: N,
      input: unknown,
      options?: CallOptions
    ): Promise<Outcome.Outcome<ToolDefs.ToolResults[N]>>
    (name: string, input: unknown, options?: CallOptions): Promise<Outcome.Outcome>
  }
  /**
   * Builds and persists a checkpoint of a transcript (neutral, Anthropic or OpenAI shape) for this
   * session. A refused transcript resolves as `{ ok: false }` (`CHECKPOINT_INVALID`, ...).
   */
  readonly checkpoint: (
    transcript: unknown,
    options?: ToolHost.CheckpointOptions
  ) => Promise<Outcome.Outcome<CheckpointStore.StoredCheckpoint>>
  /** The newest persisted checkpoint of this session (`result: null` when there is none). */
  readonly latestCheckpoint: () => Promise<Outcome.Outcome<CheckpointStore.StoredCheckpoint | null>>
  /**
   * What the model reads of an outcome of `tool` (see `ModelOutput.text`): Read's lines, Grep's
   * and Glob's lines, Bash's bounded output, or `CODE: message` for an error.
   */
  readonly modelText: (tool: string, outcome: Outcome.Outcome, options?: ModelOutput.TextOptions) => string
  /** Ends the session: stops running calls (their callers get `TOOL_ABORTED`), removes the scratch dir. */
  readonly close: () => Promise<void>
}

/**
 * Thrown (as a rejection) when a closed host is used.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolHostClosed extends Error {
  override readonly name = "ToolHostClosed"
  constructor() {
    super("This tool host was closed; create a new one with createToolHost().")
  }
}

const settle = async <A>(tool: string, run: Promise<Exit.Exit<A, unknown>>): Promise<Outcome.Outcome<A>> =>
  Outcome.settle(tool, await run)

const isPromiseLike = (value: unknown): value is PromiseLike<void> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

/** A Promise-style chunk consumer as the host's: a returned promise is awaited before the next chunk. */
const chunkConsumer = (onChunk: CallOptions["onChunk"]): ToolHost.CallOptions["onChunk"] =>
  onChunk === undefined
    ? undefined
    : (chunk) => {
        const delivered = onChunk(chunk)
        return isPromiseLike(delivered) ? Effect.promise(() => Promise.resolve(delivered)) : undefined
      }

/** Names the option a JavaScript caller left out, instead of failing deep inside with a TypeError. */
const requireText = (options: ToolHostOptions, field: "workspace" | "dataDir" | "sessionId"): void => {
  const value: unknown = (options as unknown as Record<string, unknown>)[field]
  if (typeof value !== "string" || value.length === 0) {
    throw new TypeError(
      `createToolHost: options.${field} must be a non-empty string (got ${value === undefined ? "nothing" : typeof value}); ${field === "dataDir" ? "pass the directory that holds scratch files and checkpoints, e.g. path.join(os.homedir(), '.local/share/toolcap')" : field === "workspace" ? "pass the directory the tools work in" : "pass an id like 'default'"}`
    )
  }
}

/**
 * The host of `options` as a layer (budgets and a stderr logger included): what the Promise API
 * and `Mcp.serveStdio` run on. The session ends (scratch removed) when the layer closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: ToolHostOptions
): Layer.Layer<ToolHost.ToolHost, ToolHost.StartError | Budgets.BudgetsInvalid> =>
  layerWith(options, ToolHost.layer)

/**
 * `layer` with the host's layer made by `build` from the options' host configuration (a host
 * with more services beside it, e.g. a viewer), budgets and the stderr logger provided to it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = <A, E>(
  options: ToolHostOptions,
  build: (config: ToolHost.ToolHostConfig) => Layer.Layer<A, E, Budgets.Budgets>
): Layer.Layer<A, E | Budgets.BudgetsInvalid> => {
  requireText(options, "workspace")
  requireText(options, "dataDir")
  requireText(options, "sessionId")
  const limitInvalid =
    options.maxConcurrentCalls === undefined
      ? undefined
      : Supervisor.maxConcurrentCallsInvalid(options.maxConcurrentCalls)
  if (limitInvalid !== undefined) {
    throw new RangeError(
      `createToolHost: options.maxConcurrentCalls ${limitInvalid}; leave it out for 8 calls per core`
    )
  }
  return build({
    workspace: options.workspace,
    dataDir: options.dataDir,
    sessionId: options.sessionId,
    approvedExternalRoots: options.approvedExternalRoots,
    checkpointFile: options.checkpointFile,
    sweepStaleAfterMs: options.sweepStaleAfterMs,
    observer: options.observer,
    maxConcurrentCalls: options.maxConcurrentCalls,
    environment: options.environment,
    endSessionOnClose: true
  }).pipe(
    Layer.provide(Budgets.layerWith(options.budgets ?? {}, options.profile ?? "spec")),
    // stdout may carry a protocol (MCP): Effect's logs go to stderr.
    Layer.provide(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.stringLogger)))
  )
}

/**
 * Starts a tool host. Rejects when the workspace is not a directory, the session id is invalid
 * or a budget override breaks a rule. A thin `ManagedRuntime` over `ToolHost`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createToolHost = async (options: ToolHostOptions): Promise<PromiseToolHost> =>
  // inside the async function, so bad options reject rather than throw
  fromRuntime(ManagedRuntime.make(layer(options)))

/**
 * The Promise API over the `ToolHost` of a runtime (which may hold more services); `close()`
 * disposes the runtime. Rejects (disposing it) when the host cannot be built.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRuntime = async <R>(
  runtime: ManagedRuntime.ManagedRuntime<ToolHost.ToolHost | R, unknown>
): Promise<PromiseToolHost> => {
  const built = await runtime.runPromiseExit(ToolHost.ToolHost)
  if (Exit.isFailure(built)) {
    await runtime.dispose()
    throw Cause.squash(built.cause)
  }
  const host = built.value
  let closing: Promise<void> | undefined
  const open = () => {
    if (closing !== undefined) throw new ToolHostClosed()
  }

  const call = async (name: string, input: unknown, callOptions: CallOptions = {}) => {
    open()
    return settle(
      name,
      runtime.runPromiseExit(
        host.call(name, input, {
          signal: callOptions.signal,
          onChunk: chunkConsumer(callOptions.onChunk),
          callId: callOptions.callId
        })
      )
    )
  }

  const checkpoint = async (transcript: unknown, checkpointOptions: ToolHost.CheckpointOptions = {}) => {
    open()
    return settle("checkpoint", runtime.runPromiseExit(host.checkpoint(transcript, checkpointOptions)))
  }

  const latestCheckpoint = async () => {
    open()
    return settle("checkpoint", runtime.runPromiseExit(Effect.map(host.latestCheckpoint, Option.getOrNull)))
  }

  // Disposing the runtime closes the host's scope: running calls are interrupted (Bash stops its
  // tree first), then the session's scratch directory is removed.
  const close = () => (closing ??= runtime.dispose())

  return {
    sessionId: host.sessionId,
    sessionDir: host.sessionDir,
    workspace: host.workspace.root,
    budgets: host.budgets,
    definitions: host.definitions,
    toolHost: host,
    call: call as PromiseToolHost["call"],
    checkpoint,
    latestCheckpoint,
    modelText: ModelOutput.text,
    close
  }
}
