// Reliability under faults, for the tools: the spill dir read-only, full (a 1 MiB tmpfs where the
// machine lets us mount one, else a scratch layer that fails every write) or removed mid-session,
// and a file deleted, truncated or growing between two Read pages. Each case must end in a correct
// result or a typed tool error — never a defect (crash) nor a call that does not return (hang, a
// 60 s bound per call). The missing ripgrep binary is reliability.faults.ripgrep.test.ts (it mocks
// the module for its whole file); the SQLite store's faults are in the checkpoint package, the
// SIGKILLed host in the demo app. Counts are printed at the end and, when TOOLCAP_RELIABILITY_OUT
// names a directory, written there for `pnpm bench`.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Budgets, SpillCopy, Utf8 } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, Read } from "@toolcap/tools"
import {
  type Judged,
  reportReliability,
  summariseVerdicts,
  type Verdict,
  verdictCounts
} from "@toolcap/bench-report"
import { leftoversOfThisWorker, readOnlyDir, testEnv } from "./bashFixtures.js"
import { searchEnv, writeTree } from "./readFixtures.js"

/** A call that has not returned after this long counts as a hang (the slowest here takes ~1 s). */
const HANG_BOUND = Duration.seconds(60)

const verdicts: Array<Judged> = []

/**
 * Runs one call under a fault: a tool error with a stable code is a typed error, a defect a crash,
 * no answer within the bound a hang; a result is judged by `check` (which names what is wrong).
 */
const judge = <A, E, R>(
  fault: string,
  call: Effect.Effect<A, E, R>,
  check: (result: A) => string | undefined
): Effect.Effect<Verdict, never, R> =>
  call.pipe(
    Effect.timeoutOption(HANG_BOUND),
    Effect.exit,
    Effect.map((exit): { verdict: Verdict; detail: string } => {
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure)) {
          const code = (failure.value as { readonly code?: unknown }).code
          return typeof code === "string"
            ? { verdict: "typed error", detail: code }
            : { verdict: "crash", detail: `untyped failure ${String(failure.value)}` }
        }
        return { verdict: "crash", detail: Cause.pretty(exit.cause) }
      }
      if (Option.isNone(exit.value)) return { verdict: "hang", detail: "no answer" }
      const wrong = check(exit.value.value)
      return wrong === undefined ? { verdict: "correct", detail: "" } : { verdict: "wrong", detail: wrong }
    }),
    Effect.tap(({ verdict, detail }) => Effect.sync(() => verdicts.push({ fault, verdict, detail }))),
    Effect.map(({ verdict }) => verdict)
  )

const seqText = (from: number, to: number) => {
  let out = ""
  for (let i = from; i <= to; i++) out += `${i}\n`
  return out
}

/** A Bash result whose stdout head is `seq 1 N`'s real head and whose spill, if named, is real. */
const bigOutput = (r: Bash.BashResult): string | undefined => {
  if (r.exitCode !== 0) return `exit ${r.exitCode}`
  const body = r.stdout.slice(0, r.stdout.lastIndexOf("\n", r.stdout.indexOf("[truncated")) + 1)
  if (body === "" || !seqText(1, 200_000).startsWith(body)) return "the stdout excerpt is not seq's head"
  const spill = r.spill.stdout
  if (spill !== undefined) {
    if (!fs.existsSync(spill)) return `the named spill file ${spill} does not exist`
    const copy = SpillCopy.of(Utf8.encode(seqText(1, 200_000)), Budgets.defaults.spillMaxBytes)
    if (!Buffer.from(copy.bytes).equals(fs.readFileSync(spill)) || copy.bytes.length <= body.length)
      return "the named spill file is not the stream's head and tail"
    if (!r.stdout.includes(spill)) return "a spill file the excerpt does not name"
  } else if (r.stdout.includes("saved to")) return "a spill sentence without a spill file"
  return undefined
}

const BIG = "seq 1 200000"

/** A size-capped tmpfs (1 MiB) on a fresh temp dir, when this machine lets us mount one. */
const fullDir = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-full-"))
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]).status === 0
    if (mounted) {
      // fill it but for a few KB, so the first spill file cannot be written whole
      spawnSync("sh", ["-c", `head -c 1040000 /dev/zero > "${dir}/filler" 2>/dev/null`])
    }
    return { dir, mounted }
  }),
  ({ dir, mounted }) =>
    Effect.sync(() => {
      if (mounted) spawnSync("umount", [dir])
      fs.rmSync(dir, { recursive: true, force: true })
    })
)

const numbered = (from: number, to: number) => {
  let out = ""
  for (let i = from; i <= to; i++) out += `line ${i}\n`
  return out
}

/** A page is correct when it is the file's lines from its offset as the file is now. */
const currentPage = (file: string) => (r: Read.ReadResult) => {
  // the file's lines with their endings (the last one may have none)
  const lines = fs.readFileSync(file, "utf8").match(/[^\n]*\n|[^\n]+$/g) ?? []
  const expected = lines.slice(r.offset - 1, r.offset - 1 + r.lineCount).join("")
  return r.content === expected
    ? undefined
    : `page at ${r.offset} (${r.lineCount} lines) differs from the file`
}

