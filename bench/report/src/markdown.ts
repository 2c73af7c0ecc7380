/**
 * Renders what one `pnpm bench` run collected — every bench's `BENCH` figures, the reliability
 * suites' counts, the machine — as the generated section of BENCHMARKS.md and the headline rows
 * the root README quotes. Pure: the records come in, markdown goes out.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import type { BenchRecord, ReliabilityRecord } from "./index.js"

/**
 * A bench file's figures, or why it has none.
 *
 * @since 0.1.0
 * @category models
 */
export interface BenchFileResult {
  /** The bench file, relative to the repository root. */
  readonly file: string
  readonly records: ReadonlyArray<BenchRecord>
  /** The exit status (or signal) when the bench did not exit 0. */
  readonly exit: string | null
  readonly seconds: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Collected {
  readonly benches: ReadonlyArray<BenchFileResult>
  readonly reliability: ReadonlyArray<ReliabilityRecord>
  /** How the reliability suites were run (command, mode), or why they were not. */
  readonly reliabilityRun: string
  readonly machine: string
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const cell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

const num = (n: number | null): string => {
  if (n === null) return "—"
  const abs = Math.abs(n)
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 })
}

/** What the figures of each `issue` number (the BENCH lines' key) are about, as the tables name it. */
export const AREAS: Readonly<Record<number, string>> = {
  2: "truncation",
  4: "search and Read",
  9: "processes",
  10: "search and Read",
  11: "hosts and CLI",
  12: "confinement",
  13: "checkpoints",
  15: "viewer",
  22: "processes"
}

const area = (issue: number): string => AREAS[issue] ?? `other (${issue})`

/** Where an area sorts: at the lowest issue number that names it (two issues can share one). */
const areaRank = (issue: number): number =>
  Math.min(
    ...Object.keys(AREAS)
      .map(Number)
      .filter((n) => AREAS[n] === area(issue)),
    issue
  )

const verdict = (r: BenchRecord): string => (r.met ? "met" : "**missed**")

/**
 * Every figure of the run, ordered by area, then issue, then bench file, then as printed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const figureRows = (
  collected: Collected
): ReadonlyArray<{ readonly file: string; readonly record: BenchRecord }> =>
  Arr.sort(
    collected.benches.flatMap((b) => b.records.map((record) => ({ file: b.file, record }))),
    Order.combine(
      Order.mapInput(Order.number, (row: { readonly record: BenchRecord }) => areaRank(row.record.issue)),
      Order.mapInput(Order.number, (row: { readonly record: BenchRecord }) => row.record.issue)
    )
  )

/**
 * The figures table.
 *
 * @since 0.1.0
 * @category constructors
 */
export const figuresTable = (collected: Collected): string =>
  table(
    ["area", "measured", "toolcap", "in-run baseline", "ratio", "target", "result", "load", "bench"],
    figureRows(collected).map(({ file, record: r }) => [
      area(r.issue),
      cell(r.measure),
      `${num(r.figure)} ${cell(r.unit)}`,
      r.baseline === null ? "—" : `${num(r.baseline)} ${cell(r.unit)} (${cell(r.baselineName ?? "")})`,
      r.ratio === null ? "—" : num(r.ratio),
      cell(r.target),
      verdict(r),
      r.load.split(" ")[0] ?? "",
      `\`${file}\``
    ])
  )

/**
 * The reliability table: one row per suite, its counts as printed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reliabilityTable = (collected: Collected): string =>
  collected.reliability.length === 0
    ? "No reliability counts were collected in this run."
    : table(
        ["suite", "mode", "counts", "what ran", "load"],
        Arr.sort(
          collected.reliability,
          Order.mapInput(Order.string, (r: ReliabilityRecord) => r.suite)
        ).map((r) => [
          cell(r.suite),
          r.mode,
          Object.entries(r.counts)
            .map(([name, n]) => `${name} ${n.toLocaleString("en-US")}`)
            .join(", "),
          cell(r.detail),
          r.load.split(" ")[0] ?? ""
        ])
      )

/**
 * The counts that must be 0 (everything but `inputs` and the sizes a suite reports), summed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failureTotal = (collected: Collected): number =>
  collected.reliability.reduce(
    (sum, r) =>
      sum +
      Object.entries(r.counts)
        .filter(([name]) => FAILURE_COUNTS.has(name))
        .reduce((s, [, n]) => s + n, 0),
    0
  )

/** The count names that report a failure (any other count is a size: inputs, peak RSS, ...). */
export const FAILURE_COUNTS: ReadonlySet<string> = new Set([
  "escapes",
  "crashes",
  "hangs",
  "survivors",
  "committed checkpoints lost",
  "wrong results",
  "unbounded results",
  "duplicate spill names",
  "untyped errors",
  "stale scratch left"
])

