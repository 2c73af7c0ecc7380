/**
 * A Bash call's bounds on real processes: the task limit (`bashTasksMax`) stops a 6,000-iteration
 * fork loop at the limit, names the refused forks in the notice, and the host keeps answering;
 * under a 256 MiB memory ceiling, 1 GiB of shared anonymous memory, of a memfd, or written to
 * /dev/shm does not succeed and leaves nothing pinned (no file left in /dev/shm, the call's
 * cgroups gone); the fallback with no memory controller (forced by option) runs here too and
 * names `RLIMIT_AS`, which refuses the shared mapping. Each result says which bound applied,
 * by which mechanism, and whether it was reached.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Bash, type Supervisor } from "@toolcap/tools"
import * as V1 from "../src/internal/supervisor/cgroupV1.js"
import { cgroupParent, fastGraces, killNamed, processesNamed, testEnv } from "./bashFixtures.js"

const MIB = 1024 * 1024
const CEILING = 256 * MIB
const TASKS = 256
const parent = cgroupParent()
const v1 = V1.detect(`probe.${process.pid}.bounds`)
/** Whether this host has a pids controller for a call (v2 here has none; v1 may). */
const pidsHere = "parent" in v1.pids
/** Whether this host has a memory controller for a call. */
const memoryHere = "parent" in v1.memory

const tiers: ReadonlyArray<{ readonly label: string; readonly supervisor: Supervisor.Options }> = [
  ...(parent === undefined ? [] : [{ label: "cgroup tier", supervisor: { containment: "cgroup" } } as const]),
  { label: "group tier", supervisor: { containment: "group" } },
  { label: "no launcher", supervisor: { launcher: false } }
]

/**
 * The long mode (`pnpm bench`) runs the whole 6,000-iteration loop in every setup; the default
 * suite in the first only, and 600 iterations (past the limit of 256 still) in the others: each
 * refused fork costs the kernel a copy of the forking process's page tables (~3 ms for python).
 */
const LONG = process.env["TOOLCAP_LONG_TESTS"] === "1"

/** `iterations` forks, each child sleeping; prints how many succeeded and how many the kernel refused. */
const forkLoop = (tag: string, iterations: number) =>
  `python3 -c "
import os, time
ok = failed = 0
for i in range(${iterations}):
    try:
        pid = os.fork()
    except OSError:
        failed += 1
        continue
    if pid == 0:
        time.sleep(600)  # ${tag}
        os._exit(0)
    ok += 1
print('forked', ok, 'refused', failed, flush=True)
"`

describe("Bash's task limit", () => {
  tiers.forEach(({ label, supervisor }, index) => {
    const iterations = LONG || index === 0 ? 6000 : 600
    it.scopedLive(
      `${label}: a fork loop stops at the task limit, the notice names the refused forks`,
      () =>
        Effect.gen(function* () {
          const tag = `tasks.${label.replace(/\W/g, "")}.${process.pid}`
          yield* Effect.addFinalizer(() => killNamed(tag))
          const env = yield* testEnv({ ...fastGraces, bashTasksMax: TASKS }, undefined, supervisor)
          const result = yield* Bash.run({ command: forkLoop(tag, iterations), timeout: 120 }).pipe(
            Effect.provide(env.layer)
          )
          const limit = result.termination.taskLimit
          assert.isDefined(limit)
          assert.strictEqual(limit!.maxTasks, TASKS)
          if (!pidsHere && (limit!.enforcedBy === "none" || parent === undefined)) {
            // no pids controller here: the result says so, and why
            assert.strictEqual(limit!.enforcedBy, "none")
            assert.isString(limit!.reason)
            return
          }
          assert.strictEqual(limit!.enforcedBy, "cgroup", limit!.reason)
          const counts = /forked (\d+) refused (\d+)/.exec(result.stdout)
          assert.isNotNull(counts, result.output)
          assert.isBelow(Number(counts![1]), TASKS)
          assert.isAbove(Number(counts![2]), 0)
          assert.isTrue(limit!.reached)
          assert.isAbove(limit!.forkFailures ?? 0, 0)
          assert.include(result.output, `reached its task limit of ${TASKS}`)
          assert.include(result.output, "forks (EAGAIN")
          // every child was stopped with the call, and the host answers the next call
          assert.deepStrictEqual(processesNamed(tag), [])
          const next = yield* Bash.run({ command: "echo answering" }).pipe(Effect.provide(env.layer))
          assert.include(next.stdout, "answering")
          assert.isFalse(next.termination.taskLimit?.reached ?? false)
        }),
      { timeout: 180_000 }
    )
  })

  it.scopedLive("off with bashTasksMax 0: no limit applied, none reported", () =>
    Effect.gen(function* () {
      const env = yield* testEnv({ ...fastGraces, bashTasksMax: 0 })
      const result = yield* Bash.run({ command: "echo ok" }).pipe(Effect.provide(env.layer))
      assert.strictEqual(result.termination.taskLimit, undefined)
    })
  )
})

