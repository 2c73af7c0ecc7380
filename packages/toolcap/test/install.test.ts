/**
 * The published package as a host installs it: `pnpm pack`, then `npm install` of the tarball
 * into a fresh plain npm project in a temp dir, offline (its two runtime dependencies are packed
 * from this repository's install, nothing is fetched). There: the `toolcap` bin, the Promise API
 * from an .mjs file, the clear error of a missing optional peer, and `toolcap mcp` driven by the
 * MCP SDK's client (the SDK linked from this repository's install, as a host's own copy would be).
 *
 * A second project is a typed host that already has `effect@4` and `ai` at another version than
 * the one toolcap is built against (both pinned as aliased devDependencies of this package, so
 * their tarballs are packed from the install too): it installs without ERESOLVE, type-checks a
 * strict `nodenext` file against the published `.d.ts`, and runs the AI SDK tools with its `ai`.
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
const typedProject = path.join(tmp, "typed-host")
const typedTarballs = path.join(tmp, "typed-tarballs")

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

/** The installed folders of a package and everything it depends on (peers found beside it included). */
const closure = (dir: string, seen = new Map<string, string>()): Map<string, string> => {
  if (seen.has(dir)) return seen
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>
    peerDependencies?: Record<string, string>
    peerDependenciesMeta?: Record<string, { optional?: boolean }>
  }
  seen.set(dir, dir)
  for (const name of Object.keys(manifest.dependencies ?? {}))
    closure(installed(name, path.dirname(dir)), seen)
  for (const name of Object.keys(manifest.peerDependencies ?? {})) {
    if (manifest.peerDependenciesMeta?.[name]?.optional === true) continue
    closure(installed(name, path.dirname(dir)), seen)
  }
  return seen
}

/**
 * Tarballs of installed package folders, as the registry serves them (files under `package/`).
 * An installed folder holds exactly the published files, so no pack step (and none of its
 * scripts) is needed; `npm pack` of some installed folders crashes npm 11.
 */
const packAll = async (dirs: Iterable<string>, destination: string) => {
  for (const dir of dirs) {
    const { name, version } = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {
      name: string
      version: string
    }
    const file = path.join(destination, `${name.replace("@", "").replace("/", "-")}-${version}.tgz`)
    const base = path.basename(dir)
    await run("tar", [
      "-czf",
      file,
      "--dereference",
      "--hard-dereference",
      "-C",
      path.dirname(dir),
      `--transform=s,^${base},package,`,
      base
    ])
  }
}

/** The typed host's own versions: not the ones toolcap is built against. */
const hostEffect = "4.1.0"
const hostAi = "6.0.300"

beforeAll(async () => {
  if (!fs.existsSync(path.join(packageDir, "dist", "bin.cjs")))
    throw new Error("build toolcap first (pnpm run build)")
  fs.mkdirSync(tarballs, { recursive: true })
  fs.mkdirSync(project, { recursive: true })
  await run("pnpm", ["pack", "--pack-destination", tarballs], { cwd: packageDir })
  // the runtime dependencies, packed from this repository's install (offline)
  const tools = fileURLToPath(new URL("../../tools", import.meta.url))
  const ripgrep = installed("@vscode/ripgrep", tools)
  // pnpm puts a package's dependencies beside it: the platform binary is a sibling of ripgrep
  const platform = installed(`@vscode/ripgrep-${process.platform}-${process.arch}`, path.dirname(ripgrep))
  await packAll([ripgrep, platform], tarballs)
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "host", private: true, type: "module" })
  )
  fs.writeFileSync(path.join(project, "README.md"), "# host\nhello from the host\n")
  const packed = fs.readdirSync(tarballs).map((file) => path.join(tarballs, file))
  await npm(["install", "--offline", "--no-save", ...packed], project)

  // the typed host: toolcap, its runtime dependencies, effect@4, another ai and what it needs,
  // TypeScript and Node's types
  fs.mkdirSync(typedTarballs, { recursive: true })
  fs.mkdirSync(typedProject, { recursive: true })
  const typedDirs = new Map<string, string>()
  for (const name of ["effect-v4", "ai-v6-0-300", "typescript", "@types/node"])
    closure(installed(name, packageDir), typedDirs)
  await packAll(typedDirs.keys(), typedTarballs)
  fs.writeFileSync(
    path.join(typedProject, "package.json"),
    JSON.stringify({ name: "typed-host", private: true, type: "module" })
  )
  fs.writeFileSync(path.join(typedProject, "README.md"), "# typed host\n")
  const typedPacked = [
    ...packed,
    ...fs.readdirSync(typedTarballs).map((file) => path.join(typedTarballs, file))
  ]
  // saved (not --no-save): npm resolves the whole tree as a host's install would, ERESOLVE included
  await npm(["install", "--offline", ...typedPacked], typedProject)
}, 300_000)

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