describe("reliability: faults (tools)", () => {
  afterAll(() => {
    reportReliability(
      "faults tools",
      { ...verdictCounts(verdicts), survivors: leftoversOfThisWorker().length },
      summariseVerdicts(verdicts)
    )
  })

  it.scopedLive("the spill dir read-only: the result stands, without a spill file", () =>
    Effect.gen(function* () {
      const ro = yield* readOnlyDir
      const env = yield* testEnv({}, ro.path)
      const v = yield* judge(
        `spill dir read-only (${ro.mechanism})`,
        Bash.run({ command: BIG }),
        (r) => bigOutput(r) ?? (r.spill.stdout === undefined ? undefined : "a spill file in a read-only dir")
      ).pipe(Effect.provide(env.layer))
      assert.strictEqual(v, "correct")
    })
  )

  it.scopedLive("the spill dir full: the result stands, any spill file named is whole", () =>
    Effect.gen(function* () {
      const full = yield* fullDir
      const env = yield* testEnv()
      const layer = full.mounted
        ? (yield* testEnv({}, full.dir)).layer
        : Layer.merge(env.layer, Scratch.layerTest({ failing: true }).pipe(Layer.orDie))
      const fault = full.mounted ? "spill dir full (1 MiB tmpfs)" : "spill dir full (a failing scratch layer)"
      const first = yield* judge(fault, Bash.run({ command: BIG }), bigOutput).pipe(Effect.provide(layer))
      // again, with the first (if any) still taking room
      const second = yield* judge(fault, Bash.run({ command: `${BIG}; ${BIG} >&2` }), bigOutput).pipe(
        Effect.provide(layer)
      )
      assert.deepStrictEqual([first, second], ["correct", "correct"])
    })
  )

  it.scopedLive("the spill dir removed mid-session: the next call's result stands", () =>
    Effect.gen(function* () {
      const env = yield* testEnv()
      const context = yield* Layer.build(env.layer)
      const before = yield* judge("spill dir present", Bash.run({ command: BIG }), bigOutput).pipe(
        Effect.provide(context)
      )
      fs.rmSync(env.dataDir, { recursive: true, force: true })
      const after = yield* judge("spill dir removed mid-session", Bash.run({ command: BIG }), bigOutput).pipe(
        Effect.provide(context)
      )
      assert.deepStrictEqual([before, after], ["correct", "correct"])
    })
  )

  for (const [fault, change] of [
    ["file deleted between Read pages", (file: string) => fs.rmSync(file)],
    ["file truncated between Read pages", (file: string) => fs.truncateSync(file, 1000)],
    ["file truncated to empty between Read pages", (file: string) => fs.truncateSync(file, 0)],
    ["file growing between Read pages", (file: string) => fs.appendFileSync(file, numbered(20_001, 40_000))],
    [
      "file rewritten with other lines between Read pages",
      (file: string) => fs.writeFileSync(file, numbered(1, 20_000).replace(/line/g, "LINE"))
    ]
  ] as const) {
    it.scopedLive(`${fault}: the next page is the file as it is now, or a typed error`, () =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        writeTree(env.workspace, { "paged.txt": numbered(1, 20_000) })
        const file = path.join(env.workspace, "paged.txt")
        const first = yield* Read.read({ path: "paged.txt" }).pipe(Effect.provide(env.context))
        const next = first.truncation?.nextOffset
        assert.isDefined(next)
        change(file)
        const v = yield* judge(
          fault,
          Read.read({ path: "paged.txt", offset: next! }),
          currentPage(file)
        ).pipe(Effect.provide(env.context))
        // and the first page again, read afresh
        const again = yield* judge(
          `${fault}, first page again`,
          Read.read({ path: "paged.txt" }),
          currentPage(file)
        ).pipe(Effect.provide(env.context))
        assert.include(["correct", "typed error"], v)
        assert.include(["correct", "typed error"], again)
      })
    )
  }

  it.scopedLive("a file growing while it is paged, concurrently: every page is lines of the file", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "log.txt": numbered(1, 5_000) })
      const file = path.join(env.workspace, "log.txt")
      let next = 5_001
      const writer = setInterval(() => {
        fs.appendFileSync(file, numbered(next, next + 499))
        next += 500
      }, 5)
      try {
        for (let page = 0; page < 20; page++) {
          const offset = 1 + page * 300
          const v = yield* judge(
            "file growing during Read pages",
            Read.read({ path: "log.txt", offset, limit: 1_000 }),
            (r) =>
              r.content === numbered(offset, offset + r.lineCount - 1)
                ? undefined
                : `page at ${offset} is not the file's lines`
          ).pipe(Effect.provide(env.context))
          assert.include(["correct", "typed error"], v)
        }
      } finally {
        clearInterval(writer)
      }
    })
  )
})
