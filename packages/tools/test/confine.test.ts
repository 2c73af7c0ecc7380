/**
 * The command lines around a call's shell (`internal/supervisor/confine.ts`): whatever guards
 * apply — the launcher with Landlock scopes, an address-space ceiling and cgroup v1 cgroups to
 * join, `ulimit -v` without it, or nothing — the program runs with exactly its arguments (run for
 * real), the launcher options are there iff the guards ask for them, and a server request carries
 * the same options.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { Confinement } from "@toolcap/tools"
import * as Confine from "../src/internal/supervisor/confine.js"

const launcher = fs.existsSync(Effect.runSync(Confinement.launcherPath))
  ? Effect.runSync(Confinement.launcherPath)
  : undefined
const MIB = 1024 * 1024

/** Guards as a layer and a call may combine them (scopes only with a launcher, as the layer decides). */
const guards: FastCheck.Arbitrary<Confine.Guards> = FastCheck.record({
  withLauncher: FastCheck.boolean(),
  scope: FastCheck.boolean(),
  memory: FastCheck.option(
    FastCheck.integer({ min: 256, max: 4096 }).map((mib) => mib * MIB),
    { nil: undefined }
  )
}).map(({ memory, scope, withLauncher }) => {
  const path = withLauncher ? launcher : undefined
  return { launcher: path, scope: scope && path !== undefined, memoryBytes: memory }
})

/** Arguments a command may have: any text without NUL (which no argv can carry). */
const args = FastCheck.array(
  FastCheck.string({ unit: "binary", maxLength: 20 }).filter((arg) => !arg.includes("\0")),
  { maxLength: 5 }
)

/** Prints its arguments, NUL-terminated. */
const PRINT = 'for a in "$@"; do printf "%s\\0" "$a"; done'

describe("the command line around a call's shell", () => {
  it.prop(
    "in place: the program gets exactly its arguments, under the launcher's options iff the guards ask",
    [guards, args],
    ([chosen, argv]) => {
      const line = Confine.inPlace(chosen, "/bin/sh", ["-c", PRINT, "sh", ...argv])
      const tail = ["-c", PRINT, "sh", ...argv]
      assert.deepStrictEqual(line.args.slice(line.args.length - tail.length), tail)
      const viaLauncher = chosen.launcher !== undefined && (chosen.scope || chosen.memoryBytes !== undefined)
      assert.strictEqual(line.file === chosen.launcher, viaLauncher)
      assert.strictEqual(line.args.includes("--scope"), viaLauncher && chosen.scope)
      assert.strictEqual(Confine.usesLauncher(chosen, undefined), viaLauncher)
      const run = spawnSync(line.file, line.args, { encoding: "utf8" })
      assert.strictEqual(run.status, 0, run.stderr)
      assert.deepStrictEqual(run.stdout, argv.map((arg) => `${Buffer.from(arg).toString("utf8")}\0`).join(""))
    },
    { fastCheck: { numRuns: 40 } }
  )

  it.prop(
    "into a cgroup: the program and its arguments close the line, behind the entry",
    [guards, args, FastCheck.constantFrom<Array<"launcher" | "prologue">>("launcher", "prologue")],
    ([chosen, argv, entry]) => {
      const line = Confine.intoCgroup(entry, "/sys/fs/cgroup/x", chosen, "/bin/bash", ["-c", "true", ...argv])
      const tail = ["/bin/bash", "-c", "true", ...argv]
      assert.deepStrictEqual(line.args.slice(line.args.length - tail.length), tail)
      if (entry === "launcher" && chosen.launcher !== undefined) {
        assert.strictEqual(line.file, chosen.launcher)
        assert.deepStrictEqual(line.args.slice(0, 2), ["--cgroup", "/sys/fs/cgroup/x"])
      } else {
        assert.deepStrictEqual(line.args.slice(0, 3), ["-c", Confine.PROLOGUE, "/sys/fs/cgroup/x"])
      }
      const options = Confine.serverOptions(chosen)
      assert.strictEqual(options?.includes("scope") ?? false, chosen.scope)
      assert.strictEqual(
        options?.includes(`as=${chosen.memoryBytes}`) ?? false,
        chosen.memoryBytes !== undefined
      )
    }
  )

  it.prop(
    "the call's cgroup v1 cgroups: joined through the launcher's --cgroup1 (and a request's cgroup1=), else the prologue",
    [
      guards,
      FastCheck.uniqueArray(FastCheck.constantFrom("/sys/fs/cgroup/memory/t/a", "/sys/fs/cgroup/pids/t/a"))
    ],
    ([chosen, dirs]) => {
      const withDirs: Confine.Guards = { ...chosen, cgroup1: dirs }
      const line = Confine.intoCgroup("launcher", "/sys/fs/cgroup/x", withDirs, "/bin/bash", ["-c", "true"])
      const options = Confine.serverOptions(withDirs)
      for (const dir of dirs) {
        if (chosen.launcher !== undefined) {
          assert.include(line.args.join(" "), `--cgroup1 ${dir}`)
          assert.include(options ?? "", `cgroup1=${dir}`)
        } else {
          // the prologue's shell joins them itself before the command runs
          assert.include(line.args, dir)
        }
      }
      assert.deepStrictEqual(line.args.slice(-3), ["/bin/bash", "-c", "true"])
    }
  )
})
