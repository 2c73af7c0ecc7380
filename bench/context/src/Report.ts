/**
 * Renders the benchmark's results: the markdown section of BENCHMARKS.md (tables and method), the
 * README summary, and the SVG chart. Pure: the figures come in, text goes out.
 *
 * @since 0.1.0
 */
import type { PeerPolicy } from "./Policies.js"

/**
 * One case through one policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cell {
  readonly bytes: number
  readonly tokens: number
  readonly truncated: boolean
  readonly visible: boolean
  /** Not visible, but the excerpt names a way to it that one more call takes. */
  readonly reachable: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CaseRow {
  readonly id: string
  readonly title: string
  readonly kind: "bash" | "read"
  readonly source: string
  readonly rawBytes: number
  readonly rawLines: number
  readonly needle: string
  readonly needleAt: string
  /** Why toolcap's excerpt neither shows nor points to the needle, when it does not. */
  readonly toolcapMiss?: string
  /** One cell per policy, in `Results.policies` order. */
  readonly cells: ReadonlyArray<Cell>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Results {
  readonly policies: ReadonlyArray<string>
  readonly rows: ReadonlyArray<CaseRow>
  readonly machine: string
  readonly peers: ReadonlyArray<PeerPolicy>
  readonly toolcapModel: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PolicyTotals {
  readonly policy: string
  readonly bytes: number
  readonly tokens: number
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
    return {
      policy,
      bytes: cells.reduce((sum, cell) => sum + cell.bytes, 0),
      tokens: cells.reduce((sum, cell) => sum + cell.tokens, 0),
      visible: cells.filter((cell) => cell.visible).length,
      reachable: cells.filter((cell) => cell.reachable).length,
      cut: cells.filter((cell) => cell.truncated).length
    }
  })

const kb = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} KB`
const thousands = (n: number): string => n.toLocaleString("en-US")
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
      "context spent (tokens)",
      "context spent (bytes)",
      "needles seen",
      "one more call",
      "seen or one call away"
    ],
    totals(results).map((t) => [
      t.policy,
      thousands(t.tokens),
      kb(t.bytes),
      `${t.visible} / ${n}`,
      `${t.reachable} / ${n}`,
      `**${t.visible + t.reachable} / ${n}**`
    ])
  )
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
      `\`${row.id}\``,
      row.source,
      `${kb(row.rawBytes)}, ${thousands(row.rawLines)} ${row.rawLines === 1 ? "line" : "lines"}`,
      row.needle,
      row.needleAt
    ])
  )
  const matrix = table(
    ["case", ...results.policies],
    results.rows.map((row) => [
      `\`${row.id}\``,
      ...row.cells.map(
        (cell) =>
          `${mark(cell)} · ${tokensShort(cell.tokens)} tok · ${kb(cell.bytes)}${cell.truncated ? "" : " (whole)"}`
      )
    ])
  )
  const lost = results.rows.flatMap((row) =>
    row.toolcapMiss === undefined ? [] : [`- \`${row.id}\`: ${row.toolcapMiss}`]
  )
  const method = [
    `- **toolcap**: the real tools of this repository with their default budgets, in a temp workspace with a real data dir. ${results.toolcapModel.join(" ")}`,
    ...results.peers.map((peer) => `- **${peer.name}**: ${peer.model} Numbers from ${peer.source}`)
  ].join("\n")
  return [
    "## Context health",
    "",
    `How much of an agent's context each tool-output policy spends on ${n} real outputs, and whether the one line the agent needs (the needle) reaches it — or is one more call away. toolcap runs its real Read and Bash tools; the other hosts' policies are modelled from their documented numbers (method below). Generated by \`pnpm bench:context\`; nothing in this section is typed by hand.`,
    "",
    `![context spent and needles per policy](${chartFile})`,
    "",
    summaryTable(results),
    "",
    `Tokens are estimated with \`@toolcap/checkpoint\`'s default \`TokenEstimator\` (one pass, a fixed weight per character class, tuned against the o200k and cl100k tokenizers) for every policy alike. "One more call" counts needles that were not seen but that the excerpt names a way to in one call: a saved file that really holds the needle (a Grep of it finds it), or — for a file toolcap's Read cut — the file itself, whose path the call named and whose notice says how to page on with an offset, when a Read at the needle's line really shows it. Both sides are credited alike: the needle is in a copy the excerpt points to and one call with a location (a Grep pattern, a line offset) brings it.`,
    "",
    "### Cases",
    "",
    caseTable,
    "",
    "### Every case through every policy",
    "",
    "✅ seen: the needle's line is in what reaches the model; ↪ 1 call: not seen, one more call reaches it; ❌ lost: neither. Then the estimated tokens and the bytes that reach the model; `(whole)`: the policy passed the output uncut.",
    "",
    matrix,
    "",
    "### Where toolcap lost the needle",
    "",
    lost.length === 0 ? "Nowhere: every needle was seen or one call away." : lost.join("\n"),
    "",
    "### Method",
    "",
    "Each case is produced on this machine at bench time: the generated projects are compiled and tested by the real compilers and runners, git, find and grep print their real output, and files are read as they are. A Bash case runs once, through toolcap's Bash tool; the chunks its streams emitted are the raw output every peer policy receives (stdout, then stderr). A file case is read by toolcap's Read tool (default window, no offset); the peers receive the file's whole text, as their shell or read tool would return it before their output policy applies. The needle is located in the raw output by the rule in the table; it counts as seen when the text reaching the model holds it as a whole line (for a line longer than 500 characters, the match with 40 characters either side).",
    "",
    method,
    "",
    "Peer policies are plain functions in `bench/context/src/Policies.ts`, their laws (bounded output, head and tail shares, a marker exactly when cut) property-tested in `bench/context/test/`. Only the documented truncation is modelled: a host's other measures (summarising, masking old results, its own Read tool's limits) are not.",
    "",
    `Machine: ${results.machine}.`
  ].join("\n")
}

