import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { ProcessTree } from "@toolcap/tools"
import { processesNamed } from "./bashFixtures.js"

/** A detached process (its own group and session) running `script`, killed afterwards if still alive. */
const detached = (script: string, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.async<ChildProcess>((resume) => {
      const child = spawn("sh", ["-c", script], {
        detached: true,
        stdio: "ignore",
        env: { ...process.env, ...env }
      })
      child.once("spawn", () => resume(Effect.succeed(child)))
    }),
    // the whole tree, setsid children included
    (child) =>
      ProcessTree.terminate({ rootPid: child.pid!, runId: env.TOOLCAP_RUN_ID ?? "none" }, { killGraceMs: 0 })
  )

const startTime = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
}

/** The live processes whose command line is exactly `cmdline`. */
const exactly = (cmdline: string) => processesNamed(cmdline).filter((p) => p.cmdline === cmdline)

/** Waits until `cmdline` runs `count` times (the shell forks before it execs). */
const running = (cmdline: string, count: number) =>
  Effect.gen(function* () {
    while (exactly(cmdline).length < count) yield* Effect.sleep("5 millis")
    return exactly(cmdline).map((p) => p.pid)
  })

describe("ProcessTree.members", () => {
  it.scopedLive("the group, the descendants by parent link, and cookie carriers outside both", () =>
    Effect.gen(function* () {
      const root = yield* detached("sleep 103.11 & setsid sleep 103.11 & wait")
      const outside = yield* detached("exec sleep 103.12", { TOOLCAP_RUN_ID: "tree-a" })
      const prefix = yield* detached("exec sleep 103.13", { TOOLCAP_RUN_ID: "tree-a-other" })
      const inGroupAndDescendants = yield* running("sleep 103.11", 2)
      yield* running("sleep 103.12", 1)
      yield* running("sleep 103.13", 1)
      const members = yield* ProcessTree.members({ rootPid: root.pid!, runId: "tree-a" })
      assert.sameMembers([...members], [root.pid!, ...inGroupAndDescendants, outside.pid!])
      assert.notInclude(members, prefix.pid!)
    })
  )

  it.scopedLive("a root pid with another start time (a reused pid) is not taken for the tree", () =>
    Effect.gen(function* () {
      const other = yield* detached("exec sleep 103.14")
      yield* running("sleep 103.14", 1)
      const real = yield* ProcessTree.members({
        rootPid: other.pid!,
        runId: "x",
        rootStartTime: startTime(other.pid!)
      })
      assert.deepStrictEqual([...real], [other.pid!])
      const reused = yield* ProcessTree.members({ rootPid: other.pid!, runId: "x", rootStartTime: "1" })
      assert.deepStrictEqual([...reused], [])
    })
  )
})

describe("ProcessTree.terminate", () => {
  it.scopedLive("SIGTERM stops a tree that obeys it; SIGKILL only what outlives the grace", () =>
    Effect.gen(function* () {
      const obeying = yield* detached("sleep 103.15 & sleep 103.15 & wait")
      yield* running("sleep 103.15", 2)
      const stopped = yield* ProcessTree.terminate(
        { rootPid: obeying.pid!, runId: "none" },
        { killGraceMs: 2000 }
      )
      assert.strictEqual(stopped.signalled.length, 3)
      assert.deepStrictEqual(stopped.killed, [])
      assert.deepStrictEqual(processesNamed("sleep 103.15"), [])

      const ignoring = yield* detached("trap '' TERM; sleep 103.16 & sleep 103.16 & wait")
      yield* running("sleep 103.16", 2)
      const killed = yield* ProcessTree.terminate(
        { rootPid: ignoring.pid!, runId: "none" },
        { killGraceMs: 100 }
      )
      assert.strictEqual(killed.signalled.length, 3)
      assert.deepStrictEqual(killed.killed, killed.signalled)
      assert.deepStrictEqual(processesNamed("sleep 103.16"), [])
    })
  )

  it.scopedLive("nothing alive: nothing signalled", () =>
    Effect.gen(function* () {
      const gone = yield* detached("true")
      yield* Effect.async<void>((resume) => {
        if (gone.exitCode !== null) return resume(Effect.void)
        gone.once("exit", () => resume(Effect.void))
      })
      const stopped = yield* ProcessTree.terminate(
        { rootPid: gone.pid!, runId: "none" },
        { killGraceMs: 100 }
      )
      assert.deepStrictEqual(stopped, { signalled: [], killed: [] })
    })
  )
})
