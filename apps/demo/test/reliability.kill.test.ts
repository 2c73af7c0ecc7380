/**
 * Reliability: the host SIGKILLed mid-call. A real `toolcap mcp` answers one Bash call whose
 * output spills (so its session has scratch files), then starts a call whose tree never ends (a
 * background sleep, a double-forked one, one in a session of its own, a loop) and is SIGKILLed
 * while that call runs: no code of the host runs after that. Then no process of the tree may stay
 * alive, and the next host started on the same data dir (`--stale-after 0`) must answer and sweep
 * the dead session's scratch directory. 3 kills by default, 20 with TOOLCAP_LONG_TESTS=1. Counts
 * are printed and, when TOOLCAP_RELIABILITY_OUT names a directory, written there.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { cookieCarriers } from "../../../packages/tools/test/bashFixtures.js"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { assertBuilt, bin, makeDirs, mcpHandshake, onLines } from "./fixtures/cli.js"

const KILLS = isLong() ? 20 : 3
/** A wait longer than this counts as a hang (trees here never end by themselves). */
const HANG_MS = 20_000

const dirs = makeDirs("toolcap-kill-")
beforeAll(() => assertBuilt())
afterAll(() => dirs.remove())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (check: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await sleep(25)
  }
  return true
}

interface Host {
  readonly child: ChildProcess
  readonly answers: Map<number, unknown>
  readonly send: (message: unknown) => void
  readonly closed: Promise<number | null>
}

const startMcp = (session: string, extra: ReadonlyArray<string> = []): Host => {
  const child = spawn(
    process.execPath,
    [bin, "mcp", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--session", session, ...extra],
    { env: { ...process.env, NO_COLOR: "1" }, stdio: ["pipe", "pipe", "ignore"] }
  )
  const answers = new Map<number, unknown>()
  onLines(child.stdout!, (line) => {
    try {
      const message = JSON.parse(line) as { id?: number }
      if (typeof message.id === "number") answers.set(message.id, message)
    } catch {
      // not a JSON-RPC line
    }
  })
  child.stdin!.on("error", () => {})
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
  const send = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`)
  for (const message of mcpHandshake("kill-test")) send(message)
  return { child, answers, send, closed }
}

const bashCall = (id: number, command: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "Bash", arguments: { command, timeout: 120 } }
})

const carriersOfHost = (hostPid: number): Array<number> =>
  cookieCarriers((runId) => runId.startsWith(`${hostPid.toString(36)}-`)).map((live) => live.pid)

describe("reliability: the host SIGKILLed mid-call", () => {
  it(
    `${KILLS} kills: no process of the call survives, the next host answers and sweeps the stale scratch`,
    { timeout: KILLS * 60_000 },
    async () => {
      let survivors = 0
      let hangs = 0
      let crashes = 0
      let staleLeft = 0
      const scratch = path.join(dirs.dataDir, "scratch")
      for (let k = 0; k < KILLS; k++) {
        const session = `killed-${k}`
        const host = startMcp(session)
        host.send(bashCall(2, "seq 1 200000"))
        if (!(await until(() => host.answers.has(2), HANG_MS))) hangs++
        host.send(
          bashCall(3, "sleep 300 & (sleep 300 &); setsid sleep 300 & while :; do echo tick; sleep 0.1; done")
        )
        const hostPid = host.child.pid!
        // mid-call: the tree is up (the loop, the sleeps) when 4 processes carry the cookie
        if (!(await until(() => carriersOfHost(hostPid).length >= 4, HANG_MS))) hangs++
        const hadScratch = fs.existsSync(path.join(scratch, session))
        host.child.kill("SIGKILL")
        await host.closed
        if (!(await until(() => carriersOfHost(hostPid).length === 0, HANG_MS))) {
          const left = carriersOfHost(hostPid)
          survivors += left.length
          for (const pid of left) process.kill(pid, "SIGKILL")
        }
        // the next start sweeps the dead session's scratch
        const next = startMcp(`next-${k}`, ["--stale-after", "0"])
        if (!(await until(() => next.answers.has(1), HANG_MS))) hangs++
        if (hadScratch && fs.existsSync(path.join(scratch, session))) staleLeft++
        if (!hadScratch) staleLeft++ // nothing to sweep would prove nothing: count it as a failure
        next.child.stdin!.end()
        const code = await Promise.race([next.closed, sleep(HANG_MS).then(() => "hang" as const)])
        if (code === "hang") {
          hangs++
          next.child.kill("SIGKILL")
          await next.closed
        } else if (code !== 0) crashes++
      }
      reportReliability(
        "faults host SIGKILLed mid-call",
        { inputs: KILLS, survivors, "stale scratch left": staleLeft, crashes, hangs },
        `toolcap mcp SIGKILLed during a Bash call running a 4-process tree (a background, a double-forked and a setsid sleep, a loop), ${KILLS} times; then a new host on the same data dir with --stale-after 0`
      )
      assert.deepStrictEqual(
        { survivors, staleLeft, crashes, hangs },
        { survivors: 0, staleLeft: 0, crashes: 0, hangs: 0 }
      )
    }
  )
})
