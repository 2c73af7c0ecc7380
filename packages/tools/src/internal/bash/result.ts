/**
 * The Bash tool's answer: each stream's capture cut to its result budget and marked, the fuller
 * capture spilled when cut, and the combined text the model reads (layout in `BashResult`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Budgets, Truncate, Truncation } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import type { BashResult } from "../../Bash.js"
import type * as Supervisor from "../../Supervisor.js"
import type * as Output from "./output.js"

/** How a call's tree was contained and what stopping it did. */
export type Termination = Supervisor.Containment & Supervisor.Stopped

/** How many pids the model-facing text lists; the structured `killedPids` holds them all. */
const LISTED_PIDS = 10

const listPids = (pids: ReadonlyArray<number>): string =>
  pids.length <= LISTED_PIDS
    ? pids.join(", ")
    : `${pids.slice(0, LISTED_PIDS).join(", ")} and ${pids.length - LISTED_PIDS} more`

const formatDuration = (ms: number): string => `${(ms / 1000).toFixed(2)}s`

export type Ending =
  | { readonly kind: "Exited" }
  | { readonly kind: "TimedOut"; readonly timeoutSeconds: number }
  | { readonly kind: "Aborted" }

interface StreamReport {
  readonly text: string
  readonly truncation: Truncation.Truncation | undefined
  readonly spillPath: string | undefined
  readonly omitted: { readonly bytes: number; readonly lines: number }
}

/** Cuts one stream's capture to the result budget, spilling the fuller capture when cut. */
const reportStream = (
  capture: Truncate.Cut,
  label: string,
  budget: { readonly maxBytes: number; readonly maxLines: number },
  spillMaxBytes: number,
  scratch: Scratch.ScratchValue
): Effect.Effect<StreamReport> =>
  Effect.gen(function* () {
    const excerpt = Truncate.narrow(capture, budget)
    let spillPath: string | undefined
    if (excerpt.truncated) {
      // the spill copy is the capture, cut (same end kept) to the spill cap when that is smaller
      const copy =
        capture.keptBytes > spillMaxBytes
          ? Truncate.narrow(capture, { maxBytes: spillMaxBytes, maxLines: capture.maxLines })
          : capture
      // a copy no fuller than the excerpt would back nothing: no file, no spill sentence
      if (copy.keptBytes > excerpt.keptBytes) {
        spillPath = Option.getOrUndefined(yield* scratch.spill(label, copy.bytes))
      }
    }
    return {
      text: Truncate.render(excerpt, spillPath),
      truncation: excerpt.truncated ? Truncation.fromCut(excerpt, spillPath) : undefined,
      spillPath,
      omitted: {
        bytes: capture.totalBytes - capture.keptBytes,
        lines: capture.totalLines - capture.keptLines
      }
    }
  })

const headline = (
  ending: Ending,
  status: Supervisor.ExitStatus | undefined,
  durationMs: number,
  termination: Termination,
  killGraceMs: number
): string => {
  const what =
    ending.kind === "TimedOut"
      ? `timed out after ${ending.timeoutSeconds}s`
      : ending.kind === "Aborted"
        ? "aborted"
        : status?.code !== null && status?.code !== undefined
          ? `exit code: ${status.code}`
          : `terminated by signal: ${status?.signal ?? "unknown"}`
  const lines = [`${what} · duration: ${formatDuration(durationMs)}`]
  const pids = termination.signalled
  if (pids.length > 0) {
    if (ending.kind === "Exited") {
      lines.push(`ended ${pids.length} process(es) still running after the command exited: ${listPids(pids)}`)
    } else {
      const killed = termination.killed.length
      lines.push(
        `stopped the process tree: SIGTERM to ${pids.length} process(es)` +
          (killed > 0 ? `, SIGKILL to ${killed} still alive after ${killGraceMs} ms` : "") +
          `: ${listPids(pids)}`
      )
    }
  }
  if (termination.unstoppable.length > 0) {
    lines.push(
      `could not stop ${termination.unstoppable.length} process(es) owned by another user: ${listPids(termination.unstoppable)}`
    )
  }
  if (termination.survivors.length > 0) {
    lines.push(
      `could not stop ${termination.survivors.length} process(es) still alive after SIGKILL: ${listPids(termination.survivors)}`
    )
  }
  if (termination.pipesHeld) {
    lines.push(
      "the output pipes were still held open by a process outside the tree; they were closed on this side and later output is lost"
    )
  }
  return lines.join("\n")
}

const section = (name: string, text: string): string =>
  `--- ${name} ---\n${text.endsWith("\n") ? text.slice(0, -1) : text}`

export const buildResult = (input: {
  readonly callId: string
  readonly runId: string
  readonly ending: Ending
  readonly status: Supervisor.ExitStatus | undefined
  readonly durationMs: number
  readonly termination: Termination
  readonly stdout: Output.StreamOutput
  readonly stderr: Output.StreamOutput
}): Effect.Effect<BashResult, never, Budgets.Budgets | Scratch.Scratch> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    const scratch = yield* Scratch.Scratch
    const stdout = yield* reportStream(
      input.stdout.capture(),
      "bash-stdout",
      { maxBytes: budgets.shellStdoutMaxBytes, maxLines: budgets.shellStdoutMaxLines },
      budgets.spillMaxBytes,
      scratch
    )
    const stderr = yield* reportStream(
      input.stderr.capture(),
      "bash-stderr",
      { maxBytes: budgets.shellStderrMaxBytes, maxLines: budgets.shellStderrMaxLines },
      budgets.spillMaxBytes,
      scratch
    )
    const durationMs = Math.round(input.durationMs)
    const sections = [
      ...(stdout.text.length > 0 ? [section("stdout", stdout.text)] : []),
      ...(stderr.text.length > 0 ? [section("stderr", stderr.text)] : [])
    ]
    const output = [
      headline(input.ending, input.status, durationMs, input.termination, budgets.bashKillGraceMs),
      ...(sections.length > 0 ? sections : ["(no output)"])
    ].join("\n")
    return {
      callId: input.callId,
      runId: input.runId,
      stdout: stdout.text,
      stderr: stderr.text,
      exitCode: input.status?.code ?? null,
      signal: input.status?.signal ?? null,
      durationMs,
      truncated: stdout.truncation !== undefined || stderr.truncation !== undefined,
      truncation: {
        ...(stdout.truncation !== undefined ? { stdout: stdout.truncation } : {}),
        ...(stderr.truncation !== undefined ? { stderr: stderr.truncation } : {})
      },
      omitted: { stdout: stdout.omitted, stderr: stderr.omitted },
      spill: {
        ...(stdout.spillPath !== undefined ? { stdout: stdout.spillPath } : {}),
        ...(stderr.spillPath !== undefined ? { stderr: stderr.spillPath } : {})
      },
      lastSeq: { stdout: input.stdout.lastSeq(), stderr: input.stderr.lastSeq() },
      killedPids: [...input.termination.signalled],
      termination: {
        containment: input.termination.containment,
        ...(input.termination.cgroupEntry === undefined
          ? {}
          : { cgroupEntry: input.termination.cgroupEntry }),
        ...(input.termination.fallbackReason === undefined
          ? {}
          : { fallbackReason: input.termination.fallbackReason }),
        survivors: [...input.termination.unstoppable, ...input.termination.survivors],
        pipesHeld: input.termination.pipesHeld
      },
      output
    }
  })
