// The report from given figures: totals add up per policy, the summary quotes them, the targets
// are judged on them as the done-when states, the section has every case, every policy's version
// and sources and the one-more-call rule once, and the chart draws one row per policy with bars in
// proportion to the figures.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { peers } from "../src/Policies.js"
import { ONE_MORE_CALL_RULE } from "../src/Reach.js"
import {
  type Cell,
  chart,
  COMPACT,
  COMPACT_TOKEN_FACTOR,
  type PolicyInfo,
  type Results,
  section,
  SPEC,
  summaryTable,
  targets,
  totals
} from "../src/Report.js"

const policies: ReadonlyArray<PolicyInfo> = [
  { name: SPEC, version: "this commit", toolcap: true, describe: ["spec budgets."], sources: [] },
  { name: COMPACT, version: "this commit", toolcap: true, describe: ["compact budgets."], sources: [] },
  ...peers.map((peer) => ({
    name: peer.name,
    version: peer.version,
    toolcap: false,
    describe: [peer.shell.describe],
    sources: peer.sources
  }))
]

const cell: fc.Arbitrary<Cell> = fc
  .record({
    bytes: fc.integer({ min: 0, max: 200_000 }),
    tokens: fc.integer({ min: 1, max: 50_000 }),
    callTokens: fc.integer({ min: 0, max: 2_000 }),
    truncated: fc.boolean(),
    outcome: fc.constantFrom("seen", "call", "lost")
  })
  .map(({ bytes, callTokens, outcome, tokens, truncated }) => ({
    bytes,
    tokens,
    truncated,
    visible: outcome === "seen",
    reachable: outcome === "call",
    callTokens: outcome === "seen" ? 0 : callTokens
  }))

const results: fc.Arbitrary<Results> = fc
  .array(fc.array(cell, { minLength: policies.length, maxLength: policies.length }), {
    minLength: 1,
    maxLength: 22
  })
  .map((rows) => ({
    policies,
    modelText: [{ call: "Read `a.ts`", json: 120, plain: 100, numbered: 110 }],
    toolcapModelText: "JSON",
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
      misses: [],
      cells
    }))
  }))

describe("report", () => {
  it.prop("totals add up, and the summary and the section quote them", { input: results }, ({ input }) => {
    const sums = totals(input)
    assert.deepStrictEqual(
      sums.map((t) => t.policy),
      policies.map((p) => p.name)
    )
    sums.forEach((t, p) => {
      const cells = input.rows.map((row) => row.cells[p]!)
      assert.strictEqual(
        t.tokens,
        cells.reduce((sum, c) => sum + c.tokens, 0)
      )
      assert.strictEqual(
        t.tokensWithCall,
        cells.reduce((sum, c) => sum + c.tokens + c.callTokens, 0)
      )
      assert.strictEqual(t.visible, cells.filter((c) => c.visible).length)
      assert.strictEqual(t.reachable, cells.filter((c) => c.reachable).length)
      assert.include(
        summaryTable(input),
        `| ${t.policy} | ${policies[p]!.version} | ${t.visible} / ${input.rows.length} |`
      )
    })
    const text = section(input, "chart.svg")
    for (const row of input.rows) assert.include(text, `\`${row.id}\``)
    for (const peer of peers) {
      assert.include(text, `**${peer.name}** (${peer.version})`)
      for (const source of peer.sources) assert.include(text, source.from)
    }
    assert.strictEqual(text.split(ONE_MORE_CALL_RULE).length, 2, "the rule is stated once")
    assert.include(text, "![context spent and needles per policy](chart.svg)")
  })

  it.prop("the targets are judged as the done-when states them", { input: results }, ({ input }) => {
    const n = input.rows.length
    const sums = totals(input)
    const [spec, compact] = [sums[0]!, sums[1]!]
    const peerSums = sums.slice(2)
    const judged = targets(input)
    assert.strictEqual(judged[0]!.met, spec.visible + spec.reachable === n)
    assert.strictEqual(judged[1]!.met, compact.visible + compact.reachable === n)
    assert.strictEqual(judged[2]!.met, compact.visible >= Math.max(...peerSums.map((t) => t.visible)))
    // the cheapest peer reaching every needle, or the cheapest of those reaching the most
    const most = Math.max(...peerSums.map((t) => t.visible + t.reachable))
    const cheapest = Math.min(
      ...peerSums.filter((t) => t.visible + t.reachable === most).map((t) => t.tokensWithCall)
    )
    assert.strictEqual(judged[3]!.met, compact.tokensWithCall <= COMPACT_TOKEN_FACTOR * cheapest)
    assert.strictEqual(judged[3]!.measured.includes("no peer reaches every needle"), most < n)
    for (const target of judged) assert.strictEqual(target.why === "", target.met)
  })

  it.prop("the chart has a row per policy, bars in proportion", { input: results }, ({ input }) => {
    const svg = chart(input)
    assert.match(svg, /^<svg [^>]*>/)
    assert.isTrue(svg.trimEnd().endsWith("</svg>"))
    const sums = totals(input)
    const max = Math.max(...sums.map((t) => t.tokensWithCall), 1)
    const widths = [...svg.matchAll(/<rect x="150" y="\d+" width="([\d.]+)" height="18"/g)].map((m) =>
      Number(m[1])
    )
    assert.strictEqual(widths.length, policies.length)
    widths.forEach((width, p) =>
      assert.approximately(width, Math.max((sums[p]!.tokensWithCall / max) * 290, 1), 0.06)
    )
    for (const policy of policies) assert.include(svg, `>${policy.name}</text>`)
  })
})
