/**
 * The cgroupfs attacks as an unprivileged user in a delegated cgroup: a user made for the test
 * (`useradd`) owns a cgroup v2 subtree (chown), a host runs there as that user (`setpriv`, scopes
 * and no_new_privs on) and its calls, which may write to every cgroup file of the subtree, move an
 * outside process of the same user and the host itself into their cgroup, and freeze it. The host
 * survives each, keeps answering, the outside process is alive and back in its cgroup, the frozen
 * call is thawed and stopped. The host is bundled to plain JavaScript first (the user may not
 * enter the checkout). Needs root to set up; everything made is removed after.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Procfs } from "@toolcap/spill"
import { Confinement } from "@toolcap/tools"
import { bundleModule, killNamed, removeCgroupTree } from "./bashFixtures.js"

const mount = Procfs.cgroup2()?.mount
const USER = "toolcap-deleg"
const setup = process.getuid?.() === 0 && mount !== undefined && fs.existsSync("/usr/sbin/useradd")

/** The host: runs the attacks through Bash as the delegated user and prints what it saw, as JSON. */
const host = (mountPoint: string) => `
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { Budgets } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, Supervisor, Workspace } from "@toolcap/tools"
const ws = process.argv[2]
const cgroupOf = (pid) => fs.readFileSync("/proc/" + pid + "/cgroup", "latin1").split("\\n").find((l) => l.startsWith("0::"))
const budgets = Budgets.layerWith({ bashKillGraceMs: 300, bashDrainGraceMs: 200, bashTasksMax: 256 }).pipe(Layer.orDie)
const layer = Layer.mergeAll(
  budgets,
  // cgroupfs and host pids: the stop itself is proved here (the launcher's guards refuse these
  // writes by default: reliability.isolation.test.ts runs the same user against them)
  Supervisor.layer({ containment: "cgroup", cgroupfsWritable: true, namespaces: false }),
  Workspace.layer({ root: ws }).pipe(Layer.orDie),
  Scratch.layer({ dataDir: ws + "/.data", sessionId: "deleg" }).pipe(Layer.provide(Layer.mergeAll(NodeFileSystem.layer, budgets)), Layer.orDie)
)
const own = "cg=${mountPoint}$(sed -n 's/^0:://p' /proc/self/cgroup)"
const outsider = spawn("sleep", ["1003.71"], { detached: true, stdio: "ignore" })
await new Promise((resolve) => outsider.once("spawn", resolve))
const outsiderHome = cgroupOf(outsider.pid)
const hostHome = cgroupOf(process.pid)
const report = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
  const run = (command, timeout) => Bash.run({ command, timeout }).pipe(
    Effect.map((r) => r),
    Effect.catchAll((e) => Effect.succeed(e.partial ?? { error: String(e) }))
  )
  const moved = yield* run(own + '; echo ' + outsider.pid + ' > "$cg/cgroup.procs" && echo moved', 10)
  const outsiderAfter = { alive: outsider.exitCode === null && outsider.signalCode === null, home: cgroupOf(outsider.pid) === outsiderHome }
  const hosted = yield* run(own + '; echo ' + process.pid + ' > "$cg/cgroup.procs" && echo moved', 10)
  const hostAfter = cgroupOf(process.pid) === hostHome
  const frozen = yield* run(own + '; sleep 1003.72 & echo 1 > "$cg/cgroup.freeze"; wait', 1)
  const forks = yield* run("for i in $(seq 600); do sleep 1003.73 & done 2>/dev/null; echo started", 20)
  const next = yield* run("echo answering", 10)
  return {
    uid: process.getuid(),
    moved: { stdout: moved.stdout, foreign: moved.termination?.foreign, killed: moved.killedPids },
    outsiderAfter,
    hosted: { stdout: hosted.stdout, foreign: hosted.termination?.foreign },
    hostAfter,
    frozen: { thawed: frozen.termination?.thawed, killed: frozen.killedPids },
    forks: { taskLimit: forks.termination?.taskLimit },
    scopes: next.termination?.landlockScopes,
    next: next.stdout
  }
})).pipe(Effect.provide(layer)))
outsider.kill("SIGKILL")
console.log(JSON.stringify({ ...report, outsider: outsider.pid }))
process.exit(0)
`

