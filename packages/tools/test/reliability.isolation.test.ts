/**
 * A call cannot reach its host through cgroupfs or the host's `/proc`, and its `/dev/shm` is its
 * own. Each attack by its exact command, in a real Bash call: the host's pid written into the
 * call's own `cgroup.procs`; the host moved into a nested cgroup that is then killed
 * (`cgroup.kill`) or frozen (`cgroup.freeze`, v1 `freezer.state`) while the call sleeps 6 s under a
 * 2 s timeout; the host's `environ`, `cmdline` and `maps` read; 1 GiB written to `/dev/shm` under
 * a 256 MiB ceiling. The host survives (a killed host would end this test run), stays in its own
 * cgroup, its event loop keeps turning, and each result names the guard that held — or, where
 * the guard is missing (no launcher, namespaces off), says so and why. The launcher's guards are
 * also run as an unprivileged user in a cgroup delegated to it.
 *
 * 1 run per attack and supervisor by default, 10 with TOOLCAP_LONG_TESTS=1; counts through
 * `reportReliability`.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { Procfs } from "@toolcap/spill"
import { Bash, Confinement, type Supervisor } from "@toolcap/tools"
import { cgroupParent, fastGraces, leftoversOfThisWorker, runRecorded, testEnv } from "./bashFixtures.js"

const RUNS = isLong() ? 10 : 1
const mount = Procfs.cgroup2()?.mount
const root = process.getuid?.() === 0
const launcherBuilt = fs.existsSync(Effect.runSync(Confinement.launcherPath))
const freezerV1 = fs.existsSync("/sys/fs/cgroup/freezer/freezer.state")
  ? undefined
  : fs.existsSync("/sys/fs/cgroup/freezer/tasks")
    ? "/sys/fs/cgroup/freezer"
    : undefined
const MiB = 1024 * 1024

/** Free bytes of the host's /dev/shm. */
const shmFree = () => {
  const stats = fs.statfsSync("/dev/shm")
  return stats.bavail * stats.bsize
}

/** The host's own cgroup line(s), to see it was not moved. */
const hostCgroup = () => fs.readFileSync("/proc/self/cgroup", "utf8")

const resultOf = (recorded: { result: Either.Either<Bash.BashResult, Bash.BashError> }) =>
  Either.match(recorded.result, {
    onLeft: (error) => {
      if ("partial" in error) return error.partial
      throw new Error(`expected a result, got ${error.code}`)
    },
    onRight: (result) => result
  })

/** The call's own cgroup v2 directory, as a shell inside it finds it. */
const OWN = `cg=${mount ?? "/sys/fs/cgroup"}$(sed -n 's/^0:://p' /proc/self/cgroup)`

const host = process.pid
/** Each attack of the issue by its exact command; `timeout` for the freezes (they sleep 6 s). */
const attacks: ReadonlyArray<{ readonly name: string; readonly command: string; readonly timeout?: number }> =
  [
    {
      name: "host into the call's cgroup",
      command: `${OWN}; echo ${host} > "$cg/cgroup.procs"; echo "rc=$?"`
    },
    {
      name: "host into a nested cgroup, cgroup.kill",
      command: `${OWN}; mkdir "$cg/n" && echo ${host} > "$cg/n/cgroup.procs" && echo 1 > "$cg/n/cgroup.kill"; echo "rc=$?"`
    },
    {
      name: "host into a nested cgroup, cgroup.freeze",
      command: `${OWN}; mkdir "$cg/n" && echo ${host} > "$cg/n/cgroup.procs"; echo 1 > "$cg/n/cgroup.freeze"; sleep 6`,
      timeout: 2
    },
    ...(freezerV1 === undefined
      ? []
      : [
          {
            name: "host into a v1 freezer cgroup, FROZEN",
            command: `f=${freezerV1}/toolcap-attack.$$; mkdir "$f" && echo ${host} > "$f/tasks"; echo FROZEN > "$f/freezer.state"; sleep 6`,
            timeout: 2
          }
        ])
  ]

/** Counts the event loop's turns while `effect` runs (a frozen host would count none). */
const countingTurns = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    let turns = 0
    const timer = setInterval(() => turns++, 50)
    const value = yield* Effect.ensuring(
      effect,
      Effect.sync(() => clearInterval(timer))
    )
    return { value, turns }
  })

