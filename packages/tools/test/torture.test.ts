/**
 * The torture suite (issue 3): real process trees that try to outlive their call. Every scenario
 * runs several times; after each run no process carrying the run's cookie (nor one named with the
 * scenario's unique tag) is alive, zombies aside, and no chunk arrived after the call returned.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Bash } from "@toolcap/tools"
import {
  carriersOf,
  fastGraces,
  processesNamed,
  runRecorded,
  streamText,
  testEnv,
  type Recorded
} from "./bashFixtures.js"

const RUNS = 3

/** One line of the 200 MiB scenario: 100 times `c`, then a newline. */
const line = (c: string) => `${c.repeat(100)}\n`

type Expect =
  | { readonly ends: "timeout"; readonly minKilled: number; readonly sigkill?: boolean }
  | { readonly ends: "result"; readonly minKilled: number }

interface Scenario {
  readonly name: string
  /** Unique text in the command lines of the processes it starts (a `sleep 102.x` duration). */
  readonly tag: string
  readonly command: string
  readonly expect: Expect
  readonly check?: (recorded: Recorded) => void
  readonly keepData?: boolean
  /** Seconds; 1 (the least accepted) unless the scenario must run to its end. */
  readonly timeout?: number
}

const scenarios: ReadonlyArray<Scenario> = [
  {
    name: "nested shells",
    tag: "sleep 102.11",
    command: `bash -c 'bash -c "sh -c \\"sleep 102.11\\""' & bash -c 'sh -c "sleep 102.11; true"'; wait`,
    expect: { ends: "timeout", minKilled: 3 }
  },
  {
    name: "& background jobs",
    tag: "sleep 102.21",
    command: "for i in 1 2 3 4 5; do sleep 102.21 & done; echo started; wait",
    expect: { ends: "timeout", minKilled: 6 }
  },
  {
    name: "setsid escapee holding the pipes after a normal exit",
    tag: "sleep 102.31",
    command: "setsid -f sleep 102.31; echo ok",
    expect: { ends: "result", minKilled: 1 },
    check: (recorded) => assert.strictEqual(streamText(recorded.chunks, "stdout"), "ok\n")
  },
  {
    name: "setsid escapees on timeout",
    tag: "sleep 102.32",
    command: "setsid -f sleep 102.32 >/dev/null 2>&1; setsid -f sleep 102.32; sleep 102.32",
    expect: { ends: "timeout", minKilled: 3 }
  },
  {
    name: "double fork, also into a new session",
    tag: "sleep 102.41",
    command: "( (sleep 102.41 &) & ); (setsid sh -c 'sleep 102.41 & ' &); echo ok",
    expect: { ends: "result", minKilled: 2 }
  },
  {
    name: "children that ignore or trap SIGTERM",
    tag: "sleep 102.51",
    command: [
      "(trap '' TERM; sleep 102.51) &",
      "(trap 'echo got-term' TERM; while :; do sleep 102.51 & wait; done) &",
      "trap '' TERM",
      "while :; do sleep 0.05; done"
    ].join("\n"),
    expect: { ends: "timeout", minKilled: 3, sigkill: true }
  },
  {
    name: "a child that keeps writing after its parent exits",
    tag: "late-writer-102.6",
    command: "(for i in $(seq 1 500); do echo late-writer-102.6 $i; sleep 0.02; done) & echo early",
    expect: { ends: "result", minKilled: 1 },
    check: (recorded) => {
      const out = streamText(recorded.chunks, "stdout")
      assert.isTrue(out.startsWith("early\n"), out.slice(0, 40))
      assert.include(out, "late-writer-102.6 1\n")
      assert.notInclude(out, "late-writer-102.6 500\n")
    }
  },
  {
    name: "a fork loop bounded in count",
    tag: "sleep 102.71",
    command:
      "for i in $(seq 1 30); do (sleep 102.71 &); (setsid -f sleep 102.71 >/dev/null 2>&1); sleep 102.71 & done; echo forked; wait",
    expect: { ends: "timeout", minKilled: 30 }
  },
  {
    name: "200 MiB to each stream at once",
    tag: "fold -w 100",
    command:
      "head -c 209715200 /dev/zero | tr '\\0' a | fold -w 100 & head -c 209715200 /dev/zero | tr '\\0' b | fold -w 100 >&2; wait",
    keepData: false,
    timeout: 120,
    expect: { ends: "result", minKilled: 0 },
    check: (recorded) => {
      const result = Either.getOrThrow(recorded.result)
      // fold breaks before the 101st character, so the last of the 2097152 lines has no newline
      const lines = 209715200 / 100
      const bytes = lines * 101 - 1
      const capture = 512 * 1024
      const capturedHead = Math.floor(capture / 101)
      const capturedTail = 1 + Math.floor((capture - 100) / 101)
      const captured = {
        stdout: { lines: capturedHead, bytes: capturedHead * 101 },
        stderr: { lines: capturedTail, bytes: capturedTail * 101 - 1 }
      }
      for (const stream of ["stdout", "stderr"] as const) {
        assert.strictEqual(recorded.chars[stream], bytes, stream)
        assert.strictEqual(
          result.lastSeq[stream],
          recorded.chunks.filter((c) => c.stream === stream).length - 1
        )
        const truncation = result.truncation[stream]!
        assert.strictEqual(truncation.totalBytes, bytes)
        assert.strictEqual(truncation.totalLines, lines)
        // the 96KB budget binds before the 4000 lines: 973 lines of 101 bytes
        assert.strictEqual(truncation.keptLines, 973)
        assert.deepStrictEqual(result.omitted[stream], {
          bytes: bytes - captured[stream].bytes,
          lines: lines - captured[stream].lines
        })
      }
      assert.isTrue(
        result.stdout.startsWith(line("a").repeat(973) + "[truncated: kept the first 973 of 2097152 lines")
      )
      assert.isTrue(result.stderr.startsWith("[truncated: kept the last 973 of 2097152 lines"))
      assert.isTrue(result.stderr.endsWith("]\n" + line("b").repeat(972) + "b".repeat(100)))
    }
  }
]

