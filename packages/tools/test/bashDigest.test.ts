// Bash with the digest (rules G1, G9): real commands, the model's text digested (failures, errors
// and summaries kept, passing lines folded, the exit status verbatim), and the spill copy of every
// digested stream holding the raw bytes, on success and on failure; `digest` per call and per host.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import { Budgets } from "@toolcap/limits"
import { Bash } from "@toolcap/tools"
import { fastGraces, modelSection, runRecorded, testEnv } from "./bashFixtures.js"

const getResult = (recorded: { result: Either.Either<Bash.BashResult, Bash.BashError> }) =>
  Either.getOrThrowWith(recorded.result, (error) => new Error(`expected a result, got ${error.code}`))

/** 1500 passing lines, one failure with its stack in the middle, a summary; exit `code`. */
const runner = (code: number) =>
  [
    'for i in $(seq 1 750); do echo " ✓ test/unit.test.ts > adds $i ${i}ms"; done',
    'echo " FAIL  test/unit.test.ts > divides by zero"',
    'echo "AssertionError: expected Infinity to be NaN"',
    'echo "    at test/unit.test.ts:42:17"',
    'for i in $(seq 751 1500); do echo " ✓ test/unit.test.ts > adds $i ${i}ms"; done',
    'echo " Tests  1 failed | 1500 passed (1501)"',
    `exit ${code}`
  ].join("\n")

/** The same bytes, built here. */
const runnerText = () => {
  let text = ""
  for (let i = 1; i <= 750; i++) text += ` ✓ test/unit.test.ts > adds ${i} ${i}ms\n`
  text +=
    " FAIL  test/unit.test.ts > divides by zero\nAssertionError: expected Infinity to be NaN\n    at test/unit.test.ts:42:17\n"
  for (let i = 751; i <= 1500; i++) text += ` ✓ test/unit.test.ts > adds ${i} ${i}ms\n`
  return text + " Tests  1 failed | 1500 passed (1501)\n"
}

const compactStdout = { shellStdoutMaxBytes: 56 * 1024, shellStdoutMaxLines: 1000, shellStdoutHeadShare: 0.5 }

describe("Bash: digest", () => {
  for (const code of [1, 0]) {
    it.scopedLive(
      `exit ${code}: the failure and the summary shown, passing lines folded, the spill holds the raw bytes`,
      () =>
        Effect.gen(function* () {
          const env = yield* testEnv({ ...fastGraces, ...compactStdout, digest: 1 })
          const result = getResult(
            yield* runRecorded({ command: runner(code) }).pipe(Effect.provide(env.layer))
          )
          assert.strictEqual(result.exitCode, code)
          assert.isTrue(result.output.startsWith(`exit code: ${code} · duration: `))
          // the model reads the digest; the stdout field keeps the raw excerpt
          const model = modelSection(result, "stdout")
          const lines = model.split("\n")
          assert.match(
            lines[0]!,
            /^\[digest: showing \d+ of 1,504 lines; folded \d[\d,]* passing-test lines; raw /
          )
          assert.include(lines, " FAIL  test/unit.test.ts > divides by zero")
          assert.include(lines, "AssertionError: expected Infinity to be NaN")
          assert.include(lines, "    at test/unit.test.ts:42:17")
          assert.include(lines, " Tests  1 failed | 1500 passed (1501)")
          assert.notInclude(model, "adds 700 ")
          assert.isTrue(result.stdout.startsWith(" ✓ test/unit.test.ts > adds 1 1ms\n"))
          assert.isTrue(lines.some((line) => /^\[… 750 passing-test lines, raw lines 1–750 …\]$/.test(line)))
          // the raw copy, named in the header, is the stream byte for byte
          const file = result.spill.stdout!
          assert.include(lines[0]!, file)
          assert.strictEqual(fs.readFileSync(file, "utf8"), runnerText())
          assert.isTrue(result.truncated)
          assert.strictEqual(result.truncation.stdout?.spillPath, file)
        })
    )
  }

  it.scopedLive(
    "a call's `digest: false` keeps the exact head and tail; `digest: true` digests under spec",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv({ ...fastGraces, ...compactStdout, digest: 1 })
        const exact = getResult(
          yield* runRecorded({ command: runner(1), digest: false }).pipe(Effect.provide(env.layer))
        )
        assert.isFalse(modelSection(exact, "stdout").startsWith("[digest:"))
        assert.isTrue(modelSection(exact, "stdout").startsWith(" ✓ test/unit.test.ts > adds 1 1ms\n"))
        const spec = yield* testEnv({ ...fastGraces })
        const off = getResult(yield* runRecorded({ command: runner(1) }).pipe(Effect.provide(spec.layer)))
        assert.isFalse(modelSection(off, "stdout").startsWith("[digest:"))
        const on = getResult(
          yield* runRecorded({ command: runner(1), digest: true }).pipe(Effect.provide(spec.layer))
        )
        assert.isTrue(modelSection(on, "stdout").startsWith("[digest:"))
      })
  )

  it.scopedLive("small output is returned as it is, with no digest header and no spill", () =>
    Effect.gen(function* () {
      const env = yield* testEnv({ ...fastGraces, digest: 1 })
      const result = getResult(
        yield* runRecorded({ command: "echo one; echo two >&2; exit 3" }).pipe(Effect.provide(env.layer))
      )
      assert.strictEqual(result.stdout, "one\n")
      assert.strictEqual(result.stderr, "two\n")
      assert.strictEqual(result.exitCode, 3)
      assert.deepStrictEqual(result.spill, {})
    })
  )

  it("the compact profile digests by default and spec does not; TOOLCAP_DIGEST is the field's variable", () => {
    assert.strictEqual(Budgets.profiles.compact.digest, 1)
    assert.strictEqual(Budgets.profiles.spec.digest, 0)
    assert.strictEqual(Budgets.envName("digest"), "TOOLCAP_DIGEST")
  })
})
