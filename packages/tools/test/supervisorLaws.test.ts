/**
 * The laws of supervision, property-tested on the fake supervisor (`Supervisor.layerTest`) under
 * `TestClock`: scripted processes that write, exit, ignore SIGTERM, get stuck or escape, run
 * through the real Bash call and the real stopping, draining and reporting. Each law holds for
 * every generated script (at least 200 of each), in virtual time, in milliseconds of real time.
 * The real-process suites (bash, torture, containment, cgroupEntry) prove the same on real trees.
 */
import { assert, layer } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Order from "effect/Order"
import * as Predicate from "effect/Predicate"
import * as TestClock from "effect/TestClock"
import * as os from "node:os"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, Supervisor, Workspace } from "@toolcap/tools"
import { failureOf, partialOf, scriptTime } from "./bashFixtures.js"

const RUNS = 200

const onTerm = FastCheck.oneof(
  FastCheck.constant("ignore" as const),
  scriptTime(4000).map((afterMs) => ({ afterMs }))
)

const child = FastCheck.record({
  exitAt: FastCheck.option(scriptTime(8000), { nil: undefined }),
  onTerm,
  stuck: FastCheck.boolean(),
  holdsPipes: FastCheck.boolean(),
  escaped: FastCheck.boolean()
})

/** Text written in pieces that may end inside a UTF-8 sequence. */
const writes = FastCheck.array(
  FastCheck.record({
    at: scriptTime(6000),
    stream: FastCheck.constantFrom("stdout" as const, "stderr" as const),
    text: FastCheck.string({ unit: "grapheme", minLength: 1, maxLength: 6 }).filter(
      (text) => !text.includes("\uFFFD")
    ),
    cut: FastCheck.nat()
  }),
  { maxLength: 4 }
).map((pieces) =>
  pieces.flatMap(({ at, cut, stream, text }) => {
    const bytes = new TextEncoder().encode(text)
    const at2 = cut % (bytes.length + 1)
    // two reads at the same time: a split sequence, without one more step of the clock
    return [
      { at, stream, data: bytes.slice(0, at2) },
      { at, stream, data: bytes.slice(at2) }
    ].filter((write) => write.data.length > 0)
  })
)

const scenario = FastCheck.record({
  output: writes,
  exitAt: FastCheck.option(scriptTime(8000), { nil: undefined }),
  code: FastCheck.integer({ min: 0, max: 255 }),
  onTerm,
  children: FastCheck.array(child, { maxLength: 3 }),
  timeoutMs: FastCheck.integer({ min: 1000, max: 5000 }),
  killGraceMs: FastCheck.integer({ min: 0, max: 3000 }),
  drainMs: FastCheck.integer({ min: 0, max: 1500 })
})

type Scenario = typeof scenario extends FastCheck.Arbitrary<infer A> ? A : never

interface Delivered {
  readonly chunk: Bash.BashChunk
  readonly at: number
}

interface Ran {
  readonly exit: Exit.Exit<Bash.BashResult, Bash.BashError>
  readonly events: ReadonlyArray<Supervisor.FakeEvent>
  readonly chunks: ReadonlyArray<Delivered>
  readonly startedAt: number
  /** When the call (or its interruption) completed. */
  readonly endedAt: number
  readonly pids: ReadonlyArray<number>
}

/** What every run shares (built once, with the TestClock they all advance): the workspace and scratch. */
const shared = Layer.mergeAll(Scratch.layerTest(), Workspace.layer({ root: os.tmpdir() })).pipe(Layer.orDie)

/**
 * Runs the scenario's script as one Bash call under the TestClock, interrupted at `interruptAt`
 * (ms after the start) when given; virtual time runs until nothing is left to happen.
 */
