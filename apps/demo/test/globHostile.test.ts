// Glob patterns that make a backtracking matcher run for minutes (`*a*a…*a*b`, 20 stars, against
// file names of 60 to 200 `a`s; nested `**`; `+(a|aa)b`), through each surface where they froze
// the host: `toolcap call Glob` (the published, bundled CLI) answers within 2 s, its start
// included; over `toolcap mcp` the call answers within 2 s
// and a `ping` sent right behind it within 200 ms (the host's event loop stays free; plus five times
// a lone ping's time just before, so a loaded machine's slow answers are not taken for a block); through the
// Promise API (a host in a process of its own) the call answers within 2 s, and so does a Read
// sent right behind it.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type ChildProcess, fork, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assertBuilt, bin, makeDirs, mcpHandshake, onLines, packageBin } from "./fixtures/cli.js"

/** The bounds the issue names: the catastrophic call, and a request served beside it. */
const ANSWER_MS = 2000
const BESIDE_MS = 200
/**
 * A ping beside a Glob is compared with a lone ping of the same server just before it: on a loaded
 * machine every answer is late, and a free event loop answers the ping beside the call about as
 * fast as the lone one. A blocked loop answers it only after the Glob (minutes for a backtracking
 * matcher), far beyond this many lone pings.
 */
const BESIDE_LONE_PINGS = 5

const dirs = makeDirs("toolcap-glob-hostile-")
const patterns = [
  `names/${"*a".repeat(20)}*b`,
  `**/${"*a".repeat(20)}*b`,
  `deep/${"**/a/".repeat(10)}**/b.txt`,
  "names/+(a|aa)b"
]

beforeAll(() => {
  assertBuilt()
  dirs.write("README.md", "# hello\n")
  for (const length of [60, 100, 150, 200]) {
    dirs.write(`names/${"a".repeat(length)}`, "x\n")
    dirs.write(`names/${"a".repeat(length - 1)}b`, "x\n")
  }
  dirs.write(`deep/${"a/".repeat(30)}c.txt`, "x\n")
})
/** Every child a test started: a test that times out leaves none running. */
const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  dirs.remove()
})

const countOf = (result: unknown): number => (result as { readonly count: number }).count

/** Runs the bundled `toolcap` (what a host installs) to its end. */
const callBundled = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [packageBin, ...args], { stdio: ["ignore", "pipe", "pipe"] })
      children.add(child)
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (data: string) => (stdout += data))
      child.stderr.setEncoding("utf8").on("data", (data: string) => (stderr += data))
      child.once("error", reject)
      child.once("close", (code) => resolve({ code, stdout, stderr }))
    }
  )

