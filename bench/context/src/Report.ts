/**
 * Renders the benchmark's results: the markdown section of BENCHMARKS.md (targets, tables and
 * method), the README summary, and the SVG chart. Pure: the figures come in, text goes out.
 *
 * @since 0.1.0
 */
import { Marker } from "@toolcap/limits"
import type { Source } from "./Peer.js"
import { type Cell, ONE_MORE_CALL_RULE } from "./Reach.js"

export type { Cell } from "./Reach.js"

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
  /** The size band or shape the case stands for (`30–96 KB`, `needle mid-flood`), if any. */
  readonly group?: string
  readonly source: string
  readonly rawBytes: number
  readonly rawLines: number
  readonly needle: string
  readonly needleAt: string
  /** Why a toolcap row neither shows nor reaches the needle, by policy name. */
  readonly misses: ReadonlyArray<{ readonly policy: string; readonly why: string }>
  /** One cell per policy, in `Results.policies` order. */
  readonly cells: ReadonlyArray<Cell>
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
  readonly machine: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PolicyTotals {
  readonly policy: string
  readonly bytes: number
  readonly tokens: number
  /** Tokens of the first results plus every one more call made. */
  readonly tokensWithCall: number
  readonly visible: number
  readonly reachable: number
  readonly cut: number
}

/**
 * Totals per policy.
 *
 * @since 0.1.0
 * @category constructors
 */
export const totals = (results: Results): ReadonlyArray<PolicyTotals> =>
  results.policies.map((policy, p) => {
    const cells = results.rows.map((row) => row.cells[p]!)
    const sum = (f: (cell: Cell) => number) => cells.reduce((total, cell) => total + f(cell), 0)
    return {
      policy: policy.name,
      bytes: sum((cell) => cell.bytes),
      tokens: sum((cell) => cell.tokens),
      tokensWithCall: sum((cell) => cell.tokens + cell.callTokens),
      visible: cells.filter((cell) => cell.visible).length,
      reachable: cells.filter((cell) => cell.reachable).length,
      cut: cells.filter((cell) => cell.truncated).length
    }
  })

/**
 * A done-when target and whether the run met it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly target: string
  readonly measured: string
  readonly met: boolean
  /** Why it was missed (empty when met). */
  readonly why: string
}

/** The toolcap rows the targets name. */
export const SPEC = "toolcap spec"
export const COMPACT = "toolcap compact"
/** `compact` may spend at most this multiple of the cheapest peer that reaches every needle. */
export const COMPACT_TOKEN_FACTOR = 1.5

const thousands = (n: number): string => n.toLocaleString("en-US")

/**
 * The done-when targets, evaluated on the results.
 *
 * @since 0.1.0
 * @category constructors
 */
export const targets = (results: Results): ReadonlyArray<Target> => {
  const n = results.rows.length
  const all = totals(results)
  const byName = (name: string) => all.find((t) => t.policy === name)
  const peerTotals = all.filter((_, p) => !results.policies[p]!.toolcap)
  const lostCases = (name: string) => {
    const p = results.policies.findIndex((policy) => policy.name === name)
    return results.rows
      .filter((row) => !row.cells[p]!.visible && !row.cells[p]!.reachable)
      .map((row) => `\`${row.id}\``)
  }
  const out: Array<Target> = []
  for (const name of [SPEC, COMPACT]) {
    const t = byName(name)
    if (t === undefined) continue
    const reached = t.visible + t.reachable
    out.push({
      target: `${name} reaches every needle (seen or one call)`,
      measured: `${reached} / ${n}`,
      met: reached === n,
      why: reached === n ? "" : `lost ${lostCases(name).join(", ")} (see "Where toolcap lost the needle")`
    })
  }
  const compact = byName(COMPACT)
  if (compact !== undefined && peerTotals.length > 0) {
    const best = peerTotals.reduce((a, b) => (b.visible > a.visible ? b : a))
    const compactAt = results.policies.findIndex((policy) => policy.name === COMPACT)
    const bestAt = results.policies.findIndex((policy) => policy.name === best.policy)
    const behind = results.rows
      .filter((row) => row.cells[bestAt]!.visible && !row.cells[compactAt]!.visible)
      .map((row) => `\`${row.id}\``)
    out.push({
      target: `${COMPACT} sees at least as many needles in the first result as the best peer`,
      measured: `${compact.visible} against ${best.policy}'s ${best.visible}`,
      met: compact.visible >= best.visible,
      why:
        compact.visible >= best.visible
          ? ""
          : `${best.policy} shows the needle in its first result where ${COMPACT} does not on ${behind.join(", ")}`
    })
    // the cheapest peer that reaches every needle; when none does, the cheapest of those that reach the most
    const most = Math.max(...peerTotals.map((t) => t.visible + t.reachable))
    const reachingMost = peerTotals.filter((t) => t.visible + t.reachable === most)
    const cheapest = reachingMost.reduce((a, b) => (b.tokensWithCall < a.tokensWithCall ? b : a))
    const ratio = compact.tokensWithCall / cheapest.tokensWithCall
    const against =
      most === n
        ? ""
        : ` (no peer reaches every needle; ${cheapest.policy} is the cheapest of those reaching ${most})`
    out.push({
      target: `${COMPACT} spends at most ${COMPACT_TOKEN_FACTOR}× the tokens of the cheapest peer that reaches every needle (tokens including the one more call)`,
      measured: `${thousands(compact.tokensWithCall)} against ${cheapest.policy}'s ${thousands(cheapest.tokensWithCall)}: ${ratio.toFixed(2)}×${against}`,
      met: ratio <= COMPACT_TOKEN_FACTOR,
      why: ratio <= COMPACT_TOKEN_FACTOR ? "" : `${ratio.toFixed(2)}× is over ${COMPACT_TOKEN_FACTOR}×`
    })
  }
  return out
}

