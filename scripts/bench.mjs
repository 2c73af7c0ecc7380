// `pnpm bench`: runs every packages/*/bench/*.bench.ts (and apps/*, bench/*) one after another, each
// in its own Node process so one bench's heap and peak RSS do not leak into the next. Each bench measures
// its own baseline in the same run and prints ratios; a missed target is reported, not hidden.
//
// Every bench prints the figures it compares against a target as `BENCH {json}` lines
// (bench/report); this script collects them. A full run (no arguments) then runs the reliability
// suites in their long mode (TOOLCAP_LONG_TESTS=1, one vitest run of the files listed below, each
// writing its counts as JSON into a temp dir named by TOOLCAP_RELIABILITY_OUT) and writes the
// "pnpm bench" section of BENCHMARKS.md (figures, reliability counts, machine) and the README's
// headline rows. With arguments (substrings of bench file paths, or `reliability`) it runs only
// those and prints the table without writing anything.
import { spawn } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { tsImport } from "tsx/esm/api"

const root = path.resolve(import.meta.dirname, "..")
const only = process.argv.slice(2)
const full = only.length === 0
const files = ["packages", "apps", "bench"]
  .flatMap((group) => fs.readdirSync(path.join(root, group)).map((name) => path.join(group, name, "bench")))
  .filter((dir) => fs.existsSync(path.join(root, dir)))
  .flatMap((dir) =>
    fs
      .readdirSync(path.join(root, dir))
      .filter((f) => f.endsWith(".bench.ts"))
      .map((f) => path.join(dir, f))
  )
  .filter((file) => full || only.some((o) => file.includes(o)))

/** The reliability suites and the hostile-input suites whose long mode they count. */
const RELIABILITY_FILES = [
  "packages/tools/test/reliability.faults.test.ts",
  "packages/tools/test/reliability.faults.ripgrep.test.ts",
  "packages/tools/test/race.test.ts",
  "packages/tools/test/hostile.test.ts",
  "packages/tools/test/engineMemory.test.ts",
  "packages/tools/test/reliability.nested.test.ts",
  "packages/tools/test/admission.test.ts",
  "packages/tools/test/reliability.bounds.test.ts",
  "packages/tools/test/reliability.isolation.test.ts",
  "packages/adapters/test/reliability.load.test.ts",
  "packages/adapters/test/reliability.faults.test.ts",
  "packages/adapters/test/hostileInput.test.ts",
  "packages/adapters/test/reliability.input.test.ts",
  "packages/checkpoint/test/Persistence.test.ts",
  "apps/demo/test/reliability.kill.test.ts",
  // the slow-reader pipe case: 20 runs per exit kind here, 3 in `pnpm test`
  "apps/demo/test/cli.test.ts",
  "apps/demo/test/reliability.reach.test.ts",
  "apps/demo/test/hostile.test.ts",
  "apps/demo/test/hostile.files.test.ts",
  "packages/viewer/test/hostile.test.ts"
]

const report = await tsImport("../bench/report/src/index.ts", import.meta.url)
const markdown = await tsImport("../bench/report/src/markdown.ts", import.meta.url)
const region = await tsImport("../bench/context/src/Region.ts", import.meta.url)

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")

/** Runs a command, its output shown as it comes and also kept; resolves with the exit and the text. */
const run = (cmd, args, options) =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "inherit"] })
    const chunks = []
    child.stdout.on("data", (chunk) => {
      chunks.push(chunk)
      process.stdout.write(chunk)
    })
    child.on("close", (code, signal) =>
      resolve({
        exit: code === 0 ? null : `${code ?? signal}`,
        output: Buffer.concat(chunks).toString("utf8")
      })
    )
  })

const startedAt = performance.now()
const loadBefore = loadavg()
const benches = []
for (const file of files) {
  console.log(`\n== ${file}`)
  const began = performance.now()
  const r = await run(
    process.execPath,
    ["--conditions=@toolcap/source", "--import", "tsx", "--expose-gc", path.join(root, file)],
    { cwd: path.join(root, path.dirname(path.dirname(file))) }
  )
  if (r.exit !== null) console.log(`== ${file}: exit ${r.exit}`)
  benches.push({
    file,
    records: report.parseBenchLines(r.output),
    exit: r.exit,
    seconds: (performance.now() - began) / 1000
  })
}

let reliability = []
let reliabilityRun = "The reliability suites were not run."
let reliabilityFailed = false
if (full || only.includes("reliability")) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-reliability-"))
  console.log(`\n== reliability suites, long mode (${RELIABILITY_FILES.length} files)`)
  const began = performance.now()
  const r = await run("pnpm", ["exec", "vitest", "run", ...RELIABILITY_FILES], {
    cwd: root,
    env: {
      ...process.env,
      TOOLCAP_LONG_TESTS: "1",
      [report.RELIABILITY_OUT_VARIABLE]: out,
      FORCE_COLOR: "0",
      NO_COLOR: "1"
    }
  })
  reliability = fs
    .readdirSync(out)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(fs.readFileSync(path.join(out, f), "utf8")))
  fs.rmSync(out, { recursive: true, force: true })
  reliabilityFailed = r.exit !== null
  reliabilityRun = `\`pnpm bench\` runs them after the benches as one \`vitest run\` of ${RELIABILITY_FILES.map((f) => `\`${f}\``).join(", ")} with \`TOOLCAP_LONG_TESTS=1\` (their long mode); each suite writes its count line as JSON into the directory \`TOOLCAP_RELIABILITY_OUT\` names. That run took ${((performance.now() - began) / 1000).toFixed(0)} s and ${r.exit === null ? "passed" : `**failed** (exit ${r.exit})`}. \`pnpm test\` runs the same suites in their default mode.`
}

const cpus = os.cpus()
const collected = {
  benches,
  reliability,
  reliabilityRun,
  machine: `${cpus[0]?.model ?? "unknown CPU"}, ${cpus.length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB memory, Linux ${os.release()}, Node ${process.version}; load average ${loadBefore} at the start and ${loadavg()} at the end (the machine is shared: other work ran during the run); the whole run took ${((performance.now() - startedAt) / 60000).toFixed(1)} min; ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC.`
}

console.log(`\n${markdown.figuresTable(collected)}\n`)
if (reliability.length > 0) console.log(`${markdown.reliabilityTable(collected)}\n`)

if (full) {
  const prettier = await import("prettier")
  const writeFormatted = async (file, text) => {
    const options = (await prettier.resolveConfig(file)) ?? {}
    fs.writeFileSync(file, await prettier.format(text, { ...options, filepath: file }))
  }
  const benchmarksFile = path.join(root, "BENCHMARKS.md")
  await writeFormatted(
    benchmarksFile,
    region.replaceRegion(fs.readFileSync(benchmarksFile, "utf8"), "pnpm bench", markdown.section(collected))
  )
  const readme = path.join(root, "README.md")
  await writeFormatted(
    readme,
    region.replaceRegion(fs.readFileSync(readme, "utf8"), "pnpm bench headline", markdown.headline(collected))
  )
  console.log("wrote the pnpm bench section of BENCHMARKS.md and the README headline")
}

const failures = benches.filter((b) => b.exit !== null).length + (reliabilityFailed ? 1 : 0)
console.log(
  `\n${files.length} bench files run, ${failures} reported a missed target or failed${reliabilityFailed ? " (the reliability suites failed)" : ""}`
)
process.exit(failures === 0 ? 0 : 1)
