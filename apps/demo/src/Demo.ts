/**
 * `toolcap demo`: a guided tour that shows every bounded behaviour of the spec on generated data,
 * through the same tool host every adapter uses. Each step explains what it shows, runs real
 * tools on real files and processes, and prints the fields that prove it. Everything lives in a
 * temporary directory that is removed at the end (unless `--keep`).
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Outcome, ToolHost } from "@toolcap/adapters"
import { TokenEstimator } from "@toolcap/checkpoint"
import { Budgets, Marker } from "@toolcap/limits"
import type { Bash } from "@toolcap/tools"
import * as Data from "./internal/demoData.js"
import {
  bold,
  cyan,
  detail,
  dim,
  excerpt,
  green,
  kb,
  line,
  withProgress,
  yellow
} from "./internal/terminal.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface DemoOptions {
  /** Keep the generated data directory instead of removing it. */
  readonly keep?: boolean | undefined
}

type Json = Record<string, any>

/** One call through the host, answered as the wire outcome every adapter returns. */
const callTool = (
  host: ToolHost.ToolHostService,
  tool: string,
  input: unknown,
  onChunk?: (chunk: Bash.BashChunk) => void
): Effect.Effect<Outcome.Outcome> =>
  Effect.flatMap(Effect.exit(host.call(tool, input, { onChunk })), (exit) => {
    const settled = Outcome.fromExit(tool, exit)
    return settled._tag === "Right"
      ? Effect.succeed(settled.outcome)
      : Effect.failCause(settled.cause).pipe(Effect.orDie)
  })

const result = (outcome: Outcome.Outcome): Json => (outcome.ok ? (outcome.result as Json) : {})
const failure = (outcome: Outcome.Outcome): Json => (outcome.ok ? {} : (outcome.error as Json))

const check = (ok: boolean, text: string) => line(`    ${ok ? green("✓") : yellow("✗")} ${text}`)

/** A process is gone when /proc has no entry for it, or only a zombie (state Z). */
const isGone = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  } catch {
    return true
  }
}

interface Step {
  readonly title: string
  readonly why: string
  readonly run: Effect.Effect<void, never, Scope.Scope>
}

