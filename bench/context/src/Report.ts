/**
 * Renders the benchmark's results: the markdown section of BENCHMARKS.md (summary, cases, the
 * per-case grid and method), the README summary, and the SVG chart. Pure: the figures come in,
 * text goes out.
 *
 * @since 0.1.0
 */
import { Marker } from "@toolcap/limits"
import type { Source } from "./Peer.js"
import { FOLLOW_UP_CALL_TOKENS, OUTCOME_RULE, type Scored, spent } from "./Reach.js"

export type { Scored } from "./Reach.js"

/**
 * One policy's row header: its name, the version it was modelled from, how it is modelled.
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyInfo {
  readonly name: string
  readonly version: string
  readonly toolcap: boolean
  /** How each of its tools is modelled, one sentence each. */
  readonly describe: ReadonlyArray<string>
  readonly sources: ReadonlyArray<Source>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CaseRow {
  readonly id: string
  readonly title: string
  readonly kind: "bash" | "read"
  /** The shape the case stands for (`needle mid-flood`), if any. */
  readonly group?: string
  /** The call the agent makes: the command line, or the file read. */
  readonly source: string
  /** Why a user would make it. */
  readonly why: string
  /** The case's one follow-up: its search term and where an agent gets it. */
  readonly followUp: string
  /** The size the size rule gave the case, when it is sized. */
  readonly targetBytes?: number
  readonly rawBytes: number
  readonly rawLines: number
  readonly needle: string
  readonly needleAt: string
  /** Why a toolcap row lost the needle, by policy name. */
  readonly misses: ReadonlyArray<{ readonly policy: string; readonly why: string }>
  /** One cell per policy, in `Results.policies` order. */
  readonly cells: ReadonlyArray<Scored>
}

