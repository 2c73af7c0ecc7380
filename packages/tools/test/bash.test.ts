import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { Budgets, Marker, SpillCopy, ToolError, Truncate, Truncation, Utf8 } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash } from "@toolcap/tools"
import {
  fastGraces,
  leftoversOfThisWorker,
  processesNamed,
  readOnlyDir,
  runRecorded,
  streamText,
  testEnv
} from "./bashFixtures.js"

const seqText = (from: number, to: number) => {
  let out = ""
  for (let i = from; i <= to; i++) out += `${i}\n`
  return out
}

const spillSentence = (file: string) =>
  `Full output saved to ${file} — Grep it, or Read it with offset/limit.`

/** The closing sentence of a marker whose stream was spilled, from its truncation object. */
const sentence = (truncation: Truncation.Truncation) =>
  Marker.nextStep({ path: truncation.spillPath!, ...truncation.spillCopy! })

const getResult = (recorded: { result: Either.Either<Bash.BashResult, Bash.BashError> }) =>
  Either.getOrThrowWith(recorded.result, (error) => new Error(`expected a result, got ${error.code}`))

const getError = (recorded: { result: Either.Either<Bash.BashResult, Bash.BashError> }) =>
  Either.match(recorded.result, {
    onLeft: (error) => error,
    onRight: () => {
      throw new Error("expected an error")
    }
  })

describe("Bash: how the command runs", () => {
  it.scopedLive("bash -c in the workspace root, stdin closed, own process group, the cookie set", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const recorded = yield* runRecorded({
        command: [
          'echo "shell=$BASH_VERSION"',
          'echo "pwd=$PWD"',
          'echo "cookie=$TOOLCAP_RUN_ID"',
          'echo "stdin=$(cat | wc -c)"',
          // fields 5 and 6 of /proc/<pid>/stat: process group and session
          'read -r _ _ _ _ pgrp sid _ < /proc/$$/stat; echo "group=$([ "$pgrp" = $$ ] && [ "$sid" = $$ ] && echo leader)"'
        ].join("; ")
      }).pipe(Effect.provide(env.layer))
      const result = getResult(recorded)
      assert.match(result.stdout, /^shell=\d/m)
      assert.include(result.stdout, `pwd=${env.workspace}\n`)
      assert.include(result.stdout, `cookie=${result.runId}\n`)
      assert.match(result.runId, /^[0-9a-z]+-[0-9a-z]+-[0-9a-z]+$/)
      assert.include(result.stdout, "stdin=0\n")
      assert.include(result.stdout, "group=leader\n")
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.signal, null)
    })
  )

  it.scopedLive("exit code and signal of the main process", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const exited = getResult(yield* runRecorded({ command: "exit 3" }).pipe(Effect.provide(env.layer)))
      assert.strictEqual(exited.exitCode, 3)
      assert.strictEqual(exited.signal, null)
      assert.match(exited.output, /^exit code: 3 · duration: \d+\.\d\ds\n\(no output\)$/)
      const killed = getResult(
        yield* runRecorded({ command: "kill -KILL $$" }).pipe(Effect.provide(env.layer))
      )
      assert.strictEqual(killed.exitCode, null)
      assert.strictEqual(killed.signal, "SIGKILL")
      assert.match(killed.output, /^terminated by signal: SIGKILL · duration: /)
    })
  )

  it.scopedLive("the combined output: headline, then stdout, then stderr", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const result = getResult(
        yield* runRecorded({ command: "echo out; echo err >&2; printf 'no newline' >&2" }).pipe(
          Effect.provide(env.layer)
        )
      )
      assert.strictEqual(result.stdout, "out\n")
      assert.strictEqual(result.stderr, "err\nno newline")
      assert.match(
        result.output,
        /^exit code: 0 · duration: \d+\.\d\ds\n--- stdout ---\nout\n--- stderr ---\nerr\nno newline$/
      )
      assert.isFalse(result.truncated)
      assert.deepStrictEqual(result.truncation, {})
      assert.deepStrictEqual(result.spill, {})
      assert.deepStrictEqual(result.omitted, {
        stdout: { bytes: 0, lines: 0 },
        stderr: { bytes: 0, lines: 0 }
      })
      assert.deepStrictEqual(result.killedPids, [])
      assert.isTrue(Schema.is(Bash.BashResult)(result))
    })
  )

  it.scopedLive("a missing workspace directory fails with TOOL_SPAWN_FAILED", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const context = yield* Layer.build(env.layer)
      fs.rmSync(env.workspace, { recursive: true })
      const error = getError(yield* runRecorded({ command: "echo hi" }).pipe(Effect.provide(context)))
      assert.instanceOf(error, ToolError.ToolSpawnFailed)
      assert.strictEqual(error.code, "TOOL_SPAWN_FAILED")
      fs.mkdirSync(env.workspace)
    })
  )
})

