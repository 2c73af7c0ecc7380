// The laws of the digest (rules G8), on generated outputs mixing every shape the recognisers know
// (passing tests, progress frames, near-repeats, warnings with codes, errors with stack lines,
// diffs, logs, summaries) with free text, under budgets from tight to loose.
import { assert, describe, it } from "@effect/vitest"
import { Digest, Notice, Shape } from "@toolcap/digest"
import { FastCheck as fc } from "effect"

const numRuns = { fastCheck: { numRuns: 300 } }

const n = fc.integer({ min: 0, max: 99_999 })
const word = fc.constantFrom("alpha", "beta", "gamma", "delta", "parse", "render", "load", "über", "日本")

/** One line of a generated output, by shape. */
const shapedLine: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(word, n).map(([w, k]) => ` ✓ test/${w}.test.ts > ${w} case ${k} ${k % 90}ms`),
  fc.tuple(n, word).map(([k, w]) => `ok ${k} - ${w}`),
  fc.constant("  ---"),
  fc.tuple(n).map(([k]) => `  duration_ms: ${k}.5`),
  fc.constant("  ..."),
  fc.tuple(n).map(([k]) => `Receiving objects:  ${k % 100}% (${k}/99999)`),
  fc.tuple(n).map(([k]) => `downloading chunk ${k} of 99999 (${k % 1000} ms)`),
  fc.tuple(n).map(([k]) => `downloading chunk ${k} of 99999 (${k % 1000} ms)`),
  fc
    .tuple(word, n)
    .map(([w, k]) => `  ${k % 50}:${k % 80}  warning  '${w}' is defined but never used  no-unused-vars`),
  fc.tuple(n).map(([k]) => `src/a.c:${k}:3: warning: unused variable 'x' [-Wunused-variable]`),
  fc.tuple(word, n).map(([w, k]) => `error: ${w} failed at step ${k}`),
  fc.tuple(word, n).map(([w, k]) => `src/${w}.ts(${k},5): error TS2322: Type 'string' is not assignable`),
  fc.tuple(word, n).map(([w, k]) => `    at ${w} (src/${w}.ts:${k}:7)`),
  fc.constant("Traceback (most recent call last):"),
  fc.constant("FAIL test/broken.test.ts"),
  fc.constant("npm ERR! code ENOENT"),
  fc.tuple(n).map(([k]) => `@@ -${k},7 +${k},8 @@ function f()`),
  fc.tuple(word).map(([w]) => `diff --git a/${w}.ts b/${w}.ts`),
  fc.tuple(word).map(([w]) => `+  const ${w} = 1`),
  fc.tuple(word).map(([w]) => `-  const ${w} = 2`),
  fc.tuple(n).map(([k]) => `commit ${k.toString(16).padStart(8, "a")}deadbeef (HEAD -> main)`),
  fc.constant("Merge: 1a2b3c4 5d6e7f8"),
  fc.tuple(n).map(([k]) => `Tests  1 failed | ${k} passed (${k + 1})`),
  fc.tuple(n).map(([k]) => `test result: FAILED. ${k} passed; 1 failed; 0 ignored`),
  fc.constant(""),
  fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, " ")),
  fc.tuple(word, n).map(([w, k]) => `${w} ${k}`)
)

/** Outputs with long runs: a line repeated (with its numbers varying) up to a few hundred times. */
const output: fc.Arbitrary<Array<string>> = fc
  .array(fc.tuple(shapedLine, fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 300 }))), {
    minLength: 0,
    maxLength: 60
  })
  .map((drawn) =>
    drawn.flatMap(([line, times]) =>
      Array.from({ length: times }, (_, i) =>
        times === 1 ? line : line.replace(/\d+/, (d) => String(Number(d) + i))
      )
    )
  )

const budgets = fc.record({
  maxBytes: fc.oneof(
    fc.integer({ min: 2048, max: 16 * 1024 }),
    fc.constant(56 * 1024),
    fc.constant(96 * 1024)
  ),
  maxLines: fc.oneof(fc.integer({ min: 10, max: 400 }), fc.constant(1000), fc.constant(4000)),
  headShare: fc.constantFrom(0, 0.2, 0.5, 1)
})

const retains = fc.record({
  retainBytes: fc.oneof(fc.integer({ min: 4096, max: 64 * 1024 }), fc.constant(512 * 1024)),
  retainLines: fc.oneof(fc.integer({ min: 40, max: 2000 }), fc.constant(200_000))
})

const digestOf = (lines: ReadonlyArray<string>, input: Parameters<typeof Digest.ofText>[1]) =>
  Digest.ofText(lines.length === 0 ? "" : lines.join("\n") + "\n", input)

const utf8 = (text: string): number => Buffer.byteLength(text, "utf8")

/** The must-keep lines of an output (raw numbers), judged the way the digest judges them. */
const mustKeepOf = (lines: ReadonlyArray<string>, failed: boolean): Array<number> => {
  const recogniser = Shape.make(Digest.tailLinesOnFailure)
  const must: Array<number> = []
  lines.forEach((line, index) => {
    const verdict = recogniser.judge(line, (k) =>
      index + k < lines.length && k <= Digest.tailLinesOnFailure ? lines[index + k] : undefined
    )
    const inTail = failed && index >= lines.length - Digest.tailLinesOnFailure
    if (Shape.isMustKeep(verdict.kind) || inTail) must.push(index + 1)
  })
  return must
}

const input = fc.record({ lines: output, budget: budgets, retain: retains, failed: fc.boolean() })

