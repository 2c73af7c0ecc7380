// Checkpointing a 10,000-message (~50 MB) transcript, against merely JSON-parsing the same text in
// the same run. The subject is JSON.parse + Checkpoint.build (from the file's text to the
// checkpoint), the baseline JSON.parse alone; target: subject <= 2x baseline. 7 rounds, interleaved;
// the ratio is the median of the per-round ratios (each round measures both back to back, so load
// from other work hits them alike). Saving to SQLite is measured too and printed for information.
// Data lives in a temp dir removed at the end.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { Checkpoint, CheckpointStore, TokenEstimator, type Transcript } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Layer from "effect/Layer"
import { prng, words } from "../test/fixtures/generate.js"

const MESSAGES = 10_000
const ROUNDS = 7
const TARGET = 2

/** A long agent session: user turns, tool exchanges with large results, ending mid-turn in an oversized batch. */
const generate = (): Transcript.Transcript => {
  const random = prng(42)
  const messages: Array<Transcript.Message> = []
  let call = 0
  const batch = 6
  const history = MESSAGES - 1 - batch
  while (messages.length < history - 4) {
    messages.push({
      role: "user",
      id: `u${messages.length}`,
      text: words(random, 150 + Math.floor(random() * 500))
    })
    const calls = 1 + Math.floor(random() * 3)
    const ids = Array.from({ length: calls }, () => `call-${call++}`)
    messages.push({
      role: "assistant",
      id: `a${messages.length}`,
      text: words(random, 30),
      toolCalls: ids.map((id) => ({ id, name: "Read", arguments: JSON.stringify({ path: `src/${id}.ts` }) }))
    })
    for (const id of ids) {
      messages.push({
        role: "tool",
        id: `r-${id}`,
        callId: id,
        text: words(random, 700 + Math.floor(random() * 1500))
      })
    }
  }
  while (messages.length < history)
    messages.push({ role: "user", id: `u${messages.length}`, text: words(random, 200) })
  const open = Array.from({ length: batch }, () => `call-${call++}`)
  messages.push({
    role: "assistant",
    id: "a-open",
    text: "Running the suites.",
    toolCalls: open.map((id) => ({ id, name: "Bash", arguments: "{}" }))
  })
  for (const id of open)
    messages.push({ role: "tool", id: `r-${id}`, callId: id, text: words(random, 30_000) })
  return { messages }
}

const median = (xs: ReadonlyArray<number>): number => Arr.sort(xs, Order.number)[Math.floor(xs.length / 2)]!

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-checkpoint-bench-"))
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
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

  // persistence, for information: a first save stores every message, a second only checks them
  const store = CheckpointStore.layerSqlite({ filename: path.join(dir, "checkpoints.sqlite") })
  const saves = Effect.runSync(
    Effect.scoped(
      Effect.provide(
        Effect.gen(function* () {
          const s = yield* CheckpointStore.CheckpointStore
          let t = performance.now()
          yield* s.save("bench", transcript, checkpoint!)
          const first = performance.now() - t
          t = performance.now()
          yield* s.save("bench", transcript, checkpoint!)
          return [first, performance.now() - t] as const
        }),
        store
      )
    )
  )
  console.log(`save to SQLite: first ${saves[0].toFixed(1)} ms, again ${saves[1].toFixed(1)} ms (no target)`)

  const verdict = ratio <= TARGET ? "OK" : "MISSED"
  console.log(
    `checkpoint (JSON.parse + build): ${subject.toFixed(1)} ms vs baseline JSON.parse ${parse.toFixed(1)} ms (medians) — ratio ${ratio.toFixed(2)} (target <= ${TARGET}) ${verdict}`
  )
  if (verdict !== "OK") process.exitCode = 1
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
