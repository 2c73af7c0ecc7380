import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { Procfs } from "@toolcap/spill"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Group from "../src/internal/supervisor/group.js"
import { terminate, type TreeStop } from "../src/internal/supervisor/terminate.js"
import { bundleModule, processesNamed } from "./bashFixtures.js"

/** The group tier's stop of one tree: the shared stop over the group tier's members. */
const stopTree = (tree: Group.Tree, options: { readonly killGraceMs: number; readonly killWaitMs: number }) =>
  terminate(Group.treeOps(tree), options)

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
      stopTree(
        { rootPid: child.pid!, runId: env.TOOLCAP_RUN_ID ?? "none" },
        { killGraceMs: 0, killWaitMs: 5000 }
      )
  )

const startTime = (pid: number) => Procfs.startTimeOf(pid)

/** The live processes whose command line is exactly `cmdline`. */
const exactly = (cmdline: string) => processesNamed(cmdline).filter((p) => p.cmdline === cmdline)

/** Waits until `cmdline` runs `count` times (the shell forks before it execs). */
const running = (cmdline: string, count: number) =>
  Effect.gen(function* () {
    while (exactly(cmdline).length < count) yield* Effect.sleep("5 millis")
    return exactly(cmdline).map((p) => p.pid)
  })

describe("the group tier's tree: its members", () => {
  it.scopedLive("the group, the descendants by parent link, and cookie carriers outside both", () =>
    Effect.gen(function* () {
      const root = yield* detached("sleep 103.11 & setsid sleep 103.11 & wait")
      const outside = yield* detached("exec sleep 103.12", { TOOLCAP_RUN_ID: "tree-a" })
      const prefix = yield* detached("exec sleep 103.13", { TOOLCAP_RUN_ID: "tree-a-other" })
      const inGroupAndDescendants = yield* running("sleep 103.11", 2)
      yield* running("sleep 103.12", 1)
      yield* running("sleep 103.13", 1)
      const members = yield* Group.members({ rootPid: root.pid!, runId: "tree-a" })
      assert.sameMembers([...members], [root.pid!, ...inGroupAndDescendants, outside.pid!])
      assert.notInclude(members, prefix.pid!)
    })
  )

  it.scopedLive("an environment that read empty (as it does mid-exec) is read again at the next scan", () =>
    Effect.gen(function* () {
      // no environment at all, until SIGUSR1 makes it exec (same pid, same start time) with the cookie
      const carrier = yield* Effect.acquireRelease(
        Effect.async<ChildProcess>((resume) => {
          const child = spawn(
            "/bin/sh",
            [
              "-c",
              "trap 'exec /usr/bin/env TOOLCAP_RUN_ID=tree-b /bin/sleep 103.17' USR1; while :; do /bin/sleep 0.01; done"
            ],
            { detached: true, stdio: "ignore", env: {} }
          )
          child.once("spawn", () => resume(Effect.succeed(child)))
        }),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      const root = yield* detached("exec sleep 103.18")
      yield* running("sleep 103.18", 1)
      assert.strictEqual(fs.readFileSync(`/proc/${carrier.pid}/environ`).length, 0)
      const before = yield* Group.members({ rootPid: root.pid!, runId: "tree-b" })
      assert.notInclude(before, carrier.pid!)

      carrier.kill("SIGUSR1")
      assert.deepStrictEqual(yield* running("/bin/sleep 103.17", 1), [carrier.pid!])
      const after = yield* Group.members({ rootPid: root.pid!, runId: "tree-b" })
      assert.sameMembers([...after], [root.pid!, carrier.pid!])
    })
  )

  it.scopedLive("a root pid with another start time (a reused pid) is not taken for the tree", () =>
    Effect.gen(function* () {
      const other = yield* detached("exec sleep 103.14")
      yield* running("sleep 103.14", 1)
      const real = yield* Group.members({
        rootPid: other.pid!,
        runId: "x",
        rootStartTime: startTime(other.pid!)
      })
      assert.deepStrictEqual([...real], [other.pid!])
      const reused = yield* Group.members({ rootPid: other.pid!, runId: "x", rootStartTime: "1" })
      assert.deepStrictEqual([...reused], [])
    })
  )
})

describe("the group tier's tree: stopping it", () => {
  it.scopedLive("SIGTERM stops a tree that obeys it; SIGKILL only what outlives the grace", () =>
    Effect.gen(function* () {
      const obeying = yield* detached("sleep 103.15 & sleep 103.15 & wait")
      yield* running("sleep 103.15", 2)
      const stopped = yield* stopTree(
        { rootPid: obeying.pid!, runId: "none" },
        { killGraceMs: 2000, killWaitMs: 5000 }
      )
      assert.strictEqual(stopped.signalled.length, 3)
      assert.deepStrictEqual(stopped.killed, [])
      assert.deepStrictEqual(processesNamed("sleep 103.15"), [])

      const ignoring = yield* detached("trap '' TERM; sleep 103.16 & sleep 103.16 & wait")
      yield* running("sleep 103.16", 2)
      const killed = yield* stopTree(
        { rootPid: ignoring.pid!, runId: "none" },
        { killGraceMs: 100, killWaitMs: 5000 }
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
      const stopped = yield* stopTree(
        { rootPid: gone.pid!, runId: "none" },
        { killGraceMs: 100, killWaitMs: 5000 }
      )
      assert.deepStrictEqual(stopped, { signalled: [], killed: [], unstoppable: [], survivors: [] })
    })
  )
})

/**
 * A member this host may not signal: the host runs as `nobody` and its tree holds a process that
 * became root through a setuid copy of perl (what `sudo cmd` does). Needs root to set up. The host
 * is bundled to plain JavaScript first: `nobody` may not enter the checkout (a clone under a 0700
 * directory), so it must not need to load anything from there.
 */
const unstoppableHost = (perl: string, escalate: string) => `
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Group from "./src/internal/supervisor/group.ts"
import { terminate } from "./src/internal/supervisor/terminate.ts"
const named = (text) => fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p)).filter((p) => {
  try { return fs.readFileSync("/proc/" + p + "/cmdline", "latin1").split("\\0").join(" ").trim() === text } catch { return false }
}).map(Number)
const root = spawn("sh", ["-c", ${JSON.stringify(`${perl} ${escalate} & exec sleep 104.32`)}], { detached: true, stdio: "ignore" })
await new Promise((resolve) => root.once("spawn", resolve))
while (named("sleep 104.31").length === 0 || named("sleep 104.32").length === 0) await new Promise((r) => setTimeout(r, 5))
const stopped = await Effect.runPromise(terminate(Group.treeOps({ rootPid: root.pid, runId: "none" }), { killGraceMs: 100, killWaitMs: 5000 }))
console.log(JSON.stringify({ stopped, rootPid: root.pid, escalated: named("sleep 104.31"), uid: process.getuid() }))
process.exit(0)
`

describe("the group tier's tree: processes of another user", () => {
  it.scopedLive("a member it may not signal is reported unstoppable and not waited for", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-setuid-"))),
        (created) =>
          Effect.sync(() => {
            // whatever the host left (the root-owned sleep always), by pid
            for (const leftover of [...exactly("sleep 104.31"), ...exactly("sleep 104.32")]) {
              process.kill(leftover.pid, "SIGKILL")
            }
            fs.rmSync(created, { recursive: true, force: true })
          })
      )
      fs.chmodSync(dir, 0o755)
      const perl = path.join(dir, "perl")
      fs.copyFileSync("/usr/bin/perl", perl)
      fs.chmodSync(perl, 0o4755)
      // a setuid perl runs no -e; a script file, with a clean PATH, it does
      const escalate = path.join(dir, "escalate.pl")
      fs.writeFileSync(
        escalate,
        '$ENV{PATH} = "/usr/bin:/bin"; delete @ENV{qw(IFS CDPATH ENV BASH_ENV)}; $< = $> = 0; exec "sleep", "104.31" or die;\n'
      )
      fs.chmodSync(escalate, 0o644)
      const script = path.join(dir, "host.mjs")
      // one bundle holds the group tier's stop and the Effect it runs on, resolved from this package
      yield* bundleModule({
        contents: unstoppableHost(perl, escalate),
        resolveDir: fileURLToPath(new URL("..", import.meta.url)),
        outfile: script
      })
      fs.chmodSync(script, 0o644)
      const run = spawnSync(
        "setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, script],
        { encoding: "utf8", cwd: dir, env: { ...process.env, HOME: dir }, timeout: 20_000 }
      )
      assert.strictEqual(run.status, 0, run.stderr)
      const report = JSON.parse(run.stdout) as {
        stopped: TreeStop
        rootPid: number
        escalated: Array<number>
        uid: number
      }
      assert.strictEqual(report.uid, 65534)
      assert.strictEqual(report.escalated.length, 1)
      assert.deepStrictEqual(report.stopped.unstoppable, report.escalated)
      assert.deepStrictEqual(report.stopped.signalled, [report.rootPid])
      assert.deepStrictEqual(processesNamed("sleep 104.32"), [])
    })
  )
})
