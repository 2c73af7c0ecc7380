/**
 * The Bash tool's answer: each stream's capture cut to its result budget (its head, its tail, or
 * both with the marker between) and marked, the stream's copy saved when cut (the whole stream,
 * or its head and tail, as the marker says), and the combined text the model reads (layout in
 * `BashResult`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Digest } from "@toolcap/digest"
import { Budgets, Marker, Terminal, Truncate, Truncation } from "@toolcap/limits"
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

/** What the captures did not retain: everything between the ends they kept. */
const omittedOf = (captured: Output.Captured, any: Truncate.Cut) => ({
  bytes: Math.max(0, any.totalBytes - (captured.head?.keptBytes ?? 0) - (captured.tail?.keptBytes ?? 0)),
  lines: Math.max(0, any.totalLines - (captured.head?.keptLines ?? 0) - (captured.tail?.keptLines ?? 0))
})

type Budget = { readonly maxBytes: number; readonly maxLines: number; readonly headShare: number }

/** One capture cut to the result budget and marked, the saved copy named in its marker. */
const excerptOf = (
  captured: Output.Captured,
  budget: Budget,
  saved: Marker.SavedCopy | undefined
): { readonly text: string; readonly truncation: Truncation.Truncation | undefined } => {
  const any = (captured.head ?? captured.tail)!
  const whole = Truncate.narrow(any, budget)
  if (!whole.truncated) return { text: whole.text, truncation: undefined }
  const parts = Truncate.splitBudget(budget, budget.headShare)
  if (parts.head !== undefined && parts.tail !== undefined) {
    const head = Truncate.narrow(captured.head!, parts.head)
    const tail = Truncate.narrow(captured.tail!, parts.tail)
    return {
      text: Truncate.renderBoth(head, tail, budget, saved),
      truncation: Truncation.fromBoth(head, tail, budget, saved)
    }
  }
  const excerpt = Truncate.narrow(any, parts.head ?? parts.tail!)
  return { text: Truncate.render(excerpt, saved), truncation: Truncation.fromCut(excerpt, saved) }
}

interface StreamReport {
  /** The raw excerpt (the `stdout`/`stderr` field). */
  readonly raw: string
  /** The rendered excerpt the model reads; the budgets and `truncation` are its. */
  readonly text: string
  readonly truncation: Truncation.Truncation | undefined
  /** Whether the raw excerpt was cut. */
  readonly rawTruncated: boolean
  readonly spillPath: string | undefined
  readonly saved: Marker.SavedCopy | undefined
  readonly rendering: Terminal.Counts
  readonly omitted: { readonly bytes: number; readonly lines: number }
}

/**
 * Cuts one stream's raw and rendered captures to its result budget; saves the stream's raw copy
 * (the whole stream, or its head and tail) when either was cut or when rendering changed more
 * than colour (rules T6), and names it in the markers as what it is.
 */
const reportStream = (
  output: Output.StreamOutput,
  budget: Budget,
  failed: boolean
): Effect.Effect<StreamReport> =>
  Effect.gen(function* () {
    const captured = output.capture()
    const rendered = output.renderedCapture()
    const rendering = output.renderCounts()
    const any = (captured.head ?? captured.tail)!
    const omitted = omittedOf(captured, any)
    const rawTruncated = Truncate.narrow(any, budget).truncated
    if (output.digest !== undefined) {
      const digested = yield* reportDigest(output, output.digest, captured, budget, failed)
      if (digested !== undefined) return { ...digested, rawTruncated, rendering, omitted }
    }
    const renderedAny = (rendered.head ?? rendered.tail)!
    const keepCopy =
      rawTruncated ||
      Truncate.narrow(renderedAny, budget).truncated ||
      Terminal.changedBeyondColour(rendering)
    if (!keepCopy) output.spill?.discard()
    const saved: Marker.SavedCopy | undefined =
      !keepCopy || output.spill === undefined
        ? undefined
        : Option.getOrUndefined(yield* output.spill.save(any.totalLines))
    const raw = excerptOf(captured, budget, saved)
    const model = excerptOf(rendered, budget, saved)
    return {
      raw: raw.text,
      text: model.text,
      truncation: model.truncation,
      rawTruncated,
      spillPath: saved?.path,
      saved,
      rendering,
      omitted
    }
  })

/**
 * The digest of one stream (rules G1–G9), when it changed the text: the digest reads the rendered
 * stream; the raw stream is saved to its spill copy whatever the exit (whole, or head and tail, as
 * the copy's sentence says), the header names the copy, and the budget applies last (a cut of the
 * digest's own text, which the digest already fitted to the budget, must-keep lines first).
 * Undefined when the digest left the text as it is: the stream is cut as without a digest.
 */
