/**
 * rtk's filters that run the tool themselves (rtk-ai/rtk 0.16.0): `rtk git log|status|diff|show`,
 * `rtk grep`, `rtk diff` and `rtk pytest` spawn their own command lines (rtk's format flags, its
 * `--porcelain`, its `rg`, its `--tb=short -q`) or read the files themselves, then filter that
 * output. Each is modelled as the command lines rtk spawns, run for real at bench time (`runs`), and
 * the pure filter over their outputs (`print`), both from the file named beside it.
 *
 * @since 0.1.0
 */
import type { RawOutput } from "../Text.js"

/** What rtk printed and the exit code it left. */
export interface Printed {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/** One filter: the command lines rtk spawns for the agent's arguments, and what it prints of their outputs. */
export interface OwnRun {
  readonly runs: ReadonlyArray<string>
  readonly print: (outputs: ReadonlyArray<RawOutput>) => Printed
}

/** A word for a POSIX shell, in single quotes. */
export const quote = (text: string): string =>
  /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
const line = (words: ReadonlyArray<string>): string => words.map(quote).join(" ")

/** Rust's `str::lines`: split at `\n`, a `\r` before it dropped, no last empty line. */
export const rustLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l))
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** `utils::truncate`: over `max` characters, the first `max - 3` and `...`. */
export const truncate = (text: string, max: number): string => {
  const chars = Array.from(text)
  return chars.length <= max ? text : max < 3 ? "..." : `${chars.slice(0, max - 3).join("")}...`
}

const ok = (stdout: string): Printed => ({ stdout, stderr: "", exitCode: 0 })
/** `eprintln!("{}", stderr); std::process::exit(code)`: a failed git run as rtk passes it on. */
const gitFailed = (output: RawOutput): Printed => ({
  stdout: "",
  stderr: `${output.stderr}\n`,
  exitCode: output.exitCode ?? 1
})

const byteLen = (text: string): number => Buffer.byteLength(text, "utf8")

// ------------------------------------------------------------------------------------------------
// git (`src/git.rs`)

/** rtk's own `git log` format: `%h %s (%ar) <%an>`. */
const LOG_FORMAT = "--pretty=format:%h %s (%ar) <%an>"

/**
 * `run_log`: `git log` with rtk's format unless the agent gave one, `-10` unless it gave a limit,
 * `--no-merges` unless it asked for merges, then the agent's arguments; the first `limit` lines,
 * each over 80 bytes cut to 77 characters and `...`, trimmed. A failing git: its stderr and code.
 */
export const gitLog = (args: ReadonlyArray<string>): OwnRun => {
  const hasFormat = args.some(
    (a) => a.startsWith("--oneline") || a.startsWith("--pretty") || a.startsWith("--format")
  )
  const limitArg = args.find((a) => /^-\d/.test(a))
  const limit = limitArg === undefined ? 10 : Number.parseInt(limitArg.slice(1), 10) || 10
  const wantsMerges = args.some((a) => a === "--merges" || a === "--min-parents=2")
  const words = [
    "git",
    "log",
    ...(hasFormat ? [] : [LOG_FORMAT]),
    ...(limitArg === undefined ? ["-10"] : []),
    ...(wantsMerges ? [] : ["--no-merges"]),
    ...args
  ]
  return {
    runs: [line(words)],
    print: ([out]) => {
      if ((out!.exitCode ?? 0) !== 0) return gitFailed(out!)
      const kept = rustLines(out!.stdout)
        .slice(0, limit)
        .map((l) => (byteLen(l) > 80 ? `${Array.from(l).slice(0, 77).join("")}...` : l))
      return ok(`${kept.join("\n").trim()}\n`)
    }
  }
}

