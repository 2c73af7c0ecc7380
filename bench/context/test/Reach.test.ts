// The outcome rule on real peer models and on a policy that shows nothing but a saved path: the
// follow-up is the case's search term and never the needle's pattern, a saved copy is searched
// when one is named and the command is re-run otherwise (its output through the same policy's
// shell), each follow-up is paid for, and the counts are a function of the outputs alone.
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { locate, type NeedleRule } from "../src/Needle.js"
import { type Location, matchingLines, type PeerPolicy, type View, whole } from "../src/Peer.js"
import { codex } from "../src/peers/codex.js"
import { peers } from "../src/Policies.js"
import {
  FOLLOW_UP_CALL_TOKENS,
  hasControl,
  type Outcome,
  peerRun,
  score,
  type Scored,
  spent
} from "../src/Reach.js"
import { type Results, totals } from "../src/Report.js"
import { combined, type RawOutput } from "../src/Text.js"

const SAVED = "/tmp/saved/case.txt"
const count = (text: string): number => text.length

/** What `grep -E -e <term>` of the merged streams prints: the re-run's raw output, made here in-process. */
const filtered = (raw: RawOutput, term: RegExp): RawOutput => {
  const lines = matchingLines(combined(raw), term).map((line) => `${line.text}\n`)
  return { stdout: lines.join(""), stderr: "", exitCode: lines.length === 0 ? 1 : 0 }
}

/** A shell cut that shows nothing but where the copy is. */
const savedPathOnly = (raw: RawOutput, savedPath: string): View => ({
  text: `output saved to ${savedPath}`,
  truncated: true,
  head: "",
  tail: "",
  marker: `output saved to ${savedPath}`,
  location: { kind: "copy", path: savedPath, content: combined(raw) }
})

/**
 * A host whose shell shows nothing but the path of a saved copy, and whose search tool refuses the
 * needle's own pattern (the test fails when the rule asks for it) and records what it was asked.
 */
const pathOnly = (needlePattern: RegExp, asked: Array<string>): PeerPolicy => {
  return {
    name: "path only",
    version: "test",
    shell: { describe: "the saved path only", apply: savedPathOnly },
    read: { describe: "whole", apply: (file: Location) => whole(file.content) },
    search: {
      describe: "every matching line",
      apply: (location, pattern) => {
        assert.notStrictEqual(
          pattern.source,
          needlePattern.source,
          "the rule searched with the needle's pattern"
        )
        asked.push(pattern.source)
        const shown = matchingLines(location.content, pattern).map((line) => line.text)
        return { text: shown.join("\n"), shown }
      }
    },
    sources: []
  }
}

/** The same host without the saved copy: it shows nothing and names no place. */
const nothing: PeerPolicy = {
  ...pathOnly(/$^/, []),
  name: "nothing",
  shell: {
    describe: "nothing",
    apply: () => ({ text: "(output hidden)", truncated: true, head: "", tail: "" })
  }
}

const needleRule: NeedleRule = {
  describe: "the failing order",
  pattern: /^FAIL order 4200$/,
  stream: "stdout"
}

/** Noise lines around the needle, none of which matches the needle's rule or the term `FAIL`. */
const noise = fc.array(
  fc.constantFrom("ok order 1", "ok order 2", "pending", "  at run (orders.js:3:9)", ""),
  {
    maxLength: 400
  }
)

const runCase = (peer: PeerPolicy, raw: RawOutput, rule: NeedleRule, term: RegExp): Promise<Scored> => {
  const needle = locate(rule, raw)
  const view = peer.shell.apply(raw, SAVED)
  return score(
    peerRun(peer, view, async () => ({ raw: filtered(raw, term), savedPath: `${SAVED}.rerun` })),
    needle,
    term,
    count
  )
}