const run = (s: Scenario, interruptAt?: number) =>
  Effect.gen(function* () {
    const events: Array<Supervisor.FakeEvent> = []
    const chunks: Array<Delivered> = []
    const clock = yield* Effect.clock
    const perRun = Layer.merge(
      Budgets.layerWith({ bashKillGraceMs: s.killGraceMs, bashDrainGraceMs: s.drainMs }).pipe(Layer.orDie),
      Supervisor.layerTest({
        script: () => ({
          output: s.output,
          exitAt: s.exitAt === undefined ? undefined : { at: s.exitAt, code: s.code },
          onTerm: s.onTerm,
          children: s.children
        }),
        onEvent: (event) => events.push(event)
      })
    )
    const startedAt = clock.unsafeCurrentTimeMillis()
    let endedAt = Number.NaN
    const call = Bash.run(
      { command: "scripted", timeout: s.timeoutMs / 1000 },
      { onChunk: (chunk) => chunks.push({ chunk, at: clock.unsafeCurrentTimeMillis() }) }
    ).pipe(
      Effect.provide(perRun),
      Effect.onExit(() => Effect.sync(() => (endedAt = clock.unsafeCurrentTimeMillis())))
    )
    const fiber = yield* Effect.fork(call)
    if (interruptAt !== undefined) {
      yield* TestClock.adjust(Duration.millis(interruptAt))
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* TestClock.adjust(Duration.seconds(1000))
      yield* Fiber.join(interrupting)
    } else {
      yield* TestClock.adjust(Duration.seconds(1000))
    }
    const exit = yield* Fiber.await(fiber)
    const started = events.find(Predicate.isTagged("Started"))
    return {
      exit,
      events,
      chunks,
      startedAt,
      endedAt,
      pids: started === undefined ? [] : (started as Extract<Supervisor.FakeEvent, { _tag: "Started" }>).pids
    } satisfies Ran
  })

const signals = (ran: Ran, name: "SIGTERM" | "SIGKILL") =>
  ran.events.flatMap((event) =>
    Predicate.isTagged(event, "Signal") && (event as SignalEvent).signal === name
      ? [event as SignalEvent]
      : []
  )

const diedAt = (ran: Ran, pid: number) =>
  ran.events.find((event) => Predicate.isTagged(event, "Died") && event.pid === pid)?.at ?? Infinity

/** Members that must be gone when the call is: all but stuck ones and escapees. */
const stoppable = (s: Scenario, ran: Ran) =>
  ran.pids.filter(
    (_, index) => index === 0 || !(s.children[index - 1]!.stuck || s.children[index - 1]!.escaped)
  )

/** Pids ascending, as the reports list them. */
const ascending = (pids: Iterable<number>) => Arr.sort(pids, Order.number)

type SignalEvent = Extract<Supervisor.FakeEvent, { readonly _tag: "Signal" }>

