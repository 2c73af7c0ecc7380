// Raw JSON-RPC lines into `toolcap mcp`: every request with an id is answered (a JSON-RPC error
// when it cannot be served), and a valid request after each bad one is still answered. The bad
// lines are the ones seen dropped or fatal before (progressToken object / null / 1.5, id 1.5,
// "jsonrpc":"1.0", a leading BOM, lines over the SDK's 10 MiB buffer, a 600 KB path, deep
// nesting) plus random ones (300; 5,000 with TOOLCAP_LONG_TESTS=1, counts printed and written
// where TOOLCAP_RELIABILITY_OUT points). Batches and wrong-typed fields get short -32600 / -32602
// answers naming the field (60 random ones; 500 long), and Bash floods at logging level debug keep
// each stream's notifications within its result budget (2 random outputs; 100 long). Waiting for an
// answer times out only as a hang detector.
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

type Message = {
  readonly id?: unknown
  readonly method?: string
  readonly params?: Record<string, unknown>
  readonly result?: unknown
  readonly error?: { code: number; message: string }
}

const startServer = () => {
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, "mcp", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir],
    { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } }
  )
  const answers: Array<Message> = []
  /** Every notification the server sent, with the bytes of its line (newline included). */
  const notifications: Array<{ readonly message: Message; readonly bytes: number }> = []
  const waiters: Array<() => void> = []
  let pending = Buffer.alloc(0)
  let stderr = ""
  child.stderr!.setEncoding("utf8")
  child.stderr!.on("data", (data: string) => (stderr += data))
  child.stdout!.on("data", (data: Buffer) => {
    pending = Buffer.concat([pending, data])
    for (let newline = pending.indexOf(10); newline >= 0; newline = pending.indexOf(10)) {
      const message = JSON.parse(pending.subarray(0, newline).toString("utf8")) as Message
      if (message.method !== undefined && message.id === undefined)
        notifications.push({ message, bytes: newline + 1 })
      else answers.push(message)
      pending = pending.subarray(newline + 1)
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
      const at = answers.findIndex((answer) => JSON.stringify(answer.id) === key && !("method" in answer))
      // taken, so a later answer with the same id (null) is not confused with this one
      if (at >= 0) return answers.splice(at, 1)[0]!
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
  /** The answers not taken yet (emptied). */
  const drain = () => answers.splice(0)
  return { child, send, answerTo, ping, stop, drain, notifications, stderr: () => stderr }
}

const line = (message: unknown) => `${JSON.stringify(message)}\n`

/** Opens the MCP session (request id "init"). */
const initialize = async (server: ReturnType<typeof startServer>) => {
  await server.send(
    line({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }
    })
  )
  await server.answerTo("init")
  await server.send(line({ jsonrpc: "2.0", method: "notifications/initialized" }))
}

type Counts = Record<string, number> & { hangs: number; crashes: number }

/** Runs `attack` on one real server in an open session, then reports `counts` (hangs and crashes filled in here). */
const attackServer = async (
  suite: string,
  counts: Counts,
  detail: string | (() => string),
  attack: (server: ReturnType<typeof startServer>) => Promise<void>
) => {
  const server = startServer()
  try {
    await initialize(server)
    await attack(server)
    await server.ping()
  } catch (error) {
    if (String(error).includes("no answer to id")) counts.hangs++
    throw error
  } finally {
    counts.crashes = server.child.exitCode === null ? 0 : 1
    await server.stop()
    reportReliability(suite, counts, typeof detail === "string" ? detail : detail())
  }
}

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

/** Random wrong-typed envelopes per run (500 with TOOLCAP_LONG_TESTS=1). */
const ENVELOPE_RUNS = isLong() ? 500 : 60

/** A value of any JSON type but the ones `ok` accepts. */
const wrongValue = (ok: (value: unknown) => boolean) =>
  fc
    .oneof(fc.anything({ maxDepth: 2 }), fc.constantFrom(7, 1.5, "", [], {}, null, true))
    .filter((v) => !ok(v))

const isPlainObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value)
const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

/** A request whose one field has a wrong type, and that field's name. */
const wrongField = fc.oneof(
  wrongValue((v) => typeof v === "string").map(
    (name) => [{ method: "tools/call", params: { name, arguments: {} } }, "params.name"] as const
  ),
  wrongValue((v) => isPlainObject(v) || v === undefined).map(
    (args) =>
      [{ method: "tools/call", params: { name: "Read", arguments: args } }, "params.arguments"] as const
  ),
  wrongValue((v) => typeof v === "string" && levels.includes(v)).map(
    (level) => [{ method: "logging/setLevel", params: { level } }, "params.level"] as const
  ),
  wrongValue((v) => typeof v === "string" || v === undefined).map(
    (cursor) => [{ method: "tools/list", params: { cursor } }, "params.cursor"] as const
  )
)