const dataDir = () => path.join(tmp, "data")

describe("toolcap installed from its tarball into a plain npm project", () => {
  it("npx toolcap call Read answers one JSON line", async () => {
    const { stdout } = await run(
      "npx",
      ["--offline", "toolcap", "call", "Read", '{"path":"README.md"}', "--data-dir", dataDir()],
      // the bin's code cache goes with the temp dir
      { cwd: project, env: { ...process.env, XDG_CACHE_HOME: path.join(tmp, "cache") } }
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

  it("a host with effect@4 and another ai type-checks its strict nodenext code against the published types", async () => {
    const versions = (name: string) =>
      (
        JSON.parse(
          fs.readFileSync(path.join(typedProject, "node_modules", name, "package.json"), "utf8")
        ) as {
          version: string
        }
      ).version
    assert.deepStrictEqual([versions("effect"), versions("ai")], [hostEffect, hostAi])
    fs.writeFileSync(
      path.join(typedProject, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          types: ["node"],
          noEmit: true,
          // what \`tsc --init\` writes; the published .d.ts itself is checked when it is generated
          skipLibCheck: true
        },
        files: ["host.ts"]
      })
    )
    fs.writeFileSync(
      path.join(typedProject, "host.ts"),
      `import { aiSdkTools, createToolHost } from "toolcap"
import type { ToolSet } from "ai"
import * as Effect from "effect/Effect"

const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir())}, sessionId: "typed" })
const read = await host.call("Read", { path: "README.md" })
if (read.ok) {
  const content: string = read.result.content
  const lines: number = read.result.lineCount
  // @ts-expect-error -- a Read result has no stdout
  read.result.stdout
  console.log(content, lines)
}
const bash = await host.call("Bash", { command: "echo typed" })
if (bash.ok) {
  const stdout: string = bash.result.stdout
  const exitCode: number | null = bash.result.exitCode
  console.log(stdout, exitCode)
} else {
  const code: string = bash.error.code
  console.log(code)
}
const tools: ToolSet = await aiSdkTools(host)
const answer: number = Effect.runSync(Effect.succeed(Object.keys(tools).length))
console.log(answer)
await host.close()
`
    )
    const tsc = path.join(typedProject, "node_modules", "typescript", "bin", "tsc")
    const checked = await run(process.execPath, [tsc, "-p", "."], { cwd: typedProject }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error)
    )
    assert.strictEqual(checked, "")
  }, 120_000)

  it("the AI SDK tools run with the host's own ai version", async () => {
    const script = path.join(typedProject, "tools.mjs")
    fs.writeFileSync(
      script,
      `import { aiSdkTools, createToolHost } from "toolcap"
const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir())}, sessionId: "typed-ai" })
const tools = await aiSdkTools(host)
const read = await tools.Read.execute({ path: "README.md" }, { toolCallId: "t1", messages: [] })
await host.close()
console.log(JSON.stringify({ names: Object.keys(tools), read }))
`
    )
    const { stdout } = await run(process.execPath, [script], { cwd: typedProject })
    const { names, read } = JSON.parse(stdout) as {
      names: Array<string>
      read: { ok: boolean; result: { content: string } }
    }
    assert.deepStrictEqual(names, ["Read", "Glob", "Grep", "Bash"])
    assert.strictEqual(read.result.content, "# typed host\n")
  })
})