layer(shared)("the laws of supervision (fake supervisor, TestClock)", (it) => {
  it.effect.prop(
    "timeout: the tree is stopped at the deadline, not before, and only when the main process outlived it",
    [scenario],
    ([s]) =>
      Effect.gen(function* () {
        const ran = yield* run(s)
        const deadline = ran.startedAt + s.timeoutMs
        const exitedInTime = s.exitAt !== undefined && s.exitAt < s.timeoutMs
        const timedOut = Exit.isFailure(ran.exit)
        assert.strictEqual(timedOut, !exitedInTime)
        if (timedOut) {
          assert.instanceOf(failureOf(ran.exit), Bash.ToolTimeout)
          // the first signal is the deadline's SIGTERM, at the deadline
          assert.strictEqual(ran.events.find(Predicate.isTagged("Signal"))?.at, deadline)
          assert.strictEqual(signals(ran, "SIGTERM")[0]?.pid, ran.pids[0])
        } else {
          assert.isTrue(signals(ran, "SIGTERM").every((event) => event.at >= ran.startedAt + s.exitAt!))
          assert.strictEqual((ran.exit as Exit.Success<Bash.BashResult, never>).value.exitCode, s.code)
        }
        // the call ends only once its tree is gone
        for (const pid of stoppable(s, ran)) assert.isAtMost(diedAt(ran, pid), ran.endedAt, `pid ${pid}`)
      }),
    { fastCheck: { numRuns: RUNS } }
  )

  it.effect.prop(
    "kill grace: SIGKILL exactly the grace after SIGTERM, only to what outlived it; SIGTERM once per process",
    [scenario],
    ([s]) =>
      Effect.gen(function* () {
        const ran = yield* run(s)
        const terms = signals(ran, "SIGTERM")
        const kills = signals(ran, "SIGKILL")
        assert.deepStrictEqual(
          terms.map((event) => event.pid),
          [...new Set(terms.map((event) => event.pid))]
        )
        if (terms.length === 0) {
          assert.deepStrictEqual(kills, [])
          return
        }
        const firstTerm = terms[0]!.at
        const killAt = firstTerm + s.killGraceMs
        for (const kill of kills) assert.strictEqual(kill.at, killAt, `SIGKILL to ${kill.pid}`)
        // killed: exactly the signalled members still alive at the end of the grace
        const aliveAtKill = terms.filter((term) => diedAt(ran, term.pid) >= killAt).map((term) => term.pid)
        assert.deepStrictEqual(ascending(kills.map((kill) => kill.pid)), ascending(aliveAtKill))
        const result = partialOf(ran.exit)
        if (result !== undefined)
          assert.deepStrictEqual(ascending(result.killedPids), ascending(terms.map((t) => t.pid)))
      }),
    { fastCheck: { numRuns: RUNS } }
  )

  it.effect.prop(
    "interruption: the whole tree is stopped before the interrupted call ends, within kill grace + drain grace",
    [scenario, scriptTime(5000)],
    ([s, interruptAt]) =>
      Effect.gen(function* () {
        const ran = yield* run(s, interruptAt)
        const interrupted = ran.startedAt + interruptAt
        if (Exit.isSuccess(ran.exit) || !Exit.isInterrupted(ran.exit)) {
          // it ended by itself before the interruption came
          assert.isAtMost(ran.endedAt, interrupted)
          return
        }
        for (const pid of stoppable(s, ran)) assert.isAtMost(diedAt(ran, pid), ran.endedAt, `pid ${pid}`)
        // bounded: the kill grace, the wait after SIGKILL and the drain share, plus one last read
        assert.isAtMost(ran.endedAt - interrupted, s.killGraceMs + s.drainMs + 20)
        // nothing is delivered once the call ended
        assert.isTrue(ran.chunks.every((delivered) => delivered.at <= ran.endedAt))
      }),
    { fastCheck: { numRuns: RUNS } }
  )

  it.effect.prop(
    "seq order: each stream's chunks count from 0 without gaps, carry its bytes in order, never split UTF-8",
    [scenario.map((s) => ({ ...s, exitAt: 7000.5, timeoutMs: 60_000 }))],
    ([s]) =>
      Effect.gen(function* () {
        const ran = yield* run(s)
        assert.isTrue(Exit.isSuccess(ran.exit))
        const result = (ran.exit as Exit.Success<Bash.BashResult, never>).value
        for (const stream of ["stdout", "stderr"] as const) {
          const own = ran.chunks.filter((delivered) => delivered.chunk.stream === stream)
          assert.deepStrictEqual(
            own.map((delivered) => delivered.chunk.seq),
            own.map((_, index) => index)
          )
          assert.strictEqual(result.lastSeq[stream], own.length === 0 ? null : own.length - 1)
          const written = Buffer.concat(
            Arr.sort(
              s.output.filter((write) => write.stream === stream),
              Order.mapInput(Order.number, (write: { readonly at: number }) => write.at)
            ).map((write) => write.data)
          ).toString("utf8")
          assert.strictEqual(own.map((delivered) => delivered.chunk.data).join(""), written)
          for (const delivered of own) assert.notInclude(delivered.chunk.data, "\uFFFD")
        }
      }),
    { fastCheck: { numRuns: RUNS } }
  )

  it.effect.prop(
    "survivors reported: members stuck after SIGKILL are listed as survivors, pipes held by escapees are said",
    [scenario.map((s) => ({ ...s, exitAt: undefined }))],
    ([s]) =>
      Effect.gen(function* () {
        const ran = yield* run(s)
        const partial = partialOf(ran.exit)!
        // the wait after SIGKILL (as long as the drain grace) ends the stop: what lives then survived
        const stopEnded = ran.startedAt + s.timeoutMs + s.killGraceMs + s.drainMs
        const survivors = signals(ran, "SIGKILL")
          .map((kill) => kill.pid)
          .filter((pid) => diedAt(ran, pid) > stopEnded)
        assert.deepStrictEqual(ascending(partial.termination.survivors), ascending(survivors))
        assert.strictEqual(partial.output.includes("still alive after SIGKILL"), survivors.length > 0)
        // and they are exactly the stuck ones among the killed
        for (const pid of survivors) assert.isTrue(s.children[ran.pids.indexOf(pid) - 1]?.stuck)
        const holding = ran.pids.some(
          (pid, index) =>
            index > 0 &&
            (s.children[index - 1]!.escaped ||
              (s.children[index - 1]!.stuck && s.children[index - 1]!.holdsPipes)) &&
            diedAt(ran, pid) > ran.endedAt
        )
        assert.strictEqual(partial.termination.pipesHeld, holding)
      }),
    { fastCheck: { numRuns: RUNS } }
  )
})
