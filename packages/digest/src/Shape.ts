/**
 * The recognisers: what one rendered line of command output is, judged by the output's shape and
 * never by the command's name (rules G4, G5). A line is must-keep (an error-class line, a stack
 * or source-excerpt line that follows one, a runner's summary, a diff's file and hunk headers, a
 * merge commit or HEAD in a log), foldable (a passing test, a progress frame, a repeat of one
 * warning code) or plain (kept, and folded only when it near-repeats its neighbours). The
 * patterns and the tools they come from are listed in the README.
 *
 * @since 0.1.0
 */

/**
 * What a line is. `error`, `summary`, `structure`, `stack` and `tail` are must-keep; `pass`,
 * `progress` and `warning` carry nothing the model needs beyond a count; `plain` and `content`
 * are kept (`plain` folds when it near-repeats, `content`, the body of a diff, never does).
 *
 * @since 0.1.0
 * @category models
 */
export type Kind =
  "error" | "summary" | "structure" | "stack" | "tail" | "pass" | "progress" | "warning" | "plain" | "content"

/**
 * One line's verdict; `code` names the diagnostic of a `warning` (its repeats fold per code).
 *
 * @since 0.1.0
 * @category models
 */
export interface Verdict {
  readonly kind: Kind
  readonly code?: string
  /** A `warning` line that continues the previous one (its source excerpt), not a new occurrence. */
  readonly continues?: true
}

/**
 * Whether a kind is never dropped without being counted.
 *
 * @since 0.1.0
 * @category models
 */
export const isMustKeep = (kind: Kind): boolean =>
  kind === "error" || kind === "summary" || kind === "structure" || kind === "stack" || kind === "tail"

/**
 * Lines a stack trace or a source excerpt may follow its error line with, at most: a deep
 * recursion prints thousands of identical frames, and past this they are plain lines that fold.
 */
const STACK_MAX_LINES = 200

/** A `make`/`turbo` line prefix (`@scope/pkg:test: `), stripped before the shape is judged. */
const TASK_PREFIX = /^[@\w./-]+:[A-Za-z][\w-]*: /

// --- must-keep -----------------------------------------------------------------------------------
/**
 * Error-class words: `error`/`fatal`/`panic` as words, any `FooError`/`FooException`, Python's
 * `Traceback`, `FAIL`/`FAILED`/`failed`/`failing`, npm's `ERR!`, TAP's `not ok`, a cross mark.
 */
const ERROR_CLASS =
  /\b(?:error|errors?:|fatal|panic|panicked|traceback|fail|failed|failing|failures?:?)\b|\w(?:Error|Exception)\b|\bException\b|ERR!|^\s*not ok\b|[✗✘×✖]|^E {3}|^E\s+\w|^\s*FAIL\b|^\s*npm error\b|^E: /i
