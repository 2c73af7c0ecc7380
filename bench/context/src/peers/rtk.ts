/**
 * rtk (rtk-ai/rtk 0.16.0), a command proxy Claude Code runs through its `PreToolUse` hook: the hook
 * rewrites a Bash command it knows into `rtk <tool> ...`, rtk runs the tool (some with flags of its
 * own, `src/peers/rtkRuns.ts`) and prints a filtered text, and Claude Code's own Bash cut applies
 * to what rtk printed. Commands the hook does not rewrite, and rtk's Read and Grep (Claude Code's
 * own tools), are plain Claude Code.
 *
 * @since 0.1.0
 */
import type { PeerPolicy, View } from "../Peer.js"
import type { RawOutput } from "../Text.js"
import { claudeCode } from "./claudeCode.js"
import { cargoGoFilter, goTest } from "./rtkCargoGo.js"
import {
  gitDiff,
  gitLog,
  gitShow,
  gitStatus,
  type OwnRun,
  rtkDiff,
  rtkGrep,
  rtkPytest,
  rustLines
} from "./rtkRuns.js"

const COMMIT = "d67ade9ecfc6 (0.16.0, 2026-02-14)"
const at = (file: string): string => `rtk-ai/rtk \`${file}\` at ${COMMIT}`

/**
 * What the hook (`hooks/rtk-rewrite.sh`) turns a command into, in its order: leading `VAR=value`
 * assignments are kept aside, and only a command that starts with the tool is rewritten.
 */
const REWRITES: ReadonlyArray<{ readonly kind: string; readonly match: RegExp }> = [
  { kind: "git", match: /^git\s+(status|diff|log|add|commit|push|pull|branch|fetch|stash|show)(\s|$)/ },
  { kind: "gh", match: /^gh\s+(pr|issue|run|api|release)(\s|$)/ },
  { kind: "cargo", match: /^cargo\s+(test|build|clippy|check|install|fmt)(\s|$)/ },
  { kind: "read", match: /^cat\s+/ },
  { kind: "grep", match: /^(rg|grep)\s+/ },
  { kind: "ls", match: /^ls(\s|$)/ },
  { kind: "tree", match: /^tree(\s|$)/ },
  { kind: "find", match: /^find\s+/ },
  { kind: "diff", match: /^diff\s+/ },
  { kind: "read", match: /^head\s+(-\d+|--lines=\d+)\s+/ },
  { kind: "vitest", match: /^(pnpm\s+)?(npx\s+)?vitest(\s|$)/ },
  { kind: "vitest", match: /^pnpm\s+test(\s|$)/ },
  { kind: "npm", match: /^npm\s+(test(\s|$)|run\s+)/ },
  { kind: "tsc", match: /^(npx\s+)?vue-tsc(\s|$)/ },
  { kind: "tsc", match: /^pnpm\s+tsc(\s|$)/ },
  { kind: "tsc", match: /^(npx\s+)?tsc(\s|$)/ },
  { kind: "lint", match: /^(pnpm\s+lint|(npx\s+)?eslint)(\s|$)/ },
  { kind: "prettier", match: /^(npx\s+)?prettier(\s|$)/ },
  { kind: "playwright", match: /^((npx|pnpm)\s+)?playwright(\s|$)/ },
  { kind: "prisma", match: /^(npx\s+)?prisma(\s|$)/ },
  { kind: "docker", match: /^docker\s+(compose|ps|images|logs|run|build|exec)(\s|$)/ },
  { kind: "kubectl", match: /^kubectl\s+(get|logs|describe|apply)(\s|$)/ },
  { kind: "curl", match: /^(curl|wget)\s+/ },
  { kind: "pnpm", match: /^pnpm\s+(list|ls|outdated)(\s|$)/ },
  { kind: "pytest", match: /^(pytest|python\s+-m\s+pytest)(\s|$)/ },
  { kind: "ruff", match: /^ruff\s+(check|format)(\s|$)/ },
  { kind: "pip", match: /^(uv\s+)?pip\s+(list|outdated|install|show)(\s|$)/ },
  { kind: "go", match: /^go\s+(test|build|vet)(\s|$)/ },
  { kind: "golangci", match: /^golangci-lint(\s|$)/ }
]

