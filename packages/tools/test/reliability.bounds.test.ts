/**
 * Reliability: the cgroupfs and bounds attacks of a call, by their commands — an outside process
 * moved into the call's cgroup or a cgroup it made, the host moved into the call's cgroup, the
 * call's cgroup frozen, 1 GiB of shared anonymous memory or of /dev/shm under a 256 MiB ceiling,
 * a fork loop under a task limit of 256. Every run counts: an outside process signalled or not
 * back in its cgroup, memory held past the ceiling, a fork loop past the limit (escapes); a
 * process of the call or a /dev/shm file left after it (survivors); a call that did not answer
 * within its bound (hangs). The host is the test worker: it survives every run or the suite
 * fails. 1 run per attack by default, 20 (the fork loop: 5 of 6,000 iterations) with
 * TOOLCAP_LONG_TESTS=1; counts through `reportReliability`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { spawn } from "node:child_process"
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
  processesNamed,
  runRecorded,
  testEnv
} from "./bashFixtures.js"

const RUNS = isLong() ? 20 : 1
const FORK_RUNS = isLong() ? 5 : 1
const FORK_ITERATIONS = isLong() ? 6000 : 1000
const HANG_MS = 60_000
const MIB = 1024 * 1024
const mount = Procfs.cgroup2()?.mount
const OWN_CGROUP = `cg=${mount}$(sed -n 's/^0:://p' /proc/self/cgroup)`

const cgroupOf = (pid: number): string | undefined => {
  try {
    return fs
      .readFileSync(`/proc/${pid}/cgroup`, "latin1")
      .split("\n")
      .find((line) => line.startsWith("0::"))
  } catch {
    return undefined
  }
}

interface Attack {
  readonly name: string
  readonly runs: number
  /** The command, given an outside process's pid and a /dev/shm path. */
  readonly command: (outsider: number, shm: string) => string
  readonly timeout: number
  /** What counts as an escape in its result. */
  readonly escaped: (result: Bash.BashResult, outsider: number) => boolean
}

const outsiderLeftAlone = (result: Bash.BashResult, outsider: number) =>
  result.killedPids.includes(outsider) || !(result.termination.foreign ?? []).some((m) => m.pid === outsider)

const attacks: ReadonlyArray<Attack> = [
  {
    name: "outside process into the call's cgroup",
    runs: RUNS,
    command: (outsider) => `${OWN_CGROUP}; echo ${outsider} > "$cg/cgroup.procs"`,
    timeout: 10,
    escaped: outsiderLeftAlone
  },
  {
    name: "outside process into a nested cgroup, past the deadline",
    runs: RUNS,
    command: (outsider) =>
      `${OWN_CGROUP}; mkdir "$cg/n" && echo ${outsider} > "$cg/n/cgroup.procs"; sleep 1002.71`,
    timeout: 1,
    escaped: outsiderLeftAlone
  },
  {
    name: "host into the call's cgroup",
    runs: RUNS,
    command: () => `${OWN_CGROUP}; echo ${process.pid} > "$cg/cgroup.procs"`,
    timeout: 10,
    escaped: (result) => !(result.termination.foreign ?? []).some((m) => m.pid === process.pid)
  },
  {
    name: "frozen call cgroup",
    runs: RUNS,
    command: () => `${OWN_CGROUP}; sleep 1002.72 & echo 1 > "$cg/cgroup.freeze"; wait`,
    timeout: 1,
    escaped: (result) => (result.termination.thawed ?? 0) === 0
  },
  {
    name: "1 GiB MAP_SHARED|MAP_ANONYMOUS under 256 MiB",
    runs: RUNS,
    command: () =>
      `python3 -c "
import mmap
m = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
for at in range(0, 1 << 30, 4096): m[at] = 1
print('held')
"`,
    timeout: 60,
    escaped: (result) => result.stdout.includes("held")
  },
  {
    name: "1 GiB to /dev/shm under 256 MiB",
    runs: RUNS,
    command: (_, shm) => `dd if=/dev/zero of=${shm} bs=1M count=1024 status=none && echo held`,
    timeout: 60,
    escaped: (result) => result.stdout.includes("held")
  },
  {
    name: `fork loop of ${FORK_ITERATIONS} under a task limit of 256`,
    runs: FORK_RUNS,
    command: () =>
      `python3 -c "
import os, time
ok = 0
for i in range(${FORK_ITERATIONS}):
    try:
        pid = os.fork()
    except OSError:
        continue
    if pid == 0:
        time.sleep(600)  # 1002.73
        os._exit(0)
    ok += 1
print('forked', ok)
"`,
    timeout: 120,
    escaped: (result) => Number(/forked (\d+)/.exec(result.stdout)?.[1] ?? 0) >= 256
  }
]

