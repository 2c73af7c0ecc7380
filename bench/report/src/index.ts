/**
 * The one line format `pnpm bench` collects: every figure a bench compares against a target is
 * printed as `BENCH {json}`, and every reliability suite prints its counts as a plain line and,
 * when `TOOLCAP_RELIABILITY_OUT` names a directory, writes them there as JSON. Benches and tests
 * import this file by relative path, so it adds no dependency edge between packages.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * A target: the ratio (or, for an absolute bound, the figure itself) compared with a number.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly op: "<=" | "<" | ">=" | ">"
  readonly value: number
  /** What the bound applies to; `ratio` by default. `figure` for an absolute bound (peak RSS in MB). */
  readonly of?: "ratio" | "figure"
}

/**
 * One figure as a bench measured it.
 *
 * @since 0.1.0
 * @category models
 */
export interface FigureInput {
  /** The issue whose target this is. */
  readonly issue: number
  readonly measure: string
  readonly figure: number
  readonly unit: string
  readonly baseline?: number
  readonly baselineName?: string
  /** The bench's own ratio (e.g. the median of per-round ratios); else figure / baseline. */
  readonly ratio?: number
  readonly target: Target
}

/**
 * The line's JSON, with the keys every bench shares.
 *
 * @since 0.1.0
 * @category models
 */
export interface BenchRecord {
  readonly issue: number
  readonly measure: string
  readonly figure: number
  readonly baseline: number | null
  readonly unit: string
  readonly baselineName: string | null
  readonly ratio: number | null
  readonly target: string
  readonly met: boolean
  readonly load: string
}

/** The prefix `pnpm bench` looks for at the start of a stdout line. */
export const BENCH_PREFIX = "BENCH "

const compare = (value: number, target: Target): boolean => {
  switch (target.op) {
    case "<=":
      return value <= target.value
    case "<":
      return value < target.value
    case ">=":
      return value >= target.value
    case ">":
      return value > target.value
  }
}

const round = (n: number, digits: number): number => Number(n.toFixed(digits))

/**
 * The three load averages now, as printed beside every figure (other work on the machine shows in it).
 *
 * @since 0.1.0
 * @category reporting
 */
export const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")

/**
 * The record for a figure: its ratio, the target as text, met or not, and the load now.
 *
 * @since 0.1.0
 * @category constructors
 */
export const record = (input: FigureInput): BenchRecord => {
  const ratio =
    input.ratio ??
    (input.baseline !== undefined && input.baseline > 0 ? input.figure / input.baseline : undefined)
  const of = input.target.of ?? "ratio"
  const compared = of === "figure" ? input.figure : ratio
  return {
    issue: input.issue,
    measure: input.measure,
    figure: round(input.figure, 3),
    baseline: input.baseline === undefined ? null : round(input.baseline, 3),
    unit: input.unit,
    baselineName: input.baselineName ?? null,
    ratio: ratio === undefined ? null : round(ratio, 4),
    target: `${of === "figure" ? "" : "ratio "}${input.target.op} ${input.target.value}${of === "figure" ? ` ${input.unit}` : ""}`,
    met: compared !== undefined && Number.isFinite(compared) && compare(compared, input.target),
    load: loadAverage()
  }
}

/**
 * Prints a figure's `BENCH {json}` line and says whether its target was met.
 *
 * @since 0.1.0
 * @category reporting
 */
export const reportFigure = (input: FigureInput): boolean => {
  const r = record(input)
  console.log(`${BENCH_PREFIX}${JSON.stringify(r)}`)
  return r.met
}

/**
 * Every `BENCH {json}` line of a bench's output, in order; other lines are skipped.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseBenchLines = (output: string): ReadonlyArray<BenchRecord> =>
  output
    .split("\n")
    .filter((line) => line.startsWith(BENCH_PREFIX))
    .flatMap((line) => {
      try {
        return [JSON.parse(line.slice(BENCH_PREFIX.length)) as BenchRecord]
      } catch {
        return []
      }
    })

// --- reliability -----------------------------------------------------------------------------------

/** Names the directory a reliability suite writes its counts to (one JSON file per suite). */
export const RELIABILITY_OUT_VARIABLE = "TOOLCAP_RELIABILITY_OUT"
/** Set to `1`, the hostile and reliability suites run their long mode. */
export const LONG_VARIABLE = "TOOLCAP_LONG_TESTS"

