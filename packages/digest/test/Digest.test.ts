// The digest's behaviours one by one (rules G1–G7): the fold marker's exact text, the never-worse
// rules (under 4 KB, under 20% saved), a failed command's last lines, a failure deep in a flood
// kept within the capture budget, must-keep lines the budget took counted, the header's counts.
import { assert, describe, it } from "@effect/vitest"
import { Digest } from "@toolcap/digest"

const roomy = { maxBytes: 56 * 1024, maxLines: 1000, headShare: 0.5 }
const text = (lines: ReadonlyArray<string>) => lines.join("\n") + "\n"
const body = (outcome: Digest.Outcome) => outcome.shown.map((s) => s.text)

describe("Digest", () => {
  it("folds a run of near-repeats in place, first and last kept, naming the raw lines between", () => {
    const lines = [
      "start",
      ...Array.from(
        { length: 300 },
        (_, i) =>
          `fetched ${i + 1} of 300 at 2026-12-07T02:${String(i % 60).padStart(2, "0")}:00Z (${i * 7 + 3} ms) id 0x${(i * 4099).toString(16)}`
      ),
      "done"
    ]
    const outcome = Digest.ofText(text(lines), { failed: false, budget: roomy })
    assert.isTrue(outcome.changed)
    assert.deepStrictEqual(body(outcome), [
      "start",
      lines[1],
      "[… 298 more lines like these, raw lines 3–300 …]",
      lines[300],
      "done"
    ])
    assert.strictEqual(outcome.counts.repeat, 298)
    const header = outcome.render({ bytes: 20_000, lines: 302, path: "/s/bash-stdout-1.log" }).split("\n")[0]
    assert.strictEqual(
      header,
      "[digest: showing 4 of 302 lines; folded 298 repeated lines; raw 19.53KB, 302 lines; raw copy at /s/bash-stdout-1.log — Read it with offset/limit at the raw lines named below]"
    )
  })

  it("lines that differ in more than numbers, ids, times and durations do not fold", () => {
    const lines = Array.from(
      { length: 200 },
      (_, i) => `${i % 2 === 0 ? "fetched" : "failed to fetch"} item ${i}`
    )
    const outcome = Digest.ofText(text(lines), { failed: false, budget: roomy })
    assert.strictEqual(outcome.counts.repeat, 0)
  })

  it("output under 4 KB is returned unchanged", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `row ${i}`)
    const outcome = Digest.ofText(text(lines), { failed: false, budget: roomy })
    assert.isTrue(Buffer.byteLength(text(lines)) < Digest.minBytes)
    assert.isFalse(outcome.changed)
    assert.deepStrictEqual(body(outcome), lines)
  })

  it("a fold that saves under 20% of the bytes is not applied", () => {
    // 400 distinct lines and a run of 40 near-repeats: about 10% of the bytes would fold
    const distinct = Array.from(
      { length: 400 },
      (_, i) => `${["alpha", "beta", "gamma", "delta"][i % 4]} ${"x".repeat(i % 7)} line`
    )
    const repeats = Array.from({ length: 40 }, (_, i) => `repeat ${i}`)
    const outcome = Digest.ofText(text([...distinct, ...repeats]), { failed: false, budget: roomy })
    assert.isFalse(outcome.folded)
    assert.isFalse(outcome.changed)
    assert.strictEqual(outcome.kept, 440)
  })

  it("a failed command keeps its last 20 lines whatever they are", () => {
    const lines = Array.from({ length: 500 }, (_, i) => ` ✓ case ${i} passes`)
    const failed = Digest.ofText(text(lines), { failed: true, budget: roomy })
    const kept = failed.shown.flatMap((s) => (s.type === "line" ? [s.raw] : []))
    assert.deepStrictEqual(
      kept,
      Array.from({ length: 20 }, (_, i) => 481 + i)
    )
    const passed = Digest.ofText(text(lines), { failed: false, budget: roomy })
    assert.strictEqual(passed.kept, 0)
    assert.strictEqual(passed.counts.pass, 500)
  })

  it("a failure 5 MB into a 10 MB flood is kept and counted, with memory within the capture budget", () => {
    const capture = { retainBytes: 512 * 1024, retainLines: 200_000 }
    const digester = Digest.make(capture)
    let raw = 0
    let bytes = 0
    const failureAt = 5 * 1024 * 1024
    let failureRaw = 0
    while (bytes < 10 * 1024 * 1024) {
      raw++
      // distinct lines: nothing folds, so only the budget (must-keep first) can keep the failure
      const line =
        failureRaw === 0 && bytes >= failureAt
          ? ((failureRaw = raw), "Error: connection reset by peer while writing chunk")
          : `${raw.toString(36)} ${"abcdefghijklmnopqrstuvwxyz".slice(raw % 26)} payload`
      digester.push(line, raw)
      bytes += line.length + 1
    }
    const outcome = digester.finish({
      failed: true,
      budget: { maxBytes: 10 * 1024, maxLines: 250, headShare: 0.2 }
    })
    assert.isTrue(outcome.changed)
    const failure = outcome.shown.find((s) => s.type === "line" && s.raw === failureRaw)
    assert.isDefined(failure)
    assert.strictEqual(outcome.kept + outcome.counts.budget, raw)
    const rendered = outcome.render({ bytes, lines: raw })
    assert.isAtMost(Buffer.byteLength(rendered), 10 * 1024)
    assert.include(
      rendered.split("\n")[0]!,
      `showing ${outcome.kept} of ${raw.toLocaleString("en-US")} lines`
    )
  })

  it("must-keep lines the budget still took are counted in the header", () => {
    const lines = Array.from(
      { length: 400 },
      (_, i) => `src/mod${i}.ts:${i + 1}:5: error: unexpected token number ${i}`
    )
    const outcome = Digest.ofText(text(lines), {
      failed: true,
      budget: { maxBytes: 4096, maxLines: 100, headShare: 0.5 }
    })
    assert.isAbove(outcome.mustKeepOmitted, 0)
    assert.strictEqual(outcome.kept + outcome.mustKeepOmitted, 400)
    assert.include(
      outcome.render({ bytes: 1, lines: 400 }).split("\n")[0]!,
      `${outcome.mustKeepOmitted} of them must-keep`
    )
  })

  it("repeats of one warning code fold beyond the first and the last, counted per code", () => {
    const lines = [
      ...Array.from(
        { length: 120 },
        (_, i) => `  ${i + 1}:7  warning  'v${i}' is assigned a value but never used  no-unused-vars`
      ),
      ...Array.from(
        { length: 60 },
        (_, i) => `  ${i + 200}:1  warning  Unexpected console statement  no-console`
      ),
      "  300:1  error  Parsing error: Unexpected token  ",
      "✖ 181 problems (1 error, 180 warnings)"
    ]
    const outcome = Digest.ofText(text(lines), { failed: false, budget: roomy })
    assert.isTrue(outcome.folded)
    assert.deepStrictEqual(outcome.warningCodes, [
      ["no-unused-vars", 118],
      ["no-console", 58]
    ])
    const shown = body(outcome)
    assert.include(shown, lines[0])
    assert.include(shown, lines[119])
    assert.include(shown, lines[120])
    assert.include(shown, lines[179])
    assert.include(shown, lines[180])
    assert.include(shown, lines[181])
    assert.include(
      outcome.render({ bytes: 1, lines: 182 }).split("\n")[0]!,
      "(no-unused-vars 118, no-console 58)"
    )
  })

  it("a line longer than the digest can hold is shown by its start and counted", () => {
    const digester = Digest.make({ retainBytes: 64 * 1024, retainLines: 1000 })
    const long = "y".repeat(100_000)
    digester.push(long, 1)
    for (let i = 0; i < 300; i++) digester.push(`tick ${i}`, i + 2)
    const outcome = digester.finish({ failed: false, budget: roomy })
    assert.strictEqual(outcome.clippedLines, 1)
    const first = outcome.shown[0]!
    assert.isTrue(first.type === "line" && long.startsWith(first.text) && first.text.length < long.length)
    assert.include(outcome.render({ bytes: 1, lines: 1 }).split("\n")[0]!, "1 line too long to show whole")
  })
})
