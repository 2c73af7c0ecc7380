// The whole test command: format check, lint, the rule table's check, type-check (sources and
// tests), then every vitest project in one run. Ends with the plain line "N passed, N failed,
// N skipped" computed from the vitest JSON report; a failing check counts as one failed item.
// Before the run it prints the machine tier (scripts/tiers.mjs); after it, a guarded suite that
// did not run although this machine offers its tier counts as failed. Exits non-zero on any failure.
import { spawn, spawnSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { checkGuards, describeTiers, detectTiers } from "./tiers.mjs"

const root = path.resolve(import.meta.dirname, "..")
const reportFile = path.join(root, ".reports", "vitest.json")
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", FORCE_COLOR: process.env.CI ? "0" : "1" }

const run = (label, cmd, args) => {
  console.log(`\n== ${label}: ${cmd} ${args.join(" ")}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env })
  const ok = r.status === 0
  console.log(`== ${label}: ${ok ? "ok" : `FAILED (exit ${r.status ?? r.signal})`}`)
  return ok
}

const startedAt = performance.now()
const tiers = detectTiers(root)
for (const line of describeTiers(tiers)) console.log(line)
const checks = [
  ["format", "pnpm", ["exec", "prettier", "--check", "."]],
  ["lint", "pnpm", ["run", "--silent", "lint"]],
  // docs/rules.md names only files and tests that exist; no source cites a text outside the repository
  ["rules", "node", ["scripts/rules.mjs"]],
  // one program over every package's sources, tests and benches (each package's own `typecheck`
  // parses effect's declarations again: ten programs took ~75 s here, one takes ~13 s), then the
  // viewer's browser code with the DOM library
  ["typecheck", "pnpm", ["exec", "tsc", "-p", "tsconfig.check.json"]],
  ["typecheck (viewer ui)", "pnpm", ["exec", "tsc", "-p", "packages/viewer/src/ui/tsconfig.json"]]
]
/** Runs a check with its output captured, so checks can run at once and print one after another. */
const runCaptured = (label, cmd, args) =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    const output = []
    child.stdout.on("data", (data) => output.push(data))
    child.stderr.on("data", (data) => output.push(data))
    child.on("close", (code, signal) => {
      console.log(`\n== ${label}: ${cmd} ${args.join(" ")}`)
      process.stdout.write(Buffer.concat(output))
      const ok = code === 0
      console.log(`== ${label}: ${ok ? "ok" : `FAILED (exit ${code ?? signal})`}`)
      resolve(ok)
    })
  })
// the checks run at once: prettier and tsc are each single-threaded
const checksOk = await Promise.all(checks.map(([label, cmd, args]) => runCaptured(label, cmd, args)))
const failedChecks = checks.filter((_, i) => !checksOk[i]).map(([label]) => label)
console.log(`checks took ${Math.round((performance.now() - startedAt) / 1000)} s`)

fs.rmSync(reportFile, { force: true })
fs.mkdirSync(path.dirname(reportFile), { recursive: true })
const vitestOk = run("vitest", "pnpm", [
  "exec",
  "vitest",
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${reportFile}`
])

let passed = 0
let failed = 0
let skipped = 0
if (fs.existsSync(reportFile)) {
  const report = JSON.parse(fs.readFileSync(reportFile, "utf8"))
  passed = report.numPassedTests
  failed = report.numFailedTests
  skipped = report.numPendingTests + report.numTodoTests
  // A file that fails to load has no failed tests of its own; count it so it cannot pass silently.
  const brokenFiles = report.testResults.filter(
    (f) => f.status === "failed" && f.assertionResults.every((a) => a.status !== "failed")
  )
  failed += brokenFiles.length
  const guards = checkGuards(root, tiers, report)
  console.log("\n== guarded suites against the machine tier")
  for (const line of guards.lines) console.log(line)
  for (const line of describeTiers(tiers)) console.log(line)
  if (guards.missed.length > 0) {
    console.log(`${guards.missed.length} guarded suites did not run on a machine that offers their tier`)
    failed += guards.missed.length
  }
} else {
  failed += 1
}
if (!vitestOk && failed === 0) failed += 1
failed += failedChecks.length
if (failedChecks.length > 0) console.log(`failed checks: ${failedChecks.join(", ")}`)
console.log(`pnpm test took ${Math.round((performance.now() - startedAt) / 1000)} s`)
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed === 0 ? 0 : 1)