describe("Digest laws", () => {
  it.prop(
    "digest lines minus markers are an in-order subsequence of the rendered lines, each at its raw line",
    { input },
    ({ input: { budget, failed, lines, retain } }) => {
      const outcome = digestOf(lines, { failed, budget, ...retain })
      let previous = 0
      for (const shown of outcome.shown) {
        if (shown.type === "gap") {
          assert.isTrue(shown.firstRaw > previous, "a gap starts after the line before it")
          previous = shown.lastRaw
          continue
        }
        assert.isTrue(shown.raw > previous, "lines stay in order")
        assert.strictEqual(shown.text, lines[shown.raw - 1]!.slice(0, shown.text.length))
        previous = shown.raw
      }
      // and the text: every non-marker line of the body is the next rendered line that matches it
      const body = outcome.render({ bytes: 0, lines: lines.length }).split("\n").slice(1)
      let at = 0
      for (const line of body) {
        if (outcome.shown.find((s) => s.type === "gap" && s.text === line) !== undefined) continue
        while (at < lines.length && lines[at] !== line) at++
        assert.isBelow(at, lines.length, `"${line}" is a rendered line, in order`)
        at++
      }
    },
    numRuns
  )

  it.prop(
    "kept + folded = rendered lines, per kind, as the header and the markers say",
    { input },
    ({ input: { budget, failed, lines, retain } }) => {
      const outcome = digestOf(lines, { failed, budget, ...retain })
      const folded = Notice.foldedKinds.reduce((sum, kind) => sum + outcome.counts[kind], 0)
      assert.strictEqual(outcome.kept + folded, lines.length)
      assert.strictEqual(outcome.rendered.lines, lines.length)
      // the markers' counts add up to the totals, and each gap stands for exactly the lines between
      const fromGaps = Notice.noCounts()
      let shownLines = 0
      let previous = 0
      outcome.shown.forEach((shown, index) => {
        if (shown.type === "line") {
          shownLines++
          previous = shown.raw
          return
        }
        for (const kind of Notice.foldedKinds) fromGaps[kind] += shown.counts[kind]
        const next = outcome.shown[index + 1]
        const nextRaw =
          next === undefined ? lines.length + 1 : next.type === "line" ? next.raw : next.firstRaw
        const inGap = Notice.foldedKinds.reduce((sum, kind) => sum + shown.counts[kind], 0)
        assert.strictEqual(
          inGap,
          nextRaw - previous - 1,
          "a gap stands for every line between its neighbours"
        )
        assert.strictEqual(shown.firstRaw, previous + 1)
        assert.strictEqual(shown.lastRaw, nextRaw - 1)
      })
      assert.strictEqual(shownLines, outcome.kept)
      assert.deepStrictEqual(fromGaps, outcome.counts)
      // the header states the same numbers
      const header = outcome.render({ bytes: 0, lines: lines.length }).split("\n")[0]!
      if (outcome.changed) {
        assert.include(
          header,
          `showing ${outcome.kept.toLocaleString("en-US")} of ${lines.length.toLocaleString("en-US")} line`
        )
        for (const kind of Notice.foldedKinds) {
          const count = outcome.counts[kind]
          if (count > 0) assert.match(header, new RegExp(`\\b${count.toLocaleString("en-US")} [a-z-]+`))
        }
      }
    },
    numRuns
  )

  it.prop(
    "every must-keep line is present or counted",
    { input },
    ({ input: { budget, failed, lines, retain } }) => {
      const outcome = digestOf(lines, { failed, budget, ...retain })
      const shown = new Set(outcome.shown.flatMap((s) => (s.type === "line" ? [s.raw] : [])))
      const must = mustKeepOf(lines, failed)
      const missing = must.filter((raw) => !shown.has(raw))
      assert.strictEqual(missing.length, outcome.mustKeepOmitted, "each must-keep line not shown is counted")
      if (outcome.mustKeepOmitted > 0)
        assert.include(
          outcome.render({ bytes: 0, lines: 0 }),
          `${outcome.mustKeepOmitted.toLocaleString("en-US")} of them must-keep`
        )
      // an independent check on the plainest error lines: shown, or counted among the omitted
      const errors = lines.flatMap((line, i) =>
        /^(?:error:|Traceback|FAIL |npm ERR!)/.test(line) ? [i + 1] : []
      )
      assert.isAtMost(errors.filter((raw) => !shown.has(raw)).length, outcome.mustKeepOmitted)
    },
    numRuns
  )

  it.prop(
    "the same input gives the same bytes",
    { input },
    ({ input: { budget, failed, lines, retain } }) => {
      const raw = { bytes: 1234, lines: lines.length, path: "/scratch/bash-stdout-1.log" }
      const first = digestOf(lines, { failed, budget, ...retain }).render(raw)
      const second = digestOf([...lines], { failed, budget, ...retain }).render(raw)
      assert.strictEqual(first, second)
    },
    numRuns
  )

  it.prop(
    "the digest is never longer than the rendered text plus its header, and fits the budget",
    { input },
    ({ input: { budget, failed, lines, retain } }) => {
      const outcome = digestOf(lines, { failed, budget, ...retain })
      const [header, ...body] = outcome.render({ bytes: 0, lines: lines.length }).split("\n")
      const renderedBytes = lines.reduce((sum, line) => sum + utf8(line) + 1, 0)
      const bodyBytes = body.reduce((sum, line) => sum + utf8(line) + 1, 0)
      assert.isAtMost(bodyBytes, renderedBytes, `header: ${header}`)
      assert.isAtMost(body.length, Math.max(lines.length, 1))
      // a digest that changed the text fits the budget; one that did not leaves the cut to the caller
      if (outcome.changed) {
        assert.isAtMost(bodyBytes, budget.maxBytes)
        assert.isAtMost(body.length + 1, budget.maxLines)
      } else assert.deepStrictEqual(body, lines)
    },
    numRuns
  )
})