describe("catastrophic Glob patterns do not freeze the host", () => {
  it("toolcap call Glob answers each within 2 s", { timeout: 60_000 }, async () => {
    for (const pattern of patterns) {
      const started = performance.now()
      const run = await callBundled([
        "call",
        "Glob",
        JSON.stringify({ pattern }),
        "--workspace",
        dirs.workspace,
        "--data-dir",
        dirs.dataDir
      ])
      const took = performance.now() - started
      assert.strictEqual(run.code, 0, run.stderr)
      const answer = JSON.parse(run.stdout) as { readonly result: unknown }
      assert.strictEqual(countOf(answer.result), pattern.startsWith("deep") ? 0 : 4, pattern)
      assert.isAtMost(took, ANSWER_MS, pattern)
    }
  })

  it(
    "toolcap mcp answers each within 2 s and a ping beside it within 200 ms plus five lone pings' time",
    { timeout: 60_000 },
    async () => {
      const server = spawn(
        process.execPath,
        [bin, "mcp", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir],
        {
          stdio: ["pipe", "pipe", "pipe"],
          env: { ...process.env, NO_COLOR: "1" }
        }
      )
      children.add(server)
      const arrived = new Map<unknown, { readonly at: number; readonly message: Record<string, unknown> }>()
      const waiters: Array<() => void> = []
      let stderr = ""
      server.stderr.setEncoding("utf8")
      server.stderr.on("data", (data: string) => (stderr += data))
      onLines(server.stdout, (line) => {
        const message = JSON.parse(line) as Record<string, unknown>
        if ("id" in message) arrived.set(message["id"], { at: performance.now(), message })
        for (const wake of waiters.splice(0)) wake()
      })
      const send = (message: unknown) => server.stdin.write(`${JSON.stringify(message)}\n`)
      const answer = async (id: unknown) => {
        // a hang detector only: the bounds are asserted on the times
        const deadline = performance.now() + 30_000
        while (!arrived.has(id)) {
          if (performance.now() > deadline || server.exitCode !== null)
            throw new Error(`no answer to ${String(id)}; stderr: ${stderr.slice(-500)}`)
          await new Promise<void>((wake) => {
            waiters.push(wake)
            setTimeout(wake, 100)
          })
        }
        return arrived.get(id)!
      }
      try {
        for (const message of mcpHandshake("glob-hostile")) send(message)
        await answer(1)
        // twice over: the first call lists the folder itself, the second goes through the index
        for (const round of [1, 2]) {
          for (const [at, pattern] of patterns.entries()) {
            const glob = `glob-${round}-${at}`
            const ping = `ping-${round}-${at}`
            const lone = `lone-${round}-${at}`
            const loneSent = performance.now()
            send({ jsonrpc: "2.0", id: lone, method: "ping" })
            const loneMs = (await answer(lone)).at - loneSent
            const sent = performance.now()
            send({
              jsonrpc: "2.0",
              id: glob,
              method: "tools/call",
              params: { name: "Glob", arguments: { pattern } }
            })
            send({ jsonrpc: "2.0", id: ping, method: "ping" })
            const pinged = await answer(ping)
            const globbed = await answer(glob)
            assert.deepStrictEqual(pinged.message["result"], {})
            assert.isAtMost(
              pinged.at - sent,
              BESIDE_MS + BESIDE_LONE_PINGS * loneMs,
              `ping beside ${pattern} (a lone ping took ${loneMs.toFixed(0)} ms)`
            )
            assert.isAtMost(globbed.at - sent, ANSWER_MS, pattern)
            const result = globbed.message["result"] as {
              readonly structuredContent?: unknown
              readonly isError?: boolean
            }
            assert.notStrictEqual(result.isError, true, JSON.stringify(result).slice(0, 300))
          }
        }
      } finally {
        server.stdin.end()
        await new Promise<void>((resolve) =>
          server.exitCode !== null ? resolve() : server.once("close", () => resolve())
        )
      }
    }
  )

  it(
    "the Promise API answers each within 2 s, and a Read sent beside it too",
    { timeout: 60_000 },
    async () => {
      const host: ChildProcess = fork(
        fileURLToPath(new URL("../../../packages/adapters/test/fixtures/fuzzHost.ts", import.meta.url)),
        [JSON.stringify({ workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId: "glob-hostile" })],
        {
          execArgv: ["--conditions=@toolcap/source", "--import", "tsx"],
          stdio: ["ignore", "ignore", "inherit", "ipc"]
        }
      )
      children.add(host)
      let seq = 0
      const answers = new Map<
        number,
        (value: { readonly at: number; readonly outcome: { ok: boolean; result?: unknown } }) => void
      >()
      host.on(
        "message",
        (message: { readonly seq: number; readonly outcome: { ok: boolean; result?: unknown } }) =>
          answers.get(message.seq)?.({ at: performance.now(), outcome: message.outcome })
      )
      const call = (tool: string, input: unknown) =>
        new Promise<{ readonly at: number; readonly outcome: { ok: boolean; result?: unknown } }>(
          (resolve) => {
            const id = seq++
            answers.set(id, resolve)
            host.send({ seq: id, tool, input })
          }
        )
      try {
        // the host is up once it answers
        assert.isTrue((await call("Read", { path: "README.md" })).outcome.ok)
        for (const round of [1, 2]) {
          for (const pattern of patterns) {
            const sent = performance.now()
            const globbed = call("Glob", { pattern })
            const read = await call("Read", { path: "README.md" })
            const glob = await globbed
            assert.isTrue(read.outcome.ok && glob.outcome.ok, `${round} ${pattern}`)
            assert.isAtMost(read.at - sent, ANSWER_MS, `Read beside ${pattern}`)
            assert.isAtMost(glob.at - sent, ANSWER_MS, pattern)
            assert.strictEqual(countOf(glob.outcome.result), pattern.startsWith("deep") ? 0 : 4, pattern)
          }
        }
      } finally {
        host.disconnect()
        await new Promise<void>((resolve) =>
          host.exitCode !== null ? resolve() : host.once("exit", () => resolve())
        )
      }
    }
  )
})