const reportDigest = (
  output: Output.StreamOutput,
  digester: Digest.Digester,
  captured: Output.Captured,
  budget: Budget,
  failed: boolean
): Effect.Effect<Omit<StreamReport, "rawTruncated" | "rendering" | "omitted"> | undefined> =>
  Effect.gen(function* () {
    const outcome = digester.finish({ failed, budget })
    if (!outcome.changed) return undefined
    const any = (captured.head ?? captured.tail)!
    const saved: Marker.SavedCopy | undefined =
      output.spill === undefined ? undefined : Option.getOrUndefined(yield* output.spill.save(any.totalLines))
    const digest = outcome.render({
      bytes: any.totalBytes,
      lines: any.totalLines,
      path: saved?.path,
      copy: saved === undefined || saved.complete ? undefined : Marker.nextStep(saved)
    })
    // the budget applies last: the digest fits it already, so this cuts only a header too long
    const cut = Truncate.cutString(digest + "\n", {
      keep: "head",
      maxBytes: budget.maxBytes,
      maxLines: budget.maxLines
    })
    const text = cut.truncated ? Truncate.render(cut, saved) : digest
    return {
      raw: excerptOf(captured, budget, saved).text,
      text,
      truncation: {
        kept: "both",
        keptLines: outcome.kept,
        totalLines: any.totalLines,
        keptBytes: Buffer.byteLength(text),
        totalBytes: any.totalBytes,
        limitLines: budget.maxLines,
        limitBytes: budget.maxBytes,
        ...Truncation.spillFields(saved)
      },
      spillPath: saved?.path,
      saved
    }
  })

const plural = (count: number, one: string, many: string): string =>
  `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`

/**
 * The notice of what rendering changed in one stream, or undefined when it changed nothing:
 * `stdout rendered as a terminal shows it: 412 progress frames collapsed, 1,034 colour codes
 * removed. Raw bytes: Full output saved to … — Grep it, or Read it with offset/limit.`
 */
const renderingNotice = (name: string, report: StreamReport): string | undefined => {
  const counts = report.rendering
  const parts = [
    ...(counts.progressFrames > 0
      ? [plural(counts.progressFrames, "progress frame collapsed", "progress frames collapsed")]
      : []),
    ...(counts.colourCodes > 0
      ? [plural(counts.colourCodes, "colour code removed", "colour codes removed")]
      : []),
    ...(counts.otherSequences > 0
      ? [plural(counts.otherSequences, "other escape sequence removed", "other escape sequences removed")]
      : []),
    ...(counts.linesErased > 0 ? [plural(counts.linesErased, "line erased", "lines erased")] : []),
    ...(counts.controls > 0
      ? [plural(counts.controls, "control character applied", "control characters applied")]
      : []),
    ...(counts.clippedChars > 0
      ? [
          plural(
            counts.clippedChars,
            "character past the right margin dropped",
            "characters past the right margin dropped"
          )
        ]
      : [])
  ]
  if (parts.length === 0) return undefined
  const copy = report.saved === undefined ? "" : ` Raw bytes: ${Marker.nextStep(report.saved)}`
  return `${name} rendered as a terminal shows it: ${parts.join(", ")}.${copy}`
}

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
  const foreign = termination.foreign ?? []
  if (foreign.length > 0) {
    const back = foreign.filter((member) => member.movedTo !== undefined)
    lines.push(
      `left alone ${foreign.length} process(es) the call did not start, found in its cgroup: ${listPids(foreign.map((member) => member.pid))}` +
        (back.length === foreign.length
          ? " (each moved back to the cgroup it came from)"
          : ` (${foreign.length - back.length} could not be moved out of the call's cgroup)`)
    )
  }
  const shm = termination.shmRemoved ?? []
  if (shm.length > 0) {
    lines.push(
      `removed ${shm.length} file(s) the call left in /dev/shm: ${shm
        .slice(0, 5)
        .map((name) => JSON.stringify(name))
        .join(", ")}${shm.length > 5 ? ", ..." : ""}`
    )
  }
  if ((termination.thawed ?? 0) > 0) {
    lines.push(`thawed ${termination.thawed} frozen cgroup(s) of the call before stopping it`)
  }
  const ceiling = termination.memoryCeiling
  if (ceiling !== undefined && termination.memory?.reached === true) {
    const kills = termination.memory.oomKills
    lines.push(
      `the call reached its memory ceiling of ${Marker.formatBytes(ceiling.maxBytes)}` +
        (kills > 0 ? `: the kernel ended ${kills} of its process(es) to keep it` : "")
    )
  } else if (ceiling?.enforcedBy === "rlimit" && !(ending.kind === "Exited" && status?.code === 0)) {
    lines.push(
      `a memory ceiling of ${Marker.formatBytes(ceiling.maxBytes)} per process (${ceiling.mechanism ?? "rlimit"}) applied: an allocation past it fails inside the program`
    )
  }
  const tasks = termination.taskLimit
  if (tasks !== undefined && termination.tasks?.reached === true) {
    lines.push(
      `the call reached its task limit of ${tasks.maxTasks} processes and threads: the kernel refused ${termination.tasks.forkFailures} forks (EAGAIN, "Resource temporarily unavailable")`
    )
  }
  if (termination.pipesHeld) {
    lines.push(
      "the output pipes were still held open by a process outside the tree; they were closed on this side and later output is lost"
    )
  }
  return lines.join("\n")
}

