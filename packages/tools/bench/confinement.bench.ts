// What kernel confinement costs a ripgrep run: the same small search spawned bare and through the
// Landlock launcher (Confinement.command), 15 rounds of 40 pairs, each pair one bare spawn and one
// confined spawn back to back (the first of the pair alternating), so a change of the machine's
// load falls on both alike; medians of all spawns of each kind and their ratio. Target: ratio <= 1.10 (a Grep call spawns ripgrep two to
// three times, so the launcher's extra exec must stay near noise).
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { rgPath } from "@vscode/ripgrep"
import * as Confinement from "../src/Confinement.js"
import * as Supervisor from "../src/Supervisor.js"
import { loadAverage, reportFigure } from "@toolcap/bench-report"

const ROUNDS = 15
const SPAWNS_PER_ROUND = 40
const TARGET_RATIO = 1.1

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-confine-bench-"))
for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `line ${i}\nneedle ${i}\n`)

const once = (file: string, args: ReadonlyArray<string>) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(file, args as Array<string>, { cwd: dir, stdio: ["ignore", "pipe", "ignore"] })
    child.stdout.resume()
    child.once("error", reject)
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))))
  })

const timedMs = async (file: string, args: ReadonlyArray<string>) => {
  const start = performance.now()
  await once(file, args)
  return performance.now() - start
}

const median = (values: ReadonlyArray<number>) =>
  Arr.sort(values, Order.number)[Math.floor(values.length / 2)]!

const main = async () => {
  const args = ["--no-config", "--json", "needle", "."]
  const { confined, support } = await Effect.runPromise(
    Effect.all({ support: Confinement.support, confined: Confinement.command(rgPath, args, [dir]) }).pipe(
      Effect.provide(Supervisor.layer())
    )
  )
  console.log(`confinement: ${support.kind === "landlock" ? `landlock ABI ${support.abi}` : support.reason}`)
  const bare: Array<number> = []
  const wrapped: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    for (let pair = 0; pair < SPAWNS_PER_ROUND; pair++) {
      if (pair % 2 === 0) {
        bare.push(await timedMs(rgPath, args))
        wrapped.push(await timedMs(confined.file, confined.args))
      } else {
        wrapped.push(await timedMs(confined.file, confined.args))
        bare.push(await timedMs(rgPath, args))
      }
    }
  }
  const ratio = median(wrapped) / median(bare)
  console.log(
    `rg spawn+search: bare ${median(bare).toFixed(2)} ms, confined ${median(wrapped).toFixed(2)} ms, ratio ${ratio.toFixed(3)} (target <= ${TARGET_RATIO}); load ${loadAverage()}`
  )
  fs.rmSync(dir, { recursive: true, force: true })
  reportFigure({
    issue: 12,
    measure: `rg spawn + search under Landlock confinement (${support.kind})`,
    figure: median(wrapped),
    baseline: median(bare),
    baselineName: "bare rg",
    unit: "ms",
    target: { op: "<=", value: TARGET_RATIO }
  })
  if (support.kind === "landlock" && ratio > TARGET_RATIO) {
    console.log("target missed")
    process.exitCode = 1
  }
}

void main()
