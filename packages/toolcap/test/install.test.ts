/**
 * The published package as a host installs it: `pnpm pack`, then `npm install` of the tarball
 * into a fresh plain npm project in a temp dir, offline (its two runtime dependencies are packed
 * from this repository's install, nothing is fetched). There: the `toolcap` bin, the Promise API
 * from an .mjs file, the clear error of a missing optional peer, and `toolcap mcp` driven by the
 * MCP SDK's client (the SDK linked from this repository's install, as a host's own copy would be).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL("..", import.meta.url))
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-install-"))
const project = path.join(tmp, "host")
const tarballs = path.join(tmp, "tarballs")

/** The installed directory of a package, found as Node would from `from` (node_modules upwards). */
const installed = (name: string, from: string): string => {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name)
    if (fs.existsSync(path.join(candidate, "package.json"))) return fs.realpathSync(candidate)
    if (path.dirname(dir) === dir) throw new Error(`${name} is not installed above ${from}`)
  }
}

const npm = (args: ReadonlyArray<string>, cwd: string) =>
  run("npm", [...args], {
    cwd,
    env: { ...process.env, npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false" },
    maxBuffer: 64 * 1024 * 1024
  })

beforeAll(async () => {
  if (!fs.existsSync(path.join(packageDir, "dist", "bin.js")))
    throw new Error("build toolcap first (pnpm run build)")
  fs.mkdirSync(tarballs, { recursive: true })
  fs.mkdirSync(project, { recursive: true })
  await run("pnpm", ["pack", "--pack-destination", tarballs], { cwd: packageDir })
  // the runtime dependencies, packed from this repository's install (offline)
  const tools = fileURLToPath(new URL("../../tools", import.meta.url))
  const ripgrep = installed("@vscode/ripgrep", tools)
  // pnpm puts a package's dependencies beside it: the platform binary is a sibling of ripgrep
  const platform = installed(`@vscode/ripgrep-${process.platform}-${process.arch}`, path.dirname(ripgrep))
  for (const dir of [ripgrep, platform, installed("picomatch", tools)]) {
    await npm(["pack", dir, "--pack-destination", tarballs], tmp)
  }
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "host", private: true, type: "module" })
  )
  fs.writeFileSync(path.join(project, "README.md"), "# host\nhello from the host\n")
  const packed = fs.readdirSync(tarballs).map((file) => path.join(tarballs, file))
  await npm(["install", "--offline", "--no-save", ...packed], project)
}, 300_000)

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

const dataDir = () => path.join(tmp, "data")

describe("toolcap installed from its tarball into a plain npm project", () => {
  it("npx toolcap call Read answers one JSON line", async () => {
    const { stdout } = await run(
      "npx",
      ["--offline", "toolcap", "call", "Read", '{"path":"README.md"}', "--data-dir", dataDir()],
      {
        cwd: project
      }
    )
    const line = JSON.parse(stdout) as { ok: boolean; result: { content: string } }
    assert.isTrue(line.ok)
    assert.strictEqual(line.result.content, "# host\nhello from the host\n")
  })

  it("the Promise API imports from an .mjs file; a missing optional peer is named", async () => {
    const script = path.join(project, "host.mjs")
    fs.writeFileSync(
      script,
      `import { createToolHost, aiSdkTools } from "toolcap"
const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir())}, sessionId: "mjs" })
const read = await host.call("Read", { path: "README.md" })
const grep = await host.call("Grep", { pattern: "hello", path: "README.md", outputMode: "content" })
const missing = await aiSdkTools(host).then(() => "loaded", (error) => error.message)
await host.close()
console.log(JSON.stringify({ read, grep, missing }))
`
    )
    const { stdout } = await run(process.execPath, [script], { cwd: project })
    const { read, grep, missing } = JSON.parse(stdout) as {
      read: { ok: boolean; result: { content: string } }
      grep: { ok: boolean; result: { matches: Array<unknown> } }
      missing: string
    }
    assert.strictEqual(read.result.content, "# host\nhello from the host\n")
    assert.isTrue(grep.ok)
    assert.strictEqual(grep.result.matches.length, 1)
    assert.include(missing, "needs the optional package ai")
    assert.include(missing, "npm install ai")
  })

  it("toolcap mcp: the MCP SDK client lists and calls the tools", async () => {
    const sdk = installed(
      "@modelcontextprotocol/sdk",
      fileURLToPath(new URL("../../adapters", import.meta.url))
    )
    fs.mkdirSync(path.join(project, "node_modules", "@modelcontextprotocol"), { recursive: true })
    fs.symlinkSync(sdk, path.join(project, "node_modules", "@modelcontextprotocol", "sdk"))
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(project, "node_modules", ".bin", "toolcap"), "mcp", "--data-dir", dataDir()],
      cwd: project,
      env: getDefaultEnvironment(),
      stderr: "pipe"
    })
    const client = new Client({ name: "install-test", version: "0.0.0" })
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      assert.deepStrictEqual(
        tools.map((tool) => tool.name),
        ["Read", "Glob", "Grep", "Bash"]
      )
      const result = await client.callTool({ name: "Read", arguments: { path: "README.md" } })
      const outcome = result.structuredContent as { ok: boolean; result: { content: string } }
      assert.strictEqual(outcome.result.content, "# host\nhello from the host\n")
    } finally {
      await client.close()
    }
  })
})
