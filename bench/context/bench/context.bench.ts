// The context-health benchmark (`pnpm bench:context`): real tool outputs, produced here and now
// (see src/Corpus.ts), through toolcap's real Read and Bash tools and through other hosts'
// documented truncation policies (src/Policies.ts). For each case and policy: bytes and estimated
// tokens reaching the model, whether the needle is seen, and whether one more call reaches it.
// Writes the generated section of BENCHMARKS.md, the chart beside it and the summary in the README.
//
// Everything lives in one temp dir (workspace, data dir, spill files), removed at the end; the
// Bash tool stops every process tree it started before it answers.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { TokenEstimator } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, LineIndex, Read, Supervisor, Workspace } from "@toolcap/tools"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as prettier from "prettier"
import { cases, type CorpusCase } from "../src/Corpus.js"
import { locate, visibleIn, type Needle } from "../src/Needle.js"
import { byteLength, peers, type RawOutput } from "../src/Policies.js"
import { type CaseRow, type Cell, chart, section, summaryTable, totals } from "../src/Report.js"
import { replaceRegion } from "../src/Region.js"
import { loadAverage } from "@toolcap/bench-report"

const repoRoot = path.resolve(fileURLToPath(import.meta.url), "../../../..")
const BENCHMARKS_FILE = path.join(repoRoot, "BENCHMARKS.md")
const CHART_FILE = "benchmarks-context.svg"
const README_FILE = path.join(repoRoot, "README.md")
const REGION = "pnpm bench:context"
/** A Bash case gets the tool's longest timeout: the slowest (vitest, find) take seconds, not minutes. */
const CASE_TIMEOUT_SECONDS = 300

/** A comma-separated list of case ids runs only those and writes nothing (for working on a case). */
const ONLY_VARIABLE = "TOOLCAP_BENCH_CONTEXT_ONLY"
const only = (process.env[ONLY_VARIABLE] ?? "").split(",").filter((id) => id !== "")
const selected = only.length === 0 ? cases : cases.filter((c) => only.includes(c.id))

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, "-")

const lineCount = (text: string): number => {
  if (text === "") return 0
  let lines = 0
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++
  return text.endsWith("\n") ? lines : lines + 1
}

interface ToolcapCell {
  readonly cell: Cell
  /** Why the needle is neither seen nor one call away, when it is not. */
  readonly miss?: string
}

interface ToolcapRun {
  readonly raw: RawOutput
  readonly measure: (needle: Needle) => Promise<ToolcapCell>
}

const lineRange = (from: number, count: number): string =>
  `lines ${from.toLocaleString("en-US")}–${(from + count - 1).toLocaleString("en-US")}`

const bytesText = (n: number): string => `${n.toLocaleString("en-US")} bytes`

