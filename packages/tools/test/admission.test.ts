/**
 * Deadlines that hold under load: admission control (at most `maxConcurrentCalls` Bash calls of
 * one host run at once, the others wait, report the wait and count their timeout from their
 * start) and the deadline's backstop in the lifeline watchdog (a host whose event loop is blocked
 * past a deadline still has the call's processes signalled on time). The laws on the fake
 * supervisor under `TestClock`; the bounds on real processes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, Supervisor, Workspace } from "@toolcap/tools"
import {
  blockEventLoop,
  cgroupParent,
  failureOf,
  killNamed,
  partialOf,
  processesNamed,
  scriptTime,
  testEnv
} from "./bashFixtures.js"

const burst = FastCheck.record({
  limit: FastCheck.integer({ min: 1, max: 4 }),
  calls: FastCheck.array(
    FastCheck.record({
      exitAt: FastCheck.option(scriptTime(6000), { nil: undefined }),
      onTerm: FastCheck.oneof(
        FastCheck.constant("ignore" as const),
        scriptTime(1500).map((afterMs) => ({ afterMs }))
      ),
      timeoutMs: FastCheck.integer({ min: 1000, max: 4000 })
    }),
    { minLength: 1, maxLength: 10 }
  )
})

type Burst = typeof burst extends FastCheck.Arbitrary<infer A> ? A : never

const shared = Layer.mergeAll(Scratch.layerTest(), Workspace.layer({ root: os.tmpdir() })).pipe(Layer.orDie)

const KILL_GRACE_MS = 500
const DRAIN_MS = 300

/** Every call of the burst at once, at virtual time 0, on one fake host with the burst's limit. */
const runBurst = (b: Burst) =>
  Effect.gen(function* () {
    const events: Array<Supervisor.FakeEvent> = []
    const clock = yield* Effect.clock
    const host = Layer.merge(
      Budgets.layerWith({ bashKillGraceMs: KILL_GRACE_MS, bashDrainGraceMs: DRAIN_MS }).pipe(Layer.orDie),
      Supervisor.layerTest({
        maxConcurrentCalls: b.limit,
        script: (command) => {
          const index = Number(command.args[1]!.split(" ")[1])
          const call = b.calls[index]!
          startedAt[index] = clock.unsafeCurrentTimeMillis()
          return {
            exitAt: call.exitAt === undefined ? undefined : { at: call.exitAt, code: 7 },
            onTerm: call.onTerm
          }
        },
        onEvent: (event) => events.push(event)
      })
    )
    const askedAt = clock.unsafeCurrentTimeMillis()
    const ended: Array<number> = []
    const startedAt: Array<number> = []
    const exits = yield* Effect.gen(function* () {
      const fibers = yield* Effect.forEach(b.calls, (call, index) =>
        Effect.fork(
          Bash.run({ command: `call ${index}`, timeout: call.timeoutMs / 1000 }).pipe(
            Effect.onExit(() => Effect.sync(() => (ended[index] = clock.unsafeCurrentTimeMillis())))
          )
        )
      )
      yield* TestClock.adjust(Duration.seconds(1000))
      return yield* Effect.forEach(fibers, Fiber.await)
    }).pipe(Effect.provide(host))
    return { askedAt, exits, ended, startedAt, events }
  })

