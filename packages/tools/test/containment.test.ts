/**
 * The containment tiers: which one a runner takes, and that a call ends within its bound whatever
 * its tree does — an escapee that scrubbed its environment, left the group and holds the pipes
 * included. The cgroup tier stops such an escapee; the group tier cannot find it, closes its side
 * of the pipes and says so.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { Procfs } from "@toolcap/spill"
import * as os from "node:os"
import * as path from "node:path"
import { Bash, Supervisor } from "@toolcap/tools"
import {
  cgroupParent,
  fastGraces,
  isLive,
  killNamed,
  processesNamed,
  runRecorded,
  testEnv
} from "./bashFixtures.js"

const tiers: ReadonlyArray<Supervisor.Tier> = cgroupParent() !== undefined ? ["cgroup", "group"] : ["group"]

/** The containment a supervisor with these options decides on (in its own scope, closed after). */
const containmentOf = (options: Supervisor.Options) =>
  Effect.scoped(Effect.flatMap(Supervisor.make(options), (supervisor) => supervisor.containment))

describe("the containment tier", () => {
  it.live("TOOLCAP_CONTAINMENT=group (or the option) forces the group tier; cgroup where it works", () =>
    Effect.gen(function* () {
      const forced = yield* containmentOf({ containment: "group" })
      assert.deepStrictEqual(forced, { containment: "group", fallbackReason: "the group tier was asked for" })
      const auto = yield* containmentOf({})
      const forcedByEnvironment = process.env[Supervisor.containmentVariable] === "group"
      assert.strictEqual(
        auto.containment,
        cgroupParent() !== undefined && !forcedByEnvironment ? "cgroup" : "group"
      )
      // the best tier says no fallback; a weaker one says why
      assert.strictEqual(
        auto.fallbackReason === undefined,
        auto.containment === "cgroup" && auto.cgroupEntry === "launcher"
      )
    })
  )
})

for (const containment of tiers) {
  describe(`a call ends within its bound whatever the tree does (${containment} tier)`, () => {
    it.scopedLive("an escapee under env -i setsid -f holding the pipes, on timeout and after an exit", () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces, undefined, { containment })
        const layer = env.layer
        const tag = `sleep 1000.${containment === "cgroup" ? 61 : 62}`
        yield* Effect.addFinalizer(() => killNamed(tag))
        const pidFile = path.join(env.workspace, "escapee")
        const escape = `env -i setsid -f sh -c 'echo $$ > escapee; exec ${tag}'; while [ ! -s escapee ]; do sleep 0.01; done`

        for (const [command, timeout] of [
          [`${escape}; echo started; sleep 30`, 1],
          [`${escape}; echo started`, 10]
        ] as const) {
          fs.rmSync(pidFile, { force: true })
          const recorded = yield* runRecorded({ command, timeout }).pipe(Effect.provide(layer))
          const escapee = Number(fs.readFileSync(pidFile, "utf8"))
          const result = Either.match(recorded.result, {
            onLeft: (error) => {
              assert.instanceOf(error, Bash.ToolTimeout)
              return error.partial
            },
            onRight: (r) => r
          })
          assert.strictEqual(result.termination.containment, containment)
          assert.include(result.stdout, "started")
          if (containment === "cgroup") {
            // the kernel followed it: stopped with the rest, nothing left holding the pipes
            assert.include(result.killedPids, escapee)
            assert.isFalse(isLive(escapee))
          } else {
            // returned while the escapee still holds the pipes: our side was closed, and the result says so
            assert.isTrue(isLive(escapee), "the escapee outlives the call in the group tier")
            assert.isTrue(result.termination.pipesHeld)
            assert.include(result.output, "still held open by a process outside the tree")
            process.kill(escapee, "SIGKILL")
          }
          assert.strictEqual(recorded.lateChunks(), 0)
        }
      })
    )

    it.scopedLive("fiber interruption during such a call ends it: the release never waits on the pipes", () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces, undefined, { containment })
        const layer = env.layer
        const tag = `sleep 1000.${containment === "cgroup" ? 63 : 64}`
        yield* Effect.addFinalizer(() => killNamed(tag))
        const started = yield* Deferred.make<void>()
        // "started" once the escapee wrote its pid, which it does after leaving the session: an
        // interruption before that would still find it in the call's process group
        const escape = `env -i setsid -f sh -c 'echo $$ > escapee; exec ${tag}'; while [ ! -s escapee ]; do sleep 0.01; done`
        const fiber = yield* Bash.run(
          { command: `${escape}; echo started; sleep 30`, timeout: 60 },
          {
            onChunk: (chunk) =>
              void (chunk.data.includes("started") && Deferred.unsafeDone(started, Exit.void))
          }
        ).pipe(Effect.provide(layer), Effect.fork)
        yield* Deferred.await(started)
        const exit = yield* Fiber.interrupt(fiber)
        assert.isTrue(Exit.isInterrupted(exit))
        const escapees = processesNamed(tag)
        assert.strictEqual(escapees.length, containment === "cgroup" ? 0 : 1)
      })
    )
  })
}