describe.runIf(setup)("cgroupfs attacks as an unprivileged user in a delegated cgroup", () => {
  it.scopedLive(
    "the host survives, an outside process stays alive and goes home, a frozen call is stopped",
    () =>
      Effect.gen(function* () {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-deleg-"))),
          (made) => Effect.sync(() => fs.rmSync(made, { recursive: true, force: true }))
        )
        fs.chmodSync(dir, 0o755)
        yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/bin/sh", USER])
          ),
          () => Effect.sync(() => spawnSync("userdel", [USER]))
        )
        const uid = Number(spawnSync("id", ["-u", USER], { encoding: "utf8" }).stdout.trim())
        assert.isAbove(uid, 0)
        const delegated = path.join(mount!, `toolcap-deleg-${process.pid}`)
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            fs.mkdirSync(delegated)
            for (const file of ["", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"]) {
              fs.chownSync(path.join(delegated, file), uid, uid)
            }
          }),
          () => Effect.andThen(killNamed("1003.7"), removeCgroupTree(delegated))
        )
        const ws = path.join(dir, "ws")
        fs.mkdirSync(ws)
        fs.chownSync(ws, uid, uid)
        const launcher = path.join(dir, "toolcap-confine")
        fs.copyFileSync(Effect.runSync(Confinement.launcherPath), launcher)
        fs.chmodSync(launcher, 0o755)
        const script = path.join(dir, "host.mjs")
        yield* bundleModule({
          contents: host(mount!),
          resolveDir: fileURLToPath(new URL("..", import.meta.url)),
          outfile: script
        })
        fs.chmodSync(script, 0o644)
        // root puts the host's shell into the delegated cgroup, then it becomes the user
        const run = spawnSync(
          "sh",
          [
            "-c",
            'echo $$ > "$0/cgroup.procs" && exec setpriv --reuid="$1" --regid="$1" --clear-groups "$2" "$3" "$4"',
            delegated,
            String(uid),
            process.execPath,
            script,
            ws
          ],
          {
            encoding: "utf8",
            cwd: dir,
            env: { ...process.env, HOME: dir, TOOLCAP_LAUNCHER: launcher },
            timeout: 120_000
          }
        )
        assert.strictEqual(run.status, 0, `${run.signal} ${run.stderr}\n${run.stdout}`)
        const report = JSON.parse(run.stdout.trim().split("\n").at(-1)!)
        assert.strictEqual(report.uid, uid)
        assert.include(report.moved.stdout, "moved")
        assert.deepStrictEqual(
          report.moved.foreign.map((m: { pid: number }) => m.pid),
          [report.outsider]
        )
        assert.notInclude(report.moved.killed, report.outsider)
        assert.deepStrictEqual(report.outsiderAfter, { alive: true, home: true })
        assert.include(report.hosted.stdout, "moved")
        assert.isTrue(report.hostAfter, "the host was not moved back to its cgroup")
        assert.isAtLeast(report.frozen.thawed ?? 0, 1)
        assert.include(report.next, "answering")
        // the task limit: on a cgroup the user may limit, else reported as not enforced, with why
        assert.strictEqual(report.forks.taskLimit.maxTasks, 256)
        if (report.forks.taskLimit.enforcedBy === "none") assert.isString(report.forks.taskLimit.reason)
        else assert.isTrue(report.forks.taskLimit.reached)
        assert.isFalse(fs.readdirSync(delegated).some((name) => name === "toolcap" || /^\d/.test(name)))
      }),
    { timeout: 180_000 }
  )
})