/** `format_status_output` over `git status --porcelain -b`. */
export const formatStatus = (porcelain: string): string => {
  const lines = rustLines(porcelain)
  if (lines.length === 0) return "Clean working tree"
  let out = ""
  if (lines[0]!.startsWith("##")) out += `📌 ${lines[0]!.replace(/^(## )+/, "")}\n`
  const staged: Array<string> = []
  const modified: Array<string> = []
  const untracked: Array<string> = []
  let conflicts = 0
  for (const entry of lines.slice(1)) {
    if (byteLen(entry) < 3) continue
    const status = entry.slice(0, 2)
    const file = entry.slice(3)
    if ("MADRC".includes(status[0]!)) staged.push(file)
    else if (status[0] === "U") conflicts++
    if ("MD".includes(status[1]!)) modified.push(file)
    if (status === "??") untracked.push(file)
  }
  const list = (title: string, files: ReadonlyArray<string>, show: number) => {
    if (files.length === 0) return
    out += `${title}: ${files.length} files\n`
    for (const f of files.slice(0, show)) out += `   ${f}\n`
    if (files.length > show) out += `   ... +${files.length - show} more\n`
  }
  list("✅ Staged", staged, 5)
  list("📝 Modified", modified, 5)
  list("❓ Untracked", untracked, 3)
  if (conflicts > 0) out += `⚠️  Conflicts: ${conflicts} files\n`
  return out.trimEnd()
}

/** `filter_status_with_args`: empty lines and git's `(use "git …")` hints dropped. */
export const filterStatusWithArgs = (output: string): string => {
  const kept: Array<string> = []
  for (const l of rustLines(output)) {
    const t = l.trim()
    if (t === "") continue
    if (
      t.startsWith('(use "git') ||
      t.startsWith("(create/copy files") ||
      t.includes('(use "git add') ||
      t.includes('(use "git restore')
    )
      continue
    if (t.includes("nothing to commit") && t.includes("working tree clean")) {
      kept.push(t)
      break
    }
    kept.push(l)
  }
  return kept.length === 0 ? "ok ✓" : kept.join("\n")
}

/**
 * `run_status`: with no arguments, `git status --porcelain -b` through `format_status_output`
 * (conflicts counted, not named); with arguments, `git status <args>` with its hints dropped (and
 * git's stderr passed on). rtk returns success either way.
 */
export const gitStatus = (args: ReadonlyArray<string>): OwnRun =>
  args.length === 0
    ? {
        runs: ["git status --porcelain -b"],
        print: ([out]) =>
          ok(
            `${out!.stderr.includes("not a git repository") ? "Not a git repository" : formatStatus(out!.stdout)}\n`
          )
      }
    : {
        runs: [line(["git", "status", ...args])],
        print: ([out]) => ({ stdout: filterStatusWithArgs(out!.stdout), stderr: out!.stderr, exitCode: 0 })
      }

/**
 * `compact_diff`: per file `📄 path`, per hunk `@@ … @@` and its first 10 changed or context lines
 * (then `... (truncated)`), `+a -r` per file, stopping at `maxLines` result lines.
 */
export const compactDiff = (diff: string, maxLines: number): string => {
  const result: Array<string> = []
  let file = ""
  let added = 0
  let removed = 0
  let inHunk = false
  let hunkLines = 0
  const MAX_HUNK_LINES = 10
  for (const l of rustLines(diff)) {
    if (l.startsWith("diff --git")) {
      if (file !== "" && (added > 0 || removed > 0)) result.push(`  +${added} -${removed}`)
      file = l.split(" b/")[1] ?? "unknown"
      result.push(`\n📄 ${file}`)
      added = 0
      removed = 0
      inHunk = false
    } else if (l.startsWith("@@")) {
      inHunk = true
      hunkLines = 0
      result.push(`  @@ ${(l.split("@@")[1] ?? "").trim()} @@`)
    } else if (inHunk) {
      if (l.startsWith("+") && !l.startsWith("+++")) {
        added++
        if (hunkLines < MAX_HUNK_LINES) {
          result.push(`  ${l}`)
          hunkLines++
        }
      } else if (l.startsWith("-") && !l.startsWith("---")) {
        removed++
        if (hunkLines < MAX_HUNK_LINES) {
          result.push(`  ${l}`)
          hunkLines++
        }
      } else if (hunkLines < MAX_HUNK_LINES && !l.startsWith("\\") && hunkLines > 0) {
        result.push(`  ${l}`)
        hunkLines++
      }
      if (hunkLines === MAX_HUNK_LINES) {
        result.push("  ... (truncated)")
        hunkLines++
      }
    }
    if (result.length >= maxLines) {
      result.push("\n... (more changes truncated)")
      break
    }
  }
  if (file !== "" && (added > 0 || removed > 0)) result.push(`  +${added} -${removed}`)
  return result.join("\n")
}

