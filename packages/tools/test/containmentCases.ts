/**
 * Containment cases registered for one supervisor (the default tiers in `containment.test.ts`, the
 * tiers without the native launcher in `fallback.test.ts`): a call that makes cgroups inside its
 * own and moves there, leaving a `setsid` escapee and a writer loop behind (after an exit) or
 * sleeping there itself past its deadline (a timeout); and a call stopped by an abort or by fiber
 * interruption while an escapee holds its pipes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as path from "node:path"
import { Procfs } from "@toolcap/spill"
import { Bash, type Supervisor } from "@toolcap/tools"
import {
  cgroupParent,
  fastGraces,
  isLive,
  killNamed,
  processesNamed,
  runRecorded,
  testEnv,
  withHostReach
} from "./bashFixtures.js"

export const readPid = (workspace: string, name: string): number =>
  Number(fs.readFileSync(path.join(workspace, name), "utf8").trim())

export const sizeOf = (file: string): number => (fs.existsSync(file) ? fs.statSync(file).size : 0)

/** Removes what a failed case left of a call's cgroup: its processes killed, then children first. */
export const removeCgroupTree = (dir: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (!fs.existsSync(dir)) return
    fs.writeFileSync(path.join(dir, "cgroup.kill"), "1")
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) yield* removeCgroupTree(path.join(dir, entry.name))
    }
    for (let attempt = 0; attempt < 100 && fs.existsSync(dir); attempt++) {
      yield* Effect.sleep("10 millis")
      yield* Effect.ignore(Effect.try(() => fs.rmdirSync(dir)))
    }
  })

/**
 * A command that moves its shell into `<its cgroup>/<nest>` (made with `mkdir -p`), starts a
 * `setsid -f` escapee and a writer loop there, records their pids, then runs `rest`.
 */
export const nestedCommand = (mount: string, nest: string, tag: string, rest: string): string =>
  [
    `cg=${mount}$(sed -n 's/^0:://p' /proc/self/cgroup)`,
    `mkdir -p "$cg/${nest}" && echo $$ > "$cg/${nest}/cgroup.procs" || exit 3`,
    "echo $$ > shell",
    `setsid -f sh -c 'echo $$ > escapee; exec sleep ${tag}'`,
    "(echo $BASHPID > writer; while :; do echo x >> writer.log; sleep 0.05; done) &",
    "while [ ! -s escapee ] || [ ! -s writer ]; do sleep 0.01; done",
    `echo "moved to $(sed -n 's/^0:://p' /proc/self/cgroup)"`,
    rest
  ].join("\n")

/**
 * A call that makes cgroups inside its own cgroup and moves into them: after an exit, and past its
 * deadline, nothing of it survives, the processes found in the nested cgroups are among those it
 * reports stopped, and no cgroup directory is left. Cgroup tier only.
 */
export const registerNestedCgroupEscapes = (options: {
  readonly label: string
  readonly supervisor: Supervisor.Options
  /** Unique to this registration (a digit or two): no two registrations see each other's processes. */
  readonly mark: string
}): void => {
  const parent = cgroupParent()
  const mount = Procfs.cgroup2()?.mount
  describe.runIf(parent !== undefined && mount !== undefined)(
    `a call that moves into cgroups it made inside its own (${options.label})`,
    () => {
      const variants = [
        { name: "after an exit", nest: "nest/deeper", rest: "echo done", timeout: 10 },
        // a hidden name, and the shell itself left sleeping in the nested cgroup past the deadline
        { name: "past its deadline", nest: ".nest", rest: `exec sleep 1000.${options.mark}9`, timeout: 1 }
      ] as const
      for (const variant of variants) {
        it.scopedLive(`${variant.name}: no survivor, no cgroup left, the escapees reported stopped`, () =>
          Effect.gen(function* () {
            const env = yield* testEnv(fastGraces, undefined, {
              ...withHostReach,
              ...options.supervisor,
              containment: "cgroup"
            })
            const tag = `1000.${options.mark}${variant.timeout}`
            const command = nestedCommand(mount!, variant.nest, tag, variant.rest)
            let runId: string | undefined
            yield* Effect.addFinalizer(() =>
              Effect.zipRight(
                killNamed(`sleep 1000.${options.mark}`),
                Effect.suspend(() =>
                  runId === undefined ? Effect.void : removeCgroupTree(path.join(parent!, runId))
                )
              )
            )
            const recorded = yield* runRecorded({ command, timeout: variant.timeout }).pipe(
              Effect.provide(env.layer)
            )
            runId = recorded.runId
            const result = Either.match(recorded.result, {
              onLeft: (error) => {
                assert.strictEqual(variant.timeout, 1, `${error.code}: ${error.message}`)
                assert.instanceOf(error, Bash.ToolTimeout)
                return error.partial
              },
              onRight: (r) => {
                assert.notStrictEqual(variant.timeout, 1, "the call outlived its deadline")
                return r
              }
            })
            assert.include(result.stdout, `moved to /toolcap/${result.runId}/${variant.nest}`)
            const pids = ["shell", "escapee", "writer"].map((name) => readPid(env.workspace, name))
            const [shell, escapee, writer] = pids as [number, number, number]
            // stopped: the escapee and the writer after an exit, the shell too past the deadline
            for (const pid of variant.timeout === 1 ? pids : [escapee, writer]) {
              assert.include(result.killedPids, pid, `pid ${pid} was not reported stopped`)
            }
            for (const pid of pids) assert.isFalse(isLive(pid), `pid ${pid} outlived the call`)
            if (variant.timeout === 1) assert.strictEqual(result.signal, "SIGTERM", `shell ${shell}`)
            assert.deepStrictEqual(result.termination.survivors, [])
            assert.deepStrictEqual(processesNamed(`sleep ${tag}`), [])
            assert.isFalse(fs.existsSync(path.join(parent!, result.runId)), "the call's cgroup is left")
            // nothing writes any more
            const log = path.join(env.workspace, "writer.log")
            const settled = sizeOf(log)
            yield* Effect.sleep("200 millis")
            assert.strictEqual(sizeOf(log), settled)
          })
        )
      }
    }
  )
}

