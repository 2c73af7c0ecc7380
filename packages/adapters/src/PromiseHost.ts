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
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { CheckpointStore } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import type { Bash } from "@toolcap/tools"
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
  /** Per-field overrides of the spec's limit table. */
  readonly budgets?: Partial<Record<Budgets.BudgetField, number>> | undefined
  /** SQLite file of the checkpoint store; default `<dataDir>/checkpoints.sqlite`. */
  readonly checkpointFile?: string | undefined
  /** Sweep stale scratch directories of dead sessions at startup (see `ToolHost.ToolHostConfig`). */
  readonly sweepStaleAfterMs?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly signal?: AbortSignal | undefined
  readonly onChunk?: ((chunk: Bash.BashChunk) => void) | undefined
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
  /** Runs Read, Glob, Grep or Bash. Tool errors resolve as `{ ok: false }`; only bugs reject. */
  readonly call: (name: string, input: unknown, options?: CallOptions) => Promise<Outcome.Outcome>
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

const settle = async <A>(tool: string, run: Promise<Exit.Exit<A, unknown>>): Promise<Outcome.Outcome<A>> => {
  const settled = Outcome.fromExit(tool, await run)
  if (Either.isLeft(settled)) throw Cause.squash(settled.left)
  return settled.right as Outcome.Outcome<A>
}

/**
 * Starts a tool host. Rejects when the workspace is not a directory, the session id is invalid
 * or a budget override breaks a rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createToolHost = async (options: ToolHostOptions): Promise<PromiseToolHost> => {
  const scope = Effect.runSync(Scope.make())
  const built = await Effect.runPromiseExit(
    ToolHost.make({
      workspace: options.workspace,
      dataDir: options.dataDir,
      sessionId: options.sessionId,
      approvedExternalRoots: options.approvedExternalRoots,
      checkpointFile: options.checkpointFile,
      sweepStaleAfterMs: options.sweepStaleAfterMs
    }).pipe(Effect.provide(Budgets.layerWith(options.budgets ?? {})), Scope.extend(scope))
  )
  if (Exit.isFailure(built)) {
    await Effect.runPromise(Scope.close(scope, built))
    throw Cause.squash(built.cause)
  }
  const host = built.value

  let closing: Promise<void> | undefined
  const inflight = new Set<{ readonly controller: AbortController; readonly done: Promise<unknown> }>()

  const call = async (name: string, input: unknown, callOptions: CallOptions = {}) => {
    if (closing !== undefined) throw new ToolHostClosed()
    const controller = new AbortController()
    const outer = callOptions.signal
    const forward = () => controller.abort(outer?.reason)
    if (outer?.aborted) controller.abort(outer.reason)
    else outer?.addEventListener("abort", forward, { once: true })
    const done = Effect.runPromiseExit(
      host.call(name, input, {
        signal: controller.signal,
        onChunk: callOptions.onChunk,
        callId: callOptions.callId
      })
    )
    const entry = { controller, done }
    inflight.add(entry)
    try {
      return await settle(name, done)
    } finally {
      inflight.delete(entry)
      outer?.removeEventListener("abort", forward)
    }
  }

  const checkpoint = async (transcript: unknown, checkpointOptions: ToolHost.CheckpointOptions = {}) => {
    if (closing !== undefined) throw new ToolHostClosed()
    return settle("checkpoint", Effect.runPromiseExit(host.checkpoint(transcript, checkpointOptions)))
  }

  const latestCheckpoint = async () => {
    if (closing !== undefined) throw new ToolHostClosed()
    return settle("checkpoint", Effect.runPromiseExit(Effect.map(host.latestCheckpoint, Option.getOrNull)))
  }

  const close = () => {
    closing ??= (async () => {
      for (const entry of inflight) entry.controller.abort()
      await Promise.allSettled([...inflight].map((entry) => entry.done))
      await Effect.runPromise(host.endSession)
      await Effect.runPromise(Scope.close(scope, Exit.void))
    })()
    return closing
  }

  return {
    sessionId: host.sessionId,
    sessionDir: host.sessionDir,
    workspace: host.workspace.root,
    budgets: host.budgets,
    definitions: host.definitions,
    call,
    checkpoint,
    latestCheckpoint,
    close
  }
}