describe.runIf(cgroupParent() !== undefined && mount !== undefined && process.getuid?.() === 0)(
  "reliability: cgroupfs and bounds attacks",
  () => {
    const inputs = attacks.reduce((sum, attack) => sum + attack.runs, 0)
    it.scopedLive(
      `${inputs} calls attacking through cgroupfs, shared memory and forks: 0 escapes, survivors, hangs`,
      () =>
        Effect.gen(function* () {
          const counts = { escapes: 0, survivors: 0, hangs: 0 }
          const shm = path.join("/dev/shm", `toolcap-reliability-${process.pid}`)
          yield* Effect.addFinalizer(() =>
            Effect.andThen(killNamed("1002.7"), () => fs.rmSync(shm, { force: true }))
          )
          const outsider = spawn("sleep", ["1002.70"], { stdio: "ignore", detached: true })
          outsider.unref()
          const outsiderPid = outsider.pid!
          const outsiderHome = cgroupOf(outsiderPid)
          const env = yield* testEnv(
            { ...fastGraces, bashMemoryMaxBytes: 256 * MIB, bashTasksMax: 256 },
            undefined,
            { containment: "cgroup" }
          )
          const hostHome = cgroupOf(process.pid)
          for (const attack of attacks) {
            for (let run = 0; run < attack.runs; run++) {
              const recorded = yield* runRecorded({
                command: attack.command(outsiderPid, shm),
                timeout: attack.timeout
              }).pipe(Effect.provide(env.layer), Effect.timeoutOption(Duration.millis(HANG_MS)))
              if (Option.isNone(recorded)) {
                counts.hangs++
                continue
              }
              const result = Either.match(recorded.value.result, {
                onLeft: (error) => (error instanceof Bash.ToolTimeout ? error.partial : undefined),
                onRight: (r) => r
              })
              if (result === undefined) {
                counts.hangs++
                continue
              }
              if (attack.escaped(result, outsiderPid)) counts.escapes++
              if (!isLive(outsiderPid) || cgroupOf(outsiderPid) !== outsiderHome) counts.escapes++
              if (cgroupOf(process.pid) !== hostHome) counts.escapes++
              counts.survivors +=
                processesNamed("1002.71").length +
                processesNamed("1002.72").length +
                processesNamed("1002.73").length +
                (fs.existsSync(shm) ? 1 : 0) +
                result.termination.survivors.length
              yield* killNamed("1002.71")
              yield* killNamed("1002.72")
              yield* killNamed("1002.73")
              fs.rmSync(shm, { force: true })
            }
          }
          reportReliability(
            "hostile cgroupfs and bounds",
            { inputs, ...counts },
            "Bash calls (root) that move an outside process or the host into their cgroup or a nested one, freeze their cgroup, hold 1 GiB of shared memory or /dev/shm under a 256 MiB ceiling, or fork past a task limit of 256"
          )
          assert.deepStrictEqual(counts, { escapes: 0, survivors: 0, hangs: 0 })
        }),
      { timeout: 600_000 }
    )
  }
)
