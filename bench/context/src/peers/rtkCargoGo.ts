/**
 * rtk's cargo and go filters (rtk-ai/rtk 0.16.0, `src/cargo_cmd.rs`, `src/go_cmd.rs`). `rtk cargo
 * build|check|test|clippy` runs the agent's own cargo command and filters `stdout\nstderr`; `rtk go
 * build` filters its own output the same way; `rtk go test` adds `-json` and reads the event stream.
 * Hash-map orders of the source (packages, lint rules) are broken by first appearance here.
 *
 * @since 0.1.0
 */
import { type OwnRun, quote, rustLines, truncate } from "./rtkRuns.js"

const RULE = "═══════════════════════════════════════"
const startsTrimmed = (line: string, ...words: ReadonlyArray<string>): boolean =>
  words.some((word) => line.trimStart().startsWith(word))

/**
 * `filter_cargo_build` (also `check`): `Compiling`/`Checking` counted, every `error…`/`warning…`
 * block kept (a block ends at a blank line once it has more than 3 lines), the summary lines
 * (`aborting due to`, `could not compile`, `generated N warnings`) dropped; the first 15 blocks.
 */
export const filterCargoBuild = (output: string): string => {
  const blocks: Array<string> = []
  let warnings = 0
  let errors = 0
  let compiled = 0
  let inBlock = false
  let current: Array<string> = []
  for (const line of rustLines(output)) {
    if (startsTrimmed(line, "Compiling", "Checking")) {
      compiled++
      continue
    }
    if (startsTrimmed(line, "Downloading", "Downloaded", "Finished")) continue
    if (line.startsWith("error[") || line.startsWith("error:")) {
      if (line.includes("aborting due to") || line.includes("could not compile")) continue
      if (inBlock && current.length > 0) blocks.push(current.join("\n"))
      current = [line]
      errors++
      inBlock = true
    } else if (line.startsWith("warning:") && line.includes("generated") && line.includes("warning")) continue
    else if (line.startsWith("warning:") || line.startsWith("warning[")) {
      if (inBlock && current.length > 0) blocks.push(current.join("\n"))
      current = [line]
      warnings++
      inBlock = true
    } else if (inBlock) {
      if (line.trim() === "" && current.length > 3) {
        blocks.push(current.join("\n"))
        current = []
        inBlock = false
      } else current.push(line)
    }
  }
  if (current.length > 0) blocks.push(current.join("\n"))
  if (errors === 0 && warnings === 0) return `✓ cargo build (${compiled} crates compiled)`
  let result = `cargo build: ${errors} errors, ${warnings} warnings (${compiled} crates)\n${RULE}\n`
  blocks.slice(0, 15).forEach((block, i) => {
    result += `${block}\n${i < blocks.length - 1 ? "\n" : ""}`
  })
  if (blocks.length > 15) result += `\n... +${blocks.length - 15} more issues\n`
  return result.trim()
}

const TEST_RESULT =
  /test result: (\w+)\.\s+(\d+) passed;\s+(\d+) failed;\s+(\d+) ignored;\s+(\d+) measured;\s+(\d+) filtered out(?:;\s+finished in ([\d.]+)s)?/

/**
 * `filter_cargo_test`: `running`/`... ok` lines dropped; the `failures:` section's blocks (each cut
 * to 200 characters, the first 10) and every `test result:` line; all passing suites aggregate to
 * one `✓ cargo test:` line; nothing found: the last 5 meaningful lines.
 */