const supervisors: ReadonlyArray<{
  readonly label: string
  readonly options: Supervisor.Options
  readonly cgroupfs: "landlock" | "none"
  readonly proc: "pid namespace" | "landlock" | "none"
}> = [
  { label: "default", options: {}, cgroupfs: "landlock", proc: "pid namespace" },
  {
    label: "no namespaces",
    options: { namespaces: false },
    cgroupfs: "landlock",
    proc: root ? "none" : "landlock"
  },
  {
    label: "group tier",
    options: { containment: "group" },
    cgroupfs: "landlock",
    proc: root ? "none" : "landlock"
  }
]

describe.runIf(cgroupParent() !== undefined && mount !== undefined && launcherBuilt && root)(
  "a call cannot write cgroupfs, nor read the host's /proc",
  () => {
    afterAll(() => {
      if (freezerV1 === undefined) return
      for (const entry of fs.readdirSync(freezerV1)) {
        if (!entry.startsWith("toolcap-attack.")) continue
        fs.writeFileSync(path.join(freezerV1, entry, "freezer.state"), "THAWED")
        fs.rmdirSync(path.join(freezerV1, entry))
      }
    })

    it.scopedLive(
      "cgroupfs attacks: the host survives in its own cgroup, unfrozen, and the result names the guard",
      () =>
        Effect.gen(function* () {
          const counts = { "host moved": 0, "writes that held": 0, "frozen turns": 0, "late answers": 0 }
          const before = hostCgroup()
          for (const supervisor of supervisors) {
            const env = yield* testEnv(fastGraces, undefined, supervisor.options)
            for (const attack of attacks) {
              for (let run = 0; run < RUNS; run++) {
                const { value: recorded, turns } = yield* countingTurns(
                  runRecorded({ command: attack.command, timeout: attack.timeout ?? 10 }).pipe(
                    Effect.provide(env.layer)
                  )
                )
                const result = resultOf(recorded)
                const label = `${supervisor.label}: ${attack.name}`
                assert.strictEqual(result.termination.cgroupfs, supervisor.cgroupfs, label)
                assert.strictEqual(result.termination.proc, supervisor.proc, label)
                if (hostCgroup() !== before) counts["host moved"]++
                // every write into cgroupfs was refused: denied, or a read-only file system
                if (!/Permission denied|Read-only file system/.test(result.stderr))
                  counts["writes that held"]++
                // a 2 s timeout answers within its kill grace and drain, not after the 6 s sleep
                if (attack.timeout !== undefined && result.durationMs > 5_500) counts["late answers"]++
                // a freeze attack runs its 2 s: a host that was not frozen turned many times meanwhile
                if (attack.timeout !== undefined && turns === 0) counts["frozen turns"]++
              }
            }
          }
          reportReliability(
            "hostile cgroupfs writes",
            { inputs: RUNS * attacks.length * supervisors.length, ...counts },
            "Bash calls that write the host's pid into their cgroup.procs, into a nested cgroup then cgroup.kill or cgroup.freeze (and v1 FROZEN) with sleep 6 under a 2 s timeout; cgroup tier with and without namespaces, group tier"
          )
          assert.deepStrictEqual(counts, {
            "host moved": 0,
            "writes that held": 0,
            "frozen turns": 0,
            "late answers": 0
          })
          assert.deepStrictEqual(leftoversOfThisWorker(), [])
        }),
      { timeout: RUNS * attacks.length * supervisors.length * 20_000 }
    )

    it.scopedLive(
      "the host's environ, cmdline and maps are unreadable from a call; the fallback says why",
      () =>
        Effect.gen(function* () {
          const read = ["environ", "cmdline", "maps"]
            .map(
              (file) =>
                `cat /proc/${host}/${file} >/dev/null 2>&1 && echo "read ${file}" || echo "no ${file}"`
            )
            .join("; ")
          let readable = 0
          for (let run = 0; run < RUNS; run++) {
            const env = yield* testEnv(fastGraces, undefined, {})
            const recorded = yield* runRecorded({ command: read }).pipe(Effect.provide(env.layer))
            const result = resultOf(recorded)
            assert.strictEqual(result.termination.proc, "pid namespace")
            assert.strictEqual(result.termination.procReason, undefined)
            if (result.stdout !== "no environ\nno cmdline\nno maps\n") readable++
          }
          // the fallback: no namespaces, a root host: the result says the host's /proc is readable, and why
          const fallback = yield* testEnv(fastGraces, undefined, { namespaces: false })
          const open = resultOf(
            yield* runRecorded({ command: `head -c 1 /proc/${host}/environ | wc -c` }).pipe(
              Effect.provide(fallback.layer)
            )
          )
          assert.strictEqual(open.termination.proc, "none")
          assert.include(open.termination.procReason ?? "", "namespaces were turned off")
          assert.include(
            open.termination.procReason ?? "",
            "Landlock scopes do not refuse environ and maps to a root call"
          )
          assert.strictEqual(open.stdout, "1\n")
          reportReliability(
            "hostile /proc reads",
            { inputs: RUNS * 3, readable },
            "Bash calls that read the host's /proc/<pid>/environ, cmdline and maps; PID namespace with its own /proc"
          )
          assert.strictEqual(readable, 0)
        })
    )

    it.scopedLive("1 GiB to /dev/shm under a 256 MiB ceiling fails, and nothing of it stays pinned", () =>
      Effect.gen(function* () {
        const file = `toolcap-shm-${process.pid}`
        // should the call reach the host's /dev/shm after all, what it wrote goes with the test
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => fs.rmSync(path.join("/dev/shm", file), { force: true }))
        )
        const freeBefore = shmFree()
        const env = yield* testEnv({ ...fastGraces, bashMemoryMaxBytes: 256 * MiB }, undefined, {})
        const result = resultOf(
          yield* runRecorded({
            command: `dd if=/dev/zero of=/dev/shm/${file} bs=1M count=1024 2>/dev/null; echo "dd=$?"; du -m /dev/shm/${file} | cut -f1`
          }).pipe(Effect.provide(env.layer))
        )
        assert.strictEqual(result.termination.shm, "private")
        assert.strictEqual(result.termination.shmMaxBytes, 256 * MiB)
        // dd fails: the tmpfs is full (ENOSPC) or, under a memory controller that counts its pages,
        // the call reached its ceiling first and a process of it was OOM-killed (maybe the shell)
        const [dd, written] = result.stdout.trim().split("\n")
        assert.notStrictEqual(dd, "dd=0", result.stdout)
        if (written !== undefined) assert.isAtMost(Number(written), 256)
        if (dd === undefined) assert.isTrue(result.termination.memoryCeiling?.reached, result.output)
        // the host's /dev/shm never saw the file, and its free space did not drop by what was written
        assert.isFalse(fs.existsSync(path.join("/dev/shm", file)))
        assert.isAbove(shmFree(), freeBefore - 200 * MiB)
        assert.deepStrictEqual(leftoversOfThisWorker(), [])
        reportReliability(
          "hostile /dev/shm fills",
          { inputs: 1, pinned: fs.existsSync(path.join("/dev/shm", file)) ? 1 : 0 },
          "a Bash call that writes 1 GiB to /dev/shm under a 256 MiB ceiling: a private tmpfs of 256 MiB, gone with the call"
        )
        // without namespaces the call's /dev/shm is the host's, and the result says so
        const shared = yield* testEnv(fastGraces, undefined, { namespaces: false })
        const plain = resultOf(yield* runRecorded({ command: "true" }).pipe(Effect.provide(shared.layer)))
        assert.strictEqual(plain.termination.shm, "shared")
        assert.include(plain.termination.shmReason ?? "", "namespaces were turned off")
      })
    )

    it.scopedLive(
      "a call with a private /dev/shm removes nothing from the host's, even what appeared during it",
      () =>
        Effect.gen(function* () {
          const hostFile = path.join("/dev/shm", `toolcap-host-${process.pid}`)
          yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(hostFile, { force: true })))
          const env = yield* testEnv(fastGraces, undefined, {})
          // the call says it runs (a file in the workspace), the host then writes its own /dev/shm
          // file, and the call ends only once it is there: a file that appeared during the call, of
          // the host's user, held by no one — what the cleanup of a shared /dev/shm would remove
          const call = runRecorded({
            command:
              `echo call > /dev/shm/toolcap-call-${process.pid}; touch started; ` +
              "i=0; while [ ! -f written ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; cat written"
          }).pipe(Effect.provide(env.layer))
          const hostWrites = Effect.gen(function* () {
            while (!fs.existsSync(path.join(env.workspace, "started"))) yield* Effect.sleep("20 millis")
            fs.writeFileSync(hostFile, "the host's")
            fs.writeFileSync(path.join(env.workspace, "written"), "host wrote\n")
          })
          const [recorded] = yield* Effect.all([call, hostWrites], { concurrency: 2 })
          const result = resultOf(recorded)
          assert.strictEqual(result.stdout, "host wrote\n")
          assert.strictEqual(result.termination.shm, "private")
          assert.strictEqual(result.termination.shmRemoved, undefined)
          assert.strictEqual(fs.readFileSync(hostFile, "utf8"), "the host's")
          assert.isFalse(fs.existsSync(`/dev/shm/toolcap-call-${process.pid}`))
        })
    )
  }
)

