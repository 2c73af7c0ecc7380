import { assert, describe, it } from "@effect/vitest"
import { record } from "../src/index.js"
import { AREAS, type Collected, figureRows, headline } from "../src/markdown.js"

const figure = (issue: number, measure: string, ratio: number) =>
  record({ issue, measure, figure: ratio, baseline: 1, unit: "ms", target: { op: "<=", value: 2 } })

const collected = (records: ReadonlyArray<ReturnType<typeof figure>>): Collected => ({
  benches: [{ file: "a.bench.ts", records, exit: null, seconds: 1 }],
  reliability: [],
  reliabilityRun: "not run",
  machine: "test"
})

describe("bench report markdown", () => {
  it("issues that share an area are one headline row, their targets counted together", () => {
    assert.strictEqual(AREAS[4], AREAS[10])
    const text = headline(
      collected([
        figure(10, "grep", 1.5),
        figure(9, "echo", 3),
        figure(4, "read", 1),
        figure(10, "glob", 2.5)
      ])
    )
    const rows = text.split("\n").filter((line) => line.startsWith(`| ${AREAS[10]} `))
    assert.deepStrictEqual(
      rows.map((line) =>
        line
          .split("|")
          .map((c) => c.trim())
          .slice(1, 5)
      ),
      [[AREAS[10]!, "3", "2", "1"]]
    )
    assert.include(text, "**2 of 4** targets met")
  })

  it("figures are ordered by area, then issue, then as printed", () => {
    const rows = figureRows(
      collected([figure(10, "grep", 1), figure(9, "echo", 1), figure(4, "read", 1), figure(10, "glob", 1)])
    )
    assert.deepStrictEqual(
      rows.map((r) => r.record.measure),
      ["read", "grep", "glob", "echo"]
    )
  })
})