describe("toolcap mcp answers a batch or a wrong-typed field with a short JSON-RPC error", () => {
  it(
    "[] and other batches get -32600; arguments as a string or an array, name: 42, level: 7 get -32602 naming the field",
    { timeout: isLong() ? 900_000 : 240_000 },
    async () => {
      const counts = { inputs: 0, hangs: 0, crashes: 0, "wrong results": 0 }
      const detail = `batches ([] and fast-check arrays) and requests with one wrong-typed field (tools/call name and arguments, logging/setLevel level, tools/list cursor; seed 24) into one real toolcap mcp, each answer checked for its code, the field named, ≤ 300 characters`
      await attackServer("hostile MCP envelopes", counts, detail, async (server) => {
        const judgeWrongField = async (request: object, field: string, id: string) => {
          counts.inputs++
          await server.send(line({ jsonrpc: "2.0", id, ...request }))
          const answer = await server.answerTo(id)
          const ok =
            answer.error?.code === -32602 &&
            answer.error.message.includes(field) &&
            answer.error.message.length <= 300
          if (!ok) counts["wrong results"]++
          assert.strictEqual(answer.error?.code, -32602, JSON.stringify(answer))
          assert.include(answer.error!.message, field)
          assert.isAtMost(answer.error!.message.length, 300)
        }
        /** A batch is answered before the ping after it: each answer -32600, at least one. */
        const judgeBatch = async (batch: ReadonlyArray<unknown>) => {
          counts.inputs++
          await server.send(line(batch))
          await server.ping()
          const answers = server.drain()
          const ok = answers.length > 0 && answers.every((answer) => answer.error?.code === -32600)
          if (!ok) counts["wrong results"]++
          assert.isAtLeast(answers.length, 1, `an answer to ${JSON.stringify(batch).slice(0, 200)}`)
          for (const answer of answers) {
            assert.strictEqual(answer.error?.code, -32600)
            assert.isAtMost(answer.error!.message.length, 300)
          }
          for (const element of batch) {
            const id = (element as { id?: unknown } | null)?.id
            if (typeof id === "string" || typeof id === "number")
              assert.isTrue(
                answers.some((answer) => answer.id === id),
                `element ${JSON.stringify(id)} answered`
              )
          }
        }

        await judgeBatch([])
        await judgeBatch([1, 2])
        await judgeBatch([{ jsonrpc: "2.0", method: "notifications/initialized" }])
        await judgeWrongField(
          { method: "tools/call", params: { name: "Read", arguments: "x" } },
          "params.arguments",
          "a1"
        )
        await judgeWrongField(
          { method: "tools/call", params: { name: "Read", arguments: [1] } },
          "params.arguments",
          "a2"
        )
        await judgeWrongField({ method: "tools/call", params: { name: 42 } }, "params.name", "a3")
        await judgeWrongField({ method: "logging/setLevel", params: { level: 7 } }, "params.level", "a4")

        const samples = fc.sample(
          fc.tuple(wrongField, fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 5 })),
          {
            numRuns: ENVELOPE_RUNS,
            seed: 24
          }
        )
        for (const [i, [[request, field], batch]] of samples.entries()) {
          await judgeWrongField(request, field, `w${i}`)
          await judgeBatch(batch)
        }
      })
      assert.strictEqual(counts["wrong results"], 0)
    }
  )
})

/** The notification budget of a stream: the Bash result budget of that stream (the defaults). */
const STREAM_BUDGET = 96 * 1024
/** Random outputs flooded through notifications (100 with TOOLCAP_LONG_TESTS=1). */
const FLOOD_RUNS = isLong() ? 100 : 2

type Kind = "ascii" | "escaped" | "multibyte" | "binary"
/** A command printing `bytes` bytes of one kind; every kind but binary is whole UTF-8. */
const printing = (kind: Kind, bytes: number): string => {
  switch (kind) {
    case "ascii":
      return `yes 0123456789abcdef | head -c ${bytes}`
    case "escaped":
      // tabs and quotes: each takes two bytes on the wire
      return `yes '\t"\t' | head -c ${bytes}`
    case "multibyte":
      // 10 bytes a line, so a whole number of lines is whole UTF-8
      return `yes 'é€𝄞' | head -c ${bytes - (bytes % 10)}`
    case "binary":
      return `head -c ${bytes} /dev/urandom`
  }
}
const printedBytes = (kind: Kind, bytes: number) => (kind === "multibyte" ? bytes - (bytes % 10) : bytes)