describe("Bash: streaming chunks", () => {
  it.scopedLive(
    "stdout and stderr stream separately, seq from 0 per stream without gaps, lastSeq repeated",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv()
        const recorded = yield* runRecorded({
          command: "for i in $(seq 1 40); do echo out$i; echo err$i >&2; sleep 0.002; done"
        }).pipe(Effect.provide(env.layer))
        const result = getResult(recorded)
        const out = streamText(recorded.chunks, "stdout")
        const err = streamText(recorded.chunks, "stderr")
        assert.strictEqual(out, Array.from({ length: 40 }, (_, i) => `out${i + 1}\n`).join(""))
        assert.strictEqual(err, Array.from({ length: 40 }, (_, i) => `err${i + 1}\n`).join(""))
        const count = (s: string) => recorded.chunks.filter((c) => c.stream === s).length
        assert.isAbove(count("stdout"), 1)
        assert.strictEqual(result.lastSeq.stdout, count("stdout") - 1)
        assert.strictEqual(result.lastSeq.stderr, count("stderr") - 1)
        for (const chunk of recorded.chunks) assert.strictEqual(chunk.callId, result.callId)
        assert.strictEqual(recorded.lateChunks(), 0)
      })
  )

  it.scopedLive("callId is the caller's when given; a silent stream has lastSeq null", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const recorded = yield* runRecorded({ command: "echo x" }, { callId: "call-7" }).pipe(
        Effect.provide(env.layer)
      )
      const result = getResult(recorded)
      assert.strictEqual(result.callId, "call-7")
      assert.deepStrictEqual(
        recorded.chunks.map((c) => [c.callId, c.stream, c.seq, c.data]),
        [["call-7", "stdout", 0, "x\n"]]
      )
      assert.deepStrictEqual(result.lastSeq, { stdout: 0, stderr: null })
    })
  )

  it.live.prop(
    "UTF-8 is never split across chunks, even when written one byte at a time",
    [
      FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 60 }).filter((s) => !s.includes("\uFFFD"))
    ],
    ([text]) =>
      Effect.scoped(
        Effect.gen(function* () {
          const env = yield* testEnv()
          fs.writeFileSync(path.join(env.workspace, "in.txt"), text)
          // one write(2) per byte: reads end mid-sequence whenever the reader is quick enough
          const recorded = yield* runRecorded({
            command: "dd if=in.txt bs=1 status=none; dd if=in.txt bs=1 status=none >&2"
          }).pipe(Effect.provide(env.layer))
          getResult(recorded)
          for (const chunk of recorded.chunks) {
            assert.isFalse(chunk.data.includes("\uFFFD"), JSON.stringify(chunk))
          }
          assert.strictEqual(streamText(recorded.chunks, "stdout"), text)
          assert.strictEqual(streamText(recorded.chunks, "stderr"), text)
        })
      ),
    { fastCheck: { numRuns: 12 } }
  )

  it.scopedLive("invalid UTF-8 bytes become U+FFFD and nothing is dropped", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const recorded = yield* runRecorded({ command: "printf 'a\\377b\\342\\202'" }).pipe(
        Effect.provide(env.layer)
      )
      assert.strictEqual(streamText(recorded.chunks, "stdout"), "a\uFFFDb\uFFFD")
      assert.strictEqual(getResult(recorded).stdout, "a\uFFFDb\uFFFD")
    })
  )

  it.scopedLive("a chunk consumer that throws ends the call with that defect after the tree stopped", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const boom = new Error("renderer broke")
      const exit = yield* Bash.run(
        { command: "echo one; sleep 101.11; echo two" },
        {
          onChunk: () => {
            throw boom
          }
        }
      ).pipe(Effect.provide(env.layer), Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.isTrue(Cause.isDie(exit.cause))
      assert.deepStrictEqual(processesNamed("sleep 101.11"), [])
      assert.deepStrictEqual(leftoversOfThisWorker(), [])
    })
  )
})

