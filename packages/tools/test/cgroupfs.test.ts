/**
 * A call that may write to cgroup files (root here) attacks through cgroupfs: it moves an outside
 * process — one the test started, or the host itself — into its own cgroup or a cgroup it made
 * below it, or freezes its cgroup (v2 `cgroup.freeze`, the v1 freezer). The stop never signals
 * what the call did not start: such a process is alive afterwards, back in the cgroup it came
 * from, and reported in `termination.foreign`; a frozen cgroup is thawed first, so the call's
 * processes get their SIGTERM and are stopped. The calls get cgroupfs and host pids
 * (`withHostReach`): the launcher's guards refuse these writes by default, so what is proved here
 * is the stop itself, as on a host without them (TOOLCAP_CGROUPFS=writable, no Landlock).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import { Bash } from "@toolcap/tools"
import {
  blockEventLoop,
  cgroupParent,
  fastGraces,
  isLive,
  killNamed,
  removeCgroupTree,
  processesNamed,
  testEnv,
  withHostReach
} from "./bashFixtures.js"

const mount = Procfs.cgroup2()?.mount
const root = process.getuid?.() === 0
/** The call's own cgroup v2, as a command inside it finds it. */
const OWN_CGROUP = `cg=${mount}$(sed -n 's/^0:://p' /proc/self/cgroup)`

/** The cgroup v2 of a process, as /proc says. */
const cgroupOf = (pid: number): string | undefined =>
  fs
    .readFileSync(`/proc/${pid}/cgroup`, "latin1")
    .split("\n")
    .find((line) => line.startsWith("0::"))
    ?.slice(3)

/** A process outside every call, started by the test (before the call), killed when the test ends. */
const outsider = (tag: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn("sleep", [tag], { stdio: "ignore", detached: true })
      child.unref()
      return child.pid!
    }),
    () => killNamed(`sleep ${tag}`)
  )

const entries = ["launcher", "prologue"] as const

