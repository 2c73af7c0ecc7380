/**
 * Vercel AI SDK tools (`ai` 6 or 7, an optional peer loaded on first use) built from the same
 * definitions: description and input JSON schema rendered from the budgets, `execute` running the
 * Effect host's tool (a Promise API host is accepted for the Effect host underneath it). `execute`
 * resolves to the wire `Outcome` (errors are values here too); the model sees `ModelOutput`'s
 * plain text: Read's lines, Grep's and Glob's lines, Bash's bounded combined text, a tool error as
 * error text led by its stable `code`. The SDK's `abortSignal` stops the call (Bash: the whole process tree). Bash
 * streams: while it runs, `execute` yields preliminary results (`{ ok: true, result: { running:
 * true, stdout, stderr } }`, the newest output of each stream, bounded) before the final outcome.
 *
 * @since 0.1.0
 */
import type { Tool } from "ai"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Stream from "effect/Stream"
import type { Bash } from "@toolcap/tools"
import * as Optional from "./internal/optional.js"
import * as ModelOutput from "./ModelOutput.js"
import * as Outcome from "./Outcome.js"
import type * as PromiseHost from "./PromiseHost.js"
import type * as ToolDefs from "./ToolDefs.js"
import type * as ToolHost from "./ToolHost.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolsOptions {
  /** Receives Bash's stdout/stderr chunks while it runs (e.g. to render them in a UI). */
  readonly onChunk?: ((chunk: Bash.BashChunk) => void) | undefined
  /** How results read as text for the model (Read's line numbers). */
  readonly text?: ModelOutput.TextOptions | undefined
}

/**
 * What the model sees of an outcome (see `ModelOutput`): the tool's plain text (Read's lines,
 * Grep's and Glob's lines, Bash's bounded combined text), an error as error text with its code.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toModelOutput = (
  toolName: string,
  outcome: Outcome.Outcome,
  options: ModelOutput.TextOptions = {}
): { readonly type: "text" | "error-text"; readonly value: string } =>
  outcome.ok
    ? { type: "text", value: ModelOutput.text(toolName, outcome, options) }
    : { type: "error-text", value: ModelOutput.errorText(outcome.error) }

/**
 * What a running Bash call yields before its result: the newest output of each stream so far,
 * at most `PRELIMINARY_MAX_CHARS` characters each (a UI shows a running command's tail).
 *
 * @since 0.1.0
 * @category models
 */
export interface BashProgress {
  readonly running: true
  readonly stdout: string
  readonly stderr: string
}

/**
 * Characters of each stream a preliminary Bash result keeps: its newest output, enough for a
 * UI's view of a running command, while a command writing gigabytes costs the host nothing more.
 *
 * @since 0.1.0
 * @category models
 */
export const PRELIMINARY_MAX_CHARS = 16 * 1024

/** An exit settled as its wire outcome; a defect stays a defect. */
const settle = <A, E>(name: string, exit: Exit.Exit<A, E>): Effect.Effect<Outcome.Outcome> =>
  Either.match(Outcome.fromExit(name, exit), {
    onLeft: (cause) => Effect.die(Cause.squash(cause)),
    onRight: Effect.succeed
  })

/** A call of the Effect host settled as its wire outcome; a defect stays a defect. */
const outcomeOf = (
  host: ToolHost.ToolHostService,
  name: string,
  input: unknown,
  options: ToolHost.CallOptions
): Effect.Effect<Outcome.Outcome> =>
  Effect.flatMap(Effect.exit(host.call(name, input, options)), (exit) => settle(name, exit))

/**
 * Bash as a stream of outcomes: `{ ok: true, result: BashProgress }` while it runs, then its
 * outcome, the last element. It reads the host's one Bash stream (`ToolHost.bashStream`) through
 * a sliding buffer of one: progress that arrives while the consumer has not taken the previous
 * value replaces it (each value carries the newest output of both streams), so a slow consumer
 * never pauses the command and is owed at most one value; the outcome, last, is never dropped.
 * Ending the stream early (the consumer stops pulling) stops the call and Bash's whole process
 * tree.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bashStream = (
  host: ToolHost.ToolHostService,
  input: unknown,
  options: Omit<ToolHost.CallOptions, "onChunk"> & ToolsOptions = {}
): Stream.Stream<Outcome.Outcome> => {
  // a stream that ends with no result (the host closed under the call) is an interruption, never
  // its last progress value taken for the result
  let settled = false
  return host.bashStream(input, { signal: options.signal, callId: options.callId }).pipe(
    Stream.mapAccumEffect({ stdout: "", stderr: "" }, (tail, event) => {
      if ("result" in event) {
        settled = true
        return Effect.map(settle("Bash", Exit.succeed(event.result)), (outcome) => [tail, outcome] as const)
      }
      options.onChunk?.(event.chunk)
      const next = {
        ...tail,
        [event.chunk.stream]: (tail[event.chunk.stream] + event.chunk.data).slice(-PRELIMINARY_MAX_CHARS)
      }
      const progress: BashProgress = { running: true, stdout: next.stdout, stderr: next.stderr }
      return Effect.succeed([next, Outcome.succeed(progress)] as const)
    }),
    Stream.catchAllCause((cause) => {
      settled = true
      return Stream.fromEffect(settle("Bash", Exit.failCause(cause)))
    }),
    Stream.concat(
      Stream.suspend(() =>
        settled
          ? Stream.empty
          : Stream.fromEffect(settle("Bash", Exit.failCause(Cause.interrupt(FiberId.none))))
      )
    ),
    // the SDK takes the last value yielded as the tool's result
    Stream.buffer({ capacity: 1, strategy: "sliding" })
  )
}

/**
 * The AI SDK tool set of a host: `{ Read, Glob, Grep, Bash }`, ready for `generateText({ tools })`.
 * Asynchronous because the AI SDK is loaded on first use: hosts (and the CLI) that never use it
 * do not pay for loading it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tools = async (
  of: ToolHost.ToolHostService | PromiseHost.PromiseToolHost,
  options: ToolsOptions = {}
): Promise<Record<ToolDefs.ToolName, Tool<unknown, Outcome.Outcome>>> => {
  const host = "toolHost" in of ? of.toolHost : of
  const { jsonSchema, tool } = await Optional.load("ai", "the AI SDK tools", () => import("ai"))
  const entries = host.definitions.map((def) => [
    def.name,
    tool<unknown, Outcome.Outcome>({
      description: def.description,
      // a draft-07 JSON Schema; the SDK types it with @types/json-schema, where the host has it
      inputSchema: jsonSchema<unknown>(def.inputSchema as unknown as Parameters<typeof jsonSchema>[0]),
      execute:
        def.name === "Bash"
          ? (input, { abortSignal, toolCallId }) =>
              Stream.toAsyncIterable(
                bashStream(host, input, { signal: abortSignal, callId: toolCallId, onChunk: options.onChunk })
              )
          : (input, { abortSignal, toolCallId }) =>
              Effect.runPromise(
                outcomeOf(host, def.name, input, { signal: abortSignal, callId: toolCallId })
              ),
      toModelOutput: ({ output }) => toModelOutput(def.name, output, options.text)
    })
  ])
  return Object.fromEntries(entries) as Record<ToolDefs.ToolName, Tool<unknown, Outcome.Outcome>>
}
