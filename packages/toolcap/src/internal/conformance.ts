/**
 * Proves the published types (`Results.ts`, `Budgets.ts`, `Checkpoints.ts`, `Host.ts`) are what
 * the code produces and takes. Type-checked with the package (`typecheck`) and by the build, never
 * emitted. A line here that fails names the type to update in its published module: a field the
 * Schemas gained or lost, optional ones included.
 */
import type { Outcome, PromiseHost, Specs, ToolDefs, ToolHost } from "@toolcap/adapters"
import type * as AiSdk from "@toolcap/adapters/AiSdk"
import type * as Mcp from "@toolcap/adapters/Mcp"
import type { AiSdkToolsOptions } from "../ai.js"
import type * as Budgets from "../Budgets.js"
import type * as Checkpoints from "../Checkpoints.js"
import type * as Host from "../Host.js"
import type { RunningServer, StdioOptions } from "../mcp.js"
import type * as Results from "../Results.js"

/** Each assignable to the other. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** Every optional field made required, all the way down: a field missing on one side then shows. */
type Filled<T> =
  T extends ReadonlyArray<infer E>
    ? ReadonlyArray<Filled<E>>
    : T extends (...args: never) => unknown
      ? T
      : T extends object
        ? { readonly [K in keyof T]-?: Filled<Exclude<T[K], undefined>> }
        : T

/** The same fields of the same types, optional ones included. */
type Same<A, B> = Mutual<A, B> extends true ? Mutual<Filled<A>, Filled<B>> : false

type Holds<T extends true> = T

type Source = PromiseHost.PromiseToolHost

export type Proofs = [
  Holds<Same<Results.ToolResults, Specs.ToolResults>>,
  Holds<Same<Results.ReadResult, Specs.ToolResults["Read"]>>,
  Holds<Same<Results.GlobResult, Specs.ToolResults["Glob"]>>,
  Holds<Same<Results.GrepResult, Specs.ToolResults["Grep"]>>,
  Holds<Same<Results.BashResult, Specs.ToolResults["Bash"]>>,
  Holds<Same<Results.BashChunk, Parameters<NonNullable<PromiseHost.CallOptions["onChunk"]>>[0]>>,
  Holds<Same<Results.ToolOutcome, Outcome.Outcome>>,
  Holds<Same<Results.ToolName, ToolDefs.ToolName>>,
  Holds<Same<Budgets.BudgetsValue, Source["budgets"]>>,
  Holds<Same<Budgets.BudgetField, keyof NonNullable<PromiseHost.ToolHostOptions["budgets"]>>>,
  Holds<
    Same<
      Checkpoints.StoredCheckpoint,
      Extract<Awaited<ReturnType<Source["checkpoint"]>>, { ok: true }>["result"]
    >
  >,
  Holds<Same<Checkpoints.TranscriptFormat, NonNullable<ToolHost.CheckpointOptions["format"]>>>,
  Holds<Same<Host.ToolDef, ToolDefs.ToolDef>>,
  Holds<Same<Host.CallOptions, PromiseHost.CallOptions>>,
  Holds<Same<Host.CheckpointOptions, ToolHost.CheckpointOptions>>,
  // the host's options, less the in-process observer (the live viewer's feed) it does not publish
  Holds<Same<Host.ToolHostOptions, Omit<PromiseHost.ToolHostOptions, "observer">>>,
  Holds<Same<Host.PromiseToolHost, Omit<Source, "toolHost">>>,
  Holds<Same<AiSdkToolsOptions, AiSdk.ToolsOptions>>,
  Holds<Same<StdioOptions, Omit<Mcp.StdioOptions, "observer">>>,
  Holds<Same<RunningServer, Mcp.RunningServer>>
]