/**
 * True in the long mode (`TOOLCAP_LONG_TESTS=1`).
 *
 * @since 0.1.0
 * @category reliability
 */
export const isLong = (): boolean => process.env[LONG_VARIABLE] === "1"

/**
 * A suite's counts: `inputs` first, then the failure counts that apply (each expected 0).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReliabilityRecord {
  readonly suite: string
  readonly mode: "default" | "long"
  readonly counts: Readonly<Record<string, number>>
  /** What the suite ran, in a few words (sizes, surfaces). */
  readonly detail: string
  readonly load: string
}

/**
 * The count line: `reliability <suite>: inputs N, escapes 0, ... (<mode> mode: <detail>)`.
 *
 * @since 0.1.0
 * @category reliability
 */
export const reliabilityLine = (r: ReliabilityRecord): string =>
  `reliability ${r.suite}: ${Object.entries(r.counts)
    .map(([name, n]) => `${name} ${n}`)
    .join(", ")} (${r.mode} mode: ${r.detail})`

/**
 * Prints a suite's count line and, when `TOOLCAP_RELIABILITY_OUT` is set, writes the record to
 * `<dir>/<suite>.json` (the suite name with anything but letters, digits and dashes made a dash).
 *
 * @since 0.1.0
 * @category reliability
 */
export const reportReliability = (
  suite: string,
  counts: Readonly<Record<string, number>>,
  detail: string
): ReliabilityRecord => {
  const r: ReliabilityRecord = {
    suite,
    mode: isLong() ? "long" : "default",
    counts,
    detail,
    load: loadAverage()
  }
  console.log(reliabilityLine(r))
  const dir = process.env[RELIABILITY_OUT_VARIABLE]
  if (dir !== undefined && dir !== "") {
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, `${suite.replace(/[^A-Za-z0-9-]+/g, "-")}.json`),
      JSON.stringify(r, null, 2)
    )
  }
  return r
}

/**
 * How one call under a fault ended.
 *
 * @since 0.1.0
 * @category reliability
 */
export type Verdict = "correct" | "typed error" | "wrong" | "crash" | "hang"

/**
 * One judged call: the fault, its verdict, and what the error code or the wrong part was.
 *
 * @since 0.1.0
 * @category reliability
 */
export interface Judged {
  readonly fault: string
  readonly verdict: Verdict
  readonly detail: string
}

/**
 * The counts of a list of judged calls: inputs, then each verdict.
 *
 * @since 0.1.0
 * @category reliability
 */
export const verdictCounts = (judged: ReadonlyArray<Judged>): Record<string, number> => {
  const count = (v: Verdict) => judged.filter((x) => x.verdict === v).length
  return {
    inputs: judged.length,
    "correct results": count("correct"),
    "typed errors": count("typed error"),
    "wrong results": count("wrong"),
    crashes: count("crash"),
    hangs: count("hang")
  }
}

/**
 * `fault: verdict (detail) ×n` per distinct fault and outcome, in order of first appearance; the
 * detail (at most 120 characters) only for a typed error, a wrong result or a crash.
 *
 * @since 0.1.0
 * @category reliability
 */
export const summariseVerdicts = (judged: ReadonlyArray<Judged>): string => {
  const seen = new Map<string, number>()
  for (const v of judged) {
    const key = `${v.fault}: ${v.verdict}${v.verdict === "typed error" || v.verdict === "wrong" || v.verdict === "crash" ? ` (${v.detail.slice(0, 120)})` : ""}`
    seen.set(key, (seen.get(key) ?? 0) + 1)
  }
  return [...seen].map(([key, n]) => (n === 1 ? key : `${key} ×${n}`)).join("; ")
}