describe("Bash: bounded results", () => {
  it.scopedLive(
    "seq 1 100000: stdout keeps the first 4000 lines, marks them and spills its head and tail, as the marker says",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv()
        const recorded = yield* runRecorded({ command: "seq 1 100000" }).pipe(Effect.provide(env.layer))
        const result = getResult(recorded)
        const file = result.spill.stdout!
        assert.isString(file)
        // 588895 bytes do not fit the 512KB spill: its first and last 256KB (whole lines) are saved
        const whole = seqText(1, 100000)
        const copy = SpillCopy.of(Utf8.encode(whole), 512 * 1024)
        assert.isFalse(copy.complete)
        const saved = { path: file, ...copy }
        assert.strictEqual(
          result.stdout,
          seqText(1, 4000) +
            `[truncated: kept the first 4000 of 100000 lines; limit 4000 lines / 96KB. ${Marker.nextStep(saved)}]`
        )
        assert.include(
          result.stdout,
          `First ${copy.ranges[0]!.to} and last ${588895 - copy.ranges[1]!.from} of 588895 bytes saved to ${file}`
        )
        assert.notInclude(result.output, "Full output saved")
        assert.isTrue(result.truncated)
        assert.strictEqual(
          path.dirname(file),
          path.join(env.dataDir, "scratch", "test-session", "tool-output")
        )
        assert.match(path.basename(file), /^bash-stdout-\d+-\d+\.log$/)
        assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
        const spilled = fs.readFileSync(file)
        assert.deepStrictEqual(new Uint8Array(spilled), copy.bytes)
        const text = spilled.toString("utf8")
        assert.isTrue(text.startsWith("1\n2\n3\n"))
        assert.isTrue(text.endsWith("99999\n100000\n"))
        assert.isAtMost(spilled.length, 512 * 1024)
        assert.deepStrictEqual(result.truncation.stdout, {
          kept: "head",
          keptLines: 4000,
          totalLines: 100000,
          keptBytes: Buffer.byteLength(seqText(1, 4000)),
          totalBytes: Buffer.byteLength(whole),
          limitLines: 4000,
          limitBytes: 96 * 1024,
          spillPath: file,
          spillCopy: { complete: false, totalBytes: 588895, ranges: copy.ranges }
        })
        const capture = Truncate.cutString(whole, { keep: "head", maxBytes: 512 * 1024, maxLines: 200_000 })
        assert.deepStrictEqual(result.omitted.stdout, {
          bytes: Buffer.byteLength(whole) - capture.keptBytes,
          lines: 100000 - capture.keptLines
        })
        assert.include(result.output, `--- stdout ---\n${result.stdout}`)
        // the chunks carried everything, not just the capture
        assert.strictEqual(streamText(recorded.chunks, "stdout"), whole)
      })
  )

  it.scopedLive(
    "a 1.3 MB stdout whose last line is NEEDLE-END spills a copy holding its first and its last line",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv()
        const result = getResult(
          yield* runRecorded({ command: "seq 1 200000; echo NEEDLE-END" }).pipe(Effect.provide(env.layer))
        )
        assert.strictEqual(result.truncation.stdout!.totalBytes, 1288906)
        const lines = fs.readFileSync(result.spill.stdout!, "utf8").split("\n")
        assert.strictEqual(lines[0], "1")
        assert.strictEqual(lines.at(-2), "NEEDLE-END")
        assert.strictEqual(lines.at(-1), "")
        // the line between head and tail says what is not in the file
        const gap = lines.find((line) => line.startsWith("[\u2026 "))!
        const [head, tail] = result.truncation.stdout!.spillCopy!.ranges
        assert.strictEqual(
          gap,
          Marker.spillGap({ bytes: tail!.from - head!.to, lines: 200001 - head!.lines - tail!.lines })
        )
        assert.include(result.stdout, `of 1288906 bytes saved to ${result.spill.stdout!}`)
      })
  )

  it.scopedLive("the same on stderr keeps the LAST 4000 lines with the marker prepended", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const result = getResult(
        yield* runRecorded({ command: "seq 1 100000 >&2" }).pipe(Effect.provide(env.layer))
      )
      const file = result.spill.stderr!
      const copy = SpillCopy.of(Utf8.encode(seqText(1, 100000)), 512 * 1024)
      assert.strictEqual(
        result.stderr,
        `[truncated: kept the last 4000 of 100000 lines; limit 4000 lines / 96KB. ${Marker.nextStep({ path: file, ...copy })}]\n` +
          seqText(96001, 100000)
      )
      const spilled = fs.readFileSync(file, "utf8")
      assert.deepStrictEqual(new Uint8Array(fs.readFileSync(file)), copy.bytes)
      assert.isTrue(spilled.startsWith("1\n2\n"))
      assert.isTrue(spilled.endsWith("99999\n100000\n"))
      assert.strictEqual(result.stdout, "")
      assert.deepStrictEqual(result.spill, { stderr: file })
    })
  )

  it.scopedLive("one line larger than the budget gives marker c and a prefix of that line", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const result = getResult(
        yield* runRecorded({ command: "head -c 300000 /dev/zero | tr '\\0' a" }).pipe(
          Effect.provide(env.layer)
        )
      )
      const file = result.spill.stdout!
      assert.strictEqual(
        result.stdout,
        `${"a".repeat(98304)}\n[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 300000-byte line. ${spillSentence(file)}]`
      )
      // it fits the spill: the copy is the stream, byte for byte, and the marker says so
      assert.strictEqual(fs.readFileSync(file, "utf8"), "a".repeat(300000))
      assert.isTrue(result.truncation.stdout!.spillCopy!.complete)
    })
  )

  it.scopedLive("the capture ceiling sits above the result budget and reports what it omitted", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      // 300000 lines of 11 bytes: past both capture limits (200000 lines, 512KB)
      const result = getResult(
        yield* runRecorded({ command: "yes 0123456789 | head -n 300000" }).pipe(Effect.provide(env.layer))
      )
      const captureLines = Math.floor((512 * 1024) / 11)
      assert.deepStrictEqual(result.omitted.stdout, {
        bytes: 300000 * 11 - captureLines * 11,
        lines: 300000 - captureLines
      })
      // the copy is not bounded by the capture: its tail comes from the end of the stream
      const [head, tail] = result.truncation.stdout!.spillCopy!.ranges
      assert.strictEqual(head!.to, Math.floor((256 * 1024) / 11) * 11)
      assert.strictEqual(tail!.to, 300000 * 11)
      const spilled = fs.readFileSync(result.spill.stdout!)
      assert.isAtMost(spilled.length, 512 * 1024)
      assert.isAbove(spilled.length, result.truncation.stdout!.keptBytes)
      assert.strictEqual(result.truncation.stdout!.keptLines, 4000)
      assert.strictEqual(result.truncation.stdout!.totalLines, 300000)
      assert.strictEqual(result.truncation.stdout!.totalBytes, 300000 * 11)
    })
  )

  it.live.prop(
    "both streams: excerpt = cut of the whole stream; the copy is the stream when it fits the spill, else its head and tail; Full output saved only for a byte-identical copy",
    [
      FastCheck.array(FastCheck.string({ unit: "grapheme", maxLength: 30 }), { minLength: 1, maxLength: 12 }),
      // sizes around the 200-byte spill, or anywhere up to three times it
      FastCheck.tuple(
        FastCheck.oneof(FastCheck.integer({ min: 190, max: 210 }), FastCheck.integer({ min: 0, max: 600 })),
        FastCheck.oneof(FastCheck.integer({ min: 190, max: 210 }), FastCheck.integer({ min: 0, max: 600 }))
      ),
      // the capture holds the copy (in memory) or not (on disk while the command runs)
      FastCheck.constantFrom(4096, 96)
    ],
    ([lines, [outBytes, errBytes], captureMaxBytes]) =>
      Effect.scoped(
        Effect.gen(function* () {
          const budget = { maxBytes: 24, maxLines: 3 }
          const spillMaxBytes = 200
          const env = yield* testEnv({
            shellStdoutMaxBytes: budget.maxBytes,
            shellStdoutMaxLines: budget.maxLines,
            shellStderrMaxBytes: budget.maxBytes,
            shellStderrMaxLines: budget.maxLines,
            captureMaxBytes,
            captureMaxLines: 9,
            spillMaxBytes
          })
          const pattern = Utf8.encode(lines.join("\n") + "\n")
          const sized = (size: number) =>
            Uint8Array.from({ length: size }, (_, i) => pattern[i % pattern.length]!)
          const streams = { stdout: sized(outBytes), stderr: sized(errBytes) }
          fs.writeFileSync(path.join(env.workspace, "out.bin"), streams.stdout)
          fs.writeFileSync(path.join(env.workspace, "err.bin"), streams.stderr)
          const result = getResult(
            yield* runRecorded({ command: "cat out.bin; cat err.bin >&2" }).pipe(Effect.provide(env.layer))
          )
          for (const stream of ["stdout", "stderr"] as const) {
            const whole = streams[stream]
            const keep = stream === "stdout" ? "head" : "tail"
            const excerpt = Truncate.cutBytes(whole, { keep, ...budget })
            const spillPath = result.spill[stream]
            const truncation = result.truncation[stream]
            assert.strictEqual(truncation !== undefined, excerpt.truncated)
            if (!excerpt.truncated) {
              assert.strictEqual(result[stream], excerpt.text)
              assert.isUndefined(spillPath)
              continue
            }
            const copy = SpillCopy.of(whole, spillMaxBytes)
            const written = new Uint8Array(fs.readFileSync(spillPath!))
            assert.deepStrictEqual(written, copy.bytes)
            assert.strictEqual(result[stream], Truncate.render(excerpt, { path: spillPath!, ...copy }))
            assert.deepStrictEqual(truncation!.spillCopy, {
              complete: copy.complete,
              totalBytes: whole.length,
              ranges: copy.ranges
            })
            // the marker claims a full copy exactly when the file is the stream, byte for byte
            const identical = written.length === whole.length && written.every((byte, i) => byte === whole[i])
            assert.strictEqual(result[stream].includes("Full output saved"), identical)
            assert.strictEqual(identical, whole.length <= spillMaxBytes)
          }
        })
      ),
    { fastCheck: { numRuns: 20 } }
  )

  it.scopedLive(
    "a spill that cannot be written (real read-only dir) leaves the same result minus the spill sentence",
    () =>
      Effect.gen(function* () {
        const ro = yield* readOnlyDir
        const working = yield* testEnv()
        const readOnly = yield* testEnv({}, ro.path)
        const command = "seq 1 100000; seq 1 100000 >&2"
        const withSpill = getResult(yield* runRecorded({ command }).pipe(Effect.provide(working.layer)))
        const without = getResult(yield* runRecorded({ command }).pipe(Effect.provide(readOnly.layer)))
        assert.deepStrictEqual(without.spill, {}, ro.mechanism)
        assert.isUndefined(without.truncation.stdout!.spillPath)
        assert.isUndefined(without.truncation.stderr!.spillPath)
        const narrow = "Narrow the request to see more."
        assert.strictEqual(
          without.stdout,
          withSpill.stdout.replace(sentence(withSpill.truncation.stdout!), narrow)
        )
        assert.strictEqual(
          without.stderr,
          withSpill.stderr.replace(sentence(withSpill.truncation.stderr!), narrow)
        )
        assert.isFalse(without.output.includes("saved to"))
        assert.deepStrictEqual(without.omitted, withSpill.omitted)
        assert.deepStrictEqual(fs.readdirSync(ro.path), [])
      })
  )

  it.scopedLive("the compact profile keeps each stream's head and tail, the marker between them", () =>
    Effect.gen(function* () {
      const compact = Budgets.profiles.compact
      const env = yield* testEnv(
        Object.fromEntries(Budgets.fieldNames.map((field) => [field, compact[field]]))
      )
      const result = getResult(
        // the cut itself, without the compact profile's digest
        yield* runRecorded({ command: "seq 1 2000; seq 1 1000 >&2", digest: false }).pipe(
          Effect.provide(env.layer)
        )
      )
      // stdout: half of 1000 lines / 56KB for each end
      assert.strictEqual(
        result.stdout,
        seqText(1, 500) +
          `[truncated: kept the first 500 and the last 500 of 2000 lines (1892 and 2500 of 8893 bytes); limit 1000 lines / 56KB. ${spillSentence(result.spill.stdout!)}]\n` +
          seqText(1501, 2000)
      )
      assert.deepStrictEqual(result.truncation.stdout, {
        kept: "both",
        head: { lines: 500, bytes: 1892 },
        tail: { lines: 500, bytes: 2500 },
        keptLines: 1000,
        totalLines: 2000,
        keptBytes: 4392,
        totalBytes: 8893,
        limitLines: 1000,
        limitBytes: 57344,
        spillPath: result.spill.stdout!,
        spillCopy: { complete: true, totalBytes: 8893, ranges: [{ from: 0, to: 8893, lines: 2000 }] }
      })
      // stderr: a fifth for its head, the rest for its tail, where the actionable message is
      assert.isTrue(
        result.stderr.startsWith(
          seqText(1, 50) + "[truncated: kept the first 50 and the last 200 of 1000 lines"
        )
      )
      assert.isTrue(result.stderr.endsWith(`\n${seqText(801, 1000)}`))
      assert.strictEqual(fs.readFileSync(result.spill.stderr!, "utf8"), seqText(1, 1000))
    })
  )

  it.scopedLive("a spill layer that fails every write also only loses the sentence", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const failing = Layer.merge(env.layer, Scratch.layerTest({ failing: true }).pipe(Layer.orDie))
      const result = getResult(yield* runRecorded({ command: "seq 1 5000" }).pipe(Effect.provide(failing)))
      assert.strictEqual(
        result.stdout,
        seqText(1, 4000) +
          "[truncated: kept the first 4000 of 5000 lines; limit 4000 lines / 96KB. Narrow the request to see more.]"
      )
    })
  )
})

