/**
 * How a call's shell enters its cgroup: through the native launcher (clone3 with
 * CLONE_INTO_CGROUP) where it is built and works, else the `/bin/sh` prologue. Either way the
 * shell is the cgroup's member, stopping signals the cgroup's members, and whoever waits on the
 * spawned process sees the shell's own exit: its code, its signal, 127/126 when it cannot run.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { Procfs } from "@toolcap/spill"
import * as os from "node:os"
import * as path from "node:path"
import { ToolError } from "@toolcap/limits"
import { Bash, Confinement, Supervisor } from "@toolcap/tools"
import * as Cgroup from "../src/internal/supervisor/cgroup.js"
import {
  cgroupParent,
  fastGraces,
  isLive,
  killNamed,
  processesNamed,
  scopesOffered,
  testEnv
} from "./bashFixtures.js"

const parent = cgroupParent()
const launcherBuilt = fs.existsSync(Effect.runSync(Confinement.launcherPath))
const [major = 0, minor = 0] = os.release().split(".").map(Number)
/** clone3 with CLONE_INTO_CGROUP exists from Linux 5.7 on. */
const kernelHasClone3 = major > 5 || (major === 5 && minor >= 7)
const entries: ReadonlyArray<Supervisor.CgroupEntry> =
  parent === undefined ? [] : launcherBuilt && kernelHasClone3 ? ["launcher", "prologue"] : ["prologue"]

const hostStart = Number(Procfs.startTimeOf(process.pid))
let sequence = 0
/** A run id of this (live) host, so no startup sweep takes the call's cgroup for a dead host's. */
const freshRunId = (entry: Supervisor.CgroupEntry) =>
  `${process.pid.toString(36)}-${hostStart.toString(36)}-entry${entry}${(sequence++).toString(36)}`

/**
 * A supervisor taking this entry into the cgroup tier, in the current scope; without namespaces,
 * so the pids a shell prints are the host's (namespaces: reliability.isolation.test.ts).
 */
const supervisorFor = (entry: Supervisor.CgroupEntry) =>
  Supervisor.make({ cgroupEntry: entry, namespaces: false })

const spawnTree = (
  supervisor: Supervisor.SupervisorService,
  entry: Supervisor.CgroupEntry,
  file: string,
  args: ReadonlyArray<string>
) => {
  const runId = freshRunId(entry)
  return Effect.map(
    supervisor.start({
      file,
      args,
      cwd: os.tmpdir(),
      tree: { runId, killGraceMs: 500, killWaitMs: 1000, drainMs: 1000 }
    }),
    (proc) => ({ proc, dir: path.join(parent!, runId) })
  )
}

/** The exit status of `file args` run as a tree through `entry`, its cgroup removed after. */
const exitOf = (entry: Supervisor.CgroupEntry, file: string, args: ReadonlyArray<string>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const supervisor = yield* supervisorFor(entry)
      const { proc } = yield* spawnTree(supervisor, entry, file, args)
      return yield* proc.exit
    })
  )

/** The exit status after the scope was closed (the stop's report is there too). */
const exitStatusOf = (proc: Supervisor.Process) => Effect.map(proc.exitStatus, Option.getOrThrow)

const firstLine = (stream: Stream.Stream<Uint8Array>) =>
  Effect.map(Stream.runCollect(Stream.take(stream, 1)), (chunks) =>
    new TextDecoder().decode(Chunk.unsafeGet(chunks, 0)).trim()
  )

const parentPid = (pid: number): number => Procfs.readProcess(pid)?.ppid ?? Number.NaN