/** `run_diff`: `--stat`/`--no-compact` pass through trimmed; else `git diff --stat`, then `--- Changes ---` and `compact_diff(.., 100)`. */
export const gitDiff = (args: ReadonlyArray<string>): OwnRun => {
  const passthrough = args.some(
    (a) => a === "--stat" || a === "--numstat" || a === "--shortstat" || a === "--no-compact"
  )
  if (passthrough)
    return {
      runs: [line(["git", "diff", ...args])],
      print: ([out]) => ((out!.exitCode ?? 0) !== 0 ? gitFailed(out!) : ok(`${out!.stdout.trim()}\n`))
    }
  return {
    runs: [line(["git", "diff", "--stat", ...args]), line(["git", "diff", ...args])],
    print: ([stat, diff]) =>
      ok(
        `${stat!.stdout.trim()}\n${diff!.stdout === "" ? "" : `\n--- Changes ---\n${compactDiff(diff!.stdout, 100)}\n`}`
      )
  }
}

/** `run_show`: a one-line summary (rtk's format), the `--stat`, the diff through `compact_diff(.., 100)`. */
export const gitShow = (args: ReadonlyArray<string>): OwnRun => {
  const passthrough = args.some(
    (a) =>
      a === "--stat" ||
      a === "--numstat" ||
      a === "--shortstat" ||
      a.startsWith("--pretty") ||
      a.startsWith("--format")
  )
  if (passthrough)
    return {
      runs: [line(["git", "show", ...args])],
      print: ([out]) => ((out!.exitCode ?? 0) !== 0 ? gitFailed(out!) : ok(`${out!.stdout.trim()}\n`))
    }
  return {
    runs: [
      line(["git", "show", "--no-patch", LOG_FORMAT, ...args]),
      line(["git", "show", "--stat", "--pretty=format:", ...args]),
      line(["git", "show", "--pretty=format:", ...args])
    ],
    print: ([summary, stat, diff]) => {
      if ((summary!.exitCode ?? 0) !== 0) return gitFailed(summary!)
      const statText = stat!.stdout.trim()
      const diffText = diff!.stdout.trim()
      return ok(
        [
          summary!.stdout.trim(),
          ...(statText === "" ? [] : [statText]),
          ...(diffText === "" ? [] : [compactDiff(diffText, 100)])
        ]
          .map((t) => `${t}\n`)
          .join("")
      )
    }
  }
}

// ------------------------------------------------------------------------------------------------
// clap (`src/main.rs`): a flag a subcommand does not declare stops rtk before it runs anything

/** clap 4's message for an undeclared flag, as `Cli::parse()` prints it before exiting with 2. */
export const clapUnexpected = (flag: string, usage: string): Printed => ({
  stdout: "",
  stderr: `error: unexpected argument '${flag}' found\n\n  tip: to pass '${flag}' as a value, use '-- ${flag}'\n\nUsage: ${usage}\n\nFor more information, try '--help'.\n`,
  exitCode: 2
})

const constant = (printed: Printed): OwnRun => ({ runs: [], print: () => printed })

// ------------------------------------------------------------------------------------------------
// grep (`src/grep_cmd.rs`, `Commands::Grep` in `src/main.rs`)

const GREP_USAGE = "rtk grep [OPTIONS] <PATTERN> [PATH] [EXTRA_ARGS]..."

/** `compact_path`: a path over 50 bytes with more than 3 parts as `first/.../parent/name`. */
const compactPath = (p: string): string => {
  if (byteLen(p) <= 50) return p
  const parts = p.split("/")
  return parts.length <= 3 ? p : `${parts[0]}/.../${parts[parts.length - 2]}/${parts[parts.length - 1]}`
}