describe.runIf(!launcherBuilt || !root)("without the launcher or root here", () => {
  it.scopedLive("the result names the guards that did not apply, with their reasons", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces, undefined, {})
      const result = resultOf(yield* runRecorded({ command: "true" }).pipe(Effect.provide(env.layer)))
      if (result.termination.cgroupfs !== "landlock") assert.isString(result.termination.cgroupfsReason)
      if (result.termination.proc !== "pid namespace") assert.isString(result.termination.procReason)
    })
  )
})

describe("with the launcher off (the fallback)", () => {
  it.scopedLive("cgroupfs, /proc and /dev/shm are reported unguarded, each with its reason", () =>
    Effect.gen(function* () {
      const env = yield* testEnv(fastGraces, undefined, { launcher: false })
      const result = resultOf(yield* runRecorded({ command: "true" }).pipe(Effect.provide(env.layer)))
      assert.strictEqual(result.termination.cgroupfs, "none")
      assert.include(result.termination.cgroupfsReason ?? "", "launcher was turned off")
      assert.strictEqual(result.termination.proc, "none")
      assert.include(result.termination.procReason ?? "", "launcher was turned off")
      assert.strictEqual(result.termination.shm, "shared")
    })
  )
})

/** The user the delegated-cgroup case runs as, made for it and removed after. */
const user = `tcns${process.pid % 100000}`
const delegated = mount === undefined ? undefined : path.join(mount, `toolcap-delegated.${process.pid}`)
/** The toolcap CLI, built (`pnpm run build`). */
const cli = fileURLToPath(new URL("../../../apps/demo/dist/bin.js", import.meta.url))
const canDelegate =
  root &&
  launcherBuilt &&
  delegated !== undefined &&
  spawnSync("sh", ["-c", "command -v useradd && command -v userdel && command -v setpriv"]).status === 0