describe("the cgroup entry", () => {
  it.scopedLive.skipIf(parent === undefined)(
    "the launcher where it is built and the kernel has clone3; the option forces the prologue",
    () =>
      Effect.gen(function* () {
        const auto = yield* (yield* Supervisor.make()).containment
        assert.strictEqual(auto.cgroupEntry, launcherBuilt && kernelHasClone3 ? "launcher" : "prologue")
        const prologue = yield* (yield* supervisorFor("prologue")).containment
        // with scopes the launcher still runs the shell, exec'd in place by the prologue
        const { containment, cgroupEntry, fallbackReason, launcher, landlockScopes, landlockScopesReason } =
          prologue
        assert.deepStrictEqual(
          { containment, cgroupEntry, fallbackReason, launcher, landlockScopes },
          {
            containment: "cgroup",
            cgroupEntry: "prologue",
            fallbackReason: "the prologue entry was asked for",
            launcher: scopesOffered(),
            landlockScopes: scopesOffered()
          }
        )
        assert.strictEqual(landlockScopesReason === undefined, scopesOffered())
        const group = yield* (yield* Supervisor.make({ containment: "group" })).containment
        assert.strictEqual(group.cgroupEntry, undefined)
      })
  )

  for (const entry of entries) {
    it.scopedLive(
      `the shell is the cgroup's only member; stop signals it and removes the cgroup (${entry})`,
      () =>
        Effect.gen(function* () {
          const tag = `sleep 1000.8${entry === "launcher" ? 4 : 5}`
          yield* Effect.addFinalizer(() => killNamed(tag))
          const supervisor = yield* supervisorFor(entry)
          const out = yield* Effect.scoped(
            Effect.gen(function* () {
              const { proc, dir } = yield* spawnTree(supervisor, entry, "/bin/sh", [
                "-c",
                `echo $$; exec ${tag}`
              ])
              const shell = Number(yield* firstLine(proc.stdout))
              assert.deepStrictEqual(fs.readFileSync(path.join(dir, "cgroup.procs"), "latin1"), `${shell}\n`)
              if (entry === "launcher") {
                // Node waits on the launcher: outside the cgroup, the shell's parent
                assert.notStrictEqual(proc.pid, shell)
                assert.strictEqual(
                  fs.readlinkSync(`/proc/${proc.pid}/exe`),
                  Effect.runSync(Confinement.launcherPath)
                )
                assert.strictEqual(parentPid(shell), proc.pid)
              } else {
                assert.strictEqual(proc.pid, shell)
              }
              while (processesNamed(tag).length === 0) yield* Effect.sleep("5 millis")
              return { proc, dir, shell }
            })
          )
          // closing the scope stopped it
          const stopped = yield* out.proc.stopped
          assert.deepStrictEqual(stopped.signalled, [out.shell])
          assert.deepStrictEqual(stopped.survivors, [])
          assert.deepStrictEqual(yield* exitStatusOf(out.proc), { code: null, signal: "SIGTERM" })
          assert.isFalse(fs.existsSync(out.dir))
          assert.isFalse(isLive(out.proc.pid))
          assert.deepStrictEqual(processesNamed(tag), [])
        })
    )

    it.scopedLive(`a shell that cannot run: 127 when missing, 126 when not executable (${entry})`, () =>
      Effect.gen(function* () {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-entry-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const plain = path.join(dir, "not-executable")
        fs.writeFileSync(plain, "echo never\n", { mode: 0o644 })
        assert.deepStrictEqual(yield* exitOf(entry, path.join(dir, "missing"), ["-c", "true"]), {
          code: 127,
          signal: null
        })
        assert.deepStrictEqual(yield* exitOf(entry, plain, ["-c", "true"]), { code: 126, signal: null })
      })
    )

    it.scopedLive.prop(
      `the exit code or the signal of the shell is what Node sees (${entry})`,
      [
        FastCheck.oneof(
          FastCheck.integer({ min: 0, max: 255 }).map((code) => ({
            command: `exit ${code}`,
            code,
            signal: null
          })),
          FastCheck.constantFrom("TERM", "KILL", "INT", "HUP", "USR1", "PIPE", "ALRM").map((name) => ({
            command: `kill -${name} $$`,
            code: null,
            signal: `SIG${name}`
          }))
        )
      ],
      ([expected]) =>
        Effect.map(exitOf(entry, "/bin/sh", ["-c", expected.command]), (status) =>
          assert.deepStrictEqual(status, { code: expected.code, signal: expected.signal })
        ),
      { fastCheck: { numRuns: 12 } }
    )
  }

  it.scopedLive.skipIf(!entries.includes("launcher"))(
    "SIGTERM to the launcher reaches the shell; the launcher dies of it in turn",
    () =>
      Effect.gen(function* () {
        const tag = "sleep 1000.83"
        yield* Effect.addFinalizer(() => killNamed(tag))
        const supervisor = yield* supervisorFor("launcher")
        const status = yield* Effect.scoped(
          Effect.gen(function* () {
            const { proc, dir } = yield* spawnTree(supervisor, "launcher", "/bin/sh", [
              "-c",
              `echo $$; exec ${tag}`
            ])
            const shell = Number(yield* firstLine(proc.stdout))
            while (!processesNamed(tag).some((p) => p.pid === shell)) yield* Effect.sleep("5 millis")
            process.kill(proc.pid, "SIGTERM")
            const relayed = yield* proc.exit
            assert.strictEqual(fs.readFileSync(path.join(dir, "cgroup.procs"), "latin1"), "")
            return relayed
          })
        )
        assert.deepStrictEqual(status, { code: null, signal: "SIGTERM" })
        assert.deepStrictEqual(processesNamed(tag), [])
      })
  )
})