/**
 * The BENCHMARKS.md section (without its begin/end comments).
 *
 * @since 0.1.0
 * @category constructors
 */
export const section = (collected: Collected): string => {
  const rows = figureRows(collected)
  const met = rows.filter((r) => r.record.met).length
  const silent = collected.benches.filter((b) => b.records.length === 0)
  const failedFiles = collected.benches.filter((b) => b.exit !== null)
  const inputs = collected.reliability.reduce((sum, r) => sum + (r.counts["inputs"] ?? 0), 0)
  return [
    "## Targets",
    "",
    `Every figure a bench of this repository compares against a target, from one \`pnpm bench\` run: ${met} of ${rows.length} targets met. Each bench measures its own baseline in the same run (interleaved rounds, medians), so load on the machine weighs on both sides; the load average (1 min) is the one when the figure was taken. Generated from the \`BENCH {json}\` lines the benches print (\`bench/report\`); nothing in this section is typed by hand.`,
    "",
    figuresTable(collected),
    "",
    silent.length === 0
      ? "Every bench file printed at least one figure."
      : `Bench files that printed no figure against a target: ${silent.map((b) => `\`${b.file}\`${b.exit === null ? "" : ` (exit ${b.exit})`}`).join(", ")}${silent.some((b) => b.file.includes("context")) ? " (the context-health bench compares policies, not a target: its tables are in the Context health section below)" : ""}.`,
    failedFiles.length === 0
      ? ""
      : `Bench files that exited non-zero (a missed target or a failure): ${failedFiles.map((b) => `\`${b.file}\` (${b.exit})`).join(", ")}.`,
    "",
    "## Reliability",
    "",
    `Counts printed by the reliability suites (load, faults, hostile input) in this run: ${inputs.toLocaleString("en-US")} inputs in all, ${failureTotal(collected)} failures (escapes, crashes, hangs, survivors, lost checkpoints, wrong or unbounded results). ${collected.reliabilityRun}`,
    "",
    reliabilityTable(collected),
    "",
    "## Machine",
    "",
    collected.machine,
    "",
    "Run times per bench file: " +
      collected.benches.map((b) => `\`${b.file}\` ${b.seconds.toFixed(0)} s`).join(", ") +
      "."
  ]
    .filter((line, i, all) => !(line === "" && all[i - 1] === ""))
    .join("\n")
}

/**
 * The README's headline rows: the targets met, the missed ones by name, the reliability totals.
 *
 * @since 0.1.0
 * @category constructors
 */
export const headline = (collected: Collected): string => {
  const rows = figureRows(collected)
  const met = rows.filter((r) => r.record.met).length
  const missed = rows.filter((r) => !r.record.met)
  const inputs = collected.reliability.reduce((sum, r) => sum + (r.counts["inputs"] ?? 0), 0)
  return [
    `From [BENCHMARKS.md](BENCHMARKS.md) (one \`pnpm bench\` run): **${met} of ${rows.length}** targets met; reliability suites: ${inputs.toLocaleString("en-US")} inputs, ${failureTotal(collected)} failures.`,
    "",
    table(
      ["area", "targets", "met", "missed"],
      [...new Set(rows.map((r) => area(r.record.issue)))].map((name) => {
        const of = rows.filter((r) => area(r.record.issue) === name)
        const ok = of.filter((r) => r.record.met).length
        return [name, `${of.length}`, `${ok}`, `${of.length - ok}`]
      })
    ),
    "",
    missed.length === 0
      ? "No target was missed."
      : table(
          ["missed target", "toolcap", "baseline", "ratio", "target"],
          missed.map(({ record: r }) => [
            cell(r.measure),
            `${num(r.figure)} ${cell(r.unit)}`,
            r.baseline === null ? "—" : `${num(r.baseline)} ${cell(r.unit)}`,
            r.ratio === null ? "—" : num(r.ratio),
            cell(r.target)
          ])
        )
  ].join("\n")
}
