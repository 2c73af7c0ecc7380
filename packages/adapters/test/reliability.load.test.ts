// Reliability under load: in one host (the Promise API), 16 Bash calls at once, each writing the
// same amount to stdout and to stderr, while Reads and Greps run beside them. Every result must be
// correct (the kept head of stdout and tail of stderr are the command's real lines, the totals are
// exact) and bounded (each excerpt within its budget plus its marker), every spill file name unique
// and its content a real piece of its stream, no process of any call left, and the host's peak RSS
// is reported. The default mode writes 8 MB per stream (256 MB in all, to keep `pnpm test` short);
// TOOLCAP_LONG_TESTS=1 writes the full 100 MB per stream (3.2 GB). Counts are printed and, when
// TOOLCAP_RELIABILITY_OUT names a directory, written there for `pnpm bench`.
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import { PromiseHost } from "@toolcap/adapters"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { makeDirs } from "./fixtures/dirs.js"
import { processesWithCookie } from "./fixtures/processes.js"

/** Calls of each kind running at once. */
const CONCURRENT = 16
/** Bytes each Bash call writes to each stream: the 100 MB in the long mode. */
const STREAM_BYTES = (isLong() ? 100 : 8) * 1024 * 1024
/** Lines of each file the Reads page through. */
const FILE_LINES = 60_000
/** A marker and its spill sentence stay well within this many bytes. */
const MARKER_SLACK = 1024

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

const peakRssMb = (): number => {
  const line = fs
    .readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"))
  return Math.round(Number(line?.replace(/\D+/g, "") ?? 0) / 1024)
}

/** The lines of an excerpt before its marker (`[truncated: ...]` on a line of its own). */
const bodyLines = (excerpt: string): Array<string> =>
  excerpt
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("[truncated") && !line.startsWith("[… truncated"))

interface BashLike {
  readonly runId: string
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number | null
  readonly truncated: boolean
  readonly truncation: {
    readonly stdout?: { readonly totalBytes?: number }
    readonly stderr?: { readonly totalBytes?: number }
  }
  readonly spill: { readonly stdout?: string; readonly stderr?: string }
}