const tokensShort = (n: number): string =>
  n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const mark = (cell: Cell): string => (cell.visible ? "✅ seen" : cell.reachable ? "↪ 1 call" : "❌ lost")

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
      "seen in the first result",
      "reached with one more call",
      "seen or reached",
      "tokens, first results",
      "tokens, with the one more call"
    ],
    totals(results).map((t, p) => [
      t.policy,
      results.policies[p]!.version,
      `${t.visible} / ${n}`,
      `${t.reachable} / ${n}`,
      `**${t.visible + t.reachable} / ${n}**`,
      thousands(t.tokens),
      thousands(t.tokensWithCall)
    ])
  )
}

const targetTable = (results: Results): string =>
  table(
    ["target", "measured", "met"],
    targets(results).map((t) => [t.target, t.measured, t.met ? "✅ met" : `❌ missed: ${t.why}`])
  )

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
 * The BENCHMARKS.md section (without its begin/end comments).
 *
 * @since 0.1.0
 * @category constructors
 */
export const section = (results: Results, chartFile: string): string => {
  const n = results.rows.length
  const caseTable = table(
    ["case", "agent's call", "raw output", "needle (located by rule)", "where"],
    results.rows.map((row) => [
      `\`${row.id}\`${row.group === undefined ? "" : ` (${row.group})`}`,
      row.source,
      `${Marker.formatBytes(row.rawBytes)}, ${thousands(row.rawLines)} ${row.rawLines === 1 ? "line" : "lines"}`,
      row.needle,
      row.needleAt
    ])
  )
  const matrix = table(
    ["case", ...results.policies.map((policy) => policy.name)],
    results.rows.map((row) => [
      `\`${row.id}\``,
      ...row.cells.map(
        (cell) =>
          `${mark(cell)} · ${tokensShort(cell.tokens)}${cell.callTokens > 0 ? ` + ${tokensShort(cell.callTokens)}` : ""} tok${cell.truncated ? "" : " (whole)"}`
      )
    ])
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
    `How much of an agent's context each tool-output policy spends on ${n} real outputs, and whether the one line the agent needs (the needle) reaches it in the first result or with one more call. toolcap runs its real Read, Bash and Grep tools twice, under its \`spec\` budgets and its \`compact\` budgets; the other hosts' shell, read and search tools are modelled from their sources at the versions named below. Generated by \`pnpm bench:context\`; nothing in this section is typed by hand.`,
    "",
    `![context spent and needles per policy](${chartFile})`,
    "",
    summaryTable(results),
    "",
    `Tokens are estimated with \`@toolcap/checkpoint\`'s default \`TokenEstimator\` (one pass, a fixed weight per character class, tuned against the o200k and cl100k tokenizers) for every policy alike. "Tokens, with the one more call" adds the search result of every case where the rule below made one.`,
    "",
    "### Targets",
    "",
    targetTable(results),
    "",
    "### Cases",
    "",
    caseTable,
    "",
    "### Every case through every policy",
    "",
    "✅ seen: the needle's line is in the first result; ↪ 1 call: not seen, one more call reaches it; ❌ lost: neither. Then the estimated tokens of the first result, `+` those of the one more call when one was made; `(whole)`: the first result passed the output uncut.",
    "",
    matrix,
    "",
    "### Where toolcap lost the needle",
    "",
    lost.length === 0 ? "Nowhere: every needle was seen or one call away." : lost.join("\n"),
    "",
    ...modelTextSection(results),
    "### Method",
    "",
    "Each case is produced on this machine at bench time: the generated projects are compiled and tested by the real compilers and runners, git, find and grep print their real output, and files are read as they are. A Bash case runs once, through toolcap's Bash tool under `spec`; the chunks its streams emitted are the raw output every peer model receives, and `compact` runs a command that prints exactly those bytes on the same streams with the same exit code. A file case is read by each policy's own Read tool with its defaults (no offset, no limit). The needle is located in the raw output by the rule in the table; it counts as seen when the text reaching the model holds it as a whole line (without a line-number prefix the tool adds; for a line longer than 500 characters, the match with 40 characters either side).",
    "",
    `**One more call, one rule for every policy.** ${ONE_MORE_CALL_RULE}`,
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
 * The chart: context spent per policy with the one more call (left) and needles seen / one call
 * away / lost (right).
 *
 * @since 0.1.0
 * @category constructors
 */
export const chart = (results: Results): string => {
  const rows = totals(results)
  const n = results.rows.length
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
  const maxTokens = Math.max(...rows.map((r) => r.tokensWithCall), 1)
  const colours = { spent: "#5b6c8f", seen: "#2e8b57", call: "#9fd3b4", lost: "#d9d9d9", toolcap: "#1f4e9c" }
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${leftX}" y="24" font-size="15" font-weight="bold">Context spent (estimated tokens)</text>`,
    `<text x="${leftX}" y="44" fill="#555">${n} real outputs, with the one more call · shorter is better</text>`,
    `<text x="${rightX}" y="24" font-size="15" font-weight="bold">Needles (of ${n})</text>`,
    `<text x="${rightX}" y="44" fill="#555">seen · one more call · lost</text>`
  ]
  rows.forEach((row, i) => {
    const y = top + i * rowHeight
    const isToolcap = results.policies[i]!.toolcap
    parts.push(
      `<text x="${labelWidth}" y="${y + 17}" text-anchor="end"${isToolcap ? ' font-weight="bold"' : ""}>${escapeXml(row.policy)}</text>`
    )
    const spentWidth = Math.max((row.tokensWithCall / maxTokens) * leftWidth, 1)
    parts.push(
      `<rect x="${leftX}" y="${y + 4}" width="${spentWidth.toFixed(1)}" height="18" fill="${isToolcap ? colours.toolcap : colours.spent}"/>`,
      `<text x="${(leftX + spentWidth + 6).toFixed(1)}" y="${y + 17}">${thousands(row.tokensWithCall)}</text>`
    )
    const unit = rightWidth / n
    const seenWidth = row.visible * unit
    const callWidth = row.reachable * unit
    const lostWidth = (n - row.visible - row.reachable) * unit
    parts.push(
      `<rect x="${rightX}" y="${y + 4}" width="${seenWidth.toFixed(1)}" height="18" fill="${colours.seen}"/>`,
      `<rect x="${(rightX + seenWidth).toFixed(1)}" y="${y + 4}" width="${callWidth.toFixed(1)}" height="18" fill="${colours.call}"/>`,
      `<rect x="${(rightX + seenWidth + callWidth).toFixed(1)}" y="${y + 4}" width="${lostWidth.toFixed(1)}" height="18" fill="${colours.lost}"/>`,
      `<text x="${rightX + 6}" y="${y + 17}" fill="#ffffff">${row.visible > 0 ? row.visible : ""}</text>`,
      `<text x="${(rightX + seenWidth + 6).toFixed(1)}" y="${y + 17}" fill="#1b4d32">${row.reachable > 0 ? row.reachable : ""}</text>`,
      `<text x="${(rightX + seenWidth + callWidth + 6).toFixed(1)}" y="${y + 17}" fill="#555">${n - row.visible - row.reachable > 0 ? n - row.visible - row.reachable : ""}</text>`
    )
  })
  const legendY = top + rows.length * rowHeight + 24
  const legend: ReadonlyArray<readonly [string, string]> = [
    [colours.seen, "needle seen in the first result"],
    [colours.call, "not seen, one more call reaches it"],
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