describe.runIf(cgroupParent() !== undefined && mount !== undefined && root)(
  "the stop never signals what the call did not start",
  () => {
    for (const cgroupEntry of entries) {
      const mark = cgroupEntry === "launcher" ? "1" : "2"
      it.scopedLive(
        `an outside process moved into the call's cgroup is alive afterwards and back in its own (${cgroupEntry} entry)`,
        () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              containment: "cgroup",
              cgroupEntry
            })
            const pid = yield* outsider(`1000.93${mark}1`)
            const before = cgroupOf(pid)
            const result = yield* Bash.run({
              command: `${OWN_CGROUP}; echo ${pid} > "$cg/cgroup.procs" && echo moved`
            }).pipe(Effect.provide(env.layer))
            assert.include(result.stdout, "moved")
            assert.isTrue(isLive(pid), "the outside process was signalled")
            assert.strictEqual(cgroupOf(pid), before)
            assert.deepStrictEqual(
              result.termination.foreign?.map((member) => member.pid),
              [pid]
            )
            assert.notInclude(result.killedPids, pid)
            assert.include(result.output, "the call did not start")
          })
      )

      it.scopedLive(
        `an outside process moved into a cgroup the call made is alive after its timeout (${cgroupEntry} entry)`,
        () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              containment: "cgroup",
              cgroupEntry
            })
            const tag = `1000.93${mark}2`
            yield* Effect.addFinalizer(() => killNamed(tag))
            const pid = yield* outsider(`${tag}1`)
            const before = cgroupOf(pid)
            const command = [
              OWN_CGROUP,
              `mkdir "$cg/nested" && echo ${pid} > "$cg/nested/cgroup.procs" || exit 3`,
              `sleep ${tag}2 & echo $! > child`,
              "echo moved; wait"
            ].join("\n")
            const failed = yield* Bash.run({ command, timeout: 1 }).pipe(
              Effect.provide(env.layer),
              Effect.flip
            )
            assert.instanceOf(failed, Bash.ToolTimeout)
            assert.include(failed.partial.stdout, "moved")
            assert.isTrue(isLive(pid), "the outside process was killed with the call's cgroup")
            assert.strictEqual(cgroupOf(pid), before)
            assert.notInclude(failed.killedPids, pid)
            assert.deepStrictEqual(
              failed.partial.termination.foreign?.map((member) => member.pid),
              [pid]
            )
            // the call's own child was stopped
            assert.deepStrictEqual(processesNamed(`sleep ${tag}2`), [])
            assert.isFalse(fs.existsSync(path.join(cgroupParent()!, failed.partial.runId)))
          })
      )

      it.scopedLive(
        `a host loop blocked past the deadline: the watchdog's backstop stops the call's own, not an outside process moved into a cgroup the call made (${cgroupEntry} entry)`,
        () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              containment: "cgroup",
              cgroupEntry
            })
            const tag = `1000.93${mark}5`
            yield* Effect.addFinalizer(() => killNamed(tag))
            const pid = yield* outsider(`${tag}1`)
            const before = cgroupOf(pid)
            const termed = path.join(env.workspace, "termed")
            const ran = yield* Effect.gen(function* () {
              // the tier is decided and the watchdog runs before the measured call
              yield* Bash.run({ command: "true" })
              const askedAt = yield* Clock.currentTimeMillis
              const command = [
                OWN_CGROUP,
                `mkdir "$cg/nested" && echo ${pid} > "$cg/nested/cgroup.procs" || exit 3`,
                `trap 'date +%s%3N > ${termed}; exit 0' TERM`,
                `sleep ${tag}2 & wait`
              ].join("\n")
              const call = yield* Effect.fork(Effect.flip(Bash.run({ command, timeout: 1 })))
              yield* Effect.sleep("300 millis")
              // no timer, no I/O, no fiber of the host runs until well past the deadline
              const thawAt = yield* blockEventLoop(4000)
              return { askedAt, thawAt, failed: yield* Fiber.join(call) }
            }).pipe(Effect.provide(env.layer))
            assert.instanceOf(ran.failed, Bash.ToolTimeout)
            assert.isTrue(ran.failed.partial.termination.deadlineBackstop)
            // the call's shell had its SIGTERM from the watchdog while the host was blocked
            const termedAt = Number(fs.readFileSync(termed, "utf8"))
            assert.isBelow(termedAt, ran.thawAt)
            assert.isAbove(termedAt, ran.askedAt + 1000)
            // the outside process was signalled by neither the watchdog nor the host, and is home
            assert.isTrue(isLive(pid), "the outside process was signalled")
            assert.strictEqual(cgroupOf(pid), before)
            assert.notInclude(ran.failed.killedPids, pid)
            assert.deepStrictEqual(
              ran.failed.partial.termination.foreign?.map((member) => member.pid),
              [pid]
            )
            assert.deepStrictEqual(processesNamed(`sleep ${tag}2`), [])
          })
      )

      it.scopedLive(
        `the host moved into its call's cgroup survives the call's end and keeps answering (${cgroupEntry} entry)`,
        () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              containment: "cgroup",
              cgroupEntry
            })
            const before = cgroupOf(process.pid)
            const result = yield* Bash.run({
              command: `${OWN_CGROUP}; echo ${process.pid} > "$cg/cgroup.procs" && echo moved`
            }).pipe(Effect.provide(env.layer))
            assert.include(result.stdout, "moved")
            assert.strictEqual(cgroupOf(process.pid), before)
            assert.deepStrictEqual(
              result.termination.foreign?.map((member) => member.pid),
              [process.pid]
            )
            const next = yield* Bash.run({ command: "echo still answering" }).pipe(Effect.provide(env.layer))
            assert.include(next.stdout, "still answering")
          })
      )

      it.scopedLive(
        `a call that froze its own cgroup is thawed, gets its SIGTERM and is stopped (${cgroupEntry} entry)`,
        () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              containment: "cgroup",
              cgroupEntry
            })
            const tag = `1000.93${mark}3`
            yield* Effect.addFinalizer(() => killNamed(tag))
            const command = [
              OWN_CGROUP,
              "trap 'echo termed > termed; exit 0' TERM",
              `sleep ${tag} &`,
              'echo frozen; echo 1 > "$cg/cgroup.freeze"; wait'
            ].join("\n")
            const failed = yield* Bash.run({ command, timeout: 1 }).pipe(
              Effect.provide(env.layer),
              Effect.flip
            )
            assert.instanceOf(failed, Bash.ToolTimeout)
            assert.isAtLeast(failed.partial.termination.thawed ?? 0, 1)
            assert.isTrue(
              fs.existsSync(path.join(env.workspace, "termed")),
              "the frozen shell never got its SIGTERM"
            )
            assert.deepStrictEqual(processesNamed(`sleep ${tag}`), [])
            assert.isFalse(fs.existsSync(path.join(cgroupParent()!, failed.partial.runId)))
          })
      )
    }

    const freezer = "/sys/fs/cgroup/freezer"
    it.scopedLive.skipIf(!fs.existsSync(path.join(freezer, "cgroup.procs")))(
      "a call's process frozen by the cgroup v1 freezer is thawed and stopped",
      () =>
        Effect.gen(function* () {
          const env = yield* testEnv(fastGraces, undefined, { ...withHostReach, containment: "cgroup" })
          const tag = "1000.9341"
          const dir = path.join(freezer, `toolcap-test-${process.pid}`)
          yield* Effect.addFinalizer(() =>
            Effect.andThen(killNamed(tag), () => {
              try {
                fs.writeFileSync(path.join(dir, "freezer.state"), "THAWED")
              } catch {
                // gone
              }
            }).pipe(Effect.andThen(removeCgroupTree(dir)))
          )
          const command = [
            `mkdir -p ${dir} || exit 3`,
            `sleep ${tag} & echo $! > ${dir}/cgroup.procs || exit 4`,
            `echo FROZEN > ${dir}/freezer.state || exit 5`,
            "echo frozen; exit 0"
          ].join("\n")
          const result = yield* Bash.run({ command }).pipe(Effect.provide(env.layer))
          assert.include(result.stdout, "frozen")
          assert.isAtLeast(result.termination.thawed ?? 0, 1)
          assert.deepStrictEqual(processesNamed(`sleep ${tag}`), [])
          assert.isFalse(fs.existsSync(path.join(cgroupParent()!, result.runId)))
        })
    )
  }
)