describe("admission control (fake supervisor, TestClock)", () => {
  it.effect.prop(
    "a burst: at most the limit run at once, first come first served; each reports its wait and its deadline counts from its start",
    [burst],
    ([b]) =>
      Effect.gen(function* () {
        const ran = yield* runBurst(b)
        const started = ran.events.filter(Predicate.isTagged("Started"))
        assert.strictEqual(started.length, b.calls.length)
        const admittedAt = ran.startedAt
        ran.exits.forEach((exit, i) => {
          const result = partialOf(exit)!
          assert.strictEqual(result.admission?.limit, b.limit)
          assert.strictEqual(result.admission?.waitedMs, Math.round(admittedAt[i]! - ran.askedAt))
        })
        // in the order asked
        for (let i = 1; i < admittedAt.length; i++) assert.isAtLeast(admittedAt[i]!, admittedAt[i - 1]!)
        // the first `limit` calls do not wait
        for (let i = 0; i < Math.min(b.limit, b.calls.length); i++)
          assert.strictEqual(admittedAt[i], ran.askedAt)
        b.calls.forEach((call, i) => {
          // never more than the limit at once: the calls holding a slot when this one got its own
          const holding = admittedAt.filter(
            (at, j) => j !== i && at <= admittedAt[i]! && ran.ended[j]! > admittedAt[i]!
          )
          assert.isAtMost(holding.length, b.limit - 1, `call ${i}`)
          // a call that waited was admitted the moment another ended
          if (admittedAt[i]! > ran.askedAt) assert.include(ran.ended, admittedAt[i]!)
          const exit = ran.exits[i]!
          const result = partialOf(exit)!
          const exitedInTime = call.exitAt !== undefined && call.exitAt < call.timeoutMs
          if (exitedInTime) {
            assert.isTrue(Exit.isSuccess(exit), `call ${i}`)
            assert.strictEqual(result.exitCode, 7)
          } else {
            assert.instanceOf(failureOf(exit), Bash.ToolTimeout)
            // the deadline's SIGTERM, `timeout` after the call's start, not after it was asked
            const pid = result.killedPids[0]!
            const term = ran.events.find(
              (event) =>
                Predicate.isTagged(event, "Signal") && event.pid === pid && event.signal === "SIGTERM"
            )
            assert.strictEqual(term?.at, admittedAt[i]! + call.timeoutMs, `call ${i}`)
          }
          // the duration counts from the start too
          assert.strictEqual(result.durationMs, Math.round(ran.ended[i]! - admittedAt[i]!))
        })
      }).pipe(Effect.provide(shared)),
    // 100 runs of up to 10 calls each: a minute under a loaded machine's parallel suites
    { fastCheck: { numRuns: 100 }, timeout: 180_000 }
  )

  it.effect(
    "an abort while waiting answers TOOL_ABORTED without starting anything; the slot stays free",
    () =>
      Effect.gen(function* () {
        const events: Array<Supervisor.FakeEvent> = []
        const host = Layer.merge(
          Budgets.layerWith({ bashKillGraceMs: KILL_GRACE_MS, bashDrainGraceMs: DRAIN_MS }).pipe(Layer.orDie),
          Supervisor.layerTest({
            maxConcurrentCalls: 1,
            script: () => ({ exitAt: { at: 5000.5, code: 0 } }),
            onEvent: (event) => events.push(event)
          })
        )
        const controller = new AbortController()
        yield* Effect.gen(function* () {
          const first = yield* Effect.fork(Bash.run({ command: "first", timeout: 10 }))
          const second = yield* Effect.fork(
            Bash.run({ command: "second", timeout: 10 }, { signal: controller.signal })
          )
          const third = yield* Effect.fork(Bash.run({ command: "third", timeout: 10 }))
          yield* TestClock.adjust(Duration.seconds(1))
          controller.abort()
          yield* TestClock.adjust(Duration.seconds(100))
          const aborted = yield* Fiber.await(second)
          assert.instanceOf(failureOf(aborted), Bash.ToolAborted)
          const partial = partialOf(aborted)!
          assert.isUndefined(partial.admission)
          assert.deepStrictEqual(partial.killedPids, [])
          // two processes started: the first call's, then the third's once the first ended
          assert.strictEqual(events.filter(Predicate.isTagged("Started")).length, 2)
          assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
          const last = yield* Fiber.await(third)
          assert.isTrue(Exit.isSuccess(last))
          assert.isAtLeast(partialOf(last)!.admission!.waitedMs, 5000)
        }).pipe(Effect.provide(host))
      }).pipe(Effect.provide(shared))
  )
})

/** The admission limit a supervisor built with `options` applies. */
const limitOf = (options: Supervisor.Options) =>
  Effect.scoped(
    Effect.flatMap(Supervisor.make(options), (supervisor) =>
      Effect.map(supervisor.admit, (admitted) => admitted.limit)
    )
  )

describe("admission control: the queue", () => {
  it.scoped(
    "a free slot is taken with no wait; a waiter interrupted in the queue leaves it, and the next waiter gets the slot",
    () =>
      Effect.gen(function* () {
        const supervisor = yield* Supervisor.make({ maxConcurrentCalls: 1 })
        const firstScope = yield* Scope.make()
        const first = yield* Scope.extend(supervisor.admit, firstScope)
        assert.deepStrictEqual(first, { waitedMs: 0, limit: 1 })
        const order: Array<string> = []
        const waiter = (name: string) =>
          Effect.fork(Effect.scoped(Effect.tap(supervisor.admit, () => Effect.sync(() => order.push(name)))))
        const second = yield* waiter("second")
        const third = yield* waiter("third")
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(second)
        yield* Scope.close(firstScope, Exit.void)
        yield* Fiber.join(third)
        assert.deepStrictEqual(order, ["third"])
        // the slot came back when the third's scope closed: taken again at once
        assert.strictEqual((yield* Effect.scoped(supervisor.admit)).waitedMs, 0)
      })
  )
})