/** A run id of a host that is gone: this worker's pid with a start time it never had. */
const deadHostRunId = (suffix: string) => `${process.pid.toString(36)}-1-${suffix}`

/** Waits (bounded by the test's timeout) until no process has exactly this command line. */
const gone = (cmdline: string) =>
  Effect.gen(function* () {
    while (processesNamed(cmdline).some((p) => p.cmdline === cmdline)) yield* Effect.sleep("20 millis")
  })

describe("the startup sweep: what a dead host left is stopped when a supervisor decides its tier", () => {
  it.scopedLive.skipIf(cgroupParent() === undefined)(
    "cgroup tier: a dead host's call cgroup is killed and removed",
    () =>
      Effect.gen(function* () {
        const parent = cgroupParent()!
        const dir = path.join(parent, deadHostRunId("sweep"))
        const tag = "sleep 1000.91"
        yield* Effect.addFinalizer(() => killNamed(tag))
        fs.mkdirSync(dir, { recursive: true })
        spawn("/bin/sh", ["-c", `echo $$ > ${dir}/cgroup.procs; exec ${tag}`], {
          detached: true,
          stdio: "ignore"
        }).unref()
        // another test worker's supervisor may sweep it first (its owner looks gone to every host):
        // then the cgroup is gone already, as it must be after this one's sweep
        while (!processesNamed(tag).some((p) => p.cmdline === tag) && fs.existsSync(dir)) {
          yield* Effect.sleep("10 millis")
        }
        yield* containmentOf({ containment: "cgroup" })
        // the sweep ran while the tier was decided
        assert.isFalse(fs.existsSync(dir))
        yield* gone(tag)
      })
  )

  it.scopedLive("group tier: processes carrying a dead host's cookie are stopped", () =>
    Effect.gen(function* () {
      const tag = "sleep 1000.92"
      yield* Effect.addFinalizer(() => killNamed(tag))
      spawn("/bin/sh", ["-c", `setsid ${tag} & exec ${tag}`], {
        detached: true,
        stdio: "ignore",
        env: { ...process.env, TOOLCAP_RUN_ID: deadHostRunId("sweep") }
      }).unref()
      while (processesNamed(tag).filter((p) => p.cmdline === tag).length < 2) yield* Effect.sleep("10 millis")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const supervisor = yield* Supervisor.make({ containment: "group" })
          yield* supervisor.containment
          // the cookie sweep runs in the background (in the layer's scope): it ends both, the one
          // in a session of its own too
          yield* gone(tag)
        })
      )
    })
  )
})

describe("Supervisor.start", () => {
  for (const containment of tiers) {
    it.scopedLive(`closing the scope stops the whole tree and ends the streams (${containment} tier)`, () =>
      Effect.gen(function* () {
        const tag = `sleep 1000.5${containment === "cgroup" ? 1 : 2}`
        yield* Effect.addFinalizer(() => killNamed(tag))
        const supervisor = yield* Supervisor.make({ containment })
        // a run id of this (live) host, so no startup sweep takes the tree for a dead host's
        const started = Number(Procfs.startTimeOf(process.pid))
        const runId = `${process.pid.toString(36)}-${started.toString(36)}-spawn${containment}`
        const out = yield* Effect.scoped(
          Effect.gen(function* () {
            const proc = yield* supervisor.start({
              file: "/bin/sh",
              args: ["-c", `${tag} & setsid ${tag} & echo started; wait`],
              cwd: os.tmpdir(),
              tree: { runId, killGraceMs: 200, killWaitMs: 1000, drainMs: 1000 }
            })
            assert.strictEqual(proc.containment?.containment, containment)
            const first = yield* proc.stdout.pipe(Stream.take(1), Stream.runCollect)
            while (processesNamed(tag).filter((p) => p.cmdline === tag).length < 2)
              yield* Effect.sleep("10 millis")
            return { proc, first }
          })
        )
        // the scope is closed: nothing of the tree runs, the report says what was stopped, and
        // both streams end
        assert.deepStrictEqual(
          processesNamed(tag).filter((p) => p.cmdline === tag),
          []
        )
        const stopped = yield* out.proc.stopped
        assert.isAtLeast(stopped.signalled.length, 3)
        assert.deepStrictEqual(stopped.survivors, [])
        assert.include(new TextDecoder().decode(Chunk.unsafeGet(out.first, 0)), "started")
        yield* Stream.runDrain(out.proc.stdout)
        yield* Stream.runDrain(out.proc.stderr)
      })
    )
  }
})
