/**
 * Vercel AI SDK (`ai` 6.x) tools built from the same definitions: description and input JSON
 * schema rendered from the budgets, `execute` running the Effect host's tool (a Promise API host
 * is accepted for the Effect host underneath it). `execute` resolves to the
 * wire `Outcome` (errors are values here too); the model sees `ModelOutput`'s plain text: Read's
 * lines, Grep's and Glob's lines, Bash's bounded combined text, a tool error as error text led by
 * its stable `code`.
 * The SDK's `abortSignal` stops the call (Bash: the whole process tree). Bash streams: while it
 * runs, `execute` yields preliminary results (`{ ok: true, result: { running: true, stdout,
 * stderr } }`, the newest output of each stream, bounded) before the final outcome.
 *
 * @since 0.1.0
 */
import type { Tool } from "ai"
import * as Effect from "effect/Effect"
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

/**
 * Runs Bash as an AI SDK streaming `execute`: yields `{ ok: true, result: BashProgress }` while
 * it runs (one per batch of new output), then the outcome. Chunks that arrive while the SDK has
 * not taken the previous yield are folded into the next one.
 */
/** Runs a call of the Effect host to its outcome; a defect rejects. */
const callOutcome = async (
  host: ToolHost.ToolHostService,
  name: string,
  input: unknown,
  options: ToolHost.CallOptions
): Promise<Outcome.Outcome> =>
  Outcome.settle(name, await Effect.runPromiseExit(host.call(name, input, options)))

async function* streamBash(
  host: ToolHost.ToolHostService,
  input: unknown,
  signal: AbortSignal | undefined,
  callId: string,
  onChunk: ToolsOptions["onChunk"]
): AsyncGenerator<Outcome.Outcome, void> {
  const tail = { stdout: "", stderr: "" }
  let fresh = false
  let wake: (() => void) | undefined
  const notify = () => {
    wake?.()
    wake = undefined
  }
  const outcome = callOutcome(host, "Bash", input, {
    signal,
    callId,
    onChunk: (chunk) => {
      onChunk?.(chunk)
      tail[chunk.stream] = (tail[chunk.stream] + chunk.data).slice(-PRELIMINARY_MAX_CHARS)
      fresh = true
      notify()
    }
  })
  let done = false
  const finished = outcome.finally(() => {
    done = true
    notify()
  })
  for (;;) {
    if (fresh) {
      fresh = false
      const progress: BashProgress = { running: true, stdout: tail.stdout, stderr: tail.stderr }
      yield { ok: true, result: progress }
      continue
    }
    // the SDK takes the last value yielded as the tool's result
    if (done) {
      yield await finished
      return
    }
    await new Promise<void>((resolve) => (wake = resolve))
  }
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
      inputSchema: jsonSchema<unknown>(def.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute:
        def.name === "Bash"
          ? (input, { abortSignal, toolCallId }) =>
              streamBash(host, input, abortSignal, toolCallId, options.onChunk)
          : (input, { abortSignal, toolCallId }) =>
              callOutcome(host, def.name, input, { signal: abortSignal, callId: toolCallId }),
      toModelOutput: ({ output }) => toModelOutput(def.name, output, options.text)
    })
  ])
  return Object.fromEntries(entries) as Record<ToolDefs.ToolName, Tool<unknown, Outcome.Outcome>>
}