/**
 * Runs the tour.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (options: DemoOptions = {}): Effect.Effect<void, Budgets.BudgetsInvalid | Error> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-demo-"))
    yield* Effect.addFinalizer(() =>
      options.keep === true
        ? line(dim(`data kept in ${root}`))
        : Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
    )
    const workspace = path.join(root, "workspace")
    const dataDir = path.join(root, "data")
    fs.mkdirSync(workspace, { recursive: true })
    const budgets = yield* Budgets.Budgets

    yield* line(bold("toolcap demo") + dim(" — every bounded behaviour of the spec, on generated data"))
    yield* line(dim(`workspace ${workspace}`))
    yield* line(dim(`data dir  ${dataDir}${options.keep === true ? "" : " (both removed at the end)"}`))

    yield* withProgress("generating files", (progress) =>
      Effect.sync(() => Data.generate(workspace, progress))
    )

    // The first host of the session; step 10 closes it and opens a second one ("a restart").
    const hostScope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(hostScope, Exit.void))
    const host = yield* ToolHost.make({ workspace, dataDir, sessionId: "demo" }).pipe(
      Effect.provideService(Budgets.Budgets, budgets),
      Scope.extend(hostScope),
      Effect.orDie
    )
    let stdoutSpill: string | undefined

    const steps: ReadonlyArray<Step> = [
      {
        title: "Bash stdout keeps its head, marks the cut, spills a fuller copy",
        why: `stdout is cut to ${budgets.shellStdoutMaxLines} lines / ${Marker.formatKB(budgets.shellStdoutMaxBytes)}KB; the capture keeps up to ${Marker.formatKB(budgets.captureMaxBytes)}KB for the spill file.`,
        run: Effect.gen(function* () {
          const command = "seq 1 300000"
          yield* detail(cyan(`$ ${command}`) + dim("   (about 2 MB of output)"))
          const outcome = yield* withProgress("starting", (progress) => {
            let chunks = 0
            let bytes = 0
            return callTool(host, "Bash", { command }, (chunk) => {
              chunks += 1
              bytes += Buffer.byteLength(chunk.data)
              progress.status = `streaming: ${chunks} chunks, ${kb(bytes)} (stdout seq ${chunk.seq})`
            })
          })
          const r = result(outcome)
          const stdout: string = r.stdout ?? ""
          const lines = stdout.split("\n")
          stdoutSpill = r.spill?.stdout
          yield* detail(
            `exit code ${r.exitCode}; stdout starts ${excerpt(lines.slice(0, 3).join("\n") + "\n")}`
          )
          yield* detail(`marker: ${yellow(lines.filter((l) => l.startsWith("[truncated:")).join(""))}`)
          const cut = r.truncation?.stdout ?? {}
          yield* check(
            r.truncated === true &&
              cut.keptLines === budgets.shellStdoutMaxLines &&
              cut.totalLines === 300000,
            `truncated: true, kept the first ${cut.keptLines} of ${cut.totalLines} lines`
          )
          const spillBytes =
            stdoutSpill !== undefined && fs.existsSync(stdoutSpill) ? fs.statSync(stdoutSpill).size : 0
          yield* check(
            spillBytes > budgets.shellStdoutMaxBytes && spillBytes <= budgets.spillMaxBytes,
            `spill file holds ${kb(spillBytes)} (more than the ${kb(budgets.shellStdoutMaxBytes)} excerpt, at most ${kb(budgets.spillMaxBytes)}): ${dim(String(stdoutSpill))}`
          )
          yield* check(
            (r.omitted?.stdout?.bytes ?? 0) > 0,
            `capture stopped retaining at ${kb(budgets.captureMaxBytes)} and reports what it omitted: ${r.omitted?.stdout?.bytes} bytes, ${r.omitted?.stdout?.lines} lines`
          )
          if (stdoutSpill !== undefined) {
            const grep = yield* callTool(host, "Grep", { pattern: "^5000$", path: stdoutSpill })
            const g = result(grep)
            yield* check(
              grep.ok && g.count >= 1,
              `line 5000 is past the excerpt, but Grep with path = the spill file finds it (count ${g.count})`
            )
          }
        })
      },
      {
        title: "Bash stderr keeps its tail",
        why: "a failing command's actionable message is the last thing it printed.",
        run: Effect.gen(function* () {
          const command =
            'for i in $(seq 1 20000); do echo "compiling module $i" >&2; done; echo "error: src/config.ts:3: unknown option \'colour\'" >&2; exit 1'
          yield* detail(
            cyan("$ for i in $(seq 1 20000); do echo compiling… >&2; done; echo error: … >&2; exit 1")
          )
          const outcome = yield* withProgress("running", (progress) =>
            callTool(host, "Bash", { command }, (chunk) => {
              progress.status = `streaming: stderr seq ${chunk.seq}`
            })
          )
          const r = result(outcome)
          const stderr: string = r.stderr ?? ""
          const stderrLines = stderr.trimEnd().split("\n")
          yield* detail(`marker (prepended): ${yellow(stderrLines[0] ?? "")}`)
          yield* detail(`last lines: ${excerpt(stderrLines.slice(-2).join("\n"))}`)
          yield* check(
            r.exitCode === 1 &&
              stderr.trimEnd().endsWith("unknown option 'colour'") &&
              r.truncation?.stderr?.kept === "tail",
            `exit code ${r.exitCode}; the error line survived the cut (kept the last ${r.truncation?.stderr?.keptLines} of ${r.truncation?.stderr?.totalLines} lines)`
          )
        })
      },
      {
        title: "stdout and stderr stream separately, each with its own sequence",
        why: "a renderer sees ordered chunks per stream while the command runs.",
        run: Effect.gen(function* () {
          const command = 'for i in 1 2 3; do echo "out $i"; echo "err $i" >&2; sleep 0.05; done'
          yield* detail(cyan(`$ ${command}`))
          const seen: Array<string> = []
          const outcome = yield* callTool(host, "Bash", { command }, (chunk) =>
            seen.push(`${chunk.stream} #${chunk.seq} ${JSON.stringify(chunk.data)}`)
          )
          for (const chunk of seen) yield* detail(dim(chunk))
          const r = result(outcome)
          yield* check(
            r.lastSeq?.stdout !== null && r.lastSeq?.stderr !== null,
            `result repeats the last seq of each stream: stdout ${r.lastSeq?.stdout}, stderr ${r.lastSeq?.stderr}`
          )
        })
      },
      {
        title: "A timeout stops the whole process tree",
        why: `SIGTERM, then SIGKILL after ${budgets.bashKillGraceMs / 1000}s, until no process of the tree is alive — even ones that left the group.`,
        run: Effect.gen(function* () {
          const command = 'sleep 300 & (sleep 300 &); setsid sleep 300 & echo "started 3 sleepers"; wait'
          yield* detail(cyan(`$ ${command}`) + dim("   (timeout: 1s)"))
          const outcome = yield* withProgress("waiting for the 1s timeout", () =>
            callTool(host, "Bash", { command, timeout: 1 })
          )
          const e = failure(outcome)
          const killed: Array<number> = e.killedPids ?? []
          yield* detail(`${yellow(String(e.code))}: ${e.message}`)
          yield* detail(`partial stdout: ${excerpt(e.partial?.stdout ?? "")}`)
          yield* check(
            e.code === "TOOL_TIMEOUT" && killed.length >= 4 && killed.every(isGone),
            `killed pids ${killed.join(", ")}: none of them is alive any more (checked in /proc)`
          )
          const refused = yield* callTool(host, "Bash", {
            command: "true",
            timeout: budgets.bashTimeoutMaxSeconds + 1
          })
          yield* check(
            failure(refused).code === "TOOL_INVALID_INPUT",
            `timeout ${budgets.bashTimeoutMaxSeconds + 1} is refused before anything runs (${failure(refused).code}); allowed ${budgets.bashTimeoutMinSeconds}–${budgets.bashTimeoutMaxSeconds}s, default ${budgets.bashTimeoutDefaultSeconds}s`
          )
        })
      },
      {
        title: "Read pages a multi-megabyte file instead of refusing it",
        why: `a window stops at ${budgets.readWindowLines} lines or ${Marker.formatKB(budgets.searchMaxBytes)}KB and names the next offset; content stays byte-faithful.`,
        run: Effect.gen(function* () {
          const size = fs.statSync(path.join(workspace, Data.bigLog)).size
          yield* detail(`${Data.bigLog}: ${kb(size)}, ${Data.bigLogLines} lines`)
          const first = result(yield* callTool(host, "Read", { path: Data.bigLog }))
          yield* detail(
            `offset ${first.offset}, lineCount ${first.lineCount}, truncated ${first.truncated}, totalLines ${first.totalLines ?? "(not reached)"}`
          )
          yield* detail(`notice: ${dim(String(first.notice))}`)
          const next: number = first.truncation?.nextOffset ?? first.offset + first.lineCount
          const second = result(yield* callTool(host, "Read", { path: Data.bigLog, offset: next, limit: 3 }))
          yield* detail(`Read offset ${next}, limit 3 → ${excerpt(second.content ?? "")}`)
          yield* check(
            second.content?.startsWith(Data.bigLogLine(next)) === true,
            `page 2 starts exactly at line ${next}`
          )
          const last = result(
            yield* callTool(host, "Read", { path: Data.bigLog, offset: Data.bigLogLines - 1 })
          )
          yield* check(
            last.totalLines === Data.bigLogLines && last.truncated === false,
            `the last page reached end of file: totalLines ${last.totalLines}`
          )
          const long = result(yield* callTool(host, "Read", { path: Data.longLineFile }))
          yield* check(
            long.truncated === true && typeof long.notice === "string",
            `a ${Data.longLineChars}-character line is clipped at ${budgets.maxLineChars}: ${dim(String(long.notice))}`
          )
        })
      },
      {
        title: "Binary content is refused, not dumped into the context",
        why: "extension blocklist, plus a sniff of the first bytes (any NUL, or too much non-printable).",
        run: Effect.gen(function* () {
          for (const file of [Data.pngFile, Data.blobFile]) {
            const e = failure(yield* callTool(host, "Read", { path: file }))
            yield* check(e.code === "TOOL_BINARY_CONTENT", `${file}: ${e.code} (${e.reason})`)
          }
        })
      },
      {
        title: "Grep stops at headLimit, newest files first",
        why: `headLimit defaults to ${budgets.grepHeadLimit}; a capped result keeps the files more likely to be asked about.`,
        run: Effect.gen(function* () {
          yield* detail(
            `${Data.moduleCount} files contain "TODO", each modified a second after the previous one`
          )
          const outcome = yield* callTool(host, "Grep", { pattern: "TODO" })
          const r = result(outcome)
          const matches: Array<Json> = r.matches ?? []
          for (const m of matches.slice(0, 3)) yield* detail(dim(`${m.path}:${m.line}: ${m.text}`))
          yield* detail(dim("…"))
          yield* check(
            r.truncated === true && matches.length === budgets.grepHeadLimit,
            `stopped at ${matches.length} matches with truncated: true`
          )
          yield* check(
            matches[0]?.path === Data.modulePath(Data.moduleCount - 1),
            `the newest file comes first (${matches[0]?.path})`
          )
        })
      },
      {
        title: "Glob returns the newest matches, capped",
        why: `limit defaults to ${budgets.globLimit} and is clamped to ${budgets.globMaxLimit}.`,
        run: Effect.gen(function* () {
          const r = result(yield* callTool(host, "Glob", { pattern: "src/**/*.ts" }))
          const matches: Array<string> = r.matches ?? []
          yield* detail(dim(`${matches.slice(0, 3).join(", ")}, …`))
          yield* check(
            r.truncated === true &&
              matches.length === budgets.globLimit &&
              matches[0] === Data.modulePath(Data.moduleCount - 1),
            `${matches.length} entries, truncated: true, newest first`
          )
          const clamped = result(
            yield* callTool(host, "Glob", { pattern: "**/*", limit: budgets.globMaxLimit * 5 })
          )
          yield* check(
            typeof clamped.notice === "string",
            `limit ${budgets.globMaxLimit * 5} is clamped: ${dim(String(clamped.notice))}`
          )
        })
      },
      {
        title: "An explicit path reaches into an ignored tree",
        why: "ignore files above an explicit path stop applying (node_modules, dist, the spill directory).",
        run: Effect.gen(function* () {
          const hidden = result(yield* callTool(host, "Grep", { pattern: "leftPad" }))
          const reached = result(yield* callTool(host, "Grep", { pattern: "leftPad", path: Data.ignoredDir }))
          yield* check(
            (hidden.count ?? 0) === 0 && (reached.count ?? 0) > 0,
            `Grep "leftPad": ${hidden.count ?? 0} matches from the root (node_modules is gitignored), ${reached.count} with path "${Data.ignoredDir}"`
          )
        })
      },
      {
        title: "A checkpoint keeps only user messages, cuts the crossing one, survives a restart",
        why: `retention budget ${budgets.checkpointRetentionTokens} tokens; the crossing message keeps a 75/25 head/tail with the checkpoint marker.`,
        run: Effect.gen(function* () {
          const transcript = Data.transcript(TokenEstimator.estimate)
          const saved = yield* host.checkpoint(transcript).pipe(Effect.orDie)
          const cp = saved.checkpoint
          for (const entry of cp.context) {
            const text = entry.message.role === "user" ? entry.message.text : ""
            yield* detail(dim(`${entry.origin.padEnd(8)} ${entry.message.id}: ${entry.tokens} tokens`))
            if (entry.origin === "cut") {
              const at = text.indexOf(Marker.checkpointMarker)
              yield* detail(
                dim(
                  `         …${excerpt(text.slice(at - 20, at + Marker.checkpointMarker.length + 20), 130)}…`
                )
              )
            }
          }
          yield* check(
            cp.retainedTokens <= budgets.checkpointRetentionTokens && cp.dropped.otherMessages > 0,
            `${cp.retainedTokens} tokens retained (≤ ${budgets.checkpointRetentionTokens}); ${cp.dropped.otherMessages} assistant/tool messages did not cross, tool results included`
          )
          // The restart: close the first host (and its database), open a new one on the same data dir.
          yield* Scope.close(hostScope, Exit.void)
          const reopened = yield* ToolHost.make({ workspace, dataDir, sessionId: "demo" }).pipe(
            Effect.provideService(Budgets.Budgets, budgets),
            Effect.orDie
          )
          const latest = yield* reopened.latestCheckpoint.pipe(Effect.orDie)
          const same =
            Option.isSome(latest) &&
            latest.value.checkpointId === saved.checkpointId &&
            JSON.stringify(latest.value.checkpoint) === JSON.stringify(saved.checkpoint)
          yield* check(
            same,
            `after closing and reopening the host, checkpoint #${saved.checkpointId} reads back identical from ${dim(ToolHost.checkpointFileOf(dataDir))}`
          )
          const original = transcript.messages.find((m) => m.id === cp.cut?.messageId)
          yield* check(
            original !== undefined && !original.text.includes(Marker.checkpointMarker),
            "the original transcript message is unchanged; only the reconstructed context was cut"
          )
          const sessionDir = reopened.sessionDir
          const before = fs.existsSync(sessionDir)
          yield* reopened.endSession
          yield* check(
            before && !fs.existsSync(sessionDir),
            `ending the session removed its scratch directory and spill files (${dim(sessionDir)})`
          )
        })
      }
    ]

    for (const [index, step] of steps.entries()) {
      yield* line()
      yield* line(bold(`[${index + 1}/${steps.length}] ${step.title}`))
      yield* line(dim(`    ${step.why}`))
      yield* Effect.scoped(step.run)
    }
    yield* Scope.close(hostScope, Exit.void)

    const elapsed = ((yield* Clock.currentTimeMillis) - started) / 1000
    yield* line()
    yield* line(
      green(bold(`Done in ${elapsed.toFixed(1)}s.`)) +
        dim(' Try it yourself: pnpm --silent toolcap call Read \'{"path":"README.md"}\'')
    )
  }).pipe(
    Effect.scoped,
    Effect.provide(Layer.merge(Budgets.layerConfig.pipe(Layer.orDie), NodeFileSystem.layer))
  )
