// The runner's tier check (scripts/tiers.mjs, run by `pnpm test`): a guarded suite that did not run
// where the machine offers its tier fails the run, and the runner's own detection agrees with the
// probes the guarded suites use, so neither can drift into passing without proving.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Confinement } from "@toolcap/tools"
import { checkGuards, detectTiers, GUARDS, type Report } from "../../../scripts/tiers.mjs"
import { cgroupParent, scopesOffered } from "./bashFixtures.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const guard = {
  file: "packages/tools/test/lifeline.test.ts",
  name: "after its host is killed",
  needs: ["cgroup2 parent"]
}
const reportWith = (status: string): Report => ({
  testResults: [
    {
      name: path.join(root, guard.file),
      assertionResults: [
        { ancestorTitles: ["the lifeline after its host is killed (cgroup v2)"], title: "x", status }
      ]
    }
  ]
})

describe("the runner's tier check", () => {
  it("a guarded suite skipped where its tier exists is a failure; where the tier is absent it is not", () => {
    const here = { "cgroup2 parent": true }
    assert.deepStrictEqual(checkGuards(root, here, reportWith("passed"), [guard]).missed, [])
    assert.strictEqual(checkGuards(root, here, reportWith("skipped"), [guard]).missed.length, 1)
    assert.strictEqual(checkGuards(root, here, reportWith("pending"), [guard]).missed.length, 1)
    assert.deepStrictEqual(
      checkGuards(root, { "cgroup2 parent": false }, reportWith("skipped"), [guard]).missed,
      []
    )
  })

  it("a guarded suite missing from the report where its tier exists is a failure", () => {
    assert.strictEqual(
      checkGuards(root, { "cgroup2 parent": true }, { testResults: [] }, [guard]).missed.length,
      1
    )
  })

  it("every guard names a test file that exists and tiers the runner detects", () => {
    const tiers = detectTiers(root)
    for (const entry of GUARDS) {
      assert.isTrue(fs.existsSync(path.join(root, entry.file)), entry.file)
      for (const need of entry.needs) assert.include(Object.keys(tiers), need, `${entry.file} needs ${need}`)
    }
  })

  it("the runner detects the cgroup parent, the launcher and Landlock scopes as the guarded suites do", () => {
    const tiers = detectTiers(root)
    assert.strictEqual(tiers["cgroup2 parent"], cgroupParent() !== undefined)
    assert.strictEqual(tiers["launcher"], fs.existsSync(Effect.runSync(Confinement.launcherPath)))
    assert.strictEqual(tiers["landlock scopes"], scopesOffered())
  })
})