const decode = (input: unknown) => Bash.decodeInput(input).pipe(Effect.provide(Budgets.layer), Effect.either)

const refusedField = (input: unknown) =>
  decode(input).pipe(Effect.map(Either.match({ onLeft: (e) => e.field, onRight: () => "accepted" })))

describe("Bash: timeout input", () => {
  it.live("the default timeout is 60 s, from the budgets", () =>
    Effect.gen(function* () {
      const decoded = yield* decode({ command: "true" })
      assert.deepStrictEqual(decoded, Either.right({ command: "true", timeoutSeconds: 60, digest: false }))
    })
  )

  it.live.prop(
    "every number in 1..300 is accepted, fractions included",
    [FastCheck.double({ min: 1, max: 300, noNaN: true })],
    ([timeout]) =>
      Effect.gen(function* () {
        assert.deepStrictEqual(
          yield* decode({ command: "true", timeout }),
          Either.right({ command: "true", timeoutSeconds: timeout, digest: false })
        )
      })
  )

  it.live.prop(
    "anything else is refused with TOOL_INVALID_INPUT naming timeout",
    [
      FastCheck.oneof(
        FastCheck.constantFrom<unknown>(
          0,
          301,
          -1,
          Number.NaN,
          Infinity,
          -Infinity,
          0.999,
          300.001,
          "10",
          null,
          true,
          [],
          {}
        ),
        FastCheck.double({ noNaN: true }).filter((n) => !(n >= 1 && n <= 300)),
        FastCheck.string()
      )
    ],
    ([timeout]) =>
      Effect.gen(function* () {
        const decoded = yield* decode({ command: "true", timeout })
        assert.isTrue(Either.isLeft(decoded))
        if (Either.isLeft(decoded)) {
          assert.strictEqual(decoded.left.code, "TOOL_INVALID_INPUT")
          assert.strictEqual(decoded.left.field, "timeout")
          assert.include(decoded.left.message, "timeout")
        }
      })
  )

  it.live("bad commands and non-objects name their field", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* refusedField({}), "command")
      assert.strictEqual(yield* refusedField({ command: 42 }), "command")
      assert.strictEqual(yield* refusedField({ command: "  " }), "command")
      assert.strictEqual(yield* refusedField({ command: "echo a\0b" }), "command")
      assert.strictEqual(yield* refusedField(null), "input")
      assert.strictEqual(yield* refusedField("ls"), "input")
      // the published schema says additionalProperties: false
      assert.strictEqual(yield* refusedField({ command: "ls", description: "an extra field" }), "description")
    })
  )

  it.scopedLive("a refused input spawns nothing", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      for (const timeout of [0, 301, -1, Number.NaN, "10"]) {
        const recorded = yield* runRecorded({ command: "touch spawned", timeout }).pipe(
          Effect.provide(env.layer)
        )
        const error = getError(recorded)
        assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
        assert.strictEqual(recorded.chunks.length, 0)
      }
      assert.isFalse(fs.existsSync(path.join(env.workspace, "spawned")))
    })
  )

  it.scopedLive("a call without timeout runs under the budgets' default", () =>
    Effect.gen(function* () {
      const env = yield* testEnv({ bashTimeoutDefaultSeconds: 1, ...fastGraces })
      const error = getError(yield* runRecorded({ command: "sleep 101.12" }).pipe(Effect.provide(env.layer)))
      assert.instanceOf(error, Bash.ToolTimeout)
      assert.strictEqual(error.timeoutSeconds, 1)
      assert.deepStrictEqual(processesNamed("sleep 101.12"), [])
    })
  )
})

