/**
 * The torture suite (rules X5, X6) in this machine's tiers, with the native launcher where it is
 * built: every scenario of `tortureScenarios.ts`, three runs each (the 200 MiB one once outside the
 * long mode), all scenarios of a tier at once. The cgroup tier runs its calls in PID namespaces
 * where the launcher makes them (the pids a call records are the namespace's), and once more
 * without, where each recorded pid is checked among those the call signalled.
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
if (cgroupParent() !== undefined) {
  registerTorture({
    label: "cgroup tier, no namespaces",
    containment: "cgroup",
    supervisor: { namespaces: false },
    mark: "5",
    runs: 1,
    // the streaming scenario measures output, not containment: the default registration runs it
    include: (scenario) => !scenario.name.startsWith("200 MiB")
  })
}
