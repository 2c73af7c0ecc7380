/**
 * The containment tiers: which one a runner takes, and that a call ends within its bound whatever
 * its tree does — an escapee that scrubbed its environment, left the group and holds the pipes
 * included. The cgroup tier stops such an escapee; the group tier cannot find it, closes its side
 * of the pipes and says so.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import { Bash, Supervisor } from "@toolcap/tools"
import {
  cgroupParent,
  fastGraces,
  isLive,
  killNamed,
  processesNamed,
  scopesOffered,
  testEnv,
  withHostReach
} from "./bashFixtures.js"
import { readPid, registerBoundCases, registerNestedCgroupEscapes } from "./containmentCases.js"

const tiers: ReadonlyArray<Supervisor.Tier> = cgroupParent() !== undefined ? ["cgroup", "group"] : ["group"]

/** The containment a supervisor with these options decides on (in its own scope, closed after). */
const containmentOf = (options: Supervisor.Options) =>
  Effect.scoped(Effect.flatMap(Supervisor.make(options), (supervisor) => supervisor.containment))

describe("the containment tier", () => {
  it.live("TOOLCAP_CONTAINMENT=group (or the option) forces the group tier; cgroup where it works", () =>
    Effect.gen(function* () {
      const forced = yield* containmentOf({ containment: "group" })
      assert.strictEqual(forced.containment, "group")
      assert.strictEqual(forced.fallbackReason, "the group tier was asked for")
      // the group tier's shell runs through the launcher too, for its scopes
      assert.strictEqual(forced.launcher, scopesOffered())
      assert.strictEqual(forced.landlockScopes, scopesOffered())
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
  registerBoundCases({
    label: `${containment} tier`,
    containment,
    supervisor: {},
    mark: containment === "cgroup" ? "6" : "7"
  })
}

for (const cgroupEntry of ["launcher", "prologue"] as const) {
  registerNestedCgroupEscapes({
    label: `cgroup tier, ${cgroupEntry} entry`,
    supervisor: { cgroupEntry },
    mark: cgroupEntry === "launcher" ? "81" : "82"
  })
}

const mount = Procfs.cgroup2()?.mount

describe.runIf(cgroupParent() !== undefined && mount !== undefined && process.getuid?.() === 0)(
  "a shell that moves itself out of the call's cgroup (root may write to any cgroup)",
  () => {
    for (const cgroupEntry of ["launcher", "prologue"] as const) {
      it.scopedLive(
        `past its deadline it and what it started are ended and reported (${cgroupEntry} entry)`,
        () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              containment: "cgroup",
              cgroupEntry
            })
            const tag = `1000.84${cgroupEntry === "launcher" ? 1 : 2}`
            yield* Effect.addFinalizer(() => killNamed(tag))
            const command = [
              `echo $$ > ${mount}/cgroup.procs || exit 3`,
              `echo $$ > shell; sleep ${tag}1 & echo $! > child`,
              `echo moved; exec sleep ${tag}2`
            ].join("\n")
            const failed = yield* Bash.run({ command, timeout: 1 }).pipe(
              Effect.provide(env.layer),
              Effect.flip
            )
            assert.instanceOf(failed, Bash.ToolTimeout)
            assert.include(failed.partial.stdout, "moved")
            for (const name of ["shell", "child"]) {
              const pid = readPid(env.workspace, name)
              assert.include(failed.killedPids, pid, `${name} ${pid} was not reported stopped`)
              assert.isFalse(isLive(pid), `${name} ${pid} outlived the call`)
            }
            assert.deepStrictEqual(processesNamed(`sleep ${tag}`), [])
            assert.isFalse(fs.existsSync(path.join(cgroupParent()!, failed.partial.runId)))
          })
      )
    }
  }
)

/** A run id of a host that is gone: this worker's pid with a start time it never had. */
const deadHostRunId = (suffix: string) => `${process.pid.toString(36)}-1-${suffix}`

/** Waits (bounded by the test's timeout) until no process has exactly this command line. */
const gone = (cmdline: string) =>
  Effect.gen(function* () {
    while (processesNamed(cmdline).some((p) => p.cmdline === cmdline)) yield* Effect.sleep("20 millis")
  })

describe("the startup sweep: what a dead host left is stopped when a supervisor decides its tier", () => {
  it.scopedLive.skipIf(cgroupParent() === undefined)(
    "cgroup tier: a dead host's call cgroup is killed and removed, a cgroup made inside it too",
    () =>
      Effect.gen(function* () {
        const parent = cgroupParent()!
        const dir = path.join(parent, deadHostRunId("sweep"))
        const tag = "sleep 1000.91"
        yield* Effect.addFinalizer(() => killNamed(tag))
        // in a cgroup below the call's, as a command that made one and moved there leaves it
        fs.mkdirSync(path.join(dir, "inner"), { recursive: true })
        spawn("/bin/sh", ["-c", `echo $$ > ${dir}/inner/cgroup.procs; exec ${tag}`], {
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