/** The attacks on the memory ceiling: each tries to hold 1 GiB and prints `held` if it could. */
const attacks: ReadonlyArray<{ readonly name: string; readonly command: (file: string) => string }> = [
  {
    name: "mmap(MAP_SHARED|MAP_ANONYMOUS)",
    command: () =>
      `python3 -c "
import mmap
m = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
for at in range(0, 1 << 30, 4096): m[at] = 1
print('held', flush=True)
"`
  },
  {
    name: "memfd_create",
    command: () =>
      `python3 -c "
import os
fd = os.memfd_create('hold')
chunk = b'x' * (1 << 20)
for i in range(1024): os.write(fd, chunk)
print('held', flush=True)
"`
  },
  {
    name: "/dev/shm",
    command: (file) => `dd if=/dev/zero of=${file} bs=1M count=1024 status=none && echo held`
  }
]

describe("Bash's memory ceiling holds shared memory too", () => {
  for (const attack of attacks) {
    it.scopedLive.runIf(memoryHere || parent !== undefined)(
      `1 GiB through ${attack.name} under a 256 MiB ceiling does not succeed and leaves nothing pinned`,
      () =>
        Effect.gen(function* () {
          const file = path.join("/dev/shm", `toolcap-test-${process.pid}-${attack.name.length}`)
          yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(file, { force: true })))
          const env = yield* testEnv({ ...fastGraces, bashMemoryMaxBytes: CEILING })
          const result = yield* Bash.run({ command: attack.command(file), timeout: 60 }).pipe(
            Effect.provide(env.layer)
          )
          assert.notInclude(result.stdout, "held")
          const ceiling = result.termination.memoryCeiling!
          assert.strictEqual(ceiling.enforcedBy, "cgroup", ceiling.reason)
          assert.isTrue(ceiling.reached)
          assert.include(result.output, "reached its memory ceiling of 256MB")
          // nothing pinned: the file is gone, and so are the call's cgroups
          assert.isFalse(fs.existsSync(file), "the call's /dev/shm file outlived it")
          if (attack.name === "/dev/shm")
            assert.include(result.termination.shmRemoved ?? [], path.basename(file))
          for (const found of Object.values(v1)) {
            if ("parent" in found) assert.isFalse(fs.existsSync(path.join(found.parent, result.runId)))
          }
        })
    )
  }

  it.scopedLive(
    "the fallback without a memory controller (forced) names RLIMIT_AS and refuses the shared mapping",
    () =>
      Effect.gen(function* () {
        const env = yield* testEnv({ ...fastGraces, bashMemoryMaxBytes: CEILING }, undefined, {
          memoryController: false
        })
        const result = yield* Bash.run({ command: attacks[0]!.command("") }).pipe(Effect.provide(env.layer))
        assert.notInclude(result.stdout, "held")
        assert.notStrictEqual(result.exitCode, 0)
        const ceiling = result.termination.memoryCeiling!
        assert.strictEqual(ceiling.enforcedBy, "rlimit")
        assert.strictEqual(ceiling.mechanism, "RLIMIT_AS")
        assert.include(ceiling.reason!, "memoryController: false")
        assert.include(result.output, "(RLIMIT_AS)")
      })
  )

  it.scopedLive("a /dev/shm file the call left is removed when it ends (no memory ceiling)", () =>
    Effect.gen(function* () {
      const file = path.join("/dev/shm", `toolcap-test-${process.pid}-left`)
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(file, { force: true })))
      const env = yield* testEnv(fastGraces)
      const result = yield* Bash.run({ command: `echo data > ${file} && echo written` }).pipe(
        Effect.provide(env.layer)
      )
      assert.include(result.stdout, "written")
      assert.isFalse(fs.existsSync(file))
      assert.deepStrictEqual(result.termination.shmRemoved, [path.basename(file)])
      assert.include(result.output, "removed 1 file(s) the call left in /dev/shm")
    })
  )
})