// concurrent: the scenarios also show that stopping one call's tree leaves the others' alone
describe.concurrent("torture: no process survives its call, no chunk follows its end", () => {
  for (const scenario of scenarios) {
    it.scopedLive(`${scenario.name} (${RUNS} runs)`, () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces)
        for (let run = 0; run < RUNS; run++) {
          const recorded = yield* runRecorded(
            { command: scenario.command, timeout: scenario.timeout ?? 1 },
            { keepData: scenario.keepData ?? true }
          ).pipe(Effect.provide(env.layer))

          // checked at once: the call returned only after the whole tree was gone
          assert.deepStrictEqual(carriersOf(recorded.runId), [], `run ${run}`)
          assert.deepStrictEqual(processesNamed(scenario.tag), [], `run ${run}`)

          const killed = Either.match(recorded.result, {
            onLeft: (error) => {
              assert.strictEqual(scenario.expect.ends, "timeout", `run ${run}: ${error.code}`)
              assert.instanceOf(error, Bash.ToolTimeout)
              if (scenario.expect.ends === "timeout" && scenario.expect.sigkill === true) {
                assert.include(error.partial.output, "SIGKILL to")
              }
              return error.killedPids
            },
            onRight: (result) => {
              assert.strictEqual(scenario.expect.ends, "result", `run ${run}`)
              return result.killedPids
            }
          })
          assert.isAtLeast(killed.length, scenario.expect.minKilled, `run ${run}`)
          scenario.check?.(recorded)

          yield* Effect.sleep("50 millis")
          assert.strictEqual(recorded.lateChunks(), 0, `run ${run}`)
          assert.deepStrictEqual(carriersOf(recorded.runId), [], `run ${run}`)
        }
      })
    )
  }
})
