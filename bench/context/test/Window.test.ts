// The Read-at-the-marker follow-up: its window comes from the visible text of the first result
// alone (one parser for every policy), so a policy whose marker names the wrong lines reads the
// wrong lines and does not reach the needle; a copy named without a window is read from its start
// with the host's default limit; a result that names no copy re-runs instead; and the follow-up
// never searches, so the needle's pattern is never asked for.
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { locate, type NeedleRule } from "../src/Needle.js"
import { type Location, matchingLines, type PeerPolicy, type View, whole } from "../src/Peer.js"
import { claudeCode } from "../src/peers/claudeCode.js"
import { pi } from "../src/peers/pi.js"
import { peerRun, score, type Scored } from "../src/Reach.js"
import { combined, type RawOutput, splitLines } from "../src/Text.js"
import { readAt, windowNamed } from "../src/Window.js"

const SAVED = "/tmp/saved/case.txt"
const count = (text: string): number => text.length
/** The host's Read default limit in these tests: fewer lines than the flood. */
const READ_LIMIT = 50

const needleRule: NeedleRule = {
  describe: "the failing order",
  pattern: /^FAIL order 4200$/,
  stream: "stdout"
}

/**
 * A host whose shell keeps the first and last `ends` lines and says so in toolcap's phrasing, the
 * head count it names shifted by `lie` lines; its Read shows `READ_LIMIT` lines; its search tool
 * fails the test when called (the read follow-up must not search).
 */
const middleCut = (ends: number, lie: number): PeerPolicy => ({
  name: "middle cut",
  version: "test",
  shell: {
    describe: "head and tail",
    apply: (raw: RawOutput, savedPath: string): View => {
      const lines = splitLines(combined(raw))
      const head = lines.slice(0, ends).join("\n")
      const tail = lines.slice(-ends).join("\n")
      const marker = `[truncated: kept the first ${ends + lie} and the last ${ends} of ${lines.length} lines. Full output saved to ${savedPath}]`
      return {
        text: `${head}\n${marker}\n${tail}`,
        truncated: true,
        head,
        tail,
        marker,
        location: { kind: "copy", path: savedPath, content: combined(raw) }
      }
    }
  },
  read: {
    describe: `${READ_LIMIT} lines`,
    apply: (file: Location) => whole(splitLines(file.content).slice(0, READ_LIMIT).join("\n"))
  },
  search: {
    describe: "must not be called",
    apply: () => {
      throw new Error("the read follow-up searched")
    }
  },
  sources: []
})

/** A flood of `before` lines, the needle, `after` lines. */
const flood = (before: number, after: number, pad = ""): RawOutput => ({
  stdout: [
    ...Array.from({ length: before }, (_, i) => `ok order ${i}${pad}`),
    "FAIL order 4200",
    ...Array.from({ length: after }, (_, i) => `ok order ${before + i + 1}${pad}`)
  ].join("\n"),
  stderr: "",
  exitCode: 1
})

const succeed = (raw: RawOutput): RawOutput => ({ ...raw, exitCode: 0 })

const readCase = (peer: PeerPolicy, raw: RawOutput): Promise<Scored> => {
  const view = peer.shell.apply(raw, SAVED)
  return score(
    peerRun(peer, view, async () => ({
      raw: { stdout: "", stderr: "", exitCode: 1 },
      savedPath: `${SAVED}.r`
    })),
    locate(needleRule, raw),
    /FAIL/,
    count,
    "read"
  )
}

describe("the Read-at-the-marker follow-up", () => {
  it("reads the lines a toolcap-style marker says were cut, and pi's lines before its tail", () => {
    assert.deepStrictEqual(
      windowNamed(
        `a\n[truncated: kept the first 10 and the last 5 of 100 lines. Full output saved to ${SAVED}]`,
        SAVED
      ),
      { offset: 11, limit: 85 }
    )
    assert.deepStrictEqual(
      windowNamed(`[truncated: kept the first 10 of 100 lines. Saved to ${SAVED}]`, SAVED),
      {
        offset: 11,
        limit: 90
      }
    )
    assert.deepStrictEqual(
      windowNamed(`[Showing lines 1,801-2,000 of 2,000. Full output: ${SAVED}]`, SAVED),
      {
        offset: 1,
        limit: 1800
      }
    )
    // a path without a window: from the start, the Read tool's default limit
    assert.deepStrictEqual(windowNamed(`Full output saved to: ${SAVED}`, SAVED), { offset: 1 })
    // a window on another line than the path is not this place's window
    assert.deepStrictEqual(windowNamed(`kept the first 3 of 9 lines\nsaved to ${SAVED}`, SAVED), {
      offset: 1
    })
  })

  it.effect.prop(
    "the window comes from the visible text: the right marker reaches the needle, a wrong one does not",
    {
      ends: fc.integer({ min: 5, max: 40 }),
      gap: fc.integer({ min: 1, max: READ_LIMIT }),
      lie: fc.integer({ min: 1, max: 200 })
    },
    ({ ends, gap, lie }) =>
      Effect.promise(async () => {
        // the needle sits in the cut middle, `gap` lines after the kept head, so the read of the
        // middle (READ_LIMIT lines from the line after the head) shows it
        const raw = flood(ends + gap - 1, ends + READ_LIMIT)
        const right = await readCase(middleCut(ends, 0), raw)
        assert.strictEqual(right.outcome, "saved")
        assert.strictEqual(right.calls, 1)
        // a marker naming a head `lie` lines longer reads past the needle's line
        const wrong = await readCase(middleCut(ends, gap - 1 + lie), raw)
        assert.strictEqual(wrong.outcome, "lost")
      })
  )

  it("a copy named without a window is read from its start with the host's default limit", async () => {
    // Claude Code's persisted output names a path and no line: its Read of the copy from line 1
    // stops at its token cap (a partial view of the first lines of 3,000 long ones), so a needle
    // at line 200 (past the 2 KB preview) is reached and one at line 2,990 is not
    const pad = ` ${"x".repeat(60)}`
    const early = flood(199, 2800, pad)
    const late = flood(2989, 10, pad)
    assert.match(claudeCode.shell.apply({ ...late, exitCode: 0 }, SAVED).text, /Full output saved to/)
    assert.strictEqual((await readCase(claudeCode, succeed(early))).outcome, "saved")
    assert.strictEqual((await readCase(claudeCode, succeed(late))).outcome, "lost")
  })

  it("pi's tail marker names the lines before it, and the read of them reaches a needle there", async () => {
    const raw = flood(1000, 3000)
    const view = pi.shell.apply(raw, SAVED)
    assert.match(view.text, /Showing lines \d+-4001 of 4001/)
    const cell = await readCase(pi, raw)
    // pi's Read caps the window at its own 2000 lines / 50 KB; line 1,001 is inside it
    assert.strictEqual(cell.outcome, "saved")
  })

  it("readAt gives the host's Read only the window's lines", () => {
    const content = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n")
    const view = readAt(middleCut(1, 0), { kind: "copy", path: SAVED, content }, { offset: 4, limit: 3 })
    assert.strictEqual(view.text, "line 4\nline 5\nline 6")
    assert.deepStrictEqual(matchingLines(view.text, /line/).length, 3)
  })
})
