/**
 * `toolcap demo`: a guided tour that shows every bounded behaviour (docs/rules.md) on generated
 * data, through the same tool host every adapter uses. Each step explains what it shows, runs real
 * tools on real files and processes, and prints the fields that prove it. Everything lives in a
 * temporary directory that is removed at the end (unless `--keep`).
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Outcome, ToolHost } from "@toolcap/adapters"
import { TokenEstimator } from "@toolcap/checkpoint"
import { Budgets, Marker } from "@toolcap/limits"
import { Procfs } from "@toolcap/spill"
import { Supervisor, type Bash, type Glob, type Grep, type Read } from "@toolcap/tools"
import * as Data from "./internal/demoData.js"
import * as Sqlite from "./internal/sqlite.js"
import { bold, cyan, detail, dim, excerpt, green, line, withProgress, yellow } from "./internal/terminal.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface DemoOptions {
  /** Keep the generated data directory instead of removing it. */
  readonly keep?: boolean | undefined
}

/** One call through the host, answered as the wire outcome every adapter returns. */
const callTool = <A>(
  host: ToolHost.ToolHostService,
  tool: string,
  input: unknown,
  onChunk?: (chunk: Bash.BashChunk) => void
): Effect.Effect<Outcome.Outcome<A>> =>
  Effect.flatMap(Effect.exit(host.call(tool, input, { onChunk })), (exit) =>
    Either.match(Outcome.fromExit(tool, exit), {
      onLeft: (cause) => Effect.die(Cause.squash(cause)),
      onRight: (outcome) => Effect.succeed(outcome as Outcome.Outcome<A>)
    })
  )

const bash = (host: ToolHost.ToolHostService, input: unknown, onChunk?: (chunk: Bash.BashChunk) => void) =>
  callTool<Bash.BashResult>(host, "Bash", input, onChunk)
const read = (host: ToolHost.ToolHostService, input: unknown) =>
  callTool<Read.ReadResult>(host, "Read", input)
const glob = (host: ToolHost.ToolHostService, input: unknown) =>
  callTool<Glob.GlobResult>(host, "Glob", input)
const grep = (host: ToolHost.ToolHostService, input: unknown) =>
  callTool<Grep.GrepResult>(host, "Grep", input)

/** The result of an outcome the tour expects to succeed; a failure is a bug of the tour itself. */
const expectOk = <A>(outcome: Outcome.Outcome<A>): Effect.Effect<A> =>
  outcome.ok
    ? Effect.succeed(outcome.result)
    : Effect.dieMessage(`${outcome.error.code}: ${outcome.error.message}`)

/** The error of an outcome the tour expects to fail. */
const expectError = <A>(outcome: Outcome.Outcome<A>): Effect.Effect<Outcome.WireError> =>
  outcome.ok ? Effect.dieMessage("expected a tool error, the call succeeded") : Effect.succeed(outcome.error)

const check = (ok: boolean, text: string) => line(`    ${ok ? green("✓") : yellow("✗")} ${text}`)