/** `clean_line` without `-c`: trimmed; over `max` bytes, `max` characters around the match (a third before it). */
export const cleanLine = (text: string, max: number, pattern: string): string => {
  const trimmed = text.trim()
  if (byteLen(trimmed) <= max) return trimmed
  const lower = trimmed.toLowerCase()
  const at = lower.indexOf(pattern.toLowerCase())
  const chars = Array.from(trimmed)
  if (at < 0) return `${chars.slice(0, max - 3).join("")}...`
  const charPos = Array.from(lower.slice(0, at)).length
  let start = Math.max(charPos - Math.floor(max / 3), 0)
  const end = Math.min(start + max, chars.length)
  if (end === chars.length) start = Math.max(end - max, 0)
  const slice = chars.slice(start, end).join("")
  return start > 0 && end < chars.length ? `...${slice}...` : start > 0 ? `...${slice}` : `${slice}...`
}

/** The grouping of `run` over `rg -n --no-heading` (or `grep -rn`) output. */
export const groupGrep = (
  stdout: string,
  pattern: string,
  path: string,
  maxLen: number,
  maxResults: number
): string => {
  if (stdout.trim() === "") return `🔍 0 for '${pattern}'\n`
  const byFile = new Map<string, Array<{ readonly line: number; readonly text: string }>>()
  let total = 0
  for (const l of rustLines(stdout)) {
    const parts = l.split(":")
    let file: string
    let num: number
    let content: string
    if (parts.length >= 3) {
      file = parts[0]!
      num = Number.parseInt(parts[1]!, 10) || 0
      content = parts.slice(2).join(":")
    } else if (parts.length === 2) {
      file = path
      num = Number.parseInt(parts[0]!, 10) || 0
      content = parts[1]!
    } else continue
    total++
    byFile.set(file, [...(byFile.get(file) ?? []), { line: num, text: cleanLine(content, maxLen, pattern) }])
  }
  let out = `🔍 ${total} in ${byFile.size}F:\n\n`
  let shown = 0
  // Rust's `sort_by_key` on the file names: byte order
  for (const [file, matches] of [...byFile].toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (shown >= maxResults) break
    out += `📄 ${compactPath(file)} (${matches.length}):\n`
    for (const m of matches.slice(0, 10)) {
      out += `  ${String(m.line).padStart(4)}: ${m.text}\n`
      shown++
      if (shown >= maxResults) break
    }
    if (matches.length > 10) out += `  +${matches.length - 10}\n`
    out += "\n"
  }
  if (total > shown) out += `... +${total - shown}\n`
  return out
}

/**
 * `rtk grep <args>` as clap parses them: `-l/--max-len N` (80), `-m/--max N` (50), `-c`, `-t T`,
 * then `<PATTERN> [PATH]` and trailing ripgrep arguments; an undeclared flag before the trailing
 * ones (`grep -rn`'s `-r`) is clap's error. A parsed call runs `rg -n --no-heading` (or, when `rg`
 * cannot be spawned, `grep -rn`) and groups its output; rtk returns success.
 */
export const rtkGrep = (args: ReadonlyArray<string>): OwnRun => {
  let maxLen = 80
  let maxResults = 50
  let fileType: string | undefined
  const positional: Array<string> = []
  const extra: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (positional.length === 2) {
      extra.push(a)
      continue
    }
    if (a === "-l" || a === "--max-len") maxLen = Number(args[++i])
    else if (a === "-m" || a === "--max") maxResults = Number(args[++i])
    else if (a === "-t" || a === "--file-type") fileType = args[++i]
    else if (a === "-c" || a === "--context-only") continue
    else if (a.startsWith("--") && a.length > 2) return constant(clapUnexpected(a.split("=")[0]!, GREP_USAGE))
    else if (a.startsWith("-") && a.length > 1) {
      const flag = Array.from(a.slice(1)).find((c) => !"lmct".includes(c))
      return constant(clapUnexpected(`-${flag ?? a.slice(1, 2)}`, GREP_USAGE))
    } else positional.push(a)
  }
  const [pattern, path = "."] = positional
  if (pattern === undefined)
    return constant({
      stdout: "",
      stderr: `error: the following required arguments were not provided:\n  <PATTERN>\n\nUsage: ${GREP_USAGE}\n\nFor more information, try '--help'.\n`,
      exitCode: 2
    })
  const rg = line([
    "rg",
    "-n",
    "--no-heading",
    pattern,
    path,
    ...(fileType === undefined ? [] : ["--type", fileType]),
    ...extra
  ])
  return {
    runs: [`if command -v rg >/dev/null; then ${rg}; else ${line(["grep", "-rn", pattern, path])}; fi`],
    print: ([out]) => ok(groupGrep(out!.stdout, pattern, path, maxLen, maxResults))
  }
}

