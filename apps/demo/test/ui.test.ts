import { afterEach, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as http from "node:http"
import { assertBuilt, bin, makeDirs } from "./fixtures/cli.js"
import { connectMcp } from "./fixtures/mcpPipe.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

const urlPattern = /toolcap viewer: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)\n/

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20))
}

const get = (url: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get(url, (response) => {
        let body = ""
        response.setEncoding("utf8").on("data", (data: string) => (body += data))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
      })
      .on("error", reject)
  })

describe("toolcap ui", () => {
  it("serves the data dir's viewer on 127.0.0.1, prints its URL with the token on stderr, and stops on SIGTERM", async () => {
    assertBuilt()
    const dirs = makeDirs("toolcap-ui-")
    cleanups.push(dirs.remove)
    const child = spawn(
      process.execPath,
      [bin, "ui", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    cleanups.push(() => void child.kill("SIGKILL"))
    let stderr = ""
    let stdout = ""
    child.stderr.setEncoding("utf8").on("data", (data: string) => (stderr += data))
    child.stdout.setEncoding("utf8").on("data", (data: string) => (stdout += data))
    await until(() => urlPattern.test(stderr))
    const url = new URL(urlPattern.exec(stderr)![1]!)
    const info = await get(`${url.origin}/api/info${url.search}`)
    assert.strictEqual(info.status, 200)
    assert.strictEqual(JSON.parse(info.body).dataDir, dirs.dataDir)
    assert.strictEqual((await get(`${url.origin}/api/info`)).status, 401)
    assert.strictEqual(stdout, "")
    child.kill("SIGTERM")
    await exited
    await get(`${url.origin}/`).then(
      () => assert.fail("the viewer still answers after its process stopped"),
      (error: NodeJS.ErrnoException) => assert.strictEqual(error.code, "ECONNREFUSED")
    )
  })

  it("toolcap mcp --ui streams the server's calls into the viewer while stdout stays MCP", async () => {
    assertBuilt()
    const dirs = makeDirs("toolcap-ui-mcp-")
    cleanups.push(dirs.remove)
    const mcp = await connectMcp({
      args: ["--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--ui"]
    })
    cleanups.push(mcp.close)
    await until(() => urlPattern.test(mcp.stderr()))
    const url = new URL(urlPattern.exec(mcp.stderr())![1]!)
    let events = ""
    const stream = http.get(`${url.origin}/api/events${url.search}`, (response) =>
      response.setEncoding("utf8").on("data", (data: string) => (events += data))
    )
    cleanups.push(() => void stream.destroy())
    await until(() => events.startsWith(": toolcap viewer"))
    const result = await mcp.client.callTool({
      name: "Bash",
      arguments: { command: "echo from-mcp; echo oops >&2" }
    })
    assert.notStrictEqual(result.isError, true)
    await until(() => events.includes("event: ended"))
    const parsed = events
      .split("\n\n")
      .filter((block) => block.startsWith("event: "))
      .map((block) => ({
        type: block.slice(7, block.indexOf("\n")),
        data: JSON.parse(block.slice(block.indexOf("data: ") + 6))
      }))
    assert.deepStrictEqual(parsed[0]?.type, "started")
    assert.deepStrictEqual(parsed[0]?.data.input, { command: "echo from-mcp; echo oops >&2" })
    const chunks = parsed.filter((event) => event.type === "chunk")
    assert.sameDeepMembers(
      chunks.map((event) => [event.data.stream, event.data.data]),
      [
        ["stderr", "oops\n"],
        ["stdout", "from-mcp\n"]
      ]
    )
    const ended = parsed.at(-1)!
    assert.strictEqual(ended.type, "ended")
    assert.strictEqual(ended.data.outcome.result.stdout, "from-mcp\n")
  })
})