describe("Bash: timeout, abort and interruption stop the whole tree", () => {
  it.scopedLive(
    "timeout: TOOL_TIMEOUT with the partial result and the pids; no process and no chunk afterwards",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces)
        const recorded = yield* runRecorded({
          command:
            'echo "RUN:$TOOLCAP_RUN_ID"; (while :; do echo bg; sleep 0.01; done) & while :; do echo fg >&2; sleep 0.01; done',
          timeout: 1
        }).pipe(Effect.provide(env.layer))
        const error = getError(recorded)
        assert.instanceOf(error, Bash.ToolTimeout)
        assert.strictEqual(error.code, "TOOL_TIMEOUT")
        assert.strictEqual(error.timeoutSeconds, 1)
        assert.isAbove(error.killedPids.length, 1)
        assert.deepStrictEqual(error.partial.killedPids, error.killedPids)
        assert.include(error.partial.stdout, "bg\n")
        assert.include(error.partial.stderr, "fg\n")
        assert.match(error.partial.output, /^timed out after 1s · duration: /)
        assert.include(error.partial.output, "stopped the process tree: SIGTERM to")
        assert.strictEqual(error.partial.exitCode, null)
        assert.strictEqual(error.partial.signal, "SIGTERM")
        // the partial result repeats the stream's last seq
        assert.strictEqual(
          error.partial.lastSeq.stderr,
          recorded.chunks.filter((c) => c.stream === "stderr").length - 1
        )
        assert.deepStrictEqual(leftoversOfThisWorker(), [])
        yield* Effect.sleep("100 millis")
        assert.strictEqual(recorded.lateChunks(), 0)
      })
  )

  it.scopedLive("abort: TOOL_ABORTED with the partial result; no process and no chunk afterwards", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces)
      const controller = new AbortController()
      const chunks: Array<Bash.BashChunk> = []
      let returned = false
      let late = 0
      const exit = yield* Bash.run(
        { command: "echo started; sleep 101.13 & while :; do echo tick; sleep 0.01; done" },
        {
          signal: controller.signal,
          onChunk: (chunk) => {
            if (returned) late++
            chunks.push(chunk)
            if (chunks.length === 3) controller.abort()
          }
        }
      ).pipe(Effect.provide(env.layer), Effect.either)
      returned = true
      const error = Option.getOrThrow(Either.getLeft(exit))
      assert.instanceOf(error, Bash.ToolAborted)
      assert.strictEqual(error.code, "TOOL_ABORTED")
      assert.isAbove(error.killedPids.length, 1)
      assert.include(error.partial.stdout, "started\n")
      assert.match(error.partial.output, /^aborted · duration: /)
      assert.deepStrictEqual(processesNamed("sleep 101.13"), [])
      assert.deepStrictEqual(leftoversOfThisWorker(), [])
      yield* Effect.sleep("100 millis")
      assert.strictEqual(late, 0)
    })
  )

  it.scopedLive("an already aborted signal answers TOOL_ABORTED without spawning", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const recorded = yield* runRecorded({ command: "touch spawned" }, { signal: AbortSignal.abort() }).pipe(
        Effect.provide(env.layer)
      )
      const error = getError(recorded)
      assert.instanceOf(error, Bash.ToolAborted)
      assert.deepStrictEqual(error.killedPids, [])
      assert.isFalse(fs.existsSync(path.join(env.workspace, "spawned")))
    })
  )

  it.scopedLive("fiber interruption stops the whole tree before the fiber ends", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces)
      let started!: () => void
      const firstChunk = new Promise<void>((resolve) => (started = resolve))
      const fiber = yield* Bash.run(
        { command: "setsid sleep 101.14 & sleep 101.14 & echo go; wait" },
        { onChunk: () => started() }
      ).pipe(Effect.provide(env.layer), Effect.fork)
      yield* Effect.promise(() => firstChunk)
      // both sleeps have exec'd (the shell forks them before `echo go`, exec may lag a little)
      while (processesNamed("sleep 101.14").length < 2) yield* Effect.sleep("5 millis")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(processesNamed("sleep 101.14"), [])
      assert.deepStrictEqual(leftoversOfThisWorker(), [])
    })
  )

  it.scopedLive("an interrupted call removes the spill file it began streaming to disk", () =>
    Effect.gen(function* () {
      // a copy larger than the capture budget is written to its file while the command runs
      const env = yield* testEnv({ ...fastGraces, captureMaxBytes: 128 * 1024, spillMaxBytes: 1024 * 1024 })
      const outputDir = path.join(env.dataDir, "scratch", "test-session", "tool-output")
      const fiber = yield* Bash.run({ command: "head -c 600000 /dev/zero | tr '\\0' x; sleep 101.27" }).pipe(
        Effect.provide(env.layer),
        Effect.fork
      )
      while (!fs.existsSync(outputDir) || fs.readdirSync(outputDir).length === 0)
        yield* Effect.sleep("5 millis")
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(fs.readdirSync(outputDir), [])
      assert.deepStrictEqual(processesNamed("sleep 101.27"), [])
    })
  )
})

