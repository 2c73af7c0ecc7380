/**
 * The torture suite (rules X5, X6) in this machine's tiers, with the native launcher where it is
 * built: every scenario of `tortureScenarios.ts`, three runs each (the 200 MiB one once outside the
 * long mode), all scenarios of a tier at once.
 */
import { afterAll, assert } from "@effect/vitest"
import type { Supervisor } from "@toolcap/tools"
import { cgroupParent, cgroupsOfThisWorker } from "./bashFixtures.js"
import { registerTorture } from "./tortureScenarios.js"

const tiers: ReadonlyArray<Supervisor.Tier> = cgroupParent() !== undefined ? ["cgroup", "group"] : ["group"]

afterAll(() => {
  // every call cgroup this worker made was removed by its call
  assert.deepStrictEqual(cgroupsOfThisWorker(), [])
})

for (const containment of tiers) {
  registerTorture({
    label: `${containment} tier`,
    containment,
    mark: containment === "cgroup" ? "1" : "2",
    runs: 3
  })
}
