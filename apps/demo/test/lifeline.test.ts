/**
 * No orphan after the host dies: a real `toolcap call` and a real `toolcap mcp` run a Bash writer
 * that appends to a file every 100 ms, then the host is killed (SIGKILL: no code runs in it) or
 * signalled (SIGTERM, SIGINT). Within 3 s of its death no process of the tree is alive and the
 * file stops growing — in the cgroup tier and in the group tier (TOOLCAP_CONTAINMENT=group).
 * Also: SIGTERM to the CLI while an escapee holds the call's pipes ends it with one JSON line, and
 * an MCP cancel of such a call is honoured while the server keeps answering.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { cookieCarriers, processesNamed as livesNamed } from "../../../packages/tools/test/bashFixtures.js"
import { assertBuilt, bin, makeDirs, mcpHandshake, onLines } from "./fixtures/cli.js"

const dirs = makeDirs("toolcap-lifeline-")
beforeAll(() => assertBuilt())
afterAll(() => dirs.remove())

/**
 * How long a wait may last before it counts as a hang. The trees below never end by themselves
 * (an endless writer, `sleep 1000`), so reaching this limit means nothing stopped them; the time
 * actually taken is printed, not asserted (speed is the bench's business, not a test's).
 */
const HANG_MS = 20_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Live (non-zombie) pids whose command line contains `needle` (or is exactly it). */
const processesNamed = (needle: string, exact = false): Array<number> =>
  livesNamed(needle)
    .filter((live) => !exact || live.cmdline === needle)
    .map((live) => live.pid)

/** Live pids carrying the cookie of any run of the host `hostPid` (run ids start with its pid in base 36). */
const carriersOfHost = (hostPid: number): Array<number> =>
  cookieCarriers((runId) => runId.startsWith(`${hostPid.toString(36)}-`)).map((live) => live.pid)

const until = async (what: string, check: () => boolean, ms: number) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(25)
  }
}

const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0)

interface Host {
  readonly child: ChildProcess
  readonly lines: Array<string>
  readonly send: (message: unknown) => void
  readonly closed: Promise<void>
}

const startHost = (args: ReadonlyArray<string>, containment: "cgroup" | "group"): Host => {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, NO_COLOR: "1", TOOLCAP_CONTAINMENT: containment },
    stdio: ["pipe", "pipe", "ignore"]
  })
  const lines: Array<string> = []
  onLines(child.stdout!, (line) => lines.push(line))
  child.stdin!.on("error", () => {})
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()))
  return { child, lines, send: (message) => child.stdin!.write(`${JSON.stringify(message)}\n`), closed }
}

const base = (session: string) => [
  "--workspace",
  dirs.workspace,
  "--data-dir",
  dirs.dataDir,
  "--session",
  session
]

const bashCall = (id: number, command: string, timeout = 60) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "Bash", arguments: { command, timeout } }
})

const startMcp = (session: string, containment: "cgroup" | "group"): Host => {
  const host = startHost(["mcp", ...base(session)], containment)
  for (const message of mcpHandshake("lifeline-test")) host.send(message)
  return host
}

/** A writer appending to `file` every 100 ms, its shell named by `marker` ($0). */
const writer = (file: string, marker: string) =>
  `sh -c 'while :; do date >> ${file}; sleep 0.1; done' ${marker}`

const cases: ReadonlyArray<{
  readonly host: "cli" | "mcp"
  readonly signal: NodeJS.Signals
  readonly containment: "cgroup" | "group"
}> = [
  { host: "cli", signal: "SIGKILL", containment: "cgroup" },
  { host: "cli", signal: "SIGKILL", containment: "group" },
  { host: "cli", signal: "SIGTERM", containment: "cgroup" },
  { host: "cli", signal: "SIGINT", containment: "group" },
  { host: "mcp", signal: "SIGKILL", containment: "cgroup" },
  { host: "mcp", signal: "SIGKILL", containment: "group" },
  { host: "mcp", signal: "SIGTERM", containment: "cgroup" },
  { host: "mcp", signal: "SIGINT", containment: "group" }
]

