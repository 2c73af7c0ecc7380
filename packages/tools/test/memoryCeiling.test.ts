/**
 * Bash's memory ceiling (`bashMemoryMaxBytes`, off by default): `memory.max` on the call's cgroup
 * where the cgroup v2 memory controller is enabled for its parent, else a cgroup v1 memory cgroup
 * of the call where the host has one (hybrid hosts), else `RLIMIT_AS` of every process of the call
 * (the launcher's `--address-space`, or `ulimit -v` without the launcher; forced here with the
 * option `memoryController: false`). A program allocating past it fails (or is killed by the
 * kernel's OOM killer), one under it runs, and the result's `termination.memoryCeiling` says how
 * the ceiling was enforced and whether it was reached.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Bash, type Supervisor } from "@toolcap/tools"
import * as Bounds from "../src/internal/supervisor/bounds.js"
import * as V1 from "../src/internal/supervisor/cgroupV1.js"
import { cgroupParent, fastGraces, testEnv } from "./bashFixtures.js"

const MIB = 1024 * 1024
const CEILING = 64 * MIB
const parent = cgroupParent()
const allocate = (mib: number) =>
  `python3 -c "b = bytearray(${mib} * 1024 * 1024); b[-1] = 1; print('allocated')"`

const setups: ReadonlyArray<{ readonly label: string; readonly supervisor: Supervisor.Options }> = [
  ...(parent === undefined ? [] : [{ label: "cgroup tier", supervisor: { containment: "cgroup" } } as const]),
  { label: "group tier", supervisor: { containment: "group" } },
  ...(parent === undefined
    ? []
    : [
        { label: "cgroup tier, no launcher", supervisor: { containment: "cgroup", launcher: false } } as const
      ]),
  { label: "group tier, no launcher", supervisor: { containment: "group", launcher: false } },
  // the fallback of a host without a memory controller, forced: it runs here too
  { label: "no memory controller", supervisor: { memoryController: false } },
  { label: "no memory controller, no launcher", supervisor: { memoryController: false, launcher: false } }
]

/** Whether a call with these options gets its ceiling from a memory controller here. */
const controllerHere = (supervisor: Supervisor.Options): boolean => {
  if (supervisor.memoryController === false) return false
  const tier = supervisor.containment ?? (parent === undefined ? "group" : "cgroup")
  if (tier === "cgroup" && Bounds.v2Unavailable(parent!, "memory") === undefined) return true
  return "parent" in V1.detect(`probe.${process.pid}.test`).memory
}

describe("Bash's memory ceiling", () => {
  it.scopedLive("off by default: no ceiling applied, none reported", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces)
      const result = yield* Bash.run({ command: allocate(128) }).pipe(Effect.provide(env.layer))
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.termination.memoryCeiling, undefined)
    })
  )

  for (const { label, supervisor } of setups) {
    it.scopedLive(`${label}: past the ceiling fails, under it runs, the result says how it applied`, () =>
      Effect.gen(function* () {
        const env = yield* testEnv({ ...fastGraces, bashMemoryMaxBytes: CEILING }, undefined, supervisor)
        const onCgroup = controllerHere(supervisor)

        const under = yield* Bash.run({ command: allocate(8) }).pipe(Effect.provide(env.layer))
        assert.strictEqual(under.exitCode, 0, under.output)
        assert.include(under.stdout, "allocated")

        const past = yield* Bash.run({ command: allocate(256) }).pipe(Effect.provide(env.layer))
        assert.notInclude(past.stdout, "allocated")
        const ceiling = past.termination.memoryCeiling
        assert.isDefined(ceiling)
        assert.strictEqual(ceiling!.maxBytes, CEILING)
        if (onCgroup) {
          assert.strictEqual(ceiling!.enforcedBy, "cgroup", ceiling!.reason)
          assert.isTrue(ceiling!.reached)
          assert.include(past.output, "reached its memory ceiling of 64MB")
        } else {
          // per process: the allocation fails inside the program, which says so
          assert.strictEqual(ceiling!.enforcedBy, "rlimit")
          assert.strictEqual(ceiling!.mechanism, "RLIMIT_AS")
          assert.isString(ceiling!.reason)
          assert.notStrictEqual(past.exitCode, 0)
          assert.include(past.stderr, "MemoryError")
          assert.include(past.output, "a memory ceiling of 64MB per process (RLIMIT_AS) applied")
        }
      })
    )
  }
})
