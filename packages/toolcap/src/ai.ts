/**
 * `toolcap/ai`: the Vercel AI SDK tools of a host (`ai` 6 or 7, an optional peer the host
 * installs). `ai` is loaded on the first `aiSdkTools` call, and only this entry names its types.
 *
 * @since 0.1.0
 */
import type { Tool } from "ai"
import type { PromiseHost } from "@toolcap/adapters"
import * as AiSdk from "@toolcap/adapters/AiSdk"
import type { PromiseToolHost, TextOptions } from "./Host.js"
import type { BashChunk, ToolName, ToolOutcome } from "./Results.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface AiSdkToolsOptions {
  /** Receives Bash's stdout/stderr chunks while it runs (e.g. to render them in a UI). */
  readonly onChunk?: ((chunk: BashChunk) => void) | undefined
  /** How results read as text for the model (Read's line numbers). */
  readonly text?: TextOptions | undefined
}

/**
 * `{ Read, Glob, Grep, Bash }` for `generateText` / `streamText`. Bash streams its output so far
 * as preliminary results, then its outcome; the SDK's `abortSignal` stops the whole process tree.
 * Rejects with a message naming the package to install when `ai` is missing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const aiSdkTools = (
  host: PromiseToolHost,
  options?: AiSdkToolsOptions
): Promise<Record<ToolName, Tool<unknown, ToolOutcome>>> =>
  // the published host type leaves out the Effect host underneath, which every host made by
  // createToolHost carries
  AiSdk.tools(host as PromiseHost.PromiseToolHost, options)