const main = async (): Promise<void> => {
  const startedAt = performance.now()
  const loadBefore = loadAverage()
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-bench-context-"))
  const workspace = path.join(tmp, "workspace")
  const dataDir = path.join(tmp, "data")
  fs.mkdirSync(workspace, { recursive: true })
  const layer = Layer.mergeAll(
    Budgets.layer,
    LineIndex.layer(),
    Supervisor.layer(),
    Workspace.layer({ root: workspace }).pipe(Layer.orDie),
    Scratch.layer({ dataDir, sessionId: "bench-context" }).pipe(
      Layer.provide(Layer.merge(NodeFileSystem.layer, Budgets.layer)),
      Layer.orDie
    )
  )
  const runtime = ManagedRuntime.make(layer)
  const estimate = TokenEstimator.estimate
  try {
    const bashRun = async (command: string): Promise<ToolcapRun> => {
      const streams = { stdout: [] as Array<string>, stderr: [] as Array<string> }
      const result = await runtime.runPromise(
        Bash.run(
          { command, timeout: CASE_TIMEOUT_SECONDS },
          { onChunk: (chunk) => void streams[chunk.stream].push(chunk.data) }
        )
      )
      const raw = { stdout: streams.stdout.join(""), stderr: streams.stderr.join("") }
      return {
        raw,
        measure: async (needle) => {
          const visible = visibleIn(result.output, needle)
          const spill = result.spill[needle.stream]
          const spilled = spill === undefined ? "" : fs.readFileSync(spill, "utf8")
          const reachable =
            !visible && spill !== undefined && result.output.includes(spill) && visibleIn(spilled, needle)
          const cell = {
            bytes: byteLength(result.output),
            tokens: estimate(result.output),
            truncated: result.truncated,
            visible,
            reachable
          }
          if (visible || reachable) return { cell }
          const kept = needle.stream === "stdout" ? "first" : "last"
          return {
            cell,
            miss: `the needle starts at byte ${needle.byteOffset.toLocaleString("en-US")} of ${needle.stream} (${bytesText(byteLength(raw[needle.stream]))}); the excerpt keeps the ${kept} ${bytesText(result.truncation[needle.stream]?.keptBytes ?? 0)} and ${spill === undefined ? "no spill file was written" : `the spill file holds the ${kept} ${bytesText(byteLength(spilled))}`}.`
          }
        }
      }
    }

    const readRun = async (file: string): Promise<ToolcapRun> => {
      const result = await runtime.runPromise(Read.read({ path: file }))
      // what the MCP and AI SDK adapters send for Read: the result object as JSON
      const text = JSON.stringify(result)
      const raw = { stdout: fs.readFileSync(path.join(workspace, file), "utf8"), stderr: "" }
      return {
        raw,
        measure: async (needle) => {
          const visible = visibleIn(result.content, needle)
          // Credited like a peer's saved copy: when the window is cut and its notice says how to
          // page on (an offset), the file itself is the copy, and one Read at the needle's line is
          // the one more call, counted only when that window really shows the needle.
          const nextOffset = result.truncation?.nextOffset
          const pointed = nextOffset !== undefined && (result.notice ?? "").includes(`offset ${nextOffset}`)
          const next =
            !visible && pointed
              ? await runtime.runPromise(Read.read({ path: file, offset: needle.line }))
              : undefined
          const reachable = next !== undefined && visibleIn(next.content, needle)
          const cell = {
            bytes: byteLength(text),
            tokens: estimate(text),
            truncated: result.truncated,
            visible,
            reachable
          }
          if (visible || reachable) return { cell }
          return {
            cell,
            miss:
              next === undefined
                ? `the needle is on line ${needle.line.toLocaleString("en-US")}; the window shows ${lineRange(result.offset, result.lineCount)} and its notice names no offset to page on.`
                : `the needle is on line ${needle.line.toLocaleString("en-US")}; the window shows ${lineRange(result.offset, result.lineCount)} and a Read at offset ${needle.line.toLocaleString("en-US")} shows ${lineRange(next.offset, next.lineCount)} without it.`
          }
        }
      }
    }

    const rows: Array<CaseRow> = []
    for (const corpusCase of selected) rows.push(await runCase(corpusCase))
    if (selected.length < cases.length) {
      console.log(`ran ${selected.length} of ${cases.length} cases (${ONLY_VARIABLE}); nothing written`)
      return
    }

    async function runCase(corpusCase: CorpusCase): Promise<CaseRow> {
      const caseStart = performance.now()
      const { command, file } = await corpusCase.setup({ workspace, repoRoot })
      const run =
        corpusCase.kind === "bash"
          ? await bashRun(command ?? fail(`${corpusCase.id} has no command`))
          : await readRun(file ?? fail(`${corpusCase.id} has no file`))
      const needle = locate(corpusCase.needle, run.raw)
      const toolcap = await run.measure(needle)
      const peerCells = peers.map((peer): Cell => {
        const view = peer.apply(run.raw, `/tmp/${slug(peer.name)}/tool-output/${corpusCase.id}.txt`)
        const visible = visibleIn(view.text, needle)
        const saved = view.savedCopy
        return {
          bytes: byteLength(view.text),
          tokens: estimate(view.text),
          truncated: view.truncated,
          visible,
          reachable:
            !visible &&
            saved !== undefined &&
            view.text.includes(saved.path) &&
            visibleIn(saved.content, needle)
        }
      })
      const rawText = run.raw.stdout + run.raw.stderr
      const row: CaseRow = {
        id: corpusCase.id,
        title: corpusCase.title,
        kind: corpusCase.kind,
        source:
          corpusCase.kind === "bash" ? `Bash: ${corpusCase.title}` : `Read \`${file}\`: ${corpusCase.title}`,
        rawBytes: byteLength(rawText),
        rawLines: lineCount(run.raw.stdout) + lineCount(run.raw.stderr),
        needle: corpusCase.needle.describe,
        needleAt: `${needle.stream === "stderr" ? "stderr" : corpusCase.kind === "read" ? "file" : "stdout"} line ${needle.line.toLocaleString("en-US")} of ${needle.totalLines.toLocaleString("en-US")}`,
        ...(toolcap.miss === undefined ? {} : { toolcapMiss: toolcap.miss }),
        cells: [toolcap.cell, ...peerCells]
      }
      const marks = row.cells
        .map((cell) => (cell.visible ? "seen" : cell.reachable ? "1call" : "lost"))
        .join(" ")
      console.log(
        `${corpusCase.id.padEnd(18)} raw ${(row.rawBytes / 1024).toFixed(0).padStart(6)} KB  needle ${row.needleAt.padEnd(32)} ${marks}  (${((performance.now() - caseStart) / 1000).toFixed(1)}s)`
      )
      if (row.toolcapMiss !== undefined) console.log(`  toolcap lost it: ${row.toolcapMiss}`)
      return row
    }

    const budgets = Budgets.defaults
    const results = {
      policies: ["toolcap", ...peers.map((peer) => peer.name)],
      rows,
      peers,
      toolcapModel: [
        `Bash: stdout keeps its head within ${budgets.shellStdoutMaxBytes / 1024} KB / ${budgets.shellStdoutMaxLines} lines, stderr its tail within ${budgets.shellStderrMaxBytes / 1024} KB / ${budgets.shellStderrMaxLines} lines, each cut stream with its marker; a cut stream is spilled (up to ${budgets.spillMaxBytes / 1024} KB, from a capture of ${budgets.captureMaxBytes / 1024} KB / ${budgets.captureMaxLines} lines per stream that keeps stdout's head and stderr's tail) and the marker names the file. The model reads the tool's \`output\`: the exit status line and both excerpts.`,
        `Read: the first window (${budgets.readWindowLines} lines / ${budgets.searchMaxBytes / 1024} KB, lines clipped at ${budgets.maxLineChars} characters), counted as the result object serialised to JSON, as the MCP and AI SDK adapters send it; its notice names the next offset.`
      ],
      machine: `${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores, Linux ${os.release()}, Node ${process.version}; load average ${loadBefore} before the run and ${loadAverage()} after; the run took ${((performance.now() - startedAt) / 1000).toFixed(0)} s; ${new Date().toISOString().slice(0, 10)}`
    }

    for (const t of totals(results))
      console.log(
        `${t.policy.padEnd(12)} ${t.tokens.toString().padStart(9)} tokens  seen ${t.visible}/${rows.length}  one more call ${t.reachable}  cut ${t.cut}`
      )

    await writeFormatted(
      BENCHMARKS_FILE,
      replaceRegion(
        fs.existsSync(BENCHMARKS_FILE)
          ? fs.readFileSync(BENCHMARKS_FILE, "utf8")
          : "# Benchmarks\n\nFigures measured on one machine by the repository's benchmark commands. Each section is generated; rerun its command to refresh it.\n",
        REGION,
        section(results, CHART_FILE)
      )
    )
    fs.writeFileSync(path.join(repoRoot, CHART_FILE), chart(results))
    await writeFormatted(
      README_FILE,
      replaceRegion(
        fs.readFileSync(README_FILE, "utf8"),
        `${REGION} summary`,
        [
          `Context health, from [BENCHMARKS.md](BENCHMARKS.md) (${rows.length} real tool outputs, toolcap's real tools against other hosts' documented truncation policies):`,
          "",
          summaryTable(results)
        ].join("\n")
      )
    )
    console.log(
      `wrote BENCHMARKS.md, ${CHART_FILE} and the README summary in ${((performance.now() - startedAt) / 1000).toFixed(1)}s (load average ${loadAverage()})`
    )
  } finally {
    await runtime
      .runPromise(Effect.flatMap(Scratch.Scratch, (scratch) => scratch.removeSession))
      .catch(() => {})
    await runtime.dispose()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

const fail = (message: string): never => {
  throw new Error(message)
}

const writeFormatted = async (file: string, text: string): Promise<void> => {
  const options = (await prettier.resolveConfig(file)) ?? {}
  fs.writeFileSync(file, await prettier.format(text, { ...options, filepath: file }))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
