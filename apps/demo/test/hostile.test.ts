// Raw JSON-RPC lines into `toolcap mcp`: every request with an id is answered (a JSON-RPC error
// when it cannot be served), and a valid request after each bad one is still answered. The bad
// lines are the ones seen dropped or fatal before (progressToken object / null / 1.5, id 1.5,
// "jsonrpc":"1.0", a leading BOM, lines over the SDK's 10 MiB buffer, a 600 KB path, deep
// nesting) plus random ones (300; 5,000 with TOOLCAP_LONG_TESTS=1, counts printed and written
// where TOOLCAP_RELIABILITY_OUT points). Waiting for an answer times out only as a hang detector.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { assertBuilt, bin, makeDirs, runCli } from "./fixtures/cli.js"
import { isLong, reportReliability } from "@toolcap/bench-report"

/** Random request lines sent to one server. */
const RANDOM_LINES = isLong() ? 5000 : 300

const dirs = makeDirs("toolcap-mcp-hostile-")
beforeAll(() => {
  assertBuilt()
  dirs.write("README.md", "# hello\n")
})
afterAll(() => dirs.remove())

/** Generous: only a server that never answers meets it. */
const HANG_MS = 60_000

type Message = { readonly id?: unknown; readonly result?: unknown; readonly error?: { code: number } }