/**
 * Lets other users through every folder above `file` (a checkout inside a 0700 temp folder would
 * hide the built code from the unprivileged user); what it changed, to put back after the suite.
 */
const openPathToOthers = (file: string): Array<readonly [string, number]> => {
  const changed: Array<readonly [string, number]> = []
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const mode = fs.statSync(dir).mode & 0o7777
    if ((mode & 0o001) === 0) {
      fs.chmodSync(dir, mode | 0o001)
      changed.push([dir, mode])
    }
    if (path.dirname(dir) === dir) return changed
  }
}

describe.runIf(canDelegate)("as an unprivileged user in a delegated cgroup", () => {
  let opened: Array<readonly [string, number]> = []
  beforeAll(() => {
    opened = openPathToOthers(cli)
  })
  afterAll(() => {
    for (const [dir, mode] of opened) fs.chmodSync(dir, mode)
  })
  let launcher = ""
  let dir = ""
  beforeAll(() => {
    spawnSync("useradd", ["-M", "-s", "/bin/sh", user])
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-delegated-"))
    fs.chmodSync(dir, 0o755)
    launcher = path.join(dir, "toolcap-confine")
    fs.copyFileSync(Effect.runSync(Confinement.launcherPath), launcher)
    fs.chmodSync(launcher, 0o755)
    fs.mkdirSync(path.join(delegated!, "host"), { recursive: true })
    spawnSync("chown", ["-R", user, delegated!])
  })
  afterAll(() => {
    for (const sub of ["host/toolcap", "call/n", "call", "host"]) {
      const at = path.join(delegated!, sub)
      if (fs.existsSync(path.join(at, "cgroup.kill"))) fs.writeFileSync(path.join(at, "cgroup.kill"), "1")
    }
    // what the CLI host made under its cgroup (its call cgroups' parent), then the rest
    for (const sub of ["host/toolcap", "call/n", "call", "host", ""]) {
      for (let i = 0; i < 50 && fs.existsSync(path.join(delegated!, sub)); i++) {
        try {
          fs.rmdirSync(path.join(delegated!, sub))
        } catch {
          spawnSync("sleep", ["0.02"])
        }
      }
    }
    fs.rmSync(dir, { recursive: true, force: true })
    spawnSync("userdel", [user])
  })

  it("the launcher's namespaces and write rules hold each attack; the host shell survives", () => {
    const uid = Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim())
    const call = path.join(delegated!, "call")
    // the host: a shell of the user moved into the delegated cgroup by root, then running as the user
    const attack = [
      `echo $HOST > ${call}/cgroup.procs`,
      `mkdir ${call}/n && echo $HOST > ${call}/n/cgroup.procs && echo 1 > ${call}/n/cgroup.kill`,
      `echo 1 > ${call}/cgroup.freeze`,
      'ls /proc | grep -c "^[0-9]"',
      "cat /proc/$HOST/environ >/dev/null && echo environ-read",
      "df -k --output=size /dev/shm | tail -1"
    ].join("; ")
    const hostScript = [
      `mkdir ${call}`,
      `HOST=$$ ${launcher} --cgroup ${call} --isolate ${256 * MiB} --deny-cgroupfs --scope -- /bin/sh -c '${attack.replaceAll("$HOST", "$0")}' $$`,
      'echo "host alive, call exit $?"'
    ].join("; ")
    const run = spawnSync(
      "/bin/sh",
      [
        "-c",
        `echo $$ > ${delegated}/host/cgroup.procs && exec setpriv --reuid=${uid} --regid=${uid} --clear-groups /bin/sh -c "$0"`,
        hostScript
      ],
      { encoding: "utf8", timeout: 20_000, cwd: dir }
    )
    const lines = run.stdout.trim().split("\n")
    // in its own PID namespace only the call's processes are listed; a 256 MiB /dev/shm
    // pid 1, the shell, ls and grep
    assert.isAtMost(Number(lines[0]), 4, run.stdout + run.stderr)
    assert.strictEqual(Number(lines[1]), 256 * 1024, run.stdout + run.stderr)
    assert.strictEqual(lines.at(-1), "host alive, call exit 0", run.stdout + run.stderr)
    assert.notInclude(run.stdout, "environ-read")
    // each write was refused (read-only cgroup mounts, then Landlock)
    assert.strictEqual(
      (run.stderr.match(/Read-only file system|Permission denied/g) ?? []).length,
      3,
      run.stderr
    )
    assert.strictEqual(fs.readFileSync(path.join(call, "cgroup.procs"), "utf8"), "")
  })

  it.runIf(fs.existsSync(cli))(
    "a real toolcap host of that user survives each attack of its Bash call, which names its guards",
    () => {
      const uid = Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim())
      for (const sub of ["ws", "data"]) fs.mkdirSync(path.join(dir, sub), { recursive: true })
      spawnSync("chown", ["-R", user, path.join(dir, "ws"), path.join(dir, "data")])
      const command = [
        `cg=${mount}$(sed -n "s/^0:://p" /proc/self/cgroup)`,
        'echo HOSTPID > "$cg/cgroup.procs"',
        'mkdir "$cg/n" && echo HOSTPID > "$cg/n/cgroup.procs" && echo 1 > "$cg/n/cgroup.kill"',
        'echo 1 > "$cg/cgroup.freeze"',
        "head -c 1 /proc/HOSTPID/environ | wc -c"
      ].join("; ")
      // the host's pid is the shell's, which execs the CLI: known to the call's command before it runs
      const hostShell = [
        `input=$(printf %s "$0" | sed "s/HOSTPID/$$/g")`,
        `exec ${process.execPath} ${cli} call Bash "$input" --workspace ${dir}/ws --data-dir ${dir}/data`
      ].join("; ")
      const run = spawnSync(
        "/bin/sh",
        [
          "-c",
          `echo $$ > ${delegated}/host/cgroup.procs && HOME=${dir} exec setpriv --reuid=${uid} --regid=${uid} --clear-groups /bin/sh -c "$0" "$1"`,
          hostShell,
          JSON.stringify({ command, timeout: 10 })
        ],
        { encoding: "utf8", timeout: 60_000, cwd: dir }
      )
      // the host ended by itself (not SIGTERM'd, SIGKILL'd or frozen past the spawn's timeout)
      assert.strictEqual(run.status, 0, run.stdout + run.stderr)
      const answer = JSON.parse(run.stdout) as { ok: boolean; result: Bash.BashResult }
      assert.isTrue(answer.ok)
      const { result } = answer
      assert.strictEqual(result.stdout, "0\n", result.output)
      assert.strictEqual((result.stderr.match(/Read-only file system|Permission denied/g) ?? []).length, 3)
      assert.strictEqual(result.termination.cgroupfs, "landlock")
      assert.strictEqual(result.termination.proc, "pid namespace")
      assert.strictEqual(result.termination.shm, "private")
    },
    60_000
  )
})