export const filterCargoTest = (output: string): string => {
  const failures: Array<string> = []
  const summaries: Array<string> = []
  let inFailures = false
  let current: Array<string> = []
  for (const line of rustLines(output)) {
    if (startsTrimmed(line, "Compiling", "Downloading", "Downloaded", "Finished")) continue
    if (line.startsWith("running ") || (line.startsWith("test ") && line.endsWith("... ok"))) continue
    if (line === "failures:") {
      inFailures = true
      continue
    }
    if (inFailures) {
      if (line.startsWith("test result:")) {
        inFailures = false
        summaries.push(line)
      } else if (line.startsWith("    ") || line.startsWith("---- ")) current.push(line)
      else if (line.trim() === "" && current.length > 0) {
        failures.push(current.join("\n"))
        current = []
      } else if (line.trim() !== "") current.push(line)
    }
    // a summary that closed the failures section is taken again here, as the source does
    if (!inFailures && line.startsWith("test result:")) summaries.push(line)
  }
  if (current.length > 0) failures.push(current.join("\n"))
  if (failures.length === 0 && summaries.length > 0) {
    const parsed = summaries.map((line) => TEST_RESULT.exec(line))
    if (parsed.every((m) => m !== null && m[1] === "ok")) {
      const sum = (i: number) => parsed.reduce((total, m) => total + Number(m![i]), 0)
      const timed = parsed.every((m) => m![7] !== undefined)
      const counts = [
        `${sum(2)} passed`,
        ...(sum(4) > 0 ? [`${sum(4)} ignored`] : []),
        ...(sum(6) > 0 ? [`${sum(6)} filtered out`] : [])
      ].join(", ")
      const suites = parsed.length === 1 ? "1 suite" : `${parsed.length} suites`
      const seconds = parsed.reduce((total, m) => total + Number(m![7] ?? 0), 0)
      return timed
        ? `✓ cargo test: ${counts} (${suites}, ${seconds.toFixed(2)}s)`
        : `✓ cargo test: ${counts} (${suites})`
    }
    return summaries
      .map((line) => `✓ ${line}`)
      .join("\n")
      .trim()
  }
  let result = ""
  if (failures.length > 0) {
    result += `FAILURES (${failures.length}):\n${RULE}\n`
    failures.slice(0, 10).forEach((failure, i) => {
      result += `${i + 1}. ${truncate(failure, 200)}\n`
    })
    if (failures.length > 10) result += `\n... +${failures.length - 10} more failures\n`
    result += "\n"
  }
  for (const line of summaries) result += `${line}\n`
  if (result.trim() === "") {
    const meaningful = rustLines(output).filter((l) => l.trim() !== "" && !startsTrimmed(l, "Compiling"))
    for (const line of meaningful.slice(-5)) result += `${line}\n`
  }
  return result.trim()
}

/**
 * `filter_cargo_clippy`: warnings and errors counted, grouped by the lint in the line's last
 * brackets (or the message), each group's first 3 `-->` locations; the first 15 groups.
 */
