/**
 * A call cannot reach its host. A real `toolcap call` and a real `toolcap mcp` run a Bash call
 * that SIGKILLs the host's watchdog and the host itself, opens the host's `/proc/<pid>/fd` and
 * `/proc/<pid>/mem` and takes a descriptor with `pidfd_getfd`, then writes to a file every 100 ms;
 * the host is SIGKILLed after it (in the cgroup tier the writer runs in a cgroup the call made
 * inside its own, which the watchdog must stop and remove too). Under Landlock scopes (the launcher built, Landlock ABI ≥ 6)
 * every attempt is denied, and within the hang bound no process of the call is alive, no cgroup of
 * the host is left and the file stops growing — in the cgroup tier and the group tier.
 *
 * Without the launcher (`TOOLCAP_LAUNCHER` naming a missing file) the call can kill the watchdog:
 * the host starts a new one at once, which still stops the call when the host is SIGKILLed.
 *
 * 1 run per case by default, 100 runs of the attack (spread over the cases) with
 * TOOLCAP_LONG_TESTS=1; counts through `reportReliability`.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { Procfs } from "@toolcap/spill"
import {
  cgroupParent,
  cookieCarriers,
  processesNamed,
  scopesOffered
} from "../../../packages/tools/test/bashFixtures.js"
import { assertBuilt, bin, makeDirs, mcpHandshake } from "./fixtures/cli.js"

const dirs = makeDirs("toolcap-reach-")
const mount = Procfs.cgroup2()?.mount
beforeAll(() => assertBuilt())
afterAll(() => dirs.remove())

/** A wait longer than this counts as a hang (the writer never ends by itself). */
const HANG_MS = 20_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (check: () => boolean, ms = HANG_MS): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0)

/** The host's watchdog: its `/bin/sh` child running the lifeline script (which defines `cgstop`). */
const watchdogOf = (host: number): number | undefined =>
  processesNamed("cgstop()").find((live) => Procfs.readProcess(live.pid)?.ppid === host)?.pid

const carriersOfHost = (host: number) =>
  cookieCarriers((runId) => runId.startsWith(`${host.toString(36)}-`)).map((live) => live.pid)

const cgroupsOfHost = (host: number): Array<string> => {
  const parent = cgroupParent()
  if (parent === undefined || !fs.existsSync(parent)) return []
  return fs.readdirSync(parent).filter((name) => name.startsWith(`${host.toString(36)}-`))
}

/**
 * The attack, run by the call: each target named in `$TARGETS` (`name pid` lines) is SIGKILLed,
 * then the host's `/proc` descriptors and memory are opened and one of its descriptors taken with
 * `pidfd_getfd`. One `label:denied|reached|errnoN` line per attempt.
 */
const ATTACK = `import ctypes, os, signal, sys
targets = [line.split() for line in open(sys.argv[1]) if line.strip()]
only_signals = len(sys.argv) > 2
def attempt(label, f):
    try:
        f(); print(label + ':reached')
    except OSError as e:
        print(label + ':' + ('denied' if e.errno in (1, 13) else 'errno%d' % e.errno))
for name, pid in targets:
    attempt('kill-' + name, lambda: os.kill(int(pid), signal.SIGKILL))
if not only_signals:
    host = int(dict(targets)['host'])
    attempt('fd', lambda: os.close(os.open('/proc/%d/fd/0' % host, os.O_RDONLY)))
    attempt('mem', lambda: os.close(os.open('/proc/%d/mem' % host, os.O_RDONLY)))
    libc = ctypes.CDLL(None, use_errno=True)
    def getfd():
        pidfd = os.pidfd_open(host)
        fd = libc.syscall(438, pidfd, 0, 0)
        if fd < 0: raise OSError(ctypes.get_errno(), 'pidfd_getfd')
        os.close(fd)
    attempt('getfd', getfd)
print('end')
`

interface Case {
  readonly host: "cli" | "mcp"
  readonly containment: "cgroup" | "group"
  /** Without the launcher: no scopes, so only the watchdog is attacked (a root call could kill the host). */
  readonly launcher: boolean
}

const cases: ReadonlyArray<Case> = [
  { host: "cli", containment: "cgroup", launcher: true },
  { host: "mcp", containment: "cgroup", launcher: true },
  { host: "cli", containment: "group", launcher: true },
  { host: "mcp", containment: "group", launcher: true },
  { host: "mcp", containment: "cgroup", launcher: false },
  { host: "cli", containment: "group", launcher: false }
]

/** Runs per case: 100 attacks in all in the long mode. */
const RUNS = isLong() ? Math.ceil(100 / cases.length) : 1

