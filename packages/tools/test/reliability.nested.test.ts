/**
 * Reliability: a call that makes cgroups inside its own and moves there, leaving a `setsid -f`
 * escapee and a writer loop behind (after an exit) or sleeping there itself past its deadline,
 * through the launcher entry and the prologue. Every run counts: an escapee or writer not reported
 * stopped (escapes), a process of it alive after the call (survivors), a cgroup directory left,
 * and a call that did not return within its bound (hangs). 4 runs by default (one per variant),
 * 100 per variant with TOOLCAP_LONG_TESTS=1; counts through `reportReliability`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { Procfs } from "@toolcap/spill"
import { Bash } from "@toolcap/tools"
import {
  cgroupParent,
  fastGraces,
  isLive,
  killNamed,
  runRecorded,
  testEnv,
  withHostReach
} from "./bashFixtures.js"
import { nestedCommand, readPid, removeCgroupTree } from "./containmentCases.js"

const RUNS = isLong() ? 100 : 1
/** A call bounded by a 1 s timeout (or ending by itself) that takes longer than this hangs. */
const HANG_MS = 20_000

const parent = cgroupParent()
const mount = Procfs.cgroup2()?.mount

const variants = [
  { entry: "launcher", ends: "exit", mark: "61" },
  { entry: "launcher", ends: "timeout", mark: "62" },
  { entry: "prologue", ends: "exit", mark: "63" },
  { entry: "prologue", ends: "timeout", mark: "64" }
] as const

describe.runIf(parent !== undefined && mount !== undefined)("reliability: nested-cgroup escapes", () => {
  it.scopedLive(
    `${RUNS * variants.length} calls that move into cgroups they made: 0 escapes, survivors, cgroups left, hangs`,
    () =>
      Effect.gen(function* () {
        const counts = { escapes: 0, survivors: 0, "cgroups left": 0, hangs: 0 }
        yield* Effect.addFinalizer(() => killNamed("sleep 1001.6"))
        for (const variant of variants) {
          const env = yield* testEnv(fastGraces, undefined, {
            ...withHostReach,
            containment: "cgroup",
            cgroupEntry: variant.entry
          })
          const timedOut = variant.ends === "timeout"
          const tag = `1001.${variant.mark}`
          const command = nestedCommand(
            mount!,
            timedOut ? ".nest" : "nest/deeper",
            tag,
            timedOut ? `exec sleep ${tag}9` : "echo done"
          )
          for (let run = 0; run < RUNS; run++) {
            for (const name of ["shell", "escapee", "writer"])
              fs.rmSync(path.join(env.workspace, name), { force: true })
            const recorded = yield* runRecorded({ command, timeout: timedOut ? 1 : 10 }).pipe(
              Effect.provide(env.layer),
              Effect.timeoutOption(Duration.millis(HANG_MS))
            )
            if (Option.isNone(recorded)) {
              counts.hangs++
              continue
            }
            const result = Either.match(recorded.value.result, {
              onLeft: (error) => (error instanceof Bash.ToolTimeout ? error.partial : undefined),
              onRight: (r) => r
            })
            // the wrong ending: a timeout for a call that exits, an exit for one past its deadline
            if (result === undefined || (result.exitCode === 0) === timedOut) {
              counts.hangs++
              continue
            }
            const pids = ["shell", "escapee", "writer"].map((name) => readPid(env.workspace, name))
            counts.escapes += (timedOut ? pids : pids.slice(1)).filter(
              (pid) => !result.killedPids.includes(pid)
            ).length
            counts.survivors += pids.filter(isLive).length + result.termination.survivors.length
            const dir = path.join(parent!, result.runId)
            if (fs.existsSync(dir)) {
              counts["cgroups left"]++
              yield* removeCgroupTree(dir)
            }
          }
        }
        reportReliability(
          "hostile nested-cgroup escapes",
          { inputs: RUNS * variants.length, ...counts },
          "Bash calls that mkdir cgroups inside their own, move there and leave a setsid -f escapee and a writer loop (after an exit) or sleep past a 1 s deadline; launcher and prologue entries"
        )
        assert.deepStrictEqual(counts, { escapes: 0, survivors: 0, "cgroups left": 0, hangs: 0 })
      }),
    { timeout: RUNS * variants.length * 30_000 }
  )
})
