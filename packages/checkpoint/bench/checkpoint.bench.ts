// Checkpointing a 10,000-message (~50 MB) transcript, against merely JSON-parsing the same text in
// the same run. The subject is JSON.parse + Checkpoint.build (from the file's text to the
// checkpoint), the baseline JSON.parse alone; target: subject <= 2x baseline. 7 rounds, interleaved;
// the ratio is the median of the per-round ratios (each round measures both back to back, so load
// from other work hits them alike). Saving is measured by store.bench.ts. Data lives in a temp dir
// removed at the end.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { Checkpoint, TokenEstimator, type Transcript } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { gc, generate, median } from "./transcript.js"
import { reportFigure } from "@toolcap/bench-report"

const ROUNDS = 7
const TARGET = 2

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-checkpoint-bench-"))
try {
  const file = path.join(dir, "transcript.json")
  fs.writeFileSync(file, JSON.stringify(generate()))
  const text = fs.readFileSync(file, "utf8")
  const services = Layer.merge(Budgets.layer, TokenEstimator.layer)
  const buildSync = (input: unknown) => Effect.runSync(Effect.provide(Checkpoint.build(input), services))

  const parseTimes: Array<number> = []
  const subjectTimes: Array<number> = []
  const buildTimes: Array<number> = []
  let checkpoint: Checkpoint.Checkpoint | undefined
  let transcript: unknown
  for (let round = 0; round < ROUNDS; round++) {
    gc()
    let t = performance.now()
    JSON.parse(text)
    parseTimes.push(performance.now() - t)
    gc()
    t = performance.now()
    transcript = JSON.parse(text)
    const parsed = performance.now()
    checkpoint = buildSync(transcript)
    const done = performance.now()
    subjectTimes.push(done - t)
    buildTimes.push(done - parsed)
  }
  const parse = median(parseTimes)
  const subject = median(subjectTimes)
  const ratio = median(subjectTimes.map((time, round) => time / parseTimes[round]!))
  const count = (transcript as Transcript.Transcript).messages.length
  console.log(
    `transcript: ${count} messages, ${(Buffer.byteLength(text) / 1024 / 1024).toFixed(1)} MB JSON; retained ${checkpoint!.retainedTokens} tokens, batch ${checkpoint!.batch?.originalTokens} -> ${checkpoint!.batch?.tokens} tokens`
  )
  console.log(`build alone: ${median(buildTimes).toFixed(1)} ms (median of ${ROUNDS})`)

  const verdict = ratio <= TARGET ? "OK" : "MISSED"
  console.log(
    `checkpoint (JSON.parse + build): ${subject.toFixed(1)} ms vs baseline JSON.parse ${parse.toFixed(1)} ms (medians) — ratio ${ratio.toFixed(2)} (target <= ${TARGET}) ${verdict}`
  )
  reportFigure({
    issue: 13,
    measure: "checkpoint build of a 10,000-message transcript (JSON.parse + build)",
    figure: subject,
    baseline: parse,
    baselineName: "JSON.parse alone",
    unit: "ms",
    ratio,
    target: { op: "<=", value: TARGET }
  })
  if (verdict !== "OK") process.exitCode = 1
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