describe("toolcap mcp keeps a call's notifications within its result budget", () => {
  it(
    "logging/setLevel debug + a 2 MB Bash output: each stream's notifications ≤ its result budget, the bytes left out named",
    { timeout: isLong() ? 1_800_000 : 240_000 },
    async () => {
      const counts = { inputs: 0, hangs: 0, crashes: 0, "unbounded results": 0, "wrong results": 0 }
      let largest = 0
      const detail = () =>
        `Bash calls printing 0–3 MiB per stream (ASCII, escaped, multi-byte, binary; fast-check seed 245) into one real toolcap mcp at logging level debug, half with a progress token; each stream's notification lines checked against its ${STREAM_BUDGET}-byte budget and every byte accounted for; largest total ${largest} bytes`
      await attackServer("hostile MCP notification flood", counts, detail, async (server) => {
        await server.send(
          line({ jsonrpc: "2.0", id: "level", method: "logging/setLevel", params: { level: "debug" } })
        )
        await server.answerTo("level")
        const flood = async (
          id: string,
          out: { kind: Kind; bytes: number },
          err: { kind: Kind; bytes: number },
          progress: boolean
        ) => {
          counts.inputs++
          server.notifications.length = 0
          const command = `${printing(out.kind, out.bytes)}; (${printing(err.kind, err.bytes)}) >&2`
          await server.send(
            line({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: {
                name: "Bash",
                arguments: { command },
                ...(progress ? { _meta: { progressToken: id } } : {})
              }
            })
          )
          const answer = await server.answerTo(id)
          assert.isDefined(answer.result, JSON.stringify(answer).slice(0, 500))
          const total = server.notifications.reduce((sum, n) => sum + n.bytes, 0)
          largest = Math.max(largest, total)
          let bounded = true
          let accounted = true
          for (const [stream, printed] of [
            ["stdout", out],
            ["stderr", err]
          ] as const) {
            const mine = server.notifications.filter((n) =>
              n.message.method === "notifications/message"
                ? (n.message.params!["data"] as { stream: string }).stream === stream
                : String(n.message.params!["message"]).startsWith(`${stream}: `)
            )
            const spent = mine.reduce((sum, n) => sum + n.bytes, 0)
            if (spent > STREAM_BUDGET) bounded = false
            assert.isAtMost(spent, STREAM_BUDGET, `${stream} notifications`)
            if (printed.kind === "binary") continue
            const logs = mine
              .filter((n) => n.message.method === "notifications/message")
              .map(
                (n) => n.message.params!["data"] as { data: string; notice?: string; omittedBytes?: number }
              )
            const forwarded = logs
              .filter((log) => log.notice === undefined)
              .reduce((sum, log) => sum + Buffer.byteLength(log.data), 0)
            const notice = logs.find((log) => log.notice !== undefined)
            const expected = printedBytes(printed.kind, printed.bytes)
            if (forwarded + (notice?.omittedBytes ?? 0) !== expected) accounted = false
            assert.strictEqual(
              forwarded + (notice?.omittedBytes ?? 0),
              expected,
              `${stream}: every byte accounted for`
            )
            if (forwarded < expected)
              assert.include(notice?.notice ?? "", `${expected - forwarded} bytes of ${stream}`)
          }
          if (!bounded) counts["unbounded results"]++
          if (!accounted) counts["wrong results"]++
        }

        // the finding: 2,088,895 bytes of stdout sent 2,294,815 bytes of notifications
        await flood("flood", { kind: "ascii", bytes: 2_088_895 }, { kind: "ascii", bytes: 0 }, true)
        assert.isAtMost(largest, 2 * STREAM_BUDGET)
        const kind = fc.constantFrom<Kind>("ascii", "escaped", "multibyte", "binary")
        const output = fc.record({ kind, bytes: fc.integer({ min: 0, max: 3 * 1024 * 1024 }) })
        const samples = fc.sample(fc.tuple(output, output, fc.boolean()), { numRuns: FLOOD_RUNS, seed: 245 })
        for (const [i, [out, err, progress]] of samples.entries())
          await flood(`flood-${i}`, out, err, progress)
      })
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
