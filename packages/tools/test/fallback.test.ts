/**
 * The no-launcher path every install without a C compiler gets: the Supervisor with its native
 * launcher turned off (`launcher: false`, as when `toolcap-confine` is not built). The cgroup tier
 * then enters by the `/bin/sh` prologue and no call gets Landlock scopes; the containment cases
 * (escapees, nested cgroups, timeout, abort, interruption) and the torture scenarios hold all the
 * same, and every result says why the weaker guards applied.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Supervisor } from "@toolcap/tools"
import { cgroupParent, cgroupsOfThisWorker } from "./bashFixtures.js"
import { registerBoundCases, registerNestedCgroupEscapes } from "./containmentCases.js"
import { registerTorture } from "./tortureScenarios.js"

const tiers: ReadonlyArray<Supervisor.Tier> = cgroupParent() !== undefined ? ["cgroup", "group"] : ["group"]
const noLauncher: Supervisor.Options = { launcher: false }
const OFF = "the launcher was turned off (Supervisor option launcher: false)"

afterAll(() => {
  // every call cgroup this worker made was removed by its call
  assert.deepStrictEqual(cgroupsOfThisWorker(), [])
})

describe("without the launcher", () => {
  for (const containment of tiers) {
    it.live(`the ${containment} tier reports no launcher, no scopes, and why`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const chosen = yield* (yield* Supervisor.make({ ...noLauncher, containment })).containment
          assert.strictEqual(chosen.containment, containment)
          assert.isFalse(chosen.launcher)
          assert.isFalse(chosen.landlockScopes)
          assert.strictEqual(chosen.landlockScopesReason, OFF)
          if (containment === "cgroup") {
            assert.strictEqual(chosen.cgroupEntry, "prologue")
            assert.strictEqual(chosen.fallbackReason, OFF)
          }
        })
      )
    )
  }
})

for (const containment of tiers) {
  registerBoundCases({
    label: `${containment} tier, no launcher`,
    containment,
    supervisor: noLauncher,
    mark: containment === "cgroup" ? "55" : "56"
  })
  registerTorture({
    label: `${containment} tier, no launcher`,
    containment,
    supervisor: noLauncher,
    mark: containment === "cgroup" ? "3" : "4",
    runs: 1,
    // the streaming scenario measures output, not containment: the default suite runs it
    include: (scenario) => !scenario.name.startsWith("200 MiB")
  })
}

registerNestedCgroupEscapes({ label: "cgroup tier, no launcher", supervisor: noLauncher, mark: "83" })
