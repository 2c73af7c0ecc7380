// Kernel confinement of ripgrep: through the launcher, ripgrep reads beneath the given roots and
// nothing else, even a file named on its command line or reached through a symlink.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { rgPath } from "@vscode/ripgrep"
import { Confinement, Supervisor } from "@toolcap/tools"
import { tempDir, writeTree } from "./readFixtures.js"

describe("Confinement", () => {
  it.scopedLive("an unconfined run (no roots) is the command itself", () =>
    Effect.gen(function* () {
      const launch = yield* Confinement.command(rgPath, ["-n", "x"], undefined)
      assert.deepStrictEqual({ file: launch.file, args: launch.args }, { file: rgPath, args: ["-n", "x"] })
      assert.deepInclude(launch.guard, { landlockRead: false, launcher: false })
    }).pipe(Effect.provide(Supervisor.layer()))
  )

  it.scopedLive("where the kernel supports it, ripgrep cannot read outside the roots, links included", () =>
    Effect.gen(function* () {
      const support = yield* Confinement.support
      const inside = yield* tempDir("toolcap-confine-in-")
      const outside = yield* tempDir("toolcap-confine-out-")
      writeTree(inside, { "a.txt": "needle inside\n" })
      writeTree(outside, { "b.txt": "needle outside\n" })
      fs.symlinkSync(path.join(outside, "b.txt"), path.join(inside, "link.txt"))
      const args = ["--no-config", "--no-messages", "-L", "needle", ".", path.join(outside, "b.txt")]
      const launch = yield* Confinement.command(rgPath, args, [inside])
      const run = spawnSync(launch.file, launch.args as Array<string>, { cwd: inside, encoding: "utf8" })
      const bare = spawnSync(rgPath, args, { cwd: inside, encoding: "utf8" })
      assert.include(bare.stdout, "needle outside")
      if (support.kind === "landlock") {
        assert.include(run.stdout, "needle inside")
        assert.notInclude(run.stdout, "needle outside")
      } else {
        // the fallback is the bare command: the README says what stays open then
        assert.strictEqual(launch.file, rgPath)
        console.log(`no kernel confinement here: ${support.reason}`)
      }
    }).pipe(Effect.provide(Supervisor.layer()))
  )
})