/** A `file:line:col` (or `file(line,col)`, `file:line:`) diagnostic, or Python's `File "x", line n`. */
const LOCATION = /[\w.~/\\-]+\.[A-Za-z]\w*(?::\d+:\d+|:\d+:|\(\d+,\d+\))|^\s*File "[^"]+", line \d+/
/** A line a stack trace or a source excerpt continues with. */
const STACK_LINE =
  /^\s+(?:at |File "|-->|\||\d+\s*\||\^|~|=\s*(?:note|help)|in |from |\.\.\.|>)|^\s*\^+~*\s*$|^\s*[|>]|^\s{2,}\S|^\s*❯ |^\s*→ /
/**
 * A runner's, compiler's or package manager's own summary line (vitest, jest, node --test, TAP,
 * pytest, mocha, go test, cargo, tsc, gcc, eslint, npm/pnpm/yarn, pip, apt, git, turbo).
 */
const SUMMARY =
  /^\s*(?:Test Files|Tests|Test Suites|Snapshots|Suites|Duration|Start at|Time|Ran all test suites)\b.*\d|^\s*[#ℹ] (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) \d|^\s*1\.\.\d+\s*$|^=+ .*\b(?:passed|failed|error|errors|skipped|no tests ran)\b.* =+$|^\s*\d+ (?:passed|failed|error|errors)\b.*\bin [\d.]+s|^\s*\d+ (?:passing|failing|pending)\b|^(?:ok|FAIL)\s+\S+\s+[\d.]+s|^(?:PASS|FAIL|ok)\s*$|^test result: |^\s*running \d+ tests?$|^Found \d+ errors?\b|^\d+ (?:errors?|warnings?)(?: and \d+ warnings?)? generated\.|^\s*✖ \d+ problems?|\b\d+ problems? \(\d+ errors?, \d+ warnings?\)|^\s*(?:added|removed|changed|audited|up to date)\b.*\bpackages?\b|^\s*found \d+ vulnerabilit|^Packages: [+-]|^\s*Done in [\d.]+m?s|^Successfully (?:installed|built)|^\d+ upgraded, \d+ newly installed|^\s*\d+ files? changed\b|^Already up to date\.|^\s*(?:Tasks|Cached):\s+\d|^\s*(?:Finished|error: could not compile)\b|^warning: `[^`]+` \(.*\) generated \d+ warnings?/

// --- git -----------------------------------------------------------------------------------------
const DIFF_FILE = /^(?:diff --git |diff -|Index: |\+\+\+ |--- (?:a\/|\/dev\/null|\S+\t))/
const HUNK = /^@@+ .* @@/
const COMMIT = /^(?:[*|/\\ ]*)commit [0-9a-f]{7,}\b/
const MERGE = /^Merge: |\bMerge (?:branch|pull request|remote-tracking branch|tag)\b/
const HEAD = /\(HEAD\b|\bHEAD -> /

// --- foldable ------------------------------------------------------------------------------------
/**
 * A passing test: a check mark (vitest, jest, mocha, node --test spec), TAP's `ok n`, pytest -v's
 * `PASSED`, go test's `--- PASS`, cargo test's `... ok`, a jest/vitest `PASS file` line.
 */
const PASS =
  /^\s*[✓✔√]\s|^\s*ok \d+\b(?!.*#\s*(?:SKIP|TODO))|::\S.* PASSED\b|^\s*--- PASS: |^test \S+ \.\.\. ok$|^\s*PASS\s+\S/
/** A TAP subtest header (node --test): a pass when the test it opens ends `ok`. */
const SUBTEST = /^(\s*)# Subtest: (.*)$/
/** A TAP YAML block line under a test (`---`, `duration_ms: 1`, `type: 'test'`, `...`). */
const TAP_YAML = /^\s+(?:---|\.\.\.|duration_ms: |type: )/
/**
 * A progress frame: git's object counters, npm/pnpm/yarn progress and spinners, pip's bars, apt's
 * fetch and unpack steps, go test's `=== RUN`, pytest -q's dots, make's directory changes.
 */
const PROGRESS =
  /^\s*(?:remote: )?(?:Enumerating|Counting|Compressing|Receiving|Resolving|Writing|Unpacking|Updating files|Checking out files|Filtering content)\b.*:\s+\d+%|^Progress: resolved \d+|^\s*[⠁-⣿]\s|^\s*\[[#=>\-. ]{8,}\]|[░▒▓█━╸]{4,}|^(?:Get|Hit|Ign):\d+ |^\(Reading database \.\.\.|^(?:Selecting previously unselected|Preparing to unpack|Unpacking|Setting up|Processing triggers for) |^=== (?:RUN|PAUSE|CONT) |^[.sxX]+\s*(?:\[\s*\d+%\])?$|^make(?:\[\d+\])?: (?:Entering|Leaving) directory |^\s*(?:Downloading|Downloaded|Fetching|Fetched|Checking|Compiling|Locking|Updating) \S+ v?\d[\w.-]*\s*(?:\(.*\))?$/
/** A warning diagnostic and its code: eslint's rule id, gcc/clang's `[-Wflag]`, a `TSnnnn`-style id. */
const WARNING = /\bwarning\b.*?(?:\[(-W[\w-]+)\]|\s{2,}(@?[\w-]+(?:\/[\w-]+)*)\s*$|\b([A-Z]{2,}\d{3,})\b)/i

/**
 * The code of an error diagnostic: tsc's `error TS2322`, rustc's `error[E0308]`, gcc/clang's
 * `[-Werror=…]`, a linter's `error  rule-id` at the end of the line; none for an error line
 * without one. Repeats of one code are usually one mistake made many times, a new code a new one.
 */
const ERROR_CODE =
  /\berror\b(?:\[([A-Z]+\d{3,})\]|:?\s+([A-Z]{1,4}\d{3,6})\b|.*?\[(-Werror[\w=-]*)\]|.*\s{2,}(@?[\w-]+(?:\/[\w-]+)+|[a-z][\w-]*-[\w-]+)\s*$)/

/**
 * The diagnostic code an error line names, if any (see `ERROR_CODE`).
 *
 * @since 0.1.0
 * @category models
 */
export const errorCode = (line: string): string | undefined => {
  const match = ERROR_CODE.exec(line)
  return match === null ? undefined : (match[1] ?? match[2] ?? match[3] ?? match[4])
}

/**
 * Judges lines in order. `ahead(n)` gives the rendered line `n` places after the one being judged
 * (the digest holds a short window of lines it has not judged yet), or undefined past the end.
 *
 * @since 0.1.0
 * @category models
 */
export interface Recogniser {
  readonly judge: (line: string, ahead: (n: number) => string | undefined) => Verdict
}

const verdicts: { readonly [K in Kind]: Verdict } = {
  error: { kind: "error" },
  summary: { kind: "summary" },
  structure: { kind: "structure" },
  stack: { kind: "stack" },
  tail: { kind: "tail" },
  pass: { kind: "pass" },
  progress: { kind: "progress" },
  warning: { kind: "warning" },
  plain: { kind: "plain" },
  content: { kind: "content" }
}

/**
 * A recogniser with its own state (inside a diff, after an error, inside a passing test's TAP
 * block). Deterministic: the same lines give the same verdicts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (lookahead: number): Recogniser => {
  // lines left that may continue an error's stack trace or source excerpt
  let stackLeft = 0
  // inside a diff: its body lines are content (never folded as near-repeats)
  let inDiff = false
  // inside the TAP YAML block of a passing test
  let inPassBlock = false
  // the warning whose source excerpt may follow (folded with it)
  let warningLeft = 0
  let warningCode: string | undefined
  const judge = (original: string, ahead: (n: number) => string | undefined): Verdict => {
    const line = original.replace(TASK_PREFIX, "")
    const blank = line.trim().length === 0
    if (HUNK.test(line) || DIFF_FILE.test(line)) {
      inDiff = true
      stackLeft = 0
      return verdicts.structure
    }
    if (inDiff && /^[-+ \\]/.test(line) && !/^\+\+\+ |^--- /.test(line)) return verdicts.content
    inDiff = false
    if (COMMIT.test(line)) {
      stackLeft = 0
      const next = ahead(1)
      return HEAD.test(line) || (next !== undefined && MERGE.test(next)) ? verdicts.structure : verdicts.plain
    }
    if (MERGE.test(line) || (HEAD.test(line) && /^[*|/\\ ]*[0-9a-f]{7,}\b/.test(line)))
      return verdicts.structure
    if (SUMMARY.test(line)) {
      stackLeft = 0
      return verdicts.summary
    }
    if (inPassBlock) {
      if (TAP_YAML.test(line)) {
        if (/^\s+\.\.\.$/.test(line)) inPassBlock = false
        return verdicts.pass
      }
      inPassBlock = false
    }
    if (warningLeft > 0) {
      if (!blank && STACK_LINE.test(line) && !ERROR_CLASS.test(line) && !WARNING.test(line)) {
        warningLeft--
        return warningCode === undefined
          ? verdicts.plain
          : { kind: "warning", code: warningCode, continues: true }
      }
      warningLeft = 0
    }
    if (PASS.test(line) && !ERROR_CLASS.test(line)) {
      stackLeft = 0
      if (/^\s*ok \d+/.test(line)) inPassBlock = true
      return verdicts.pass
    }
    const warning = WARNING.exec(line)
    if (warning !== null && !/\berror\b/i.test(line)) {
      stackLeft = 0
      warningCode = warning[1] ?? warning[2] ?? warning[3]
      warningLeft = STACK_MAX_LINES
      return warningCode === undefined ? verdicts.plain : { kind: "warning", code: warningCode }
    }
    if (ERROR_CLASS.test(line) || LOCATION.test(line)) {
      stackLeft = STACK_MAX_LINES
      return verdicts.error
    }
    if (stackLeft > 0) {
      // a whitespace-only line inside a stack or excerpt continues it; an empty one ends it
      // tsc --pretty puts one empty line between an error and its numbered source excerpt
      const excerptNext =
        line.length === 0 &&
        stackLeft === STACK_MAX_LINES &&
        /^\d+ /.test(ahead(1)?.replace(TASK_PREFIX, "") ?? "")
      if (
        excerptNext ||
        (blank && line.length > 0) ||
        (!blank && (STACK_LINE.test(line) || /^\d+ /.test(line)))
      ) {
        stackLeft--
        return verdicts.stack
      }
      stackLeft = 0
    }
    const subtest = SUBTEST.exec(line)
    if (subtest !== null) {
      // a subtest header folds with its test when that test ends `ok` within the window
      const name = subtest[2]!
      for (let n = 1; n <= lookahead; n++) {
        const next = ahead(n)
        if (next === undefined) break
        const end = /^\s*(not )?ok \d+ - (.*?)(?: #.*)?$/.exec(next.replace(TASK_PREFIX, ""))
        if (end !== null && end[2] === name) return end[1] === undefined ? verdicts.pass : verdicts.plain
      }
      return verdicts.plain
    }
    if (PROGRESS.test(line)) return verdicts.progress
    return verdicts.plain
  }
  return { judge }
}