// ------------------------------------------------------------------------------------------------
// diff (`src/diff_cmd.rs`, `Commands::Diff` in `src/main.rs`)

const DIFF_USAGE = "rtk diff <FILE1> [FILE2]"

/** `similarity`: the Jaccard index of the two lines' character sets. */
const similarity = (a: string, b: string): number => {
  const sa = new Set(Array.from(a))
  const sb = new Set(Array.from(b))
  const union = new Set([...sa, ...sb]).size
  return union === 0 ? 1 : [...sa].filter((c) => sb.has(c)).length / union
}

/**
 * `run`: both files read by rtk, compared line by line at the same index (not a real diff), each
 * differing pair a `~` modification when more than half alike, else `-` and `+`; the first 50
 * changes, lines cut to 80 (70 for a modification's sides). Success either way.
 */
export const diffFiles = (file1: string, file2: string, a: string, b: string): string => {
  const l1 = rustLines(a)
  const l2 = rustLines(b)
  const changes: Array<string> = []
  let added = 0
  let removed = 0
  let modified = 0
  for (let i = 0; i < Math.max(l1.length, l2.length); i++) {
    const x = l1[i]
    const y = l2[i]
    if (x !== undefined && y !== undefined && x !== y) {
      if (similarity(x, y) > 0.5) {
        changes.push(`~${String(i + 1).padStart(4)} ${truncate(x, 70)} → ${truncate(y, 70)}\n`)
        modified++
      } else {
        changes.push(
          `-${String(i + 1).padStart(4)} ${truncate(x, 80)}\n`,
          `+${String(i + 1).padStart(4)} ${truncate(y, 80)}\n`
        )
        removed++
        added++
      }
    } else if (x !== undefined && y === undefined) {
      changes.push(`-${String(i + 1).padStart(4)} ${truncate(x, 80)}\n`)
      removed++
    } else if (x === undefined && y !== undefined) {
      changes.push(`+${String(i + 1).padStart(4)} ${truncate(y, 80)}\n`)
      added++
    }
  }
  if (added === 0 && removed === 0) return "✅ Files are identical\n"
  return `📊 ${file1} → ${file2}\n   +${added} added, -${removed} removed, ~${modified} modified\n\n${changes.slice(0, 50).join("")}${changes.length > 50 ? `... +${changes.length - 50} more changes` : ""}`
}

/** `rtk diff <args>`: two files read by rtk (`cat` stands for its `read_to_string`); any flag is clap's error. */
export const rtkDiff = (args: ReadonlyArray<string>): OwnRun | undefined => {
  const flag = args.find((a) => a.startsWith("-") && a !== "-")
  if (flag !== undefined)
    return constant(
      clapUnexpected(flag.startsWith("--") ? flag.split("=")[0]! : flag.slice(0, 2), DIFF_USAGE)
    )
  const [file1, file2] = args
  // one path or `-`: the unified diff on stdin, not the agent's command output
  if (file1 === undefined || file2 === undefined || args.length > 2) return undefined
  return {
    runs: [line(["cat", file1]), line(["cat", file2])],
    print: ([a, b]) =>
      (a!.exitCode ?? 0) !== 0 || (b!.exitCode ?? 0) !== 0
        ? { stdout: "", stderr: "Error: No such file or directory (os error 2)\n", exitCode: 1 }
        : ok(diffFiles(file1, file2, a!.stdout, b!.stdout))
  }
}

// ------------------------------------------------------------------------------------------------
// pytest (`src/pytest_cmd.rs`)

/**
 * `filter_pytest_output`: a state machine over the header, the progress lines, the `FAILURES`
 * section and the short summary; only a `===` line with `passed` or `failed` is the summary (so a
 * `-q` run, whose summary has no `===`, counts no test).
 */