/** A process is gone when /proc has no entry for it, or only a zombie. */
const isGone = (pid: number): boolean => !Procfs.isRunning(pid, undefined)

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
export const run = (options: DemoOptions = {}): Effect.Effect<void, never, Budgets.Budgets> =>
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

    yield* line(bold("toolcap demo") + dim(" — every bounded behaviour, on generated data"))
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

    const steps: ReadonlyArray<Step> = [
      {
        title: "Bash stdout keeps its head, marks the cut, spills a fuller copy",
        why: `stdout is cut to ${budgets.shellStdoutMaxLines} lines / ${Marker.formatBytes(budgets.shellStdoutMaxBytes)}; the capture keeps up to ${Marker.formatBytes(budgets.captureMaxBytes)} for the spill file.`,
        run: Effect.gen(function* () {
          const command = "seq 1 300000"
          yield* detail(cyan(`$ ${command}`) + dim("   (about 2 MB of output)"))
          const r = yield* withProgress("starting", (progress) => {
            let chunks = 0
            let bytes = 0
            return bash(host, { command }, (chunk) => {
              chunks += 1
              bytes += Buffer.byteLength(chunk.data)
              progress.status = `streaming: ${chunks} chunks, ${Marker.formatBytes(bytes)} (stdout seq ${chunk.seq})`
            })
          }).pipe(Effect.flatMap(expectOk))
          const lines = r.stdout.split("\n")
          const spill = r.spill.stdout
          yield* detail(
            `exit code ${r.exitCode}; stdout starts ${excerpt(lines.slice(0, 3).join("\n") + "\n")}`
          )
          yield* detail(`marker: ${yellow(lines.find((l) => l.startsWith("[truncated:")) ?? "(none)")}`)
          const cut = r.truncation.stdout
          yield* check(
            r.truncated && cut?.keptLines === budgets.shellStdoutMaxLines && cut.totalLines === 300000,
            `truncated: true, kept the first ${cut?.keptLines} of ${cut?.totalLines} lines`
          )
          const spillBytes = spill !== undefined && fs.existsSync(spill) ? fs.statSync(spill).size : 0
          yield* check(
            spillBytes > budgets.shellStdoutMaxBytes && spillBytes <= budgets.spillMaxBytes,
            `spill file holds ${Marker.formatBytes(spillBytes)} (more than the ${Marker.formatBytes(budgets.shellStdoutMaxBytes)} excerpt, at most ${Marker.formatBytes(budgets.spillMaxBytes)}): ${dim(String(spill))}`
          )
          yield* check(
            r.omitted.stdout.bytes > 0,
            `capture stopped retaining at ${Marker.formatBytes(budgets.captureMaxBytes)} and reports what it omitted: ${r.omitted.stdout.bytes} bytes, ${r.omitted.stdout.lines} lines`
          )
          if (spill !== undefined) {
            const found = yield* grep(host, { pattern: "^5000$", path: spill, outputMode: "count" }).pipe(
              Effect.flatMap(expectOk)
            )
            yield* check(
              found.count === 1,
              `line 5000 is past the excerpt, but Grep with path = the spill file finds it (count ${found.count})`
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
          const r = yield* withProgress("running", (progress) =>
            bash(host, { command }, (chunk) => {
              progress.status = `streaming: stderr seq ${chunk.seq}`
            })
          ).pipe(Effect.flatMap(expectOk))
          const stderrLines = r.stderr.trimEnd().split("\n")
          yield* detail(`marker (prepended): ${yellow(stderrLines[0] ?? "")}`)
          yield* detail(`last lines: ${excerpt(stderrLines.slice(-2).join("\n"))}`)
          const cut = r.truncation.stderr
          yield* check(
            r.exitCode === 1 &&
              r.stderr.trimEnd().endsWith("unknown option 'colour'") &&
              cut?.kept === "tail",
            `exit code ${r.exitCode}; the error line survived the cut (kept the last ${cut?.keptLines} of ${cut?.totalLines} lines)`
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
          const r = yield* bash(host, { command }, (chunk) =>
            seen.push(`${chunk.stream} #${chunk.seq} ${JSON.stringify(chunk.data)}`)
          ).pipe(Effect.flatMap(expectOk))
          for (const chunk of seen) yield* detail(dim(chunk))
          yield* check(
            r.lastSeq.stdout !== null && r.lastSeq.stderr !== null,
            `the result repeats the last seq of each stream: stdout ${r.lastSeq.stdout}, stderr ${r.lastSeq.stderr}`
          )
        })
      },
      {
        title: "A timeout stops the whole process tree",
        why: `SIGTERM, then SIGKILL after ${budgets.bashKillGraceMs / 1000}s, until no process of the tree is alive — even ones that left the group.`,
        run: Effect.gen(function* () {
          const command = 'sleep 300 & (sleep 300 &); setsid sleep 300 & echo "started 3 sleepers"; wait'
          yield* detail(cyan(`$ ${command}`) + dim("   (timeout: 1s)"))
          const e = yield* withProgress("waiting for the 1s timeout", () =>
            bash(host, { command, timeout: 1 })
          ).pipe(Effect.flatMap(expectError))
          const killed = (e["killedPids"] ?? []) as ReadonlyArray<number>
          const partial = e["partial"] as Bash.BashResult | undefined
          yield* detail(`${yellow(e.code)}: ${e.message}`)
          yield* detail(`partial stdout: ${excerpt(partial?.stdout ?? "")}`)
          if (partial !== undefined) {
            yield* detail(`guards: ${dim(Supervisor.describeContainment(partial.termination))}`)
          }
          yield* check(
            e.code === "TOOL_TIMEOUT" && killed.length >= 4 && killed.every(isGone),
            `killed pids ${killed.join(", ")}: none of them is alive any more (checked in /proc)`
          )
          const tooLong = budgets.bashTimeoutMaxSeconds + 1
          const refused = yield* bash(host, { command: "true", timeout: tooLong }).pipe(
            Effect.flatMap(expectError)
          )
          yield* check(
            refused.code === "TOOL_INVALID_INPUT",
            `timeout ${tooLong} is refused before anything runs (${refused.code}); allowed ${budgets.bashTimeoutMinSeconds}–${budgets.bashTimeoutMaxSeconds}s, default ${budgets.bashTimeoutDefaultSeconds}s`
          )
        })
      },
      {
        title: "Read pages a multi-megabyte file instead of refusing it",
        why: `a window stops at ${budgets.readWindowLines} lines or ${Marker.formatBytes(budgets.searchMaxBytes)} and names the next offset; content stays byte-faithful.`,
        run: Effect.gen(function* () {
          const size = fs.statSync(path.join(workspace, Data.bigLog)).size
          yield* detail(`${Data.bigLog}: ${Marker.formatBytes(size)}, ${Data.bigLogLines} lines`)
          const first = yield* read(host, { path: Data.bigLog }).pipe(Effect.flatMap(expectOk))
          yield* detail(
            `offset ${first.offset}, lineCount ${first.lineCount}, truncated ${first.truncated}, totalLines ${first.totalLines ?? "(not reached)"}`
          )
          yield* detail(`notice: ${dim(String(first.notice))}`)
          const next = first.truncation?.nextOffset ?? first.offset + first.lineCount
          const second = yield* read(host, { path: Data.bigLog, offset: next, limit: 3 }).pipe(
            Effect.flatMap(expectOk)
          )
          yield* detail(`Read offset ${next}, limit 3 → ${excerpt(second.content)}`)
          yield* check(
            second.content.startsWith(Data.bigLogLine(next)),
            `page 2 starts exactly at line ${next}`
          )
          const last = yield* read(host, { path: Data.bigLog, offset: Data.bigLogLines - 1 }).pipe(
            Effect.flatMap(expectOk)
          )
          yield* check(
            last.totalLines === Data.bigLogLines && !last.truncated,
            `the last page reached end of file: totalLines ${last.totalLines}`
          )
          const long = yield* read(host, { path: Data.longLineFile }).pipe(Effect.flatMap(expectOk))
          yield* check(
            long.truncated && long.notice !== undefined,
            `a ${Data.longLineChars}-character line is clipped at ${budgets.maxLineChars}: ${dim(String(long.notice))}`
          )
        })
      },
      {
        title: "Binary content is refused, not dumped into the context",
        why: "extension blocklist, plus a sniff of the first bytes (any NUL, or too much non-printable).",
        run: Effect.gen(function* () {
          for (const file of [Data.pngFile, Data.blobFile]) {
            const e = yield* read(host, { path: file }).pipe(Effect.flatMap(expectError))
            yield* check(e.code === "TOOL_BINARY_CONTENT", `${file}: ${e.code} (${String(e["reason"])})`)
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
          const r = yield* grep(host, { pattern: "TODO", outputMode: "content" }).pipe(
            Effect.flatMap(expectOk)
          )
          const matches = "matches" in r ? r.matches : []
          for (const m of matches.slice(0, 3)) yield* detail(dim(`${m.path}:${m.line}: ${m.text}`))
          yield* detail(dim("…"))
          yield* check(
            r.truncated && matches.length === budgets.grepHeadLimit,
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
          const r = yield* glob(host, { pattern: "src/**/*.ts" }).pipe(Effect.flatMap(expectOk))
          yield* detail(dim(`${r.matches.slice(0, 3).join(", ")}, …`))
          yield* check(
            r.truncated &&
              r.matches.length === budgets.globLimit &&
              r.matches[0] === Data.modulePath(Data.moduleCount - 1),
            `${r.matches.length} entries, truncated: true, newest first`
          )
          const asked = budgets.globMaxLimit * 5
          const clamped = yield* glob(host, { pattern: "**/*", limit: asked }).pipe(Effect.flatMap(expectOk))
          yield* check(
            clamped.notice !== undefined,
            `limit ${asked} is clamped: ${dim(String(clamped.notice))}`
          )
        })
      },
      {
        title: "An explicit path reaches into an ignored tree",
        why: "ignore files above an explicit path stop applying (node_modules, dist, the spill directory).",
        run: Effect.gen(function* () {
          const hidden = yield* grep(host, { pattern: "leftPad" }).pipe(Effect.flatMap(expectOk))
          const reached = yield* grep(host, { pattern: "leftPad", path: Data.ignoredDir }).pipe(
            Effect.flatMap(expectOk)
          )
          yield* check(
            hidden.count === 0 && reached.count > 0,
            `Grep "leftPad": ${hidden.count} files from the root (node_modules is gitignored), ${reached.count} with path "${Data.ignoredDir}"`
          )
        })
      },
      {
        title: "A checkpoint keeps only user messages, cuts the crossing one, survives a restart",
        why: `retention budget ${budgets.checkpointRetentionTokens} tokens; the crossing message keeps a 75/25 head/tail with the checkpoint marker.`,
        run: Effect.gen(function* () {
          // the SQLite driver is an optional peer of an installed toolcap: without it, say so and go on
          const sqlite = Sqlite.probe()
          if (sqlite.kind !== "ok") {
            yield* detail(yellow(`skipped: ${sqlite.message}`))
            return
          }
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
        dim(
          ' Try it yourself: toolcap call Read \'{"path":"README.md"}\' (npx toolcap, or pnpm --silent toolcap in its repository)'
        )
    )
  }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer))