/** Starts the escapee (its pid in `escapee`), then prints `started`. */
const escape = (tag: string) =>
  `env -i setsid -f sh -c 'echo $$ > escapee; exec ${tag}'; while [ ! -s escapee ]; do sleep 0.01; done; echo started`

/**
 * A call ends within its bound whatever its tree does, an escapee under `env -i setsid -f` (no
 * cookie, no group) holding its pipes included: on timeout, after an exit, on abort and under
 * fiber interruption. The cgroup tier stops the escapee with the rest; the group tier cannot find
 * it, closes its side of the pipes and says so.
 */
export const registerBoundCases = (options: {
  readonly label: string
  readonly containment: Supervisor.Tier
  readonly supervisor: Supervisor.Options
  /** Unique to this registration: no two registrations see each other's processes. */
  readonly mark: string
}): void => {
  const { containment, mark } = options
  const supervisor = { ...withHostReach, ...options.supervisor, containment }

  /** The escapee is stopped with the rest (cgroup tier), or outlives the call holding the pipes, as reported. */
  const checkEscapee = (workspace: string, result: Bash.BashResult) => {
    const escapee = readPid(workspace, "escapee")
    if (containment === "cgroup") {
      // the kernel followed it: stopped with the rest, nothing left holding the pipes
      assert.include(result.killedPids, escapee)
      assert.isFalse(isLive(escapee))
    } else {
      // returned while the escapee still holds the pipes: our side was closed, and the result says so
      assert.isTrue(isLive(escapee), "the escapee outlives the call in the group tier")
      assert.isTrue(result.termination.pipesHeld)
      assert.include(result.output, "still held open by a process outside the tree")
      process.kill(escapee, "SIGKILL")
    }
  }

  describe(`a call ends within its bound whatever the tree does (${options.label})`, () => {
    it.scopedLive("an escapee under env -i setsid -f holding the pipes, on timeout and after an exit", () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces, undefined, supervisor)
        const tag = `sleep 1000.${mark}1`
        yield* Effect.addFinalizer(() => killNamed(tag))
        for (const [command, timeout] of [
          [`${escape(tag)}; sleep 30`, 1],
          [escape(tag), 10]
        ] as const) {
          fs.rmSync(path.join(env.workspace, "escapee"), { force: true })
          const recorded = yield* runRecorded({ command, timeout }).pipe(Effect.provide(env.layer))
          const result = Either.match(recorded.result, {
            onLeft: (error) => {
              assert.instanceOf(error, Bash.ToolTimeout)
              return error.partial
            },
            onRight: (r) => r
          })
          assert.strictEqual(result.termination.containment, containment)
          assert.include(result.stdout, "started")
          checkEscapee(env.workspace, result)
          assert.strictEqual(recorded.lateChunks(), 0)
        }
      })
    )

    it.scopedLive("abort during such a call: TOOL_ABORTED once the tree is stopped", () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces, undefined, supervisor)
        const tag = `sleep 1000.${mark}2`
        yield* Effect.addFinalizer(() => killNamed(tag))
        const controller = new AbortController()
        const exit = yield* Bash.run(
          { command: `${escape(tag)}; exec sleep 1000.${mark}3`, timeout: 60 },
          {
            signal: controller.signal,
            onChunk: (chunk) => void (chunk.data.includes("started") && controller.abort())
          }
        ).pipe(Effect.provide(env.layer), Effect.flip)
        assert.instanceOf(exit, Bash.ToolAborted)
        assert.deepStrictEqual(processesNamed(`sleep 1000.${mark}3`), [])
        checkEscapee(env.workspace, exit.partial)
      })
    )

    it.scopedLive("fiber interruption during such a call ends it: the release never waits on the pipes", () =>
      Effect.gen(function* () {
        const env = yield* testEnv(fastGraces, undefined, supervisor)
        const tag = `sleep 1000.${mark}4`
        yield* Effect.addFinalizer(() => killNamed(tag))
        const started = yield* Deferred.make<void>()
        // "started" once the escapee wrote its pid, which it does after leaving the session: an
        // interruption before that would still find it in the call's process group
        const fiber = yield* Bash.run(
          { command: `${escape(tag)}; sleep 30`, timeout: 60 },
          {
            onChunk: (chunk) =>
              void (chunk.data.includes("started") && Deferred.unsafeDone(started, Exit.void))
          }
        ).pipe(Effect.provide(env.layer), Effect.fork)
        yield* Deferred.await(started)
        assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(fiber)))
        assert.strictEqual(processesNamed(tag).length, containment === "cgroup" ? 0 : 1)
      })
    )
  })
}
