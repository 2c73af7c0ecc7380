import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import { Budgets } from "@toolcap/limits"
import { ToolDefs } from "@toolcap/adapters"
import * as Mcp from "@toolcap/adapters/Mcp"
import { makeDirs } from "./fixtures/dirs.js"
import { connect } from "./fixtures/mcpClient.js"
import { isGone, longTreeCommand, processesWithCookie, runIdOf } from "./fixtures/processes.js"

const dirs = makeDirs("toolcap-mcp-")
let server: Awaited<ReturnType<typeof connect>>
const logs: Array<{
  callId: string
  stream: string
  seq: number
  lastSeq: number
  data: string
  notice?: string
  omittedBytes?: number
}> = []

beforeAll(async () => {
  dirs.write("README.md", "# demo\nhello world\n")
  dirs.write("src/a.ts", "export const a = 1 // TODO one\n")
  dirs.write("src/b.ts", "export const b = 2 // TODO two\n")
  server = await connect(dirs.workspace, dirs.dataDir, "mcp-test")
  server.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    if (notification.params.logger === Mcp.chunkLogger)
      logs.push(notification.params.data as (typeof logs)[number])
  })
  // chunks become log messages only for a client that asked for them
  await server.client.setLoggingLevel("debug")
}, 60_000)

afterAll(async () => {
  await server?.client.close()
  dirs.remove()
})

// Loosely typed on purpose: the test reads the wire JSON as a client in any language would.
// oxlint-disable-next-line typescript/no-explicit-any
type Json = any
type Structured = { ok: boolean; result?: Record<string, Json>; error?: Record<string, Json> }

const call = async (name: string, args: Record<string, unknown>) => {
  const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult
  return { ...result, outcome: result.structuredContent as Structured }
}