export const filterPytest = (output: string): string => {
  let state: "header" | "progress" | "failures" | "summary" = "header"
  const failures: Array<string> = []
  let current: Array<string> = []
  let summary = ""
  for (const l of rustLines(output)) {
    const t = l.trim()
    if (t.startsWith("===") && t.includes("test session starts")) {
      state = "header"
      continue
    } else if (t.startsWith("===") && t.includes("FAILURES")) {
      state = "failures"
      continue
    } else if (t.startsWith("===") && t.includes("short test summary")) {
      state = "summary"
      if (current.length > 0) failures.push(current.join("\n"))
      current = []
      continue
    } else if (t.startsWith("===") && (t.includes("passed") || t.includes("failed"))) {
      summary = t
      continue
    }
    if (state === "header") {
      if (t.startsWith("collected")) state = "progress"
    } else if (state === "failures") {
      if (t.startsWith("___")) {
        if (current.length > 0) failures.push(current.join("\n"))
        current = [t]
      } else if (t !== "" && !t.startsWith("===")) current.push(t)
    } else if (state === "summary") {
      if (t.startsWith("FAILED") || t.startsWith("ERROR")) failures.push(t)
    }
  }
  if (current.length > 0) failures.push(current.join("\n"))
  let passed = 0
  let failed = 0
  let skipped = 0
  for (const part of summary.split(",")) {
    const words = part.split(/\s+/).filter((w) => w !== "")
    words.forEach((word, i) => {
      if (i === 0) return
      const n = /^\d+$/.test(words[i - 1]!) ? Number(words[i - 1]) : undefined
      if (n === undefined) return
      if (word.includes("passed")) passed = n
      else if (word.includes("failed")) failed = n
      else if (word.includes("skipped")) skipped = n
    })
  }
  if (failed === 0 && passed > 0) return `✓ Pytest: ${passed} passed`
  if (passed === 0 && failed === 0) return "Pytest: No tests collected"
  let result = `Pytest: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n═══════════════════════════════════════\n`
  if (failures.length === 0) return result.trim()
  result += "\nFailures:\n"
  failures.slice(0, 5).forEach((failure, i) => {
    const lines = failure.split("\n")
    const first = lines[0] ?? ""
    if (first.startsWith("___")) result += `${i + 1}. ❌ ${first.replace(/^_+|_+$/g, "").trim()}\n`
    else if (first.startsWith("FAILED")) {
      const parts = first.split(" - ")
      result += `${i + 1}. ❌ ${parts[0]!.replace(/^(FAILED )+/, "")}\n`
      if (parts.length > 1) result += `     ${truncate(parts[1]!, 100)}\n`
      return
    }
    let relevant = 0
    for (const l of lines.slice(1)) {
      const lower = l.toLowerCase()
      const isRelevant =
        l.trim().startsWith(">") ||
        l.trim().startsWith("E") ||
        lower.includes("assert") ||
        lower.includes("error") ||
        l.includes(".py:")
      if (isRelevant && relevant < 3) {
        result += `     ${truncate(l, 100)}\n`
        relevant++
      }
    }
    if (i < failures.length - 1) result += "\n"
  })
  if (failures.length > 5) result += `\n... +${failures.length - 5} more failures\n`
  return result.trim()
}

/**
 * `run`: `pytest` (found on the PATH, else `python -m pytest`) with `--tb=short` unless a `--tb`
 * was given and `-q` unless `-q`/`--quiet` was, then the agent's arguments; the filter over stdout,
 * pytest's stderr after it when not blank, pytest's exit code kept.
 */
export const rtkPytest = (args: ReadonlyArray<string>): OwnRun => {
  const words = [
    ...(args.some((a) => a.startsWith("--tb")) ? [] : ["--tb=short"]),
    ...(args.some((a) => a === "-q" || a === "--quiet") ? [] : ["-q"]),
    ...args
  ]
  return {
    runs: [
      `if command -v pytest >/dev/null; then pytest ${line(words)}; else python -m pytest ${line(words)}; fi`
    ],
    print: ([out]) => ({
      stdout: `${filterPytest(out!.stdout)}\n`,
      stderr: out!.stderr.trim() === "" ? "" : `${out!.stderr.trim()}\n`,
      exitCode: out!.exitCode ?? 0
    })
  }
}