export const filterCargoClippy = (output: string): string => {
  const byRule = new Map<string, Array<string>>()
  let errors = 0
  let warnings = 0
  let rule = ""
  for (const line of rustLines(output)) {
    if (startsTrimmed(line, "Compiling", "Checking", "Downloading", "Downloaded", "Finished")) continue
    if (/^(warning|error)[:[]/.test(line)) {
      if (line.includes("generated") && line.includes("warning")) continue
      if (line.includes("aborting due to") || line.includes("could not compile")) continue
      const isError = line.startsWith("error")
      if (isError) errors++
      else warnings++
      const open = line.lastIndexOf("[")
      const close = line.lastIndexOf("]")
      rule =
        open >= 0 && close >= 0
          ? line.slice(open + 1, close)
          : line.startsWith(isError ? "error: " : "warning: ")
            ? line.slice(isError ? 7 : 9)
            : line
    } else if (line.trimStart().startsWith("--> ")) {
      const location = line.trimStart().replace(/^(--> )+/, "")
      if (rule !== "") byRule.set(rule, [...(byRule.get(rule) ?? []), location])
    }
  }
  if (errors === 0 && warnings === 0) return "✓ cargo clippy: No issues found"
  let result = `cargo clippy: ${errors} errors, ${warnings} warnings\n${RULE}\n`
  const rules = [...byRule].toSorted((a, b) => b[1].length - a[1].length)
  for (const [name, locations] of rules.slice(0, 15)) {
    result += `  ${name} (${locations.length}x)\n`
    for (const location of locations.slice(0, 3)) result += `    ${location}\n`
    if (locations.length > 3) result += `    ... +${locations.length - 3} more\n`
  }
  if (byRule.size > 15) result += `\n... +${byRule.size - 15} more rules\n`
  return result.trim()
}

/** `filter_go_build`: lines with `error`, `.go:`, `undefined` or `cannot` (not `#` package lines), the first 20. */
export const filterGoBuild = (output: string): string => {
  const errors = rustLines(output)
    .map((l) => l.trim())
    .filter((t) => {
      const lower = t.toLowerCase()
      if (t.startsWith("#") && !lower.includes("error")) return false
      return (
        t !== "" &&
        (lower.includes("error") ||
          t.includes(".go:") ||
          lower.includes("undefined") ||
          lower.includes("cannot"))
      )
    })
  if (errors.length === 0) return "✓ Go build: Success"
  let result = `Go build: ${errors.length} errors\n${RULE}\n`
  errors.slice(0, 20).forEach((error, i) => {
    result += `${i + 1}. ${truncate(error, 120)}\n`
  })
  if (errors.length > 20) result += `\n... +${errors.length - 20} more errors\n`
  return result.trim()
}

/**
 * `filter_go_test_json`: per package, passes, fails and skips of tests; per failed test its output
 * lines that name an error, `expected`, `got`, a panic or `at …` (5, 100 characters each).
 */
export const filterGoTestJson = (output: string): string => {
  const packages = new Map<
    string,
    { pass: number; fail: number; skip: number; failed: Array<{ test: string; lines: Array<string> }> }
  >()
  const outputs = new Map<string, Array<string>>()
  for (const line of rustLines(output)) {
    const trimmed = line.trim()
    if (trimmed === "") continue
    let event: { Action?: unknown; Package?: unknown; Test?: unknown; Output?: unknown }
    try {
      event = JSON.parse(trimmed) as typeof event
    } catch {
      continue
    }
    if (typeof event.Action !== "string") continue
    const pkg = typeof event.Package === "string" ? event.Package : "unknown"
    const result = packages.get(pkg) ?? { pass: 0, fail: 0, skip: 0, failed: [] }
    packages.set(pkg, result)
    const test = typeof event.Test === "string" ? event.Test : undefined
    const key = `${pkg}\u0000${test ?? ""}`
    if (event.Action === "pass" && test !== undefined) result.pass++
    else if (event.Action === "fail" && test !== undefined) {
      result.fail++
      result.failed.push({ test, lines: outputs.get(key) ?? [] })
      outputs.delete(key)
    } else if (event.Action === "skip" && test !== undefined) result.skip++
    else if (event.Action === "output" && test !== undefined && typeof event.Output === "string")
      outputs.set(key, [...(outputs.get(key) ?? []), event.Output.trimEnd()])
  }
  const all = [...packages.values()]
  const pass = all.reduce((n, p) => n + p.pass, 0)
  const fail = all.reduce((n, p) => n + p.fail, 0)
  const skip = all.reduce((n, p) => n + p.skip, 0)
  if (fail === 0 && pass === 0) return "Go test: No tests found"
  if (fail === 0) return `✓ Go test: ${pass} passed in ${packages.size} packages`
  let result = `Go test: ${pass} passed, ${fail} failed${skip > 0 ? `, ${skip} skipped` : ""} in ${packages.size} packages\n${RULE}\n`
  for (const [pkg, p] of packages) {
    if (p.fail === 0) continue
    result += `\n📦 ${pkg.slice(pkg.lastIndexOf("/") + 1)} (${p.pass} passed, ${p.fail} failed)\n`
    for (const failed of p.failed) {
      result += `  ❌ ${failed.test}\n`
      const relevant = failed.lines
        .filter((l) => {
          const lower = l.toLowerCase()
          return (
            l.trim() !== "" &&
            !l.startsWith("=== RUN") &&
            !l.startsWith("--- FAIL") &&
            (lower.includes("error") ||
              lower.includes("expected") ||
              lower.includes("got") ||
              lower.includes("panic") ||
              l.trim().startsWith("at "))
          )
        })
        .slice(0, 5)
      for (const l of relevant) result += `     ${truncate(l, 100)}\n`
    }
  }
  return result.trim()
}

/** `run_test`: `go test -json` (unless given) and the agent's arguments; stderr after, exit code kept. */
export const goTest = (args: ReadonlyArray<string>): OwnRun => ({
  runs: [["go", "test", ...(args.includes("-json") ? [] : ["-json"]), ...args].map(quote).join(" ")],
  print: ([out]) => ({
    stdout: `${filterGoTestJson(out!.stdout)}\n`,
    stderr: out!.stderr.trim() === "" ? "" : `${out!.stderr.trim()}\n`,
    exitCode: out!.exitCode ?? 0
  })
})

/**
 * The filters over the agent's own cargo or go output, by subcommand: what rtk prints
 * (`println!`) of `stdout\nstderr`, the tool's exit code kept; undefined for a subcommand whose
 * filter is not modelled (`cargo install`, `cargo fmt`, `go vet`).
 */
export const cargoGoFilter = (
  tool: string,
  sub: string | undefined
): ((combined: string) => string) | undefined =>
  tool === "cargo"
    ? sub === "build" || sub === "check"
      ? filterCargoBuild
      : sub === "test"
        ? filterCargoTest
        : sub === "clippy"
          ? filterCargoClippy
          : undefined
    : tool === "go" && sub === "build"
      ? filterGoBuild
      : undefined