/** The kind of rtk command the hook rewrites `command` into, or undefined when it leaves it alone. */
export const rtkRewrite = (command: string | undefined): string | undefined => {
  if (command === undefined || /^(rtk|\S*\/rtk)\s/.test(command) || command.includes("<<")) return undefined
  const body = command.replace(/^([A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, "")
  return REWRITES.find((rule) => rule.match.test(body))?.kind
}

/**
 * The command as an agent standing in the directory types it: Claude Code's Bash keeps its working
 * directory between calls, so a command the bench spells with a leading `cd <dir> &&` or git's
 * `-C <dir>` (its Bash starts every call in the workspace) is, for the hook, the rest of the line
 * typed in `<dir>`. `VAR=value` assignments stay in front.
 */
export const typedIn = (command: string): { readonly cwd?: string; readonly command: string } => {
  const cd = /^cd\s+(?:"([^"]*)"|'([^']*)'|(\S+))\s*&&\s*/.exec(command)
  if (cd !== null) return { cwd: cd[1] ?? cd[2] ?? cd[3]!, command: command.slice(cd[0].length) }
  const env = /^([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*/.exec(command)![0]
  const gitC = /^git\s+-C\s+(?:"([^"]*)"|'([^']*)'|(\S+))\s+/.exec(command.slice(env.length))
  if (gitC !== null)
    return {
      cwd: gitC[1] ?? gitC[2] ?? gitC[3]!,
      command: `${env}git ${command.slice(env.length + gitC[0].length)}`
    }
  return { command }
}

/**
 * The filter of a rewritten command that runs the tool itself (or reads the files itself): rtk's
 * own command lines and its filter over their outputs. Undefined for commands whose filter reads
 * the agent's own output, and for those the hook leaves alone.
 */
export const rtkOwnRun = (
  command: string | undefined
): { readonly cwd?: string; readonly run: OwnRun } | undefined => {
  if (command === undefined) return undefined
  const typed = typedIn(command)
  const kind = rtkRewrite(typed.command)
  const all = words(typed.command)
  const [tool, sub] = all
  const run =
    kind === "git" && sub === "log"
      ? gitLog(all.slice(2))
      : kind === "git" && sub === "status"
        ? gitStatus(all.slice(2))
        : kind === "git" && sub === "diff"
          ? gitDiff(all.slice(2))
          : kind === "git" && sub === "show"
            ? gitShow(all.slice(2))
            : kind === "grep"
              ? rtkGrep(all.slice(1))
              : kind === "diff"
                ? rtkDiff(all.slice(1))
                : kind === "pytest"
                  ? rtkPytest(all.slice(tool === "pytest" ? 1 : 3))
                  : kind === "go" && sub === "test"
                    ? goTest(all.slice(2))
                    : undefined
  return run === undefined ? undefined : { ...(typed.cwd === undefined ? {} : { cwd: typed.cwd }), run }
}

/**
 * The shell lines the bench runs for rtk at bench time: rtk's own command lines, in the typed
 * command's directory, with its `VAR=value` assignments (rtk inherits the environment).
 */
export const rtkRuns = (command: string): ReadonlyArray<string> => {
  const own = rtkOwnRun(command)
  if (own === undefined) return []
  const env = /^([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*/.exec(typedIn(command).command)![0]
  return own.run.runs.map(
    (run) =>
      `${own.cwd === undefined ? "" : `cd ${JSON.stringify(own.cwd)} && `}${env === "" ? "" : `export ${env.trim()}; `}${run}`
  )
}

/** `utils::truncate`: a text over `max` characters keeps `max - 3` and `...`. */
const truncate = (text: string, max: number): string => {
  const chars = Array.from(text)
  return chars.length <= max ? text : `${chars.slice(0, max - 3).join("")}...`
}

/** `strip_ansi`: CSI sequences (colours, styles) removed. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[a-zA-Z]`, "g")
const stripAnsi = (text: string): string => text.replace(ANSI, "")

/** A message line of `tsc --pretty false`: `file(line,col): error TSnnnn: message`. */
const TSC_ERROR = /^(.+?)\((\d+),(\d+)\):\s+(error|warning)\s+(TS\d+):\s+(.+)$/

/**
 * `filter_tsc_output` over tsc's stdout and stderr joined by a newline: every error, grouped by
 * file (most errors first), `  L<line>: <code> <message>` cut to 120 characters, its indented
 * continuation lines under it, a `Top codes` line when more than one code occurs. Ties of the
 * source's hash-map order are broken by first appearance here (the source's order is unspecified).
 */
export const rtkTscFilter = (output: string): string => {
  const lines = rustLines(output)
  const errors: Array<{ file: string; line: number; code: string; message: string; context: Array<string> }> =
    []
  for (let i = 0; i < lines.length;) {
    const caps = TSC_ERROR.exec(lines[i]!)
    if (caps === null) {
      i++
      continue
    }
    const error = {
      file: caps[1]!,
      line: Number(caps[2]),
      code: caps[5]!,
      message: caps[6]!,
      context: [] as Array<string>
    }
    i++
    while (i < lines.length) {
      const next = lines[i]!
      if (next !== "" && (next.startsWith("  ") || next.startsWith("\t")) && !TSC_ERROR.test(next)) {
        error.context.push(next.trim())
        i++
      } else break
    }
    errors.push(error)
  }
  if (errors.length === 0)
    return output.includes("Found 0 errors")
      ? "✓ TypeScript: No errors found"
      : "TypeScript compilation completed"
  const byFile = new Map<string, Array<(typeof errors)[number]>>()
  for (const error of errors) byFile.set(error.file, [...(byFile.get(error.file) ?? []), error])
  const byCode = new Map<string, number>()
  for (const error of errors) byCode.set(error.code, (byCode.get(error.code) ?? 0) + 1)
  let result = `TypeScript: ${errors.length} errors in ${byFile.size} files\n═══════════════════════════════════════\n`
  const codes = [...byCode].toSorted((a, b) => b[1] - a[1])
  if (codes.length > 1)
    result += `Top codes: ${codes
      .slice(0, 5)
      .map(([code, count]) => `${code} (${count}x)`)
      .join(", ")}\n\n`
  for (const [file, fileErrors] of [...byFile].toSorted((a, b) => b[1].length - a[1].length)) {
    result += `${file} (${fileErrors.length} errors)\n`
    for (const error of fileErrors) {
      result += `  L${error.line}: ${error.code} ${truncate(error.message, 120)}\n`
      for (const context of error.context) result += `    ${truncate(context, 120)}\n`
    }
    result += "\n"
  }
  return result.trim()
}

/** `truncate_output(input, 500)`: the parser's last tier, the first 500 characters and a note. */
const passthrough = (text: string, max: number): string => {
  const chars = Array.from(text)
  return chars.length <= max
    ? text
    : `${chars.slice(0, max).join("")}\n\n[RTK:PASSTHROUGH] Output truncated (${chars.length} chars → ${max} chars)`
}

/**
 * rtk's vitest run as it would print it. rtk adds `--reporter=json` and formats the JSON report
 * (`VitestParser` tier 1) with `TestResult::format_compact`: `PASS (p) FAIL (f)`, the first 5
 * failures (`fullName`, then the first 2 lines of the failure message joined by a space), and
 * `Time: Nms`. The bench captures the text reporter, so the report is rebuilt from it: the counts
 * from the `Tests` line, each failure from a `FAIL  file > name` header (both streams) and the
 * message line under it, the time from `Duration`; the JSON message's second line (its first
 * stack frame) is not in the text and is left out. With no counts, rtk's last tier: the first 500
 * characters and a note.
 */
export const rtkVitestFilter = (raw: RawOutput): { readonly stdout: string; readonly stderr: string } => {
  const clean = stripAnsi(`${raw.stdout}\n${raw.stderr}`)
  const tests = /Tests\s+(?:(\d+)\s+failed\s+\|\s+)?(\d+)\s+passed/.exec(clean)
  const failed = tests?.[1] === undefined ? 0 : Number(tests[1])
  const passed = tests === null ? 0 : Number(tests[2])
  if (passed + failed === 0)
    return {
      stdout: passthrough(raw.stdout, 500),
      stderr: "[RTK:PASSTHROUGH] vitest parser: All parsing tiers failed\n"
    }
  const lines = rustLines(clean)
  const failures: Array<{ name: string; message: string }> = []
  lines.forEach((line, i) => {
    const header = /^\s*FAIL\s+(\S+) > (.+)$/.exec(line)
    if (header === null) return
    const message = lines.slice(i + 1).find((next) => next.trim() !== "") ?? ""
    failures.push({ name: header[2]!.split(" > ").join(" "), message: message.trim() })
  })
  const out = [`PASS (${passed}) FAIL (${failed})`]
  if (failures.length > 0) {
    out.push("")
    failures.slice(0, 5).forEach((failure, i) => {
      out.push(`${i + 1}. ${failure.name}`)
      out.push(`   ${failure.message}`)
    })
    if (failures.length > 5) out.push(`\n... +${failures.length - 5} more failures`)
  }
  const duration = /Duration\s+([\d.]+)(ms|s)/.exec(clean)
  if (duration !== null) {
    const value = Number(duration[1])
    out.push(`\nTime: ${Math.trunc(duration[2] === "ms" ? value : value * 1000)}ms`)
  }
  return { stdout: out.join("\n"), stderr: "" }
}

/** `NOISE_DIRS`: names `rtk ls` leaves out unless the listing asked for all (`-a`). */
const NOISE_DIRS = [
  "node_modules",
  ".git",
  "target",
  "__pycache__",
  ".next",
  "dist",
  "build",
  ".cache",
  ".turbo",
  ".vercel",
  ".pytest_cache",
  ".mypy_cache",
  ".tox",
  ".venv",
  "venv",
  "coverage",
  ".nyc_output",
  ".DS_Store",
  "Thumbs.db",
  ".idea",
  ".vscode",
  ".vs",
  "*.egg-info",
  ".eggs"
]

/** `human_size`: bytes, K or M with one decimal. */
const humanSize = (bytes: number): string =>
  bytes >= 1_048_576
    ? `${(bytes / 1_048_576).toFixed(1)}M`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)}K`
      : `${bytes}B`

/**
 * `compact_ls` over `ls -la` output: directories as `name/`, files and links as `name  size`, a
 * summary of counts and the five most common extensions. Ties of the source's hash-map order are
 * broken by first appearance here.
 */
export const rtkLsFilter = (raw: string, showAll: boolean): string => {
  const dirs: Array<string> = []
  const files: Array<string> = []
  const byExt = new Map<string, number>()
  for (const line of rustLines(raw)) {
    if (line.startsWith("total ") || line === "") continue
    const parts = line.split(/\s+/).filter((part) => part !== "")
    if (parts.length < 9) continue
    const name = parts.slice(8).join(" ")
    if (name === "." || name === "..") continue
    if (!showAll && NOISE_DIRS.includes(name)) continue
    if (parts[0]!.startsWith("d")) dirs.push(name)
    else if (parts[0]!.startsWith("-") || parts[0]!.startsWith("l")) {
      const dot = name.lastIndexOf(".")
      const ext = dot >= 0 ? name.slice(dot) : "no ext"
      byExt.set(ext, (byExt.get(ext) ?? 0) + 1)
      files.push(`${name}  ${humanSize(Number.parseInt(parts[4]!, 10) || 0)}`)
    }
  }
  if (dirs.length === 0 && files.length === 0) return "(empty)\n"
  const exts = [...byExt].toSorted((a, b) => b[1] - a[1])
  const summary =
    `📊 ${files.length} files, ${dirs.length} dirs` +
    (exts.length === 0
      ? ""
      : ` (${exts
          .slice(0, 5)
          .map(([ext, count]) => `${count} ${ext}`)
          .join(", ")}${exts.length > 5 ? `, +${exts.length - 5} more` : ""})`)
  return `${[...dirs.map((dir) => `${dir}/`), ...files].join("\n")}\n\n${summary}\n`
}

/** The words of a simple command line (no quoting beyond plain words), its `VAR=value` prefix aside. */
const words = (command: string): Array<string> =>
  command
    .replace(/^([A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, "")
    .split(/\s+/)
    .filter((word) => word !== "")

/**
 * `rtk ls <args>` runs `ls -la` with the user's other flags: its input is the agent's own output
 * only when the agent asked for the long format (a short flag with `l`); a failed ls passes its
 * stderr and exit code through.
 */
const lsFilter = (raw: RawOutput): { readonly stdout: string; readonly stderr: string } | undefined => {
  const args = words(raw.command ?? "").slice(1)
  const short = args.filter((arg) => arg.startsWith("-") && !arg.startsWith("--"))
  if (!short.some((flag) => flag.includes("l"))) return undefined
  if ((raw.exitCode ?? 0) !== 0) return { stdout: "", stderr: raw.stderr }
  const showAll = args.some(
    (arg) => (arg.startsWith("-") && !arg.startsWith("--") && arg.includes("a")) || arg === "--all"
  )
  return { stdout: rtkLsFilter(raw.stdout, showAll), stderr: "" }
}

/**
 * `rtk find <pattern> [path]` matches its pattern as a glob against file names while walking the
 * path itself: a pattern with a `/` in it (as `find /usr` gives, the directory taken as the
 * pattern) matches no name, whatever the tree holds, and prints `0 for '<pattern>'`. Other shapes
 * depend on the tree rtk walks, not on the agent's output, and are not modelled.
 */
const findFilter = (raw: RawOutput): { readonly stdout: string; readonly stderr: string } | undefined => {
  const args = words(raw.command ?? "").slice(1)
  if (args.some((arg) => arg.startsWith("-"))) return undefined
  const pattern = args[0] === "." ? "*" : args[0]
  if (pattern === undefined || !pattern.includes("/")) return undefined
  return { stdout: `0 for '${pattern}'`, stderr: "" }
}

/** `run_cargo_filtered` and `go build`: the agent's own command, `stdout\nstderr` through the filter. */
const ownOutputFilter = (
  tool: string,
  raw: RawOutput
): { readonly stdout: string; readonly stderr: string } | undefined => {
  const filter = cargoGoFilter(tool, words(raw.command ?? "")[1])
  return filter === undefined
    ? undefined
    : { stdout: `${filter(`${raw.stdout}\n${raw.stderr}`)}\n`, stderr: "" }
}

/**
 * The kinds whose filter is modelled: it reads the same output the agent's command prints (or, for
 * `find`, prints what no tree changes). Each gives what rtk prints (`println!` adds the newline;
 * `rtk ls` prints its text as it is) and, when rtk sets it, the exit code.
 */
const FILTERS: Record<
  string,
  (
    raw: RawOutput
  ) => { readonly stdout: string; readonly stderr: string; readonly exitCode?: number } | undefined
> = {
  ls: lsFilter,
  find: (raw) => {
    const found = findFilter(raw)
    return found === undefined ? undefined : { stdout: `${found.stdout}\n`, stderr: "", exitCode: 0 }
  },
  tsc: (raw) => ({ stdout: `${rtkTscFilter(`${raw.stdout}\n${raw.stderr}`)}\n`, stderr: "" }),
  cargo: (raw) => ownOutputFilter("cargo", raw),
  go: (raw) => ownOutputFilter("go", raw),
  vitest: (raw) => {
    const printed = rtkVitestFilter(raw)
    return { ...printed, stdout: `${printed.stdout}\n` }
  }
}

/**
 * The command through the hook: a modelled filter's text (printed with a newline, the tool's exit
 * code kept) reaches Claude Code's Bash cut as the output of the rewritten command; anything else
 * is Claude Code's own result.
 */
const shell = (raw: RawOutput, savedPath: string): View => {
  const typed = raw.command === undefined ? undefined : typedIn(raw.command).command
  const kind = rtkRewrite(typed)
  const own = rtkOwnRun(raw.command)
  let printed: { readonly stdout: string; readonly stderr: string; readonly exitCode?: number } | undefined
  if (own !== undefined) {
    const outputs = raw.hostRuns ?? []
    if (outputs.length !== own.run.runs.length)
      throw new Error(
        `rtk: \`${raw.command}\` needs the outputs of ${own.run.runs.length} own runs, got ${outputs.length}`
      )
    printed = own.run.print(outputs)
  } else {
    const filter = kind === undefined ? undefined : FILTERS[kind]
    printed = filter?.({ ...raw, ...(typed === undefined ? {} : { command: typed }) })
  }
  if (printed === undefined) return claudeCode.shell.apply(raw, savedPath)
  const stdout = printed.stdout
  const view = claudeCode.shell.apply(
    {
      stdout,
      stderr: printed.stderr,
      exitCode: printed.exitCode ?? raw.exitCode ?? 0,
      command: `rtk ${typed ?? ""}`,
      arrival: [
        ...(printed.stderr === "" ? [] : [{ stream: "stderr" as const, data: printed.stderr }]),
        ...(stdout === "" ? [] : [{ stream: "stdout" as const, data: stdout }])
      ]
    },
    savedPath
  )
  // what rtk dropped is nowhere: Claude Code saved (at most) rtk's text, not the tool's output
  return { ...view, truncated: true }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const rtk: PeerPolicy = {
  name: "rtk",
  version: COMMIT,
  shell: {
    hostRuns: rtkRuns,
    describe:
      "Claude Code with rtk's hook, on the command as an agent in its directory types it (a leading `cd dir &&` or `git -C dir` is the working directory Claude Code's Bash keeps). Filters over the agent's own output: `tsc` (every error grouped by file as `L<line>: <code> <message>`, 120 characters), `vitest` (`PASS (p) FAIL (f)` and the first 5 failures, rebuilt from the text reporter: rtk asks for the JSON one), `ls -l…` (`name/` and `name  size`, noise directories left out without `-a`, a count summary), `find <dir>` (a path as the pattern matches no name: `0 for '<path>'`). Filters that run their own command lines, run at bench time: `git log` (rtk's `%h %s (%ar) <%an>` format, `-10`, `--no-merges`, the first 10 lines cut to 80 bytes), `git status` (`--porcelain -b`: counts, 5 modified and 3 untracked names, conflicts counted but not named), `git diff`/`git show` (`--stat`, then `compact_diff`: 10 lines a hunk, 100 in all), `grep`/`rg` (clap's exit-2 error on a flag it does not declare, such as `-r`; else `rg -n --no-heading` or `grep -rn`, grouped by file, lines cut to 80), `diff a b` (both files read by rtk and compared line by line; only additions and removals count, so a file of modified lines prints `Files are identical`; a flag such as `-u` is clap's error), `pytest` (`--tb=short -q` added, a state machine that only counts a `===` summary line, so a quiet run reads `No tests collected`). Claude Code's Bash cut applies to what rtk printed, with rtk's exit code (its failure path on a non-zero one; no copy of the tool's own output is kept). `cargo build|check|test|clippy` and `go build` filter the agent's own `stdout\nstderr` (error and warning blocks, 15; test failures, 10 at 200 characters, and the `test result:` lines; clippy lints grouped with 3 locations; go's error lines, 20), `go test` adds `-json` and prints per-package counts and each failed test's error/expected/got lines (no corpus case runs cargo or go; tests run them). Everything else the hook rewrites passes through or is not modelled (`docker build`: passed through; `cargo install|fmt`, `go vet`: not modelled) and is plain Claude Code, as are commands it leaves alone (`python3 -m pytest`, `git grep`, `node …`).",
    apply: shell
  },
  read: {
    describe: `Claude Code's Read (rtk leaves the Read tool alone): ${claudeCode.read.describe}`,
    apply: claudeCode.read.apply
  },
  search: {
    describe: `Claude Code's Grep (rtk leaves the Grep tool alone): ${claudeCode.search.describe}`,
    apply: claudeCode.search.apply
  },
  sources: [
    {
      numbers:
        "which commands are rewritten: the first command, `VAR=value` prefixes aside, matched in the hook's order",
      from: at("hooks/rtk-rewrite.sh")
    },
    {
      numbers:
        "`filter_tsc_output`: `stdout\\nstderr`, the `file(l,c): error TSn: msg` pattern, grouping, `L{line}: {code} {msg}`, `truncate(.., 120)`, `Top codes` past one code",
      from: at("src/tsc_cmd.rs")
    },
    {
      numbers:
        "vitest: `--reporter=json` added, `VitestParser` tiers (JSON; `Tests`/`Duration` regexes and `✗`/`FAIL` blocks; `truncate_output(.., 500)`), stdout only, exit code kept",
      from: at("src/vitest_cmd.rs")
    },
    {
      numbers: "`TestResult::format_compact`: `PASS (p) FAIL (f)`, 5 failures, 2 message lines, `Time: Nms`",
      from: at("src/parser/formatter.rs")
    },
    {
      numbers:
        "`rtk ls`: `ls -la` plus the user's other flags, `compact_ls`, `NOISE_DIRS`, `human_size`, `print!`",
      from: at("src/ls.rs")
    },
    {
      numbers:
        "`rtk find`: the pattern globbed against file names (`glob_match`), `0 for '<pattern>'`; clap's `Find { pattern, path }`",
      from: `${at("src/find_cmd.rs")}, \`src/main.rs\``
    },
    {
      numbers:
        "`run_log` (`--pretty=format:%h %s (%ar) <%an>`, `-10`, `--no-merges`, `filter_log_output`: `take(limit)`, 80 bytes → 77 characters), `run_status`/`format_status_output`/`filter_status_with_args`, `run_diff`/`run_show`/`compact_diff` (`max_hunk_lines = 10`, 100 lines), a failed git's stderr and exit code",
      from: at("src/git.rs")
    },
    {
      numbers:
        "`rtk grep`: clap's `Grep { pattern, path, -l 80, -m 50, -c, -t, trailing extra_args }`, `rg -n --no-heading` falling back to `grep -rn` when rg cannot be spawned, `clean_line`, `compact_path`, 10 lines a file",
      from: `${at("src/grep_cmd.rs")}, \`src/main.rs\``
    },
    {
      numbers:
        "`rtk diff`: clap's `Diff { file1, file2 }`, `read_to_string` of both, `compute_diff` (same-index lines, `similarity > 0.5` a modification), `Files are identical` when `added == 0 && removed == 0`, 50 changes, `truncate(.., 80/70)`",
      from: `${at("src/diff_cmd.rs")}, \`src/main.rs\``
    },
    {
      numbers:
        "`rtk pytest`: `pytest` from `which`, else `python -m pytest`; `--tb=short` and `-q` unless given; `filter_pytest_output` (summary only from a `===` line), `build_pytest_summary` (5 failures, 3 relevant lines, 100 characters), stderr after, exit code kept",
      from: at("src/pytest_cmd.rs")
    },
    {
      numbers:
        "`run_cargo_filtered` (`stdout\\nstderr`, exit code kept), `filter_cargo_build` (15 blocks), `filter_cargo_test` (10 failures, `truncate(.., 200)`, `test result:` lines, the aggregate line), `filter_cargo_clippy` (rules by count, 3 locations, 15 rules)",
      from: at("src/cargo_cmd.rs")
    },
    {
      numbers:
        "`run_test` (`-json` added, stderr after, exit code kept), `filter_go_test_json` (5 relevant lines at 100 characters, `compact_package_name`), `filter_go_build` (20 lines at 120)",
      from: at("src/go_cmd.rs")
    },
    {
      numbers: "`docker build`: `run_docker_passthrough` (the command's own output, its exit code)",
      from: at("src/container.rs")
    },
    {
      numbers: "`truncate` (`max - 3` characters and `...`), `strip_ansi`",
      from: at("src/utils.rs")
    },
    { numbers: "Claude Code's Bash cut, Read and Grep on top", from: claudeCode.sources[0]!.from }
  ]
}