describe.concurrent("the host dies while Bash runs a writer: nothing of the tree outlives it", () => {
  cases.forEach(({ host: kind, signal, containment }, index) => {
    it(`${kind}, ${signal}, ${containment} tier`, { timeout: 60_000 }, async () => {
      const marker = `lifeline-writer-${process.pid}-${index}`
      const file = path.join(dirs.workspace, `${marker}.log`)
      const command = writer(file, marker)
      const host =
        kind === "cli"
          ? startHost(
              ["call", "Bash", JSON.stringify({ command, timeout: 60 }), ...base(`cli-${index}`)],
              containment
            )
          : startMcp(`mcp-${index}`, containment)
      if (kind === "mcp") host.send(bashCall(2, command))
      try {
        await until("the writer writes", () => size(file) > 0, 30_000)
        const hostPid = host.child.pid!
        assert.isAbove(processesNamed(marker).length, 0)
        host.child.kill(signal)
        await host.closed
        const diedAt = Date.now()
        await until(
          "no process of the tree is alive",
          () => processesNamed(marker).length === 0 && carriersOfHost(hostPid).length === 0,
          HANG_MS
        )
        console.log(
          `lifeline: ${kind} ${signal} ${containment}: tree gone ${Date.now() - diedAt} ms after the host`
        )
        // the file stops growing: nothing appends after the tree is gone
        const settled = size(file)
        await sleep(400)
        assert.strictEqual(size(file), settled)
      } finally {
        for (const pid of processesNamed(marker)) process.kill(pid, "SIGKILL")
        host.child.kill("SIGKILL")
      }
    })
  })
})

describe.concurrent("an escapee holding the pipes cannot hold the host", () => {
  for (const containment of ["cgroup", "group"] as const) {
    it(
      `SIGTERM to the CLI ends the call with one JSON line (${containment} tier)`,
      { timeout: 60_000 },
      async () => {
        const tag = `sleep 1000.7${containment === "cgroup" ? 1 : 2}`
        const host = startHost(
          [
            "call",
            "Bash",
            JSON.stringify({ command: `env -i setsid -f ${tag}; echo started; sleep 1000`, timeout: 60 }),
            ...base(`escapee-${containment}`)
          ],
          containment
        )
        try {
          await until("the escapee runs", () => processesNamed(tag, true).length > 0, 30_000)
          const signalledAt = Date.now()
          host.child.kill("SIGTERM")
          // neither the escapee nor `sleep 1000` ends by itself: only a bounded stop ends the call
          await host.closed
          console.log(
            `lifeline: SIGTERM to the CLI (${containment} tier): answered in ${Date.now() - signalledAt} ms`
          )
          assert.strictEqual(host.lines.length, 1, host.lines.join("\n"))
          const line = JSON.parse(host.lines[0]!) as {
            ok: boolean
            error: {
              code: string
              partial: { termination: { taskLimit?: { mechanism: string } } }
            }
          }
          assert.strictEqual(line.ok, false)
          assert.strictEqual(line.error.code, "TOOL_ABORTED")
          // the cgroup tier stopped the escapee with the rest; the group tier cannot see it, unless
          // the call's task limit put it in a cgroup v1 pids cgroup: the host's watchdog ends what
          // is left in that one when the host is gone
          const inV1 = line.error.partial.termination.taskLimit?.mechanism === "cgroup v1 pids.max"
          if (containment === "cgroup" || !inV1) {
            assert.strictEqual(processesNamed(tag, true).length, containment === "cgroup" ? 0 : 1)
          } else
            await until("the watchdog ends the escapee", () => processesNamed(tag, true).length === 0, 30_000)
        } finally {
          for (const pid of processesNamed(tag, true)) process.kill(pid, "SIGKILL")
          host.child.kill("SIGKILL")
        }
      }
    )

    it(
      `an MCP cancel of such a call is honoured while the server keeps answering (${containment} tier)`,
      {
        timeout: 60_000
      },
      async () => {
        const tag = `sleep 1000.8${containment === "cgroup" ? 1 : 2}`
        const marker = `cancelled-main-${process.pid}-${containment}`
        const host = startMcp(`cancel-${containment}`, containment)
        try {
          host.send(bashCall(2, `env -i setsid -f ${tag}; echo started; exec -a ${marker} sleep 1000`))
          await until("the escapee runs", () => processesNamed(tag, true).length > 0, 30_000)
          await until("the main process runs", () => processesNamed(marker).length > 0, 30_000)
          host.send({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: 2, reason: "test" }
          })
          host.send(bashCall(3, "echo still-answering"))
          await until(
            "the server answers the next call",
            () => host.lines.some((l) => l.includes('"id":3')),
            30_000
          )
          assert.include(
            host.lines.find((l) => l.includes('"id":3')),
            "still-answering"
          )
          await until(
            "the cancelled call's tree is stopped",
            () => processesNamed(marker).length === 0,
            HANG_MS
          )
          assert.strictEqual(processesNamed(tag, true).length, containment === "cgroup" ? 0 : 1)
        } finally {
          for (const pid of processesNamed(tag, true)) process.kill(pid, "SIGKILL")
          host.child.kill("SIGKILL")
        }
      }
    )
  }
})