/** The `sleep 100.33` processes themselves (not the shells whose command line names them). */
const sleeps = () => processesNamed("sleep 100.33").filter((live) => live.cmdline === "sleep 100.33")

describe("Bash: the end of a command", () => {
  // a fractional duration no other test uses, so a concurrent test's sleep cannot be mistaken for it
  it.scopedLive("(sleep 100.33 &); echo hi returns after the drain grace and leaves no sleep behind", () =>
    Effect.gen(function* () {
      const env = yield* testEnv() // the default grace periods
      const call = yield* runRecorded({ command: "(sleep 100.33 &); echo hi" }).pipe(
        Effect.provide(env.layer),
        Effect.fork
      )
      // the leftover holds the pipes for the whole drain grace: seen here by its host pid
      let leftover = sleeps()
      while (leftover.length === 0) {
        yield* Effect.sleep("5 millis")
        leftover = sleeps()
      }
      const result = getResult(yield* Fiber.join(call))
      assert.strictEqual(result.stdout, "hi\n")
      assert.strictEqual(result.exitCode, 0)
      // the call waited out the drain grace, then stopped exactly the leftover holding the pipes
      assert.isAtLeast(result.durationMs, Budgets.defaults.bashDrainGraceMs)
      assert.deepStrictEqual(
        result.killedPids,
        leftover.map((live) => live.pid)
      )
      assert.include(result.output, "ended 1 process(es) still running after the command exited")
      assert.deepStrictEqual(processesNamed("sleep 100.33"), [])
      assert.deepStrictEqual(leftoversOfThisWorker(), [])
    })
  )

  it.scopedLive("a leftover that does not hold the pipes is ended as soon as they close", () =>
    Effect.gen(function* () {
      // a drain grace so long that waiting it out would show
      const env = yield* testEnv({ bashDrainGraceMs: 20_000 })
      const result = getResult(
        yield* runRecorded({ command: "sleep 101.15 >/dev/null 2>&1 & echo hi" }).pipe(
          Effect.provide(env.layer)
        )
      )
      assert.strictEqual(result.stdout, "hi\n")
      assert.strictEqual(result.killedPids.length, 1)
      assert.isBelow(result.durationMs, 20_000)
      assert.deepStrictEqual(processesNamed("sleep 101.15"), [])
    })
  )

  it.scopedLive("output written during the drain grace is kept", () =>
    Effect.gen(function* () {
      // "late" is written only once the main shell is gone (reaped), so it always falls in the
      // drain grace, whatever the load; a grace far longer than any load delay keeps it there
      const env = yield* testEnv({ bashDrainGraceMs: 60_000 })
      const recorded = yield* runRecorded({
        command: "(while kill -0 $$ 2>/dev/null; do sleep 0.01; done; echo late) & echo early"
      }).pipe(Effect.provide(env.layer))
      const result = getResult(recorded)
      assert.strictEqual(result.stdout, "early\nlate\n")
      assert.deepStrictEqual(result.killedPids, [])
    })
  )
})

