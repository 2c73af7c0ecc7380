// What an MCP client's model reads is plain text: Read's lines, Grep's `path:line:text` lines, Glob's
// paths, each with its notice; the typed outcome stays in structuredContent for programs.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { makeDirs } from "./fixtures/dirs.js"
import { connect } from "./fixtures/mcpClient.js"

const dirs = makeDirs("toolcap-mcp-text-")
let server: Awaited<ReturnType<typeof connect>>

// a line with quotes, a tab and a backslash: JSON would escape every one of them
const quoted = 'const s = "hello\tworld"; // C:\\temp'
const source = `${quoted}\nfunction f(x) {\n  return x\n}\n`

beforeAll(async () => {
  dirs.write("src/a.ts", source)
  dirs.write("src/b.ts", "export const b = 2\n")
  server = await connect(dirs.workspace, dirs.dataDir, "mcp-text")
}, 60_000)

afterAll(async () => {
  await server?.client.close()
  dirs.remove()
})

const textOf = async (name: string, args: Record<string, unknown>) => {
  const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult
  const content = result.content as Array<{ type: string; text: string }>
  assert.strictEqual(content.length, 1)
  assert.strictEqual(content[0]!.type, "text")
  return {
    text: content[0]!.text,
    structured: result.structuredContent as { ok: boolean; result: Record<string, unknown> }
  }
}

/** Fails unless the text is something other than JSON. */
const assertNotJson = (text: string) => assert.throws(() => JSON.parse(text))

describe("MCP text content is plain text, not JSON", () => {
  it("Read: the file's lines exactly, a line with quotes and a tab unescaped", async () => {
    const { text, structured } = await textOf("Read", { path: "src/a.ts" })
    assertNotJson(text)
    assert.strictEqual(text, source)
    assert.strictEqual(text.split("\n")[0], quoted)
    // programs still get the typed result
    assert.strictEqual(structured.result["content"], source)
    assert.strictEqual(structured.result["totalLines"], 4)
  })

  it("Read: a window that stops early is followed by its notice on a line of its own", async () => {
    const { text, structured } = await textOf("Read", { path: "src/a.ts", limit: 1 })
    assert.strictEqual(text, `${quoted}\n[${String(structured.result["notice"])}]`)
    assert.include(text, "offset 2")
  })

  it("Grep: path:line:text lines in content mode, paths, and path:count", async () => {
    const content = await textOf("Grep", { pattern: "hello", outputMode: "content" })
    assertNotJson(content.text)
    assert.strictEqual(content.text, `src/a.ts:1:${quoted}`)
    const files = await textOf("Grep", { pattern: "const" })
    assert.sameMembers(files.text.split("\n"), ["src/a.ts", "src/b.ts"])
    const counts = await textOf("Grep", { pattern: "function|return", outputMode: "count" })
    assert.strictEqual(counts.text, "src/a.ts:2")
    const none = await textOf("Grep", { pattern: "no such text anywhere" })
    assert.strictEqual(none.text, "No matches found")
  })

  it("Glob: one path per line, then the notice when capped", async () => {
    const all = await textOf("Glob", { pattern: "src/*.ts" })
    assertNotJson(all.text)
    assert.sameMembers(all.text.split("\n"), ["src/a.ts", "src/b.ts"])
    const capped = await textOf("Glob", { pattern: "src/*.ts", limit: 1 })
    const [path, notice] = capped.text.split("\n")
    assert.include(["src/a.ts", "src/b.ts"], path)
    assert.strictEqual(notice, `[${String(capped.structured.result["notice"])}]`)
  })
})