describe("outcomes", () => {
  it.effect.prop(
    "a policy that shows nothing but a saved path reaches the needle only through the case's follow-up",
    { before: noise, after: noise, termFinds: fc.boolean() },
    ({ after, before, termFinds }) =>
      Effect.promise(async () => {
        const raw = {
          stdout: [...before, "FAIL order 4200", ...after].join("\n") + "\n",
          stderr: "",
          exitCode: 1
        }
        const term = termFinds ? /FAIL|Error/ : /Error/
        const asked: Array<string> = []
        const cell = await runCase(pathOnly(needleRule.pattern, asked), raw, needleRule, term)
        // the saved copy is searched with the case's term, once, and nothing else
        assert.deepStrictEqual(asked, [term.source])
        assert.strictEqual(cell.outcome, termFinds ? "saved" : "lost")
        assert.strictEqual(cell.calls, 1)
        const shown = matchingLines(raw.stdout, term)
          .map((line) => line.text)
          .join("\n")
        assert.strictEqual(cell.followUpTokens, count(shown))
        assert.strictEqual(spent(cell), cell.tokens + cell.followUpTokens + FOLLOW_UP_CALL_TOKENS)
      })
  )

  it.effect.prop(
    "a policy that names no place re-runs the command, and the re-run goes through its own shell",
    { before: noise, after: noise },
    ({ after, before }) =>
      Effect.promise(async () => {
        const raw = {
          stdout:
            [
              ...before,
              ...Array.from({ length: 3000 }, (_, i) => `ok order ${i}`),
              "FAIL order 4200",
              ...after
            ].join("\n") + "\n",
          stderr: "",
          exitCode: 1
        }
        const term = /FAIL|Error/
        // the hidden host sees nothing in its re-run either; Codex's shell passes the short re-run whole
        assert.strictEqual((await runCase(nothing, raw, needleRule, term)).outcome, "lost")
        const cell = await runCase(codex, raw, needleRule, term)
        const first = codex.shell.apply(raw, SAVED)
        const expected: Outcome = first.text.includes("\nFAIL order 4200\n") ? "seen" : "rerun"
        assert.strictEqual(cell.outcome, expected)
        if (expected === "rerun")
          assert.strictEqual(
            cell.followUpTokens,
            count(codex.shell.apply(filtered(raw, term), `${SAVED}.rerun`).text)
          )
      })
  )

  it.effect("two runs of a fixed small corpus give the same counts", () =>
    Effect.promise(async () => {
      const flood = Array.from({ length: 40_000 }, (_, i) => `ok order ${i}`)
      const corpus: ReadonlyArray<{ readonly raw: RawOutput; readonly term: RegExp }> = [
        { raw: { stdout: "ok order 1\nFAIL order 4200\n", stderr: "", exitCode: 1 }, term: /FAIL/ },
        {
          raw: {
            stdout: [...flood.slice(0, 20_000), "FAIL order 4200", ...flood.slice(20_000)].join("\n"),
            stderr: "",
            exitCode: 1
          },
          term: /FAIL|Error/
        },
        {
          raw: {
            stdout: [...flood, "FAIL order 4200"].join("\n"),
            stderr: "\x1b[31mError\x1b[0m\r\n",
            exitCode: 1
          },
          term: /Error|FAIL/
        }
      ]
      const policies = [...peers, pathOnly(needleRule.pattern, []), nothing]
      const once = async (): Promise<Results> => {
        const rows = []
        for (const [i, { raw, term }] of corpus.entries()) {
          const cells: Array<Scored> = []
          for (const peer of policies) cells.push(await runCase(peer, raw, needleRule, term))
          rows.push({
            id: `case-${i}`,
            title: "",
            kind: "bash" as const,
            source: "",
            why: "",
            followUp: term.source,
            rawBytes: 0,
            rawLines: 0,
            needle: "",
            needleAt: "",
            misses: [],
            cells
          })
        }
        return {
          policies: policies.map((peer) => ({
            name: peer.name,
            version: peer.version,
            toolcap: false,
            describe: [],
            sources: []
          })),
          rows,
          modelText: [],
          toolcapModelText: "",
          tokenizer: "length",
          sizeRule: "",
          machine: ""
        }
      }
      const [first, second] = [await once(), await once()]
      assert.deepStrictEqual(totals(first), totals(second))
      assert.deepStrictEqual(
        first.rows.map((row) => row.cells),
        second.rows.map((row) => row.cells)
      )
      // every outcome is a counted one, and every policy's four counts add up to the corpus
      for (const t of totals(first)) assert.strictEqual(t.seen + t.saved + t.rerun + t.lost, corpus.length)
      // the fixed corpus shows all four outcomes somewhere, so the counting is exercised
      const outcomes = new Set(first.rows.flatMap((row) => row.cells.map((cell) => cell.outcome)))
      assert.sameMembers([...outcomes], ["lost", "rerun", "saved", "seen"])
    })
  )

  it("a first result holding ESC or CR is counted as terminal control", () => {
    assert.isTrue(hasControl("\x1b[31mError\x1b[0m"))
    assert.isTrue(hasControl("10%\r20%"))
    assert.isFalse(hasControl("plain\nlines\n"))
  })
})