const startHost = (which: Case, run: string, command: string): ChildProcess => {
  const base = ["--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--session", `reach-${run}`]
  const args =
    which.host === "cli"
      ? ["call", "Bash", JSON.stringify({ command, timeout: 120 }), ...base]
      : ["mcp", ...base]
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      ...process.env,
      NO_COLOR: "1",
      TOOLCAP_CONTAINMENT: which.containment,
      // the call's own cgroup writes and host pids are part of this attack: the stop must hold without
      // the launcher's cgroupfs rules and namespaces (their own attacks: tools' reliability.isolation.test.ts)
      TOOLCAP_CGROUPFS: "writable",
      TOOLCAP_NAMESPACES: "off",
      ...(which.launcher ? {} : { TOOLCAP_LAUNCHER: path.join(dirs.workspace, "no-launcher-here") })
    },
    stdio: ["pipe", "ignore", "ignore"]
  })
  child.stdin!.on("error", () => {})
  if (which.host === "mcp") {
    const send = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`)
    for (const message of mcpHandshake("reach-test")) send(message)
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "Bash", arguments: { command, timeout: 120 } }
    })
  }
  return child
}

interface Outcome {
  /** Attempts that reached the host or the watchdog where they had to be denied. */
  readonly escapes: number
  readonly survivors: number
  readonly hangs: number
  readonly report: string
}

const attackOnce = async (which: Case, run: string): Promise<Outcome> => {
  const file = (name: string) => path.join(dirs.workspace, `${name}-${run}`)
  const marker = `reach-writer-${process.pid}-${run}`
  const command = [
    `touch ${file("waiting")}`,
    `while [ ! -s ${file("targets")} ]; do sleep 0.02; done`,
    `python3 ${path.join(dirs.workspace, "attack.py")} ${file("targets")} ${which.launcher ? "" : "signals"} > ${file("attack")} 2>&1`,
    // the writer in a cgroup the call made inside its own: the watchdog must stop and remove it too
    ...(which.containment === "cgroup" && mount !== undefined
      ? [
          `cg=${mount}$(sed -n 's/^0:://p' /proc/self/cgroup)/nest`,
          `mkdir "$cg" && echo $$ > "$cg/cgroup.procs" || exit 3`
        ]
      : []),
    `exec sh -c 'while :; do date >> ${file("log")}; sleep 0.1; done' ${marker}`
  ].join("\n")
  const host = startHost(which, run, command)
  const closed = new Promise<void>((resolve) => host.once("close", () => resolve()))
  const hostPid = host.pid!
  let hangs = 0
  let escapes = 0
  let report = ""
  try {
    if (!(await until(() => fs.existsSync(file("waiting")))))
      return { escapes, survivors: 0, hangs: 1, report }
    const watchdog = watchdogOf(hostPid)
    assert.isDefined(watchdog, "the host's watchdog runs while a call does")
    const targets = which.launcher ? `watchdog ${watchdog}\nhost ${hostPid}\n` : `watchdog ${watchdog}\n`
    fs.writeFileSync(file("targets"), targets)
    if (!(await until(() => size(file("log")) > 0))) hangs++
    report = fs.readFileSync(file("attack"), "utf8")
    const lines = report.trim().split("\n")
    assert.strictEqual(lines.at(-1), "end", report)
    const attempts = lines.slice(0, -1)
    if (which.launcher) {
      escapes += attempts.filter((line) => !line.endsWith(":denied")).length
      assert.deepStrictEqual(
        attempts.map((line) => line.split(":")[0]),
        ["kill-watchdog", "kill-host", "fd", "mem", "getfd"]
      )
    } else {
      // no scopes: the call kills the watchdog, and the host starts another one
      assert.deepStrictEqual(attempts, ["kill-watchdog:reached"])
      if (!(await until(() => (watchdogOf(hostPid) ?? watchdog) !== watchdog))) hangs++
    }
    host.kill("SIGKILL")
    await closed
    let survivors = 0
    if (
      !(await until(
        () =>
          processesNamed(marker).length === 0 &&
          carriersOfHost(hostPid).length === 0 &&
          cgroupsOfHost(hostPid).length === 0
      ))
    ) {
      survivors = processesNamed(marker).length + carriersOfHost(hostPid).length
      hangs += cgroupsOfHost(hostPid).length
    }
    // the file stops growing: nothing appends after the tree is gone
    const settled = size(file("log"))
    await sleep(300)
    if (size(file("log")) !== settled) survivors++
    return { escapes, survivors, hangs, report }
  } finally {
    for (const live of processesNamed(marker)) process.kill(live.pid, "SIGKILL")
    host.kill("SIGKILL")
  }
}

describe("reliability: a call cannot reach its host", () => {
  beforeAll(() => fs.writeFileSync(path.join(dirs.workspace, "attack.py"), ATTACK))
  for (const which of cases) {
    const label = `${which.host}, ${which.containment} tier, ${which.launcher ? "launcher" : "no launcher"}`
    it.runIf(!which.launcher || scopesOffered())(
      `${label}: ${which.launcher ? "signals, /proc and pidfd_getfd denied" : "a killed watchdog is replaced"}; host SIGKILL leaves nothing (${RUNS} runs)`,
      { timeout: RUNS * 60_000 },
      async () => {
        const total = { escapes: 0, survivors: 0, hangs: 0 }
        for (let run = 0; run < RUNS; run++) {
          const outcome = await attackOnce(
            which,
            `${which.host}-${which.containment}-${which.launcher}-${run}`
          )
          total.escapes += outcome.escapes
          total.survivors += outcome.survivors
          total.hangs += outcome.hangs
          assert.deepStrictEqual(
            { escapes: outcome.escapes, survivors: outcome.survivors, hangs: outcome.hangs },
            { escapes: 0, survivors: 0, hangs: 0 },
            `run ${run}: ${outcome.report}`
          )
        }
        reportReliability(
          `hostile call reaching its host (${label})`,
          { inputs: RUNS, ...total },
          which.launcher
            ? `toolcap ${which.host}: a Bash call SIGKILLs the watchdog and the host, opens /proc/<host>/fd/0 and mem, pidfd_getfd; then the host is SIGKILLed`
            : `toolcap ${which.host} without the launcher: a Bash call SIGKILLs the watchdog; then the host is SIGKILLed`
        )
      }
    )
  }
})