/**
 * Tokens of the same tool results rendered three ways.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelTextRow {
  readonly call: string
  readonly json: number
  readonly plain: number
  /** With `cat -n` line numbers (Read only). */
  readonly numbered?: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Results {
  readonly policies: ReadonlyArray<PolicyInfo>
  readonly rows: ReadonlyArray<CaseRow>
  readonly modelText: ReadonlyArray<ModelTextRow>
  /** How toolcap's Read, Grep and Glob results were counted (the model-text seam). */
  readonly toolcapModelText: string
  /** The tokenizer every count comes from, named as the method states it. */
  readonly tokenizer: string
  /** The size rule of the sized cases, in one sentence. */
  readonly sizeRule: string
  readonly machine: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PolicyTotals {
  readonly policy: string
  readonly seen: number
  readonly saved: number
  readonly rerun: number
  readonly lost: number
  /** `seen + ½·(saved + rerun)`. */
  readonly score: number
  readonly bytes: number
  /** Tokens of the first results. */
  readonly tokens: number
  /** Tokens of the first results, the follow-ups' results and their per-call overhead. */
  readonly spent: number
  /** `spent` over the needles seen or reached; undefined when none was. */
  readonly perNeedle: number | undefined
  readonly followUpCalls: number
  /** First results holding an ESC or CR byte. */
  readonly control: number
  readonly cut: number
}

/**
 * The headline score of a policy: a needle seen counts 1, one reached with the follow-up ½.
 *
 * @since 0.1.0
 * @category constructors
 */
export const headline = (seen: number, reached: number): number => seen + reached / 2

/**
 * Totals per policy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const totals = (results: Results): ReadonlyArray<PolicyTotals> =>
  results.policies.map((policy, p) => {
    const cells = results.rows.map((row) => row.cells[p]!)
    const sum = (f: (cell: Scored) => number) => cells.reduce((total, cell) => total + f(cell), 0)
    const counted = (outcome: Scored["outcome"]) => cells.filter((cell) => cell.outcome === outcome).length
    const [seen, saved, rerun, lost] = [counted("seen"), counted("saved"), counted("rerun"), counted("lost")]
    const total = sum(spent)
    return {
      policy: policy.name,
      seen,
      saved,
      rerun,
      lost,
      score: headline(seen, saved + rerun),
      bytes: sum((cell) => cell.bytes),
      tokens: sum((cell) => cell.tokens),
      spent: total,
      perNeedle: seen + saved + rerun === 0 ? undefined : Math.round(total / (seen + saved + rerun)),
      followUpCalls: sum((cell) => cell.calls),
      control: cells.filter((cell) => cell.control).length,
      cut: cells.filter((cell) => cell.truncated).length
    }
  })

const thousands = (n: number): string => n.toLocaleString("en-US")

const tokensShort = (n: number): string =>
  n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const MARKS: Record<Scored["outcome"], string> = {
  seen: "✅ seen",
  saved: "↪ saved",
  rerun: "🔁 re-run",
  lost: "❌ lost"
}

/**
 * The summary table (also quoted in the README).
 *
 * @since 0.1.0
 * @category constructors
 */
export const summaryTable = (results: Results): string => {
  const n = results.rows.length
  return table(
    [
      "policy",
      "version",
      "seen",
      "saved copy",
      "re-run",
      "lost",
      "seen + ½·reached",
      "tokens, first results",
      "tokens, with follow-ups",
      "tokens per needle",
      "first results with ESC/CR"
    ],
    totals(results).map((t, p) => [
      t.policy,
      results.policies[p]!.version,
      `${t.seen} / ${n}`,
      `${t.saved}`,
      `${t.rerun}`,
      `${t.lost}`,
      `**${t.score}**`,
      thousands(t.tokens),
      thousands(t.spent),
      t.perNeedle === undefined ? "—" : thousands(t.perNeedle),
      `${t.control}`
    ])
  )
}

const percent = (a: number, b: number): string => `${(((a - b) / b) * 100).toFixed(0)}%`

const modelTextSection = (results: Results): Array<string> => {
  const rows = results.modelText
  if (rows.length === 0) return []
  const sum = (f: (row: ModelTextRow) => number) => rows.reduce((total, row) => total + f(row), 0)
  const reads = rows.filter((row) => row.numbered !== undefined)
  const readPlain = reads.reduce((total, row) => total + row.plain, 0)
  const readNumbered = reads.reduce((total, row) => total + (row.numbered ?? 0), 0)
  const readJson = reads.reduce((total, row) => total + row.json, 0)
  return [
    "### Model-facing text: JSON against plain text",
    "",
    "The same real Read, Grep and Glob results of toolcap's tools, counted three ways: the result object as JSON (what the host surfaces sent before), plain text as `ModelOutput` of `@toolcap/adapters` renders it (what they send now: Read's lines, Grep's `path:line:text` / `path` / `path:count` lines, Glob's paths, each followed by its notice), and for Read plain text with `cat -n` line numbers (its `lineNumbers` option).",
    "",
    table(
      ["call", "JSON", "plain", "plain with `cat -n` numbers", "JSON over plain"],
      [
        ...rows.map((row) => [
          row.call,
          thousands(row.json),
          thousands(row.plain),
          row.numbered === undefined ? "" : thousands(row.numbered),
          percent(row.json, row.plain)
        ]),
        [
          "**all**",
          `**${thousands(sum((row) => row.json))}**`,
          `**${thousands(sum((row) => row.plain))}**`,
          reads.length === 0 ? "" : `**${thousands(readNumbered)}** (Reads)`,
          `**${percent(
            sum((row) => row.json),
            sum((row) => row.plain)
          )}**`
        ]
      ]
    ),
    "",
    `On these Reads JSON costs ${percent(readJson, readPlain)} more than plain text, and \`cat -n\` numbers add ${percent(readNumbered, readPlain)} to plain text. A Read result already states its first line (\`offset\`) and its notice names the next one, so a line's number is its offset plus its position: the numbers repeat what the model can derive, and they must be stripped before text copied out of a Read matches the file for an edit.`,
    ""
  ]
}

/**
 * One cell of the grid: the outcome, then the first result's tokens and, after `+`, what the
 * follow-up cost (its results and overhead).
 *
 * @since 0.1.0
 * @category constructors
 */
export const gridCell = (cell: Scored): string =>
  `${MARKS[cell.outcome]} · ${tokensShort(cell.tokens)}${cell.calls > 0 ? ` + ${tokensShort(spent(cell) - cell.tokens)}` : ""}${cell.truncated ? "" : " (whole)"}${cell.control ? " ␛" : ""}`

/**
 * The BENCHMARKS.md section (without its begin/end comments).
 *
 * @since 0.1.0
 * @category constructors
 */
export const section = (results: Results, chartFile: string): string => {
  const n = results.rows.length
  const caseTable = table(
    [
      "case",
      "agent's call",
      "why a user makes it",
      "follow-up",
      "raw output",
      "needle (located by rule)",
      "where"
    ],
    results.rows.map((row) => [
      `\`${row.id}\`${row.group === undefined ? "" : ` (${row.group})`}`,
      row.source,
      row.why,
      row.followUp,
      `${Marker.formatBytes(row.rawBytes)}, ${thousands(row.rawLines)} ${row.rawLines === 1 ? "line" : "lines"}${row.targetBytes === undefined ? "" : ` (sized: ${Marker.formatBytes(row.targetBytes)})`}`,
      row.needle,
      row.needleAt
    ])
  )
  const grid = table(
    ["case", ...results.policies.map((policy) => policy.name)],
    results.rows.map((row) => [`\`${row.id}\``, ...row.cells.map(gridCell)])
  )
  const lost = results.rows.flatMap((row) =>
    row.misses.map((miss) => `- \`${row.id}\`, ${miss.policy}: ${miss.why}`)
  )
  const method = results.policies.map((policy) =>
    [
      `- **${policy.name}** (${policy.version}): ${policy.describe.join(" ")}`,
      ...policy.sources.map((source) => `  - ${source.numbers}: ${source.from}`)
    ].join("\n")
  )
  return [
    "## Context health",
    "",
    `How much of an agent's context each tool-output policy spends on ${n} real outputs, and whether the one line the agent needs (the needle) reaches it: seen in the first result, reached with the case's one follow-up from a saved copy or by one filtered re-run, or lost. toolcap runs its real Read, Bash and Grep tools twice, under its \`spec\` budgets and its \`compact\` budgets; the other hosts' shell, read and search tools are modelled from their sources at the versions named below. Generated by \`pnpm bench:context\`; nothing in this section is typed by hand.`,
    "",
    `![context spent and needles per policy](${chartFile})`,
    "",
    summaryTable(results),
    "",
    `Tokens are counted with ${results.tokenizer}, for every policy alike. "Tokens, with follow-ups" adds each follow-up call's result and ${FOLLOW_UP_CALL_TOKENS} tokens of overhead per call (the model's call and its framing); "tokens per needle" divides that by the needles seen or reached. "First results with ESC/CR": raw model text still holds terminal control bytes (colour codes, carriage-return progress) where the output had them; rendering them is left to a later change, so they are counted, not removed.`,
    "",
    "This section sets no toolcap target: it is the measuring stick the next change is judged by.",
    "",
    "### Cases",
    "",
    caseTable,
    "",
    "### Every case through every policy",
    "",
    "✅ seen: the needle's line is in the first result; ↪ saved: the follow-up over the saved copy (or the file) the first result names shows it; 🔁 re-run: the filtered re-run shows it; ❌ lost: neither. Then the tokens of the first result and, after `+`, of the follow-up (its results and overhead); `(whole)`: the first result passed the output uncut; ␛: the first result holds an ESC or CR byte.",
    "",
    grid,
    "",
    "### Where toolcap lost the needle",
    "",
    lost.length === 0 ? "Nowhere: every needle was seen or reached." : lost.join("\n"),
    "",
    ...modelTextSection(results),
    "### Method",
    "",
    "Each case is produced on this machine at bench time: the generated projects are compiled and tested by the real compilers and runners, git, find, grep, curl, wget, npm and docker print their real output (the downloads from a loopback HTTP server, the image build against a Docker daemon, each started and stopped by the run), and files are read as they are. A Bash case runs once, through toolcap's Bash tool under `spec`; the chunks its streams emitted are the raw output every peer model receives, and `compact` runs a command that prints exactly those bytes on the same streams with the same exit code. A re-run is produced the same way, once per case, and given to every policy's shell. A file case is read by each policy's own Read tool with its defaults (no offset, no limit). The needle is located in the raw output by the rule in the table; it counts as seen when the text reaching the model holds it as a whole line (without a line-number prefix the tool adds; for a line longer than 500 characters, the match with 40 characters either side).",
    "",
    `**Outcomes, one rule for every policy.** ${OUTCOME_RULE}`,
    "",
    `**Sizes.** ${results.sizeRule}`,
    "",
    `toolcap's Read, Grep and Glob results are counted as ${results.toolcapModelText}; Bash as its \`output\` text.`,
    "",
    ...method,
    "",
    "Peer models are plain functions in `bench/context/src/peers/`, their laws (bounded output, head and tail shares, a marker exactly when cut, a saved copy that is the whole output, Read windows that are a prefix of the file) property-tested in `bench/context/test/`. A host's other measures (summarising, masking old results, asking the user) are not modelled.",
    "",
    `Machine: ${results.machine}.`
  ].join("\n")
}

const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * The chart: context spent per policy with its follow-ups (left) and needles seen / reached from
 * a saved copy / reached by a re-run / lost (right).
 *
 * @since 0.1.0
 * @category constructors
 */
export const chart = (results: Results): string => {
  const rows = totals(results)
  const n = Math.max(results.rows.length, 1)
  const width = 900
  const top = 64
  const rowHeight = 34
  const height = top + rows.length * rowHeight + 56
  const labelWidth = 140
  const leftX = labelWidth + 10
  const leftWidth = 290
  // room for the largest figure after the longest bar
  const rightX = leftX + leftWidth + 90
  const rightWidth = width - rightX - 20
  const maxTokens = Math.max(...rows.map((r) => r.spent), 1)
  const colours = {
    spent: "#5b6c8f",
    seen: "#2e8b57",
    saved: "#9fd3b4",
    rerun: "#e3c16f",
    lost: "#d9d9d9",
    toolcap: "#1f4e9c"
  }
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${leftX}" y="24" font-size="15" font-weight="bold">Context spent (${escapeXml(results.tokenizer.replace(/`/g, "").split(" ")[0]!)} tokens)</text>`,
    `<text x="${leftX}" y="44" fill="#555">${results.rows.length} real outputs, with follow-ups · shorter is better</text>`,
    `<text x="${rightX}" y="24" font-size="15" font-weight="bold">Needles (of ${results.rows.length})</text>`,
    `<text x="${rightX}" y="44" fill="#555">seen · saved copy · re-run · lost</text>`
  ]
  rows.forEach((row, i) => {
    const y = top + i * rowHeight
    const isToolcap = results.policies[i]!.toolcap
    parts.push(
      `<text x="${labelWidth}" y="${y + 17}" text-anchor="end"${isToolcap ? ' font-weight="bold"' : ""}>${escapeXml(row.policy)}</text>`
    )
    const spentWidth = Math.max((row.spent / maxTokens) * leftWidth, 1)
    parts.push(
      `<rect x="${leftX}" y="${y + 4}" width="${spentWidth.toFixed(1)}" height="18" fill="${isToolcap ? colours.toolcap : colours.spent}"/>`,
      `<text x="${(leftX + spentWidth + 6).toFixed(1)}" y="${y + 17}">${thousands(row.spent)}</text>`
    )
    const unit = rightWidth / n
    let x = rightX
    for (const [count, colour, ink] of [
      [row.seen, colours.seen, "#ffffff"],
      [row.saved, colours.saved, "#1b4d32"],
      [row.rerun, colours.rerun, "#5a4500"],
      [row.lost, colours.lost, "#555"]
    ] as const) {
      const w = count * unit
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="18" fill="${colour}"/>`,
        `<text x="${(x + 4).toFixed(1)}" y="${y + 17}" fill="${ink}">${count > 0 ? count : ""}</text>`
      )
      x += w
    }
  })
  const legendY = top + rows.length * rowHeight + 24
  const legend: ReadonlyArray<readonly [string, string]> = [
    [colours.seen, "seen in the first result"],
    [colours.saved, "follow-up over the saved copy"],
    [colours.rerun, "filtered re-run"],
    [colours.lost, "lost"]
  ]
  let legendX = leftX
  for (const [colour, label] of legend) {
    parts.push(
      `<rect x="${legendX}" y="${legendY - 11}" width="14" height="14" fill="${colour}"/>`,
      `<text x="${legendX + 20}" y="${legendY}">${escapeXml(label)}</text>`
    )
    legendX += 40 + label.length * 6.5
  }
  parts.push("</svg>")
  return parts.join("\n") + "\n"
}