/** This process's children that are launcher servers (`--server`). */
const servers = () =>
  processesNamed(`${Effect.runSync(Confinement.launcherPath)} --server`).filter(
    (p) => parentPid(p.pid) === process.pid
  )

/**
 * The servers started since `before` (one an earlier test's runner dismissed may still be on its
 * way out, so the count alone would not tell).
 */
const newServers = (before: ReadonlyArray<number>) =>
  servers()
    .map((p) => p.pid)
    .filter((pid) => !before.includes(pid))

/** Bytes to a string, collected from a stream. */
const textOf = (stream: Stream.Stream<Uint8Array>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(Chunk.toArray(chunks)).toString("utf8"))

describe.skipIf(!entries.includes("launcher"))("the launcher server", () => {
  // text without NUL (which no argument or environment value can hold)
  const text = FastCheck.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !s.includes("\0"))

  it.scopedLive.prop(
    "from a supervisor's third launch on the server starts the launcher, which runs exactly the arguments, environment and directory it was given",
    [text, text],
    ([argument, value]) =>
      Effect.gen(function* () {
        const supervisor = yield* supervisorFor("launcher")
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-served-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const go = path.join(dir, "go")
        const launch = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
          Effect.scoped(
            Effect.gen(function* () {
              const runId = freshRunId("launcher")
              const proc = yield* supervisor.start({
                file: "/bin/sh",
                args,
                cwd: dir,
                env,
                tree: { runId, killGraceMs: 500, killWaitMs: 1000, drainMs: 1000 }
              })
              // the shell waits for the go file, so its launcher is alive (and its parent known) here
              const served = servers().some((p) => p.pid === parentPid(proc.pid))
              fs.writeFileSync(go, "")
              const [stdout, status] = yield* Effect.all([textOf(proc.stdout), proc.exit], {
                concurrency: 2
              })
              fs.rmSync(go)
              return { served, stdout, status }
            })
          )
        const command = [
          "-c",
          'while [ ! -e go ]; do sleep 0.01; done; printf "%s|%s|%s|%s" "$1" "$TOOLCAP_VALUE" "$PWD" "${TOOLCAP_UNSET-unset}"; exit 7'
        ]
        const env = { PATH: process.env["PATH"], TOOLCAP_VALUE: value, TOOLCAP_UNSET: undefined }
        const first = yield* launch([...command, "sh", argument], env)
        yield* launch([...command, "sh", ""], env)
        // the second launch started the server while it ran
        const third = yield* launch([...command, "sh", argument], env)
        const expected = `${argument}|${value}|${fs.realpathSync(dir)}|unset`
        assert.isFalse(first.served)
        assert.isTrue(third.served)
        for (const run of [first, third]) {
          assert.strictEqual(run.stdout, expected)
          assert.deepStrictEqual(run.status, { code: 7, signal: null })
        }
      }),
    { fastCheck: { numRuns: 6 } }
  )

  it.scopedLive("a served call's signal death is what Node sees, and its pipes end", () =>
    Effect.gen(function* () {
      const supervisor = yield* supervisorFor("launcher")
      const statuses: Array<unknown> = []
      for (let i = 0; i < 3; i++) {
        const status = yield* Effect.scoped(
          Effect.gen(function* () {
            const { proc } = yield* spawnTree(supervisor, "launcher", "/bin/sh", [
              "-c",
              "echo out; echo err >&2; kill -TERM $$"
            ])
            const [out, err, exit] = yield* Effect.all(
              [textOf(proc.stdout), textOf(proc.stderr), proc.exit],
              {
                concurrency: 3
              }
            )
            return { out, err, exit }
          })
        )
        statuses.push(status)
      }
      for (const status of statuses) {
        assert.deepStrictEqual(status, {
          out: "out\n",
          err: "err\n",
          exit: { code: null, signal: "SIGTERM" }
        })
      }
    })
  )

  it("a host that never closes its supervisor still exits by itself; its server ends with it", () => {
    // a plain Node host on the built packages, making three calls (the third through the server)
    // and never disposing its runtime: the idle server must not keep it alive
    const script = `
      import * as fs from "node:fs"
      import * as path from "node:path"
      import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
      import { Budgets } from "@toolcap/limits"
      import { Scratch } from "@toolcap/spill"
      import { Bash, Supervisor, Workspace } from "@toolcap/tools"
      import * as Layer from "effect/Layer"
      import * as ManagedRuntime from "effect/ManagedRuntime"
      const dir = process.argv[1]
      const runtime = ManagedRuntime.make(Layer.mergeAll(
        Budgets.layer,
        Supervisor.layer(),
        Workspace.layer({ root: dir }).pipe(Layer.orDie),
        Scratch.layer({ dataDir: path.join(dir, "data"), sessionId: "exit" }).pipe(
          Layer.provide(Layer.merge(NodeFileSystem.layer, Budgets.layer)),
          Layer.orDie
        )
      ))
      for (let i = 0; i < 3; i++) await runtime.runPromise(Bash.run({ command: "true" }))
      const servers = fs.readdirSync("/proc").filter((pid) => {
        try {
          return fs.readFileSync("/proc/" + pid + "/cmdline", "latin1").endsWith("--server\\0") &&
            fs.readFileSync("/proc/" + pid + "/stat", "latin1").split(") ")[1].split(" ")[1] === String(process.pid)
        } catch {
          return false
        }
      })
      console.log(servers.join(" "))
    `
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-host-exit-"))
    try {
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", script, dir], {
        cwd: path.resolve(import.meta.dirname, ".."),
        encoding: "utf8",
        timeout: 20_000
      })
      assert.strictEqual(run.status, 0, run.stderr)
      const serverPids = run.stdout
        .trim()
        .split(" ")
        .filter((pid) => pid !== "")
        .map(Number)
      assert.strictEqual(serverPids.length, 1, "the third call went through a server")
      // its stdin closed with the host: it exits, and nothing of it is left
      for (let waited = 0; serverPids.some(isLive) && waited < 2000; waited += 10) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
      }
      assert.isFalse(serverPids.some(isLive))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it.scopedLive(
    "a lost launcher call fails typed: its server SIGKILLed mid-call fails it with TOOL_LAUNCHER_LOST (no exit status made up), leaves nothing of it, and the next call runs on a replacement server",
    () =>
      Effect.gen(function* () {
        const tag = "sleep 1000.87"
        yield* Effect.addFinalizer(() => killNamed(tag))
        const before = servers().map((p) => p.pid)
        // without namespaces, so the pids the shell sees are the host's
        const { layer } = yield* testEnv(fastGraces, undefined, {
          cgroupEntry: "launcher",
          namespaces: false
        })
        const run = (command: string) => Effect.either(Effect.provide(Bash.run({ command }), layer))
        // the shell's parent is its launcher, whose parent is the server that started it
        const serverOfCall = "awk '{print $4}' /proc/$PPID/stat"
        // the first call is started by the host, the second by the server it starts
        yield* run("true")
        const second = yield* run(serverOfCall)
        const started = newServers(before)
        assert.strictEqual(started.length, 1)
        const server = started[0]!
        assert.strictEqual(Either.getOrThrow(second).stdout, `${server}\n`)

        const call = yield* Effect.fork(run(`exec ${tag}`))
        let shell = processesNamed(tag)
        for (let waited = 0; shell.length === 0 && waited < 1000; waited++) {
          yield* Effect.sleep("10 millis")
          shell = processesNamed(tag)
        }
        assert.strictEqual(shell.length, 1, "the call runs")
        const launcher = parentPid(shell[0]!.pid)
        assert.strictEqual(parentPid(launcher), server, "its launcher is the server's")
        process.kill(server, "SIGKILL")
        const lost = yield* Fiber.join(call)
        assert.isTrue(Either.isLeft(lost), "no result, so no exit code or signal")
        const error = Either.getLeft(lost).pipe(Option.getOrThrow)
        assert.instanceOf(error, ToolError.ToolLauncherLost)
        assert.strictEqual(error.code, "TOOL_LAUNCHER_LOST")
        assert.include(error.message, "no exit status is reported")
        assert.notInclude(error.message, "SIGKILL")
        // nothing of the call is left: its shell, its launcher
        assert.deepStrictEqual(processesNamed(tag), [])
        assert.isFalse(isLive(launcher))

        const next = yield* run(serverOfCall)
        const replacements = newServers(before).filter((pid) => pid !== server)
        assert.strictEqual(replacements.length, 1, "one replacement server")
        assert.deepStrictEqual(
          Either.map(next, (result) => [result.stdout, result.exitCode]),
          Either.right([`${replacements[0]}\n`, 0])
        )
      })
  )

  it.scopedLive("a supervisor told not to keep a launcher server starts none", () =>
    Effect.gen(function* () {
      const before = servers().map((p) => p.pid)
      const supervisor = yield* Supervisor.make({ cgroupEntry: "launcher", launcherServer: false })
      for (let i = 0; i < 3; i++) {
        yield* Effect.scoped(
          Effect.gen(function* () {
            const { proc } = yield* spawnTree(supervisor, "launcher", "/bin/sh", ["-c", "true"])
            yield* proc.exit
          })
        )
      }
      yield* Effect.sleep("20 millis")
      assert.deepStrictEqual(newServers(before), [])
    })
  )

  it.scopedLive("closing the supervisor ends its launcher server and leaves nothing of it", () =>
    Effect.gen(function* () {
      const before = servers().map((p) => p.pid)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const supervisor = yield* supervisorFor("launcher")
          for (let i = 0; i < 3; i++) {
            const { proc } = yield* spawnTree(supervisor, "launcher", "/bin/sh", ["-c", "true"])
            yield* proc.exit
          }
          yield* Effect.sleep("20 millis")
          assert.strictEqual(newServers(before).length, 1)
        })
      )
      // the layer's release waited for the server to read the end of its stdin and exit
      assert.deepStrictEqual(newServers(before), [])
    })
  )
})

describe("the cgroup parent", () => {
  // a parent of this test's own beside the runner's, so no concurrent call can hold it
  it.effect.skipIf(parent === undefined)(
    "is made with the first call cgroup and removed with the last, so none outlives the calls",
    () =>
      Effect.gen(function* () {
        const own = path.join(path.dirname(parent!), `toolcap-parent-test.${process.pid}`)
        const first = Cgroup.create(own, "a")
        const second = Cgroup.create(own, "b")
        assert.isDefined(first)
        assert.isDefined(second)
        assert.isTrue(yield* Cgroup.removeDir(first!, 200))
        // another call still lives there: the parent stays
        assert.isTrue(fs.existsSync(own))
        assert.isTrue(yield* Cgroup.removeDir(second!, 200))
        assert.isFalse(fs.existsSync(own))
        // a call after that makes it again
        const third = Cgroup.create(own, "c")
        assert.isDefined(third)
        assert.isTrue(yield* Cgroup.removeDir(third!, 200))
        assert.isFalse(fs.existsSync(own))
      })
  )
})