describe("reliability: load", () => {
  it(
    `${CONCURRENT} Bash calls writing ${STREAM_BYTES / 1024 / 1024} MB to each stream, with Reads and Greps beside them, in one host`,
    { timeout: isLong() ? 900_000 : 240_000 },
    async () => {
      const dirs = makeDirs("toolcap-load-")
      cleanups.push(dirs.remove)
      const numbered = Array.from({ length: FILE_LINES }, (_, i) => `line ${i + 1} of the paged file`).join(
        "\n"
      )
      for (let f = 0; f < 4; f++) dirs.write(`paged-${f}.txt`, `${numbered}\n`)
      dirs.write(
        "needles/deep.txt",
        `${"filler\n".repeat(50_000)}UNIQUE-NEEDLE-7c1e here\n${"filler\n".repeat(10)}`
      )
      const host = await PromiseHost.createToolHost({
        workspace: dirs.workspace,
        dataDir: dirs.dataDir,
        sessionId: "reliability-load"
      })
      cleanups.push(host.close)
      const budgets = host.budgets

      let wrong = 0
      let unbounded = 0
      let crashes = 0
      /** Calls that reached the tool's own deadline (300 s) instead of finishing. */
      let hangs = 0
      const failures: Array<string> = []
      const fail = (what: string) => {
        wrong++
        failures.push(what)
      }

      const bashCall = async (i: number) => {
        // each stream gets whole 16-byte lines naming the call and the stream
        const command = `(yes "out-${String(i).padStart(2, "0")}-abcdefgh" | head -c ${STREAM_BYTES}) & (yes "err-${String(i).padStart(2, "0")}-abcdefgh" | head -c ${STREAM_BYTES} >&2) & wait`
        const outcome = await host.call("Bash", { command, timeout: 300 })
        if (!outcome.ok) {
          if (outcome.error.code === "TOOL_TIMEOUT") hangs++
          fail(`bash ${i}: ${outcome.error.code} ${outcome.error.message}`)
          return undefined
        }
        const r = outcome.result as unknown as BashLike
        const outLine = `out-${String(i).padStart(2, "0")}-abcdefgh`
        const errLine = `err-${String(i).padStart(2, "0")}-abcdefgh`
        if (r.exitCode !== 0 || !r.truncated) fail(`bash ${i}: exit ${r.exitCode}, truncated ${r.truncated}`)
        if (!bodyLines(r.stdout).every((line) => line === outLine))
          fail(`bash ${i}: a stdout line is not its own`)
        if (!bodyLines(r.stderr).every((line) => line === errLine))
          fail(`bash ${i}: a stderr line is not its own`)
        if (bodyLines(r.stdout).length === 0 || bodyLines(r.stderr).length === 0)
          fail(`bash ${i}: an empty excerpt`)
        if (
          r.truncation.stdout?.totalBytes !== STREAM_BYTES ||
          r.truncation.stderr?.totalBytes !== STREAM_BYTES
        )
          fail(
            `bash ${i}: totals ${r.truncation.stdout?.totalBytes} / ${r.truncation.stderr?.totalBytes}, not ${STREAM_BYTES}`
          )
        if (
          Buffer.byteLength(r.stdout) > budgets.shellStdoutMaxBytes + MARKER_SLACK ||
          Buffer.byteLength(r.stderr) > budgets.shellStderrMaxBytes + MARKER_SLACK
        )
          unbounded++
        for (const [stream, line] of [
          ["stdout", outLine],
          ["stderr", errLine]
        ] as const) {
          const spill = r.spill[stream]
          if (spill === undefined) {
            fail(`bash ${i}: no ${stream} spill file`)
            continue
          }
          const size = fs.statSync(spill).size
          if (size > budgets.spillMaxBytes) unbounded++
          const text = fs.readFileSync(spill, "utf8")
          // the stream does not fit the spill: its head and tail in whole lines, the gap line between
          const lines = text.split("\n").filter((l) => l !== "")
          const gaps = lines.filter((l) => l.startsWith("[\u2026 "))
          if (gaps.length !== 1) fail(`bash ${i}: ${stream} spill has ${gaps.length} gap lines, not 1`)
          if (!lines.every((l) => l === line || gaps.includes(l)))
            fail(`bash ${i}: ${stream} spill holds a foreign line`)
        }
        return r
      }

      const readCall = async (i: number) => {
        const offset = 1 + ((i * 3_677) % (FILE_LINES - 500))
        const outcome = await host.call("Read", { path: `paged-${i % 4}.txt`, offset, limit: 300 })
        if (!outcome.ok) return fail(`read ${i}: ${outcome.error.code}`)
        const r = outcome.result as unknown as { content: string; lineCount: number }
        const lines = r.content.split("\n").filter((l) => l !== "")
        if (r.lineCount !== 300 || !lines.every((l, k) => l.endsWith(`line ${offset + k} of the paged file`)))
          fail(`read ${i}: wrong window at offset ${offset}`)
        if (Buffer.byteLength(r.content) > budgets.searchMaxBytes + MARKER_SLACK) unbounded++
      }

      const grepCall = async (i: number) => {
        const outcome = await host.call("Grep", { pattern: "UNIQUE-NEEDLE-7c1e", outputMode: "content" })
        if (!outcome.ok) return fail(`grep ${i}: ${outcome.error.code}`)
        const r = outcome.result as unknown as { matches: ReadonlyArray<{ path: string; line: number }> }
        if (r.matches.length !== 1 || r.matches[0]!.line !== 50_001)
          fail(`grep ${i}: ${JSON.stringify(r.matches)}`)
      }

      const settled = await Promise.allSettled([
        ...Array.from({ length: CONCURRENT }, (_, i) => bashCall(i)),
        ...Array.from({ length: CONCURRENT }, (_, i) => readCall(i)),
        ...Array.from({ length: CONCURRENT }, (_, i) => grepCall(i))
      ])
      crashes = settled.filter((s) => s.status === "rejected").length
      const results = settled
        .slice(0, CONCURRENT)
        .flatMap((s) => (s.status === "fulfilled" && s.value !== undefined ? [s.value as BashLike] : []))
      const spills = results.flatMap((r) => [r.spill.stdout, r.spill.stderr]).filter((s) => s !== undefined)
      const duplicates = spills.length - new Set(spills).size
      const survivors = results.reduce((sum, r) => sum + processesWithCookie(r.runId).length, 0)
      const rss = peakRssMb()

      reportReliability(
        "load",
        {
          inputs: settled.length,
          "wrong results": wrong,
          "unbounded results": unbounded,
          "duplicate spill names": duplicates,
          crashes,
          hangs,
          survivors,
          "host peak RSS MB": rss
        },
        `${CONCURRENT} Bash calls × ${STREAM_BYTES / 1024 / 1024} MB to each of stdout and stderr${isLong() ? "" : " (scaled down from 100 MB; TOOLCAP_LONG_TESTS=1 for the full size)"}, ${CONCURRENT} Reads and ${CONCURRENT} Greps at once in one host; host peak RSS (VmHWM) ${rss} MB`
      )
      assert.deepStrictEqual(failures, [])
      assert.strictEqual(crashes, 0)
      assert.strictEqual(unbounded, 0)
      assert.strictEqual(duplicates, 0)
      assert.strictEqual(spills.length, CONCURRENT * 2)
      assert.strictEqual(survivors, 0)
    }
  )
})