describe("admission control: the limit", () => {
  it.scoped(
    "default: 8 per core; an option or TOOLCAP_MAX_CONCURRENT_CALLS sets it; a bad one is refused with its name",
    () =>
      Effect.gen(function* () {
        const saved = process.env[Supervisor.maxConcurrentCallsVariable]
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            if (saved === undefined) delete process.env[Supervisor.maxConcurrentCallsVariable]
            else process.env[Supervisor.maxConcurrentCallsVariable] = saved
          })
        )
        delete process.env[Supervisor.maxConcurrentCallsVariable]
        assert.strictEqual(
          yield* limitOf({}),
          Supervisor.maxConcurrentCallsPerCore * os.availableParallelism()
        )
        assert.strictEqual(yield* limitOf({ maxConcurrentCalls: 3 }), 3)
        process.env[Supervisor.maxConcurrentCallsVariable] = "5"
        assert.strictEqual(yield* limitOf({}), 5)
        assert.strictEqual(yield* limitOf({ maxConcurrentCalls: 2 }), 2)
        process.env[Supervisor.maxConcurrentCallsVariable] = "many"
        const badVariable = yield* Effect.exit(limitOf({}))
        assert.match(
          Cause.pretty((badVariable as Exit.Failure<number, never>).cause),
          /TOOLCAP_MAX_CONCURRENT_CALLS must be a whole number of at least 1, got "many"/
        )
        delete process.env[Supervisor.maxConcurrentCallsVariable]
        for (const bad of [0, -1, 1.5, Number.NaN]) {
          const exit = yield* Effect.exit(limitOf({ maxConcurrentCalls: bad }))
          assert.isTrue(Exit.isFailure(exit))
          assert.match(
            Cause.pretty((exit as Exit.Failure<number, never>).cause),
            /maxConcurrentCalls must be a whole number of at least 1/
          )
        }
        assert.strictEqual(Supervisor.maxConcurrentCallsInvalid(4), undefined)
        assert.match(Supervisor.maxConcurrentCallsInvalid(0)!, /at least 1, got 0/)
      })
  )
})

/** The bound of the issue: a call answers within kill grace + drain grace (3 s by default) of its deadline. */
const ANSWER_BOUND_MS = 3000
/** Bursts of 200 calls (the long mode of `pnpm bench`: 3) and blocked-host runs per tier (5). */
const BURSTS = isLong() ? 3 : 1
const FROZEN_RUNS = isLong() ? 5 : 1

