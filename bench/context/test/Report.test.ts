// The report from given figures: the four outcome counts, the headline score and the tokens add
// up per policy, the summary quotes them, the section has every case (with its call, why and
// follow-up), a grid cell for every policy on every case, every policy's version and sources, the
// outcome rule once and the tokenizer named, and the chart draws one row per policy with bars in
// proportion to the figures.
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { peers } from "../src/Policies.js"
import { FOLLOW_UP_CALL_TOKENS, OUTCOME_RULE } from "../src/Reach.js"
import {
  chart,
  gridCell,
  headline,
  type PolicyInfo,
  type Results,
  type Scored,
  section,
  summaryTable,
  totals
} from "../src/Report.js"

const policies: ReadonlyArray<PolicyInfo> = [
  { name: "toolcap spec", version: "this commit", toolcap: true, describe: ["spec budgets."], sources: [] },
  {
    name: "toolcap compact",
    version: "this commit",
    toolcap: true,
    describe: ["compact budgets."],
    sources: []
  },
  ...peers.map((peer) => ({
    name: peer.name,
    version: peer.version,
    toolcap: false,
    describe: [peer.shell.describe],
    sources: peer.sources
  }))
]

const cell: fc.Arbitrary<Scored> = fc
  .record({
    bytes: fc.integer({ min: 0, max: 200_000 }),
    tokens: fc.integer({ min: 1, max: 50_000 }),
    followUpTokens: fc.integer({ min: 0, max: 2_000 }),
    calls: fc.integer({ min: 1, max: 2 }),
    truncated: fc.boolean(),
    control: fc.boolean(),
    outcome: fc.constantFrom<Array<Scored["outcome"]>>("seen", "saved", "rerun", "lost")
  })
  .map(({ calls, followUpTokens, outcome, ...rest }) =>
    outcome === "seen"
      ? { ...rest, outcome, followUpTokens: 0, calls: 0 }
      : { ...rest, outcome, followUpTokens, calls }
  )

const results: fc.Arbitrary<Results> = fc
  .array(fc.array(cell, { minLength: policies.length, maxLength: policies.length }), {
    minLength: 1,
    maxLength: 45
  })
  .map((rows) => ({
    policies,
    modelText: [{ call: "Read `a.ts`", json: 120, plain: 100, numbered: 110 }],
    toolcapModelText: "JSON",
    tokenizer: "the test tokenizer",
    sizeRule: "the size rule.",
    machine: "test machine",
    rows: rows.map((cells, i) => ({
      id: `case-${i}`,
      title: `case ${i}`,
      kind: i % 2 === 0 ? ("bash" as const) : ("read" as const),
      source: `Bash: case ${i}`,
      why: `reason ${i}`,
      followUp: `\`term${i}\` (the task)`,
      ...(i % 3 === 0 ? { targetBytes: 2048 * (i + 1) } : {}),
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
    const n = input.rows.length
    const sums = totals(input)
    assert.deepStrictEqual(
      sums.map((t) => t.policy),
      policies.map((p) => p.name)
    )
    sums.forEach((t, p) => {
      const cells = input.rows.map((row) => row.cells[p]!)
      const of = (outcome: Scored["outcome"]) => cells.filter((c) => c.outcome === outcome).length
      assert.deepStrictEqual(
        [t.seen, t.saved, t.rerun, t.lost],
        [of("seen"), of("saved"), of("rerun"), of("lost")]
      )
      assert.strictEqual(t.seen + t.saved + t.rerun + t.lost, n)
      assert.strictEqual(t.score, t.seen + (t.saved + t.rerun) / 2)
      assert.strictEqual(
        t.tokens,
        cells.reduce((sum, c) => sum + c.tokens, 0)
      )
      const spent = cells.reduce(
        (sum, c) => sum + c.tokens + c.followUpTokens + c.calls * FOLLOW_UP_CALL_TOKENS,
        0
      )
      assert.strictEqual(t.spent, spent)
      const reached = t.seen + t.saved + t.rerun
      assert.strictEqual(t.perNeedle, reached === 0 ? undefined : Math.round(spent / reached))
      assert.strictEqual(t.control, cells.filter((c) => c.control).length)
      assert.include(
        summaryTable(input),
        `| ${t.policy} | ${policies[p]!.version} | ${t.seen} / ${n} | ${t.saved} | ${t.rerun} | ${t.lost} | **${t.score}** |`
      )
    })
    const text = section(input, "chart.svg")
    for (const row of input.rows) {
      assert.include(text, `| \`${row.id}\` | ${row.source} | ${row.why} | ${row.followUp} |`)
      // the grid: one cell per policy, in policy order
      assert.include(text, `| \`${row.id}\` | ${row.cells.map(gridCell).join(" | ")} |`)
    }
    for (const peer of peers) {
      assert.include(text, `**${peer.name}** (${peer.version})`)
      for (const source of peer.sources) assert.include(text, source.from)
    }
    assert.strictEqual(text.split(OUTCOME_RULE).length, 2, "the rule is stated once")
    assert.include(text, "the test tokenizer")
    assert.include(text, "the size rule.")
    assert.include(text, "![context spent and needles per policy](chart.svg)")
  })

  it.prop("a grid cell names its outcome and what it cost", { c: cell }, ({ c }) => {
    const text = gridCell(c)
    const mark = { seen: "✅ seen", saved: "↪ saved", rerun: "🔁 re-run", lost: "❌ lost" }[c.outcome]
    assert.isTrue(text.startsWith(mark), text)
    assert.strictEqual(text.includes(" + "), c.calls > 0)
    assert.strictEqual(text.endsWith("␛"), c.control)
  })

  it.prop(
    "the headline counts a seen needle 1 and a reached one ½",
    { seen: fc.nat(50), reached: fc.nat(50) },
    ({ reached, seen }) => {
      assert.strictEqual(headline(seen, reached), seen + reached * 0.5)
    }
  )

  it.prop("the chart has a row per policy, bars in proportion", { input: results }, ({ input }) => {
    const svg = chart(input)
    assert.match(svg, /^<svg [^>]*>/)
    assert.isTrue(svg.trimEnd().endsWith("</svg>"))
    const sums = totals(input)
    const max = Math.max(...sums.map((t) => t.spent), 1)
    const widths = [...svg.matchAll(/<rect x="150" y="\d+" width="([\d.]+)" height="18"/g)].map((m) =>
      Number(m[1])
    )
    assert.strictEqual(widths.length, policies.length)
    widths.forEach((width, p) => assert.approximately(width, Math.max((sums[p]!.spent / max) * 290, 1), 0.06))
    // the needle bars: four segments a row, their widths in proportion to the four counts
    const unit = (900 - 530 - 20) / input.rows.length
    const segments = [
      ...svg.matchAll(
        /<rect x="[\d.]+" y="(\d+)" width="([\d.]+)" height="18" fill="#(2e8b57|9fd3b4|e3c16f|d9d9d9)"/g
      )
    ]
    assert.strictEqual(segments.length, 4 * policies.length)
    sums.forEach((t, p) =>
      [t.seen, t.saved, t.rerun, t.lost].forEach((n, k) =>
        assert.approximately(Number(segments[4 * p + k]![2]), n * unit, 0.06)
      )
    )
    for (const policy of policies) assert.include(svg, `>${policy.name}</text>`)
  })
})