const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * The chart: context spent per policy (left) and needles seen / one call away / lost (right).
 *
 * @since 0.1.0
 * @category constructors
 */
export const chart = (results: Results): string => {
  const rows = totals(results)
  const n = results.rows.length
  const width = 880
  const top = 64
  const rowHeight = 34
  const height = top + rows.length * rowHeight + 56
  const labelWidth = 120
  const leftX = labelWidth + 10
  const leftWidth = 290
  // room for the largest figure after the longest bar
  const rightX = leftX + leftWidth + 90
  const rightWidth = width - rightX - 20
  const maxTokens = Math.max(...rows.map((r) => r.tokens), 1)
  const colours = { spent: "#5b6c8f", seen: "#2e8b57", call: "#9fd3b4", lost: "#d9d9d9", toolcap: "#1f4e9c" }
  const parts: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${leftX}" y="24" font-size="15" font-weight="bold">Context spent (estimated tokens)</text>`,
    `<text x="${leftX}" y="44" fill="#555">${n} real outputs · shorter is better</text>`,
    `<text x="${rightX}" y="24" font-size="15" font-weight="bold">Needles (of ${n})</text>`,
    `<text x="${rightX}" y="44" fill="#555">seen · one more call · lost</text>`
  ]
  rows.forEach((row, i) => {
    const y = top + i * rowHeight
    const isToolcap = row.policy === "toolcap"
    parts.push(
      `<text x="${labelWidth}" y="${y + 17}" text-anchor="end"${isToolcap ? ' font-weight="bold"' : ""}>${escapeXml(row.policy)}</text>`
    )
    const spentWidth = Math.max((row.tokens / maxTokens) * leftWidth, 1)
    parts.push(
      `<rect x="${leftX}" y="${y + 4}" width="${spentWidth.toFixed(1)}" height="18" fill="${isToolcap ? colours.toolcap : colours.spent}"/>`,
      `<text x="${(leftX + spentWidth + 6).toFixed(1)}" y="${y + 17}">${thousands(row.tokens)}</text>`
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
    [colours.seen, "needle seen in the excerpt"],
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