describe("deadlines under load (real processes)", () => {
  it.scopedLive(
    "200 concurrent calls with a 3 s timeout each answer within 3 s of their deadline, wait excluded; at most the limit run at once",
    () =>
      Effect.gen(function* () {
        const tag = "1000.71"
        yield* Effect.addFinalizer(() => killNamed(`sleep ${tag}`))
        const env = yield* testEnv()
        let inputs = 0
        let late = 0
        let worst = 0
        for (let round = 0; round < BURSTS; round++) {
          const calls = yield* Effect.forEach(
            Array.from({ length: 200 }, (_, i) => i),
            () =>
              Effect.gen(function* () {
                const askedAt = yield* Clock.currentTimeMillis
                const exit = yield* Effect.exit(Bash.run({ command: `sleep ${tag}`, timeout: 3 }))
                const answeredAt = yield* Clock.currentTimeMillis
                return { askedAt, answeredAt, exit }
              }),
            { concurrency: "unbounded" }
          ).pipe(Effect.provide(env.layer))
          const limit = partialOf(calls[0]!.exit)!.admission!.limit
          const admitted = calls.map((call) => {
            assert.instanceOf(failureOf(call.exit), Bash.ToolTimeout)
            const result = partialOf(call.exit)!
            assert.strictEqual(result.admission?.limit, limit)
            const startedAt = call.askedAt + result.admission!.waitedMs
            const after = call.answeredAt - (startedAt + 3000)
            inputs++
            worst = Math.max(worst, after)
            if (after > ANSWER_BOUND_MS || result.durationMs > 3000 + ANSWER_BOUND_MS) late++
            return startedAt
          })
          // a slot is held from the start through the deadline: those windows overlap at most
          // `limit` deep (shrunk by the rounding of waitedMs)
          const windows = admitted.map((at) => [at + 2, at + 2998] as const)
          for (const [from] of windows) {
            const deep = windows.filter(([a, b]) => a <= from && from < b).length
            assert.isAtMost(deep, limit)
          }
          if (calls.length > limit)
            assert.isAtLeast(
              calls.filter((call) => partialOf(call.exit)!.admission!.waitedMs > 0).length,
              calls.length - limit
            )
        }
        reportReliability(
          "deadlines under load",
          { inputs, late },
          `${BURSTS} burst(s) of 200 concurrent Bash calls with a 3 s timeout on one host: answered within ${ANSWER_BOUND_MS} ms of the deadline (wait excluded), worst ${Math.round(worst)} ms`
        )
        assert.strictEqual(late, 0, `worst ${worst} ms after the deadline`)
        assert.deepStrictEqual(processesNamed(`sleep ${tag}`), [])
      }),
    { timeout: BURSTS * 600_000 }
  )

  /** How far past its deadline the watchdog signals a call whose host is blocked: the backstop's 250 ms plus a generous margin for a loaded machine. */
  const BACKSTOP_BOUND_MS = 250 + 1500
  const FROZEN_MS = 5000

  const frozenHost = (supervisor: Supervisor.Options, tag: string) =>
    Effect.gen(function* () {
      yield* Effect.addFinalizer(() => killNamed(`sleep ${tag}`))
      const env = yield* testEnv({}, undefined, supervisor)
      const mark = path.join(env.workspace, "termed")
      return yield* Effect.gen(function* () {
        // the tier is decided and the watchdog runs before the measured call
        yield* Bash.run({ command: "true" })
        const askedAt = yield* Clock.currentTimeMillis
        const call = yield* Effect.fork(
          Effect.exit(
            Bash.run({
              command: `trap 'date +%s%3N > ${mark}; exit 0' TERM; sleep ${tag} & wait`,
              timeout: 1
            })
          )
        )
        yield* Effect.sleep(Duration.millis(300))
        // the host's event loop blocked for 5 s: no timer, no I/O, no fiber runs
        const thawAt = yield* blockEventLoop(FROZEN_MS)
        const exit = yield* Fiber.join(call)
        const termedAt = fs.existsSync(mark) ? Number(fs.readFileSync(mark, "utf8")) : Number.NaN
        return { askedAt, thawAt, termedAt, exit }
      }).pipe(Effect.provide(env.layer))
    })

  const tiers = [
    ...(cgroupParent() === undefined
      ? []
      : [{ name: "cgroup", options: { containment: "cgroup" } as const }]),
    { name: "group", options: { containment: "group" } as const }
  ]
  for (const tier of tiers) {
    it.scopedLive(
      `${tier.name} tier: a host loop blocked for 5 s does not delay the deadline's SIGTERM (the watchdog sends it); the call answers TOOL_TIMEOUT`,
      () =>
        Effect.gen(function* () {
          let late = 0
          let worst = 0
          for (let run = 0; run < FROZEN_RUNS; run++) {
            const ran = yield* Effect.scoped(frozenHost(tier.options, "1000.72"))
            // when the call's own shell received SIGTERM, by its own clock
            const after = ran.termedAt - ran.askedAt
            worst = Math.max(worst, after)
            if (!(after <= 1000 + BACKSTOP_BOUND_MS && ran.termedAt < ran.thawAt)) late++
            assert.instanceOf(failureOf(ran.exit), Bash.ToolTimeout)
            assert.isTrue(partialOf(ran.exit)!.termination.deadlineBackstop)
            assert.deepStrictEqual(processesNamed("sleep 1000.72"), [])
          }
          reportReliability(
            `frozen host deadline ${tier.name}`,
            { inputs: FROZEN_RUNS, late },
            `a 1 s timeout while the host's event loop is blocked for ${FROZEN_MS} ms (${tier.name} tier): SIGTERM within ${1000 + BACKSTOP_BOUND_MS} ms of the call, worst ${Math.round(worst)} ms`
          )
          assert.strictEqual(late, 0, `SIGTERM ${worst} ms after the call began`)
        }),
      { timeout: FROZEN_RUNS * 60_000 }
    )
  }

  it.scopedLive(
    "without the backstop (deadlineBackstop: false) the blocked host signals only after it thawed, and the result says so",
    () =>
      Effect.gen(function* () {
        const ran = yield* frozenHost({ containment: "group", deadlineBackstop: false }, "1000.73")
        assert.isAtLeast(ran.termedAt, ran.thawAt)
        const termination = partialOf(ran.exit)!.termination
        assert.isFalse(termination.deadlineBackstop)
        assert.match(termination.deadlineBackstopReason!, /deadlineBackstop: false/)
      }),
    { timeout: 60_000 }
  )
})