describe("MCP server over stdio (SDK client, real child process)", () => {
  it("lists the four tools with the definitions rendered from the budgets", async () => {
    const { tools } = await server.client.listTools()
    const expected = ToolDefs.builtinToolDefs(Budgets.defaults)
    assert.deepStrictEqual(
      tools.map((tool): Array<unknown> => [tool.name, tool.description, tool.inputSchema]),
      expected.map((def): Array<unknown> => [def.name, def.description, def.inputSchema])
    )
  })

  it("Bash: bounded result with marker, chunks forwarded as log notifications in order up to the budget", async () => {
    logs.length = 0
    const progress: Array<string> = []
    const result = await server.client.callTool(
      { name: "Bash", arguments: { command: "seq 1 50000; echo oops >&2" } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? "") }
    )
    const outcome = result.structuredContent as Structured
    assert.isFalse(result.isError)
    assert.isTrue(outcome.ok)
    const stdout: string = outcome.result!["stdout"]
    assert.include(
      stdout,
      "[truncated: kept the first 4000 of 50000 lines; limit 4000 lines / 96KB. Full output saved to "
    )
    const text = (result.content as Array<{ type: string; text: string }>)[0]!
    assert.strictEqual(text.text, outcome.result!["output"], "the model reads Bash's bounded combined output")
    // chunks arrived per stream in seq order without gaps (runs of coalesced chunks seq..lastSeq),
    // up to the stream's result budget; a last notice counts the bytes left out
    const stdoutChunks = logs.filter((l) => l.stream === "stdout" && l.notice === undefined)
    assert.strictEqual(stdoutChunks[0]?.seq, 0)
    for (const [i, run] of stdoutChunks.entries()) {
      assert.isAtLeast(run.lastSeq, run.seq)
      if (i > 0) assert.strictEqual(run.seq, stdoutChunks[i - 1]!.lastSeq + 1)
    }
    const forwarded = stdoutChunks.map((l) => l.data).join("")
    const whole = Array.from({ length: 50000 }, (_, i) => `${i + 1}\n`).join("")
    assert.isTrue(whole.startsWith(forwarded))
    assert.isBelow(forwarded.length, Budgets.defaults.shellStdoutMaxBytes)
    const notice = logs.find((l) => l.stream === "stdout" && l.notice !== undefined)
    assert.strictEqual(notice?.omittedBytes, whole.length - forwarded.length)
    assert.strictEqual(notice?.lastSeq, outcome.result!["lastSeq"].stdout)
    assert.deepStrictEqual(
      logs.filter((l) => l.stream === "stderr").map((l) => l.data),
      ["oops\n"]
    )
    assert.isAtLeast(progress.length, stdoutChunks.length)
  })

  it("honours logging/setLevel: at level error, chunks still arrive as progress but not as logs", async () => {
    await server.client.setLoggingLevel("error")
    try {
      logs.length = 0
      const progress: Array<string> = []
      const result = await server.client.callTool(
        { name: "Bash", arguments: { command: "echo one; echo two >&2" } },
        undefined,
        { onprogress: (p) => progress.push(p.message ?? "") }
      )
      assert.isFalse(result.isError)
      assert.deepStrictEqual(logs, [])
      assert.sameMembers(progress, ["stdout: one\n", "stderr: two\n"])
    } finally {
      await server.client.setLoggingLevel("debug")
    }
  })

  it("a tool error comes back with isError and its stable code", async () => {
    const { isError, outcome, content } = await call("Bash", { command: "true", timeout: 0 })
    assert.isTrue(isError)
    assert.strictEqual(outcome.error!["code"], "TOOL_INVALID_INPUT")
    assert.match((content as Array<{ text: string }>)[0]!.text, /^TOOL_INVALID_INPUT: /)
  })

  it("Read, Glob and Grep answer bounded results", async () => {
    const read = await call("Read", { path: "README.md" })
    assert.strictEqual(read.outcome.result!["content"], "# demo\nhello world\n")
    assert.strictEqual(read.outcome.result!["totalLines"], 2)
    const glob = await call("Glob", { pattern: "src/*.ts", limit: 1 })
    assert.strictEqual(glob.outcome.result!["matches"].length, 1)
    assert.isTrue(glob.outcome.result!["truncated"])
    const grep = await call("Grep", { pattern: "TODO", outputMode: "content", headLimit: 1 })
    assert.strictEqual(grep.outcome.result!["matches"].length, 1)
    assert.isTrue(grep.outcome.result!["truncated"])
    const missing = await call("Read", { path: "nope.txt" })
    assert.strictEqual(missing.outcome.error!["code"], "TOOL_NOT_FOUND")
  })

  it("cancelling a Bash call kills its whole tree: no process with its cookie is left", async () => {
    const controller = new AbortController()
    let seen = ""
    let resolveRunId!: (id: string) => void
    const runId = new Promise<string>((resolve) => (resolveRunId = resolve))
    const pending = server.client.callTool(
      { name: "Bash", arguments: { command: longTreeCommand } },
      undefined,
      {
        signal: controller.signal,
        onprogress: (p) => {
          seen += p.message ?? ""
          const id = runIdOf(seen)
          if (id !== undefined) resolveRunId(id)
        }
      }
    )
    const id = await runId
    const tree = processesWithCookie(id)
    assert.isAtLeast(tree.length, 3)
    controller.abort("the user pressed stop")
    const settled = await pending.then(
      () => "resolved",
      () => "rejected"
    )
    assert.strictEqual(settled, "rejected")
    // The server stops the tree as soon as the cancellation arrives; wait for it to get there.
    while (processesWithCookie(id).length > 0) await new Promise((r) => setTimeout(r, 50))
    assert.isTrue(tree.every(isGone))
  })

  it("ends the session when the client goes away: the server exits and removes the scratch dir", async () => {
    const other = await connect(dirs.workspace, dirs.dataDir, "mcp-short")
    const big = await other.client.callTool({ name: "Bash", arguments: { command: "seq 1 50000" } })
    const spill: string = (big.structuredContent as Structured).result!["spill"].stdout
    assert.isTrue(fs.existsSync(spill))
    const pid = other.transport.pid!
    await other.client.close()
    assert.isFalse(fs.existsSync(spill))
    assert.isTrue(isGone(pid))
  })
})