describe("Bash.stream", () => {
  it.scopedLive("Chunk events in order per stream, then one Result, then the end", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(
          Bash.stream({ command: "for i in 1 2 3; do echo o$i; echo e$i >&2; sleep 0.01; done" })
        ).pipe(Effect.provide(env.layer))
      )
      const last = events.at(-1)!
      assert.isTrue(Predicate.isTagged(last, "Result"))
      assert.isTrue(events.slice(0, -1).every((e) => Predicate.isTagged(e, "Chunk")))
      const chunks = events.flatMap((e) => ("chunk" in e ? [e.chunk] : []))
      assert.strictEqual(streamText(chunks, "stdout"), "o1\no2\no3\n")
      assert.strictEqual(streamText(chunks, "stderr"), "e1\ne2\ne3\n")
      if ("result" in last) {
        assert.strictEqual(last.result.stdout, "o1\no2\no3\n")
        assert.strictEqual(last.result.lastSeq.stdout, chunks.filter((c) => c.stream === "stdout").length - 1)
      }
    })
  )

  it.scopedLive("fails with the typed error; bad input fails before anything runs", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces)
      const timedOut = yield* Stream.runCollect(
        Bash.stream({ command: "echo a; sleep 101.16", timeout: 1 })
      ).pipe(Effect.provide(env.layer), Effect.flip)
      assert.instanceOf(timedOut, Bash.ToolTimeout)
      assert.deepStrictEqual(processesNamed("sleep 101.16"), [])
      const invalid = yield* Stream.runCollect(Bash.stream({ command: "touch spawned", timeout: 0 })).pipe(
        Effect.provide(env.layer),
        Effect.flip
      )
      assert.instanceOf(invalid, ToolError.ToolInvalidInput)
      assert.isFalse(fs.existsSync(path.join(env.workspace, "spawned")))
    })
  )

  it.scopedLive("a consumer that stops early stops the tree before the stream ends", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces)
      const taken = yield* Stream.runCollect(
        Bash.stream({ command: "sleep 101.17 & while :; do echo x; sleep 0.01; done" }).pipe(Stream.take(2))
      ).pipe(Effect.provide(env.layer))
      assert.strictEqual(Chunk.size(taken), 2)
      assert.deepStrictEqual(processesNamed("sleep 101.17"), [])
      assert.deepStrictEqual(leftoversOfThisWorker(), [])
    })
  )

  it.scopedLive("a slow consumer pauses the command (backpressure) instead of buffering its output", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces)
      const counter = path.join(env.workspace, "blocks")
      // writes 1 MiB blocks forever, recording how many it got out
      const command = `i=0; while :; do dd if=/dev/zero bs=65536 count=16 status=none; i=$((i+1)); echo $i > ${counter}; done`
      yield* Bash.stream({ command }).pipe(
        Stream.take(5),
        Stream.tap(() => Effect.sleep("200 millis")),
        Stream.runDrain,
        Effect.provide(env.layer)
      )
      const written = Number(fs.readFileSync(counter, "utf8"))
      // unpaused, the writer gets out hundreds of MiB in that second; paused, the buffered events
      // (32 reads of at most 64KB), the pipe and the reader's buffer hold about 2 MiB
      assert.isBelow(written, 8)
      assert.deepStrictEqual(leftoversOfThisWorker(), [])
    })
  )
})