/** The result's `termination`: the containment as the call got it, and what stopping it found. */
const terminationOf = (termination: Termination): BashResult["termination"] => {
  const {
    killed: _killed,
    memory,
    memoryCeiling,
    pipesHeld,
    signalled: _signalled,
    survivors,
    tasks,
    taskLimit,
    unstoppable,
    ...containment
  } = termination
  return {
    ...containment,
    ...(memoryCeiling === undefined
      ? {}
      : { memoryCeiling: memory === undefined ? memoryCeiling : { ...memoryCeiling, ...memory } }),
    ...(taskLimit === undefined
      ? {}
      : { taskLimit: tasks === undefined ? taskLimit : { ...taskLimit, ...tasks } }),
    survivors: [...unstoppable, ...survivors],
    pipesHeld
  }
}

const section = (name: string, text: string): string =>
  `--- ${name} ---\n${text.endsWith("\n") ? text.slice(0, -1) : text}`

export const buildResult = (input: {
  readonly callId: string
  readonly runId: string
  readonly ending: Ending
  readonly status: Supervisor.ExitStatus | undefined
  readonly durationMs: number
  readonly admission?: Supervisor.Admitted | undefined
  readonly termination: Termination
  readonly stdout: Output.StreamOutput
  readonly stderr: Output.StreamOutput
}): Effect.Effect<BashResult, never, Budgets.Budgets> =>
  Effect.gen(function* () {
    const budgets = yield* Budgets.Budgets
    // a failed command's last lines are kept by the digest whatever they are
    const failed = input.ending.kind !== "Exited" || input.status?.code !== 0
    const stdout = yield* reportStream(input.stdout, Budgets.shellStream(budgets, "stdout"), failed)
    const stderr = yield* reportStream(input.stderr, Budgets.shellStream(budgets, "stderr"), failed)
    const durationMs = Math.round(input.durationMs)
    const sections = [
      ...(stdout.text.length > 0 ? [section("stdout", stdout.text)] : []),
      ...(stderr.text.length > 0 ? [section("stderr", stderr.text)] : [])
    ]
    const waitedMs = Math.round(input.admission?.waitedMs ?? 0)
    const notices = [renderingNotice("stdout", stdout), renderingNotice("stderr", stderr)].filter(
      (notice) => notice !== undefined
    )
    const output = [
      headline(input.ending, input.status, durationMs, input.termination, budgets.bashKillGraceMs),
      ...(waitedMs > 0
        ? [
            `waited ${formatDuration(waitedMs)} to start: the host runs at most ${input.admission!.limit} calls at once (not counted in the duration or the timeout)`
          ]
        : []),
      ...notices,
      ...(sections.length > 0 ? sections : ["(no output)"])
    ].join("\n")
    return {
      callId: input.callId,
      runId: input.runId,
      stdout: stdout.raw,
      stderr: stderr.raw,
      exitCode: input.status?.code ?? null,
      signal: input.status?.signal ?? null,
      durationMs,
      ...(input.admission === undefined ? {} : { admission: { waitedMs, limit: input.admission.limit } }),
      truncated:
        stdout.truncation !== undefined ||
        stderr.truncation !== undefined ||
        stdout.rawTruncated ||
        stderr.rawTruncated,
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
      ...(Terminal.changed(stdout.rendering) || Terminal.changed(stderr.rendering)
        ? { rendering: { stdout: stdout.rendering, stderr: stderr.rendering } }
        : {}),
      killedPids: [...input.termination.signalled],
      termination: terminationOf(input.termination),
      output
    }
  })
