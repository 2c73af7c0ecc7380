// The report from given figures: totals add up per policy, the summary quotes them, the section
// has every case and every policy's method, and the chart draws one row per policy with bars in
// proportion to the figures.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { peers } from "../src/Policies.js"
import { type Cell, chart, type Results, section, summaryTable, totals } from "../src/Report.js"

const policies = ["toolcap", ...peers.map((peer) => peer.name)]

const cell: fc.Arbitrary<Cell> = fc
  .record({
    bytes: fc.integer({ min: 0, max: 200_000 }),
    tokens: fc.integer({ min: 0, max: 50_000 }),
    truncated: fc.boolean(),
    outcome: fc.constantFrom("seen", "call", "lost")
  })
  .map(({ bytes, outcome, tokens, truncated }) => ({
    bytes,
    tokens,
    truncated,
    visible: outcome === "seen",
    reachable: outcome === "call"
  }))

const results: fc.Arbitrary<Results> = fc
  .array(fc.array(cell, { minLength: policies.length, maxLength: policies.length }), {
    minLength: 1,
    maxLength: 14
  })
  .map((rows) => ({
    policies,
    peers,
    toolcapModel: ["toolcap's budgets."],
    machine: "test machine",
    rows: rows.map((cells, i) => ({
      id: `case-${i}`,
      title: `case ${i}`,
      kind: i % 2 === 0 ? "bash" : "read",
      source: `Bash: case ${i}`,
      rawBytes: 1000 * i,
      rawLines: i,
      needle: "the line",
      needleAt: `stdout line 1 of ${i + 1}`,
      cells
    }))
  }))

describe("report", () => {
  it.prop("totals add up, and the summary and the section quote them", { input: results }, ({ input }) => {
    const sums = totals(input)
    assert.deepStrictEqual(
      sums.map((t) => t.policy),
      policies
    )
    sums.forEach((t, p) => {
      const cells = input.rows.map((row) => row.cells[p]!)
      assert.strictEqual(
        t.tokens,
        cells.reduce((sum, c) => sum + c.tokens, 0)
      )
      assert.strictEqual(t.visible, cells.filter((c) => c.visible).length)
      assert.strictEqual(t.reachable, cells.filter((c) => c.reachable).length)
      assert.include(summaryTable(input), `| ${t.policy} | ${t.tokens.toLocaleString("en-US")} |`)
    })
    const text = section(input, "chart.svg")
    for (const row of input.rows) assert.include(text, `\`${row.id}\``)
    for (const peer of peers) assert.include(text, peer.source)
    assert.include(text, "![context spent and needles per policy](chart.svg)")
  })

  it.prop("the chart has a row per policy, bars in proportion", { input: results }, ({ input }) => {
    const svg = chart(input)
    assert.match(svg, /^<svg [^>]*>/)
    assert.isTrue(svg.trimEnd().endsWith("</svg>"))
    const sums = totals(input)
    const max = Math.max(...sums.map((t) => t.tokens), 1)
    const widths = [...svg.matchAll(/<rect x="130" y="\d+" width="([\d.]+)" height="18"/g)].map((m) =>
      Number(m[1])
    )
    assert.strictEqual(widths.length, policies.length)
    widths.forEach((width, p) =>
      assert.approximately(width, Math.max((sums[p]!.tokens / max) * 290, 1), 0.06)
    )
    for (const policy of policies) assert.include(svg, `>${policy}</text>`)
  })
})
