import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { vi } from "vitest"
import {
  BENCH_PREFIX,
  parseBenchLines,
  record,
  reportFigure,
  reportReliability,
  summariseVerdicts,
  verdictCounts
} from "../src/index.js"

const positive = fc.double({ min: 0.001, max: 1e6, noNaN: true })

describe("bench figures", () => {
  it.prop(
    "met is the ratio against the target",
    [positive, positive, positive],
    ([figure, baseline, bound]) => {
      const r = record({
        issue: 9,
        measure: "m",
        figure,
        baseline,
        unit: "ms",
        target: { op: "<=", value: bound }
      })
      assert.approximately(r.ratio!, figure / baseline, 1e-3 * Math.max(1, figure / baseline))
      assert.strictEqual(r.met, figure / baseline <= bound)
      assert.strictEqual(r.target, `ratio <= ${bound}`)
    }
  )

  it.prop("an absolute bound compares the figure", [positive, positive], ([figure, bound]) => {
    const r = record({
      issue: 9,
      measure: "rss",
      figure,
      unit: "MB",
      target: { op: "<=", value: bound, of: "figure" }
    })
    assert.strictEqual(r.met, figure <= bound)
    assert.isNull(r.ratio)
    assert.isNull(r.baseline)
  })

  it("a bench's own ratio wins over figure / baseline, and a missing ratio is never met", () => {
    expect(
      record({
        issue: 10,
        measure: "m",
        figure: 4,
        baseline: 1,
        ratio: 1.1,
        unit: "ms",
        target: { op: "<=", value: 2 }
      }).met
    ).toBe(true)
    expect(
      record({ issue: 10, measure: "m", figure: 4, unit: "ms", target: { op: "<=", value: 2 } }).met
    ).toBe(false)
  })

  it.prop(
    "a printed line parses back to its record",
    [positive, positive, fc.string()],
    ([figure, baseline, measure]) => {
      const lines: Array<string> = []
      const spy = vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line))
      try {
        reportFigure({ issue: 13, measure, figure, baseline, unit: "ms", target: { op: ">=", value: 1 } })
      } finally {
        spy.mockRestore()
      }
      assert.isTrue(lines[0]!.startsWith(BENCH_PREFIX))
      const parsed = parseBenchLines(["noise", ...lines, "BENCH {not json"].join("\n"))
      assert.lengthOf(parsed, 1)
      assert.strictEqual(parsed[0]!.measure, measure)
      assert.strictEqual(
        parsed[0]!.met,
        record({ issue: 13, measure, figure, baseline, unit: "ms", target: { op: ">=", value: 1 } }).met
      )
    }
  )
})

describe("reliability counts", () => {
  it("prints the count line and writes the JSON where TOOLCAP_RELIABILITY_OUT points", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-report-"))
    const before = process.env["TOOLCAP_RELIABILITY_OUT"]
    process.env["TOOLCAP_RELIABILITY_OUT"] = dir
    const lines: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line))
    try {
      reportReliability("load / x", { inputs: 5, crashes: 0 }, "small")
      expect(lines[0]).toMatch(/^reliability load \/ x: inputs 5, crashes 0 \((default|long) mode: small\)$/)
      const written = JSON.parse(fs.readFileSync(path.join(dir, "load-x.json"), "utf8"))
      expect(written.counts).toEqual({ inputs: 5, crashes: 0 })
    } finally {
      spy.mockRestore()
      if (before === undefined) delete process.env["TOOLCAP_RELIABILITY_OUT"]
      else process.env["TOOLCAP_RELIABILITY_OUT"] = before
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("verdicts", () => {
  it("are counted per kind and summarised per distinct fault and outcome", () => {
    const judged = [
      { fault: "a", verdict: "correct", detail: "" },
      { fault: "a", verdict: "correct", detail: "" },
      { fault: "b", verdict: "typed error", detail: "TOOL_NOT_FOUND" },
      { fault: "c", verdict: "hang", detail: "no answer" }
    ] as const
    expect(verdictCounts(judged)).toEqual({
      inputs: 4,
      "correct results": 2,
      "typed errors": 1,
      "wrong results": 0,
      crashes: 0,
      hangs: 1
    })
    expect(summariseVerdicts(judged)).toBe("a: correct ×2; b: typed error (TOOL_NOT_FOUND); c: hang")
  })
})