const startServer = () => {
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, "mcp", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir],
    { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } }
  )
  const answers: Array<Message> = []
  const waiters: Array<() => void> = []
  let pending = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8")
  child.stderr!.setEncoding("utf8")
  child.stderr!.on("data", (data: string) => (stderr += data))
  child.stdout!.on("data", (data: string) => {
    pending += data
    for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n")) {
      answers.push(JSON.parse(pending.slice(0, newline)) as Message)
      pending = pending.slice(newline + 1)
    }
    for (const wake of waiters.splice(0)) wake()
  })
  const send = (line: string | Buffer) =>
    new Promise<void>((resolve) => {
      if (child.stdin!.write(line)) resolve()
      else child.stdin!.once("drain", resolve)
    })
  /** The answer to `id` (compared as JSON), once it arrives. */
  const answerTo = async (id: unknown): Promise<Message> => {
    const key = JSON.stringify(id)
    const deadline = performance.now() + HANG_MS
    for (;;) {
      const found = answers.find((answer) => JSON.stringify(answer.id) === key && !("method" in answer))
      if (found !== undefined) return found
      if (performance.now() > deadline || child.exitCode !== null) {
        throw new Error(`no answer to id ${key} (exit ${child.exitCode}); stderr: ${stderr.slice(-500)}`)
      }
      await new Promise<void>((wake) => {
        waiters.push(wake)
        setTimeout(wake, 200)
      })
    }
  }
  let pings = 0
  /** A valid request after a bad one: it must still be answered. */
  const ping = async () => {
    const id = `ping-${pings++}`
    await send(`${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`)
    const answer = await answerTo(id)
    assert.deepStrictEqual(answer.result, {}, `ping ${id}`)
  }
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("close", () => resolve())
      child.stdin!.end()
    })
  return { child, send, answerTo, ping, stop, stderr: () => stderr }
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`

/** A Read call with the given id, `_meta` and arguments. */
const call = (id: unknown, meta: unknown, args: unknown = { path: "README.md" }) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "Read", arguments: args, _meta: meta }
})

describe("toolcap mcp answers every request with an id", () => {
  it("the known bad cases each get an answer, and the session goes on", { timeout: 240_000 }, async () => {
    const server = startServer()
    try {
      await server.send(
        line({
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "fuzz", version: "1" }
          }
        })
      )
      await server.answerTo(0)
      await server.send(line({ jsonrpc: "2.0", method: "notifications/initialized" }))
      await server.ping()

      // built as text: serialising it would overflow this process's own stack
      const deep = `${"[".repeat(5000)}"x"${"]".repeat(5000)}`
      const cases: Array<readonly [string | Buffer, unknown]> = [
        [line(call("token-object", { progressToken: {} })), "token-object"],
        [line(call("token-null", { progressToken: null })), "token-null"],
        [line(call("token-float", { progressToken: 1.5 })), "token-float"],
        [line({ jsonrpc: "2.0", id: 1.5, method: "ping" }), 1.5],
        [line({ jsonrpc: "1.0", id: "old-version", method: "ping" }), "old-version"],
        [`\ufeff${line({ jsonrpc: "2.0", id: "bom", method: "ping" })}`, "bom"],
        ['{"jsonrpc":"2.0","id":"broken", "method": \n', "broken"],
        ["this is not json\n", null],
        [line([{ jsonrpc: "2.0", id: "batch-1", method: "ping" }]), "batch-1"],
        [line({ jsonrpc: "2.0", id: "no-method" }), "no-method"],
        [
          `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"Read","arguments":{"path":${deep}}}}\n`,
          "deep"
        ],
        [line(call("long-path", undefined, { path: "a/".repeat(300_000) })), "long-path"],
        [
          line(call("long-limit", undefined, { path: "README.md", limit: "9".repeat(1_000_000) })),
          "long-limit"
        ],
        [
          `{"jsonrpc":"2.0","id":"huge-1","method":"tools/call","params":{"name":"Read","arguments":{"path":"${"a".repeat(10_485_911)}"}}}\n`,
          "huge-1"
        ],
        [
          `{"jsonrpc":"2.0","id":"huge-2","method":"ping","params":{"pad":"${"b".repeat(11 * 1024 * 1024)}"}}\n`,
          "huge-2"
        ]
      ]
      for (const [bad, id] of cases) {
        await server.send(bad)
        const answer = await server.answerTo(id)
        assert.isTrue("error" in answer || "result" in answer, `answer to ${JSON.stringify(id)}`)
        // a long or deep input is refused with a short message, not echoed
        assert.isAtMost(
          JSON.stringify(answer).length,
          64 * 1024,
          `answer to ${JSON.stringify(id)} stays short`
        )
        await server.ping()
      }
      assert.isNull(server.child.exitCode)
    } finally {
      await server.stop()
    }
  })

  it(
    "random lines: each request with an id is answered, pings between them too",
    { timeout: isLong() ? 1_800_000 : 240_000 },
    async () => {
      const server = startServer()
      try {
        const id = fc.oneof(
          fc.integer(),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.string({ maxLength: 20 })
        )
        // never Bash: random arguments must not run random commands
        const method = fc.constantFrom(
          "ping",
          "tools/list",
          "tools/call",
          "initialize",
          "resources/list",
          "nope"
        )
        const params = fc.oneof(
          fc.constant(undefined),
          fc.record({
            name: fc.constantFrom("Read", "Glob", "Grep", "Nope"),
            arguments: fc.oneof(
              fc.anything({ maxDepth: 3 }),
              fc.record({ path: fc.string(), pattern: fc.string() })
            ),
            _meta: fc.option(fc.record({ progressToken: fc.anything({ maxDepth: 1 }) }), { nil: undefined })
          }),
          fc.anything({ maxDepth: 2 })
        )
        const request = fc.record({
          jsonrpc: fc.constantFrom("2.0", "2.0", "2.0", "1.0", undefined),
          method,
          params
        })
        const samples = fc.sample(fc.tuple(request, id, fc.boolean()), { numRuns: RANDOM_LINES, seed: 12 })
        let answered = 0
        let next = 0
        for (const [body, rawId, bom] of samples) {
          // unique ids, of every JSON type the fuzz gave, so each answer can be matched
          const unique = typeof rawId === "string" ? `${rawId}#${next++}` : rawId + next++ * 1e6
          const text = line({ ...body, id: unique })
          await server.send(bom ? `\ufeff${text}` : text)
          await server.answerTo(JSON.parse(JSON.stringify(unique)))
          answered++
          if (answered % 25 === 0) await server.ping()
        }
        await server.ping()
        console.log(`mcp random lines: ${samples.length} requests with an id, ${answered} answered`)
        reportReliability(
          "hostile raw JSON-RPC into toolcap mcp",
          {
            inputs: samples.length,
            hangs: samples.length - answered,
            crashes: server.child.exitCode === null ? 0 : 1
          },
          `random request lines (fast-check, seed 12: methods, ids of every JSON type, params, BOMs, jsonrpc 1.0) into one real toolcap mcp, each awaited for its answer, pings between; ${answered} answered`
        )
        assert.strictEqual(answered, samples.length)
      } finally {
        await server.stop()
      }
    }
  )
})

describe("a data dir that is not a normal writable directory is refused at start", () => {
  it(
    "--data-dir /proc/1, a file, or below /proc/1: exit 1 with a clear message, nothing on stdout",
    { timeout: 120_000 },
    async () => {
      const file = path.join(dirs.workspace, "not-a-dir.txt")
      fs.writeFileSync(file, "x\n")
      const spilling = ["call", "Bash", JSON.stringify({ command: "head -c 300000 /dev/zero | tr '\\0' a" })]
      for (const [dataDir, says] of [
        ["/proc/1", "/proc/1"],
        ["/proc/1/toolcap-data", "/proc/1"],
        [file, "not-a-dir.txt"]
      ] as const) {
        const started = performance.now()
        const run = await runCli([...spilling, "--workspace", dirs.workspace, "--data-dir", dataDir])
        const seconds = (performance.now() - started) / 1000
        console.log(`--data-dir ${dataDir}: exit ${run.code} after ${seconds.toFixed(2)} s`)
        assert.strictEqual(run.code, 1, run.stderr)
        assert.strictEqual(run.stdout, "")
        assert.include(run.stderr, says)
        assert.isAtMost(run.stderr.length, 2048)
      }
    }
  )
})
