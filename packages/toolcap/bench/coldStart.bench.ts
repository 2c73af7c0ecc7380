// Cold start of the bundled `toolcap call Read '{"path":"README.md"}'` against `node -e 0`, both
// measured in this run: 15 interleaved rounds, medians, the ratio against the target. The bin's
// V8 code cache lives in this run's temp dir: the first call writes it, as a host's first call does.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { loadAverage, reportFigure } from "@toolcap/bench-report"

const ROUNDS = 15
/** The bundled call may cost at most twice an empty Node start. */
const TARGET_RATIO = 2.0

const bin = fileURLToPath(new URL("../dist/bin.cjs", import.meta.url))
if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: build first (pnpm run build)`)
const repo = fileURLToPath(new URL("../../..", import.meta.url))
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-cold-"))

const env = { ...process.env, XDG_CACHE_HOME: path.join(dataDir, "cache") }

const time = (args: ReadonlyArray<string>): number => {
  const started = process.hrtime.bigint()
  const run = spawnSync(process.execPath, args, { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (run.status !== 0) throw new Error(`${args.join(" ")} exited ${run.status}: ${run.stderr.toString()}`)
  return ms
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = values.toSorted((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

try {
  const empty: Array<number> = []
  const call: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    empty.push(time(["-e", "0"]))
    call.push(time([bin, "call", "Read", '{"path":"README.md"}', "--data-dir", dataDir]))
  }
  const ratio = median(call) / median(empty)
  console.log(`load average: ${loadAverage()}`)
  console.log(`node -e 0: median ${median(empty).toFixed(0)} ms of ${ROUNDS}`)
  console.log(`toolcap call Read (bundled): median ${median(call).toFixed(0)} ms of ${ROUNDS}`)
  console.log(
    `ratio ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}): ${ratio <= TARGET_RATIO ? "met" : "MISSED"}`
  )
  reportFigure({
    issue: 11,
    measure: "cold start: bundled toolcap call Read (median of 15)",
    figure: median(call),
    baseline: median(empty),
    baselineName: "node -e 0",
    unit: "ms",
    ratio,
    target: { op: "<=", value: TARGET_RATIO }
  })
  process.exitCode = ratio <= TARGET_RATIO ? 0 : 1
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true })
}
