/**
 * The published package as a host team installs it: `pnpm pack` of this package, then a plain
 * `npm install` of the tarball from the registry (no `--legacy-peer-deps`: a peer conflict fails
 * it) into fresh npm projects, one install per peer set, the three at once, sharing one npm cache
 * in the test's temp dir:
 * - bare: toolcap with TypeScript 5.9 and Node's types, no optional peer at all;
 * - latest: the registry's latest `ai`, `effect` and MCP SDK, and better-sqlite3;
 * - oldest: the oldest versions the peer ranges admit (`ai` 6.0.0, MCP SDK 1.17.0).
 * better-sqlite3 is this repository's compiled copy, packed from its install: its install script
 * downloads a prebuilt binary from a host this machine cannot reach (and compiling it takes
 * minutes), so the latest set installs with scripts off — no other package of the set has one.
 *
 * In each project a strict consumer (`nodenext`, `skipLibCheck: false`) type-checks against the
 * published declarations, with a `@ts-expect-error` on a misused result field; the tools run
 * through the Promise API (ESM and `require`), the AI SDK tools with the host's own `ai`, and
 * `npx toolcap call`, `demo`, `doctor` and `mcp` (driven by the host's own MCP SDK client).
 *
 * The native launchers ship inside the tarball (both architectures, 5 MB at most with everything
 * else, the same bytes a fresh build gives): from the bare install, a Bash call through the
 * Promise API and through `toolcap call` runs its shell as a child of the installed launcher (read
 * from `/proc`), Grep reports the launcher, and the doctor names it; with the launcher removed
 * from the install, every one of them reports the fallback and why.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const execFileAsync = promisify(execFile)
const packageDir = fileURLToPath(new URL("..", import.meta.url))
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-install-"))
const tarballs = path.join(tmp, "tarballs")
const dataDir = path.join(tmp, "data")
// the demo's and the doctor's temporary directories, and the bin's code cache, stay in here
const childTmp = path.join(tmp, "tmp")
/**
 * This process's environment as a host's shell would have it: without what pnpm adds for its
 * scripts (NODE_PATH into this repository's store, its bin folders, npm_* settings), through which
 * the installed package would find this repository's packages instead of the project's own.
 */
const hostEnvironment = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => name !== "NODE_PATH" && !/^(npm|pnpm)_/i.test(name))
)
const env = {
  ...hostEnvironment,
  PATH: (process.env["PATH"] ?? "")
    .split(path.delimiter)
    .filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}`))
    .join(path.delimiter),
  TMPDIR: childTmp,
  XDG_CACHE_HOME: path.join(tmp, "cache"),
  NO_COLOR: "1",
  npm_config_cache: path.join(tmp, "npm-cache"),
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false"
}

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end; a non-zero exit is an answer, not a throw. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string): Promise<Ran> =>
  execFileAsync(command, [...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: unknown; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === "number" ? error.code : -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? String(error)
    })
  )

const succeed = async (command: string, args: ReadonlyArray<string>, cwd: string): Promise<Ran> => {
  const ran = await run(command, args, cwd)
  assert.strictEqual(ran.code, 0, `${command} ${args.join(" ")}:\n${ran.stdout}\n${ran.stderr}`)
  return ran
}

/** The installed folder of a package, found from `from` upwards as Node would. */
const installed = (name: string, from: string): string => {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name)
    if (fs.existsSync(path.join(candidate, "package.json"))) return fs.realpathSync(candidate)
    if (path.dirname(dir) === dir) throw new Error(`${name} is not installed above ${from}`)
  }
}

const versionIn = (project: string, name: string): string =>
  (
    JSON.parse(fs.readFileSync(path.join(project, "node_modules", name, "package.json"), "utf8")) as {
      version: string
    }
  ).version

interface PeerSet {
  readonly name: "bare" | "latest" | "oldest"
  readonly packages: ReadonlyArray<string>
  readonly withSqlite: boolean
  readonly withAi: boolean
  /** What npm must have installed: each peer's version, or its absence. */
  readonly versions: Readonly<Record<string, RegExp | "absent">>
}

const common = ["typescript@5.9", "@types/node@20"]
const sets: ReadonlyArray<PeerSet> = [
  {
    name: "bare",
    packages: common,
    withSqlite: false,
    withAi: false,
    versions: { ai: "absent", "@modelcontextprotocol/sdk": "absent", "better-sqlite3": "absent" }
  },
  {
    name: "latest",
    packages: ["ai@latest", "effect@latest", "@modelcontextprotocol/sdk@latest", ...common],
    withSqlite: true,
    withAi: true,
    // ai's latest is 7 today; a new major fails the install itself (the range admits 6 and 7)
    versions: { ai: /^7\./, "@modelcontextprotocol/sdk": /^1\./, effect: /^\d+\./, "better-sqlite3": /^12\./ }
  },
  {
    name: "oldest",
    packages: ["ai@6.0.0", "@modelcontextprotocol/sdk@1.17.0", ...common],
    withSqlite: false,
    withAi: true,
    versions: { ai: /^6\.0\.0$/, "@modelcontextprotocol/sdk": /^1\.17\.0$/, "better-sqlite3": "absent" }
  }
]

const projectOf = (set: PeerSet["name"]) => path.join(tmp, set)

/** better-sqlite3 as installed here (compiled), as a registry tarball without its build leftovers. */
const packSqlite = async (): Promise<string> => {
  const dir = installed("better-sqlite3", fileURLToPath(new URL("../../../apps/demo", import.meta.url)))
  const file = path.join(tarballs, "better-sqlite3.tgz")
  await succeed(
    "tar",
    [
      "-czf",
      file,
      "--exclude=obj",
      "--exclude=obj.target",
      "--exclude=.deps",
      "--exclude=deps",
      "--exclude=*.a",
      "-C",
      path.dirname(dir),
      `--transform=s,^${path.basename(dir)},package,`,
      path.basename(dir)
    ],
    tmp
  )
  return file
}

const install = async (set: PeerSet, toolcap: string, sqlite: string) => {
  const project = projectOf(set.name)
  fs.mkdirSync(project)
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: `host-${set.name}`, private: true, type: "module" })
  )
  fs.writeFileSync(path.join(project, "README.md"), `# ${set.name} host\nhello from the host\n`)
  const extra = set.withSqlite ? ["--ignore-scripts", sqlite] : []
  await succeed("npm", ["install", ...extra, toolcap, ...set.packages], project)
}

beforeAll(async () => {
  if (!fs.existsSync(path.join(packageDir, "dist", "bin.cjs")))
    throw new Error("build toolcap first (pnpm run build)")
  fs.mkdirSync(tarballs)
  fs.mkdirSync(childTmp)
  await succeed("pnpm", ["pack", "--pack-destination", tarballs], packageDir)
  const toolcap = path.join(
    tarballs,
    fs.readdirSync(tarballs).find((file) => file.startsWith("toolcap-"))!
  )
  const sqlite = await packSqlite()
  await Promise.all(sets.map((set) => install(set, toolcap, sqlite)))
}, 600_000)

// three installs and their npm cache: thousands of files, slow to remove on a busy disk
afterAll(() => fs.promises.rm(tmp, { recursive: true, force: true }), 300_000)

/** A strict host's code: the core entry always, the AI SDK entry and `ai`'s own types where installed. */
const consumer = (
  set: PeerSet
) => `import { createToolHost, type BudgetsValue, type GrepResult } from "toolcap"
import { serveStdio, type StdioOptions } from "toolcap/mcp"
${set.withAi ? 'import { aiSdkTools } from "toolcap/ai"\nimport type { ToolSet } from "ai"\n' : ""}
const host = await createToolHost({ workspace: process.cwd(), dataDir: "data", sessionId: "typed" })
const budgets: BudgetsValue = host.budgets
const searchMaxBytes: number = budgets.searchMaxBytes
const read = await host.call("Read", { path: "README.md" })
if (read.ok) {
  const content: string = read.result.content
  const lineCount: number = read.result.lineCount
  // @ts-expect-error -- a Read result has no stdout
  read.result.stdout
  console.log(content, lineCount, searchMaxBytes)
}
const bash = await host.call("Bash", { command: "echo typed" })
if (bash.ok) {
  // @ts-expect-error -- exitCode is a number or null, not a string
  const exitCode: string = bash.result.exitCode
  console.log(bash.result.stdout, bash.result.termination.containment, exitCode)
} else {
  const code: string = bash.error.code
  console.log(code)
}
const grep = await host.call("Grep", { pattern: "x" })
const files = (result: GrepResult): number => ("files" in result && typeof result.files === "number" ? result.files : 0)
if (grep.ok) console.log(files(grep.result))
const options: StdioOptions = { workspace: ".", dataDir: "data", sessionId: "s" }
console.log(options, serveStdio)
${set.withAi ? "const tools: ToolSet = await aiSdkTools(host)\nconsole.log(Object.keys(tools))\n" : ""}await host.close()
`

/** Read, Glob, Grep and Bash through the Promise API, as an ES module and through require(). */
const toolsScript = (
  kind: "mjs" | "cjs"
) => `${kind === "mjs" ? 'import { createToolHost } from "toolcap"' : 'const { createToolHost } = require("toolcap")'}
const main = async () => {
  const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir)}, sessionId: "api-${kind}" })
  const read = await host.call("Read", { path: "README.md" })
  const glob = await host.call("Glob", { pattern: "*.md" })
  const grep = await host.call("Grep", { pattern: "hello", path: "README.md", outputMode: "content" })
  const bash = await host.call("Bash", { command: "echo from bash; echo to stderr >&2" })
  await host.close()
  console.log(JSON.stringify({ read, glob, grep, bash }))
}
main()
`

/** The AI SDK tools with the host's own ai: Read's outcome, and Bash's stream to its outcome. */
const aiScript = `import { createToolHost } from "toolcap"
import { aiSdkTools } from "toolcap/ai"
const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir)}, sessionId: "ai" })
const tools = await aiSdkTools(host)
const options = { toolCallId: "t1", messages: [] }
const read = await tools.Read.execute({ path: "README.md" }, options)
const values = []
for await (const value of tools.Bash.execute({ command: "echo streamed" }, options)) values.push(value)
await host.close()
console.log(JSON.stringify({ names: Object.keys(tools), read, bash: values.at(-1) }))
`

/** The host's own MCP SDK client drives \`toolcap mcp\`: lists the tools, calls Read and Bash. */
const mcpScript = `import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js"
const transport = new StdioClientTransport({
  command: "npx",
  args: ["--no", "toolcap", "mcp", "--data-dir", ${JSON.stringify(dataDir)}],
  env: { ...getDefaultEnvironment(), XDG_CACHE_HOME: ${JSON.stringify(env.XDG_CACHE_HOME)} },
  stderr: "inherit"
})
const client = new Client({ name: "install-test", version: "0.0.0" })
await client.connect(transport)
const { tools } = await client.listTools()
const read = await client.callTool({ name: "Read", arguments: { path: "README.md" } })
const bash = await client.callTool({ name: "Bash", arguments: { command: "echo over mcp" } })
await client.close()
console.log(JSON.stringify({ names: tools.map((tool) => tool.name), read: read.structuredContent, bash: bash.structuredContent }))
`

const writeIn = (project: string, file: string, text: string) => {
  fs.writeFileSync(path.join(project, file), text)
  return path.join(project, file)
}

interface Outcome {
  readonly ok: boolean
  readonly result: Record<string, unknown>
  readonly error: { readonly code: string; readonly message: string }
}

describe.each(sets)("toolcap installed beside the $name peer set", (set) => {
  const project = projectOf(set.name)

  it("npm installed the peers asked for, without --legacy-peer-deps", () => {
    for (const [name, version] of Object.entries(set.versions)) {
      const manifest = path.join(project, "node_modules", name, "package.json")
      if (version === "absent") assert.isFalse(fs.existsSync(manifest), `${name} is installed`)
      else assert.match(versionIn(project, name), version, name)
    }
  })

  it("a strict nodenext consumer type-checks against the published declarations", async () => {
    writeIn(
      project,
      "tsconfig.json",
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          types: ["node"],
          noEmit: true,
          skipLibCheck: false
        },
        files: ["host.ts"]
      })
    )
    writeIn(project, "host.ts", consumer(set))
    const checked = await run(
      process.execPath,
      [path.join(project, "node_modules", "typescript", "bin", "tsc"), "-p", "."],
      project
    )
    assert.strictEqual(checked.stdout + checked.stderr, "")
    assert.strictEqual(checked.code, 0)
  }, 180_000)
})

describe.each(sets.filter((set) => set.name !== "oldest"))(
  "toolcap's tools, demo and doctor beside the $name peer set",
  (set) => {
    const project = projectOf(set.name)

    it("Read, Glob, Grep and Bash run through the Promise API, imported and required", async () => {
      for (const kind of ["mjs", "cjs"] as const) {
        const script = writeIn(project, `tools.${kind}`, toolsScript(kind))
        const { stdout } = await succeed(process.execPath, [script], project)
        const { read, glob, grep, bash } = JSON.parse(stdout) as Record<string, Outcome>
        assert.strictEqual(read!.result["content"], `# ${set.name} host\nhello from the host\n`)
        assert.deepStrictEqual(glob!.result["matches"], ["README.md"])
        assert.strictEqual((grep!.result["matches"] as Array<unknown>).length, 1)
        assert.strictEqual(bash!.result["stdout"], "from bash\n")
        assert.strictEqual(bash!.result["stderr"], "to stderr\n")
      }
    })

    it("npx toolcap demo completes; its checkpoint step runs only with the SQLite driver", async () => {
      const demo = await succeed("npx", ["--no", "toolcap", "demo"], project)
      const ran = "reads back identical"
      const skipped = "skipped: toolcap: the checkpoint store needs the optional package better-sqlite3"
      assert.include(demo.stdout, "[10/10]")
      assert.notInclude(demo.stdout, "✗")
      assert.include(demo.stdout, set.withSqlite ? ran : skipped)
      assert.notInclude(demo.stdout, set.withSqlite ? "skipped:" : ran)
      assert.deepStrictEqual(
        fs.readdirSync(childTmp).filter((entry) => entry.startsWith("toolcap-")),
        [],
        "the demo removed its temporary data"
      )
    }, 120_000)

    it("npx toolcap doctor: one line per part, nothing broken", async () => {
      const doctor = await succeed("npx", ["--no", "toolcap", "doctor"], project)
      const status = (part: string) => new RegExp(`^${part}\\s+(\\w+)`, "m").exec(doctor.stdout)?.[1]
      for (const part of ["node", "launcher", "cgroup", "landlock", "ripgrep"])
        assert.isDefined(status(part), part)
      assert.strictEqual(status("ripgrep"), "ok")
      assert.strictEqual(status("sqlite"), set.withSqlite ? "ok" : "missing")
    })
  }
)

describe.each(sets.filter((set) => set.withAi))(
  "toolcap's AI SDK tools and MCP server beside the $name peer set",
  (set) => {
    const project = projectOf(set.name)

    /** Runs a host script that lists the four tools, reads README.md and runs a Bash echo. */
    const listReadAndRun = async (file: string, script: string) => {
      const { stdout } = await succeed(process.execPath, [writeIn(project, file, script)], project)
      return JSON.parse(stdout) as { names: Array<string>; read: Outcome; bash: Outcome }
    }
    const readme = `# ${set.name} host\nhello from the host\n`

    it("the AI SDK tools run with the host's own ai", async () => {
      const { names, read, bash } = await listReadAndRun("ai.mjs", aiScript)
      assert.deepStrictEqual(names, ["Read", "Glob", "Grep", "Bash"])
      assert.strictEqual(read.result["content"], readme)
      assert.strictEqual(bash.result["stdout"], "streamed\n")
    })

    it("npx toolcap mcp serves the host's own MCP SDK client", async () => {
      const { names, read, bash } = await listReadAndRun("mcp.mjs", mcpScript)
      assert.deepStrictEqual(names, ["Read", "Glob", "Grep", "Bash"])
      assert.strictEqual(read.result["content"], readme)
      assert.strictEqual(bash.result["stdout"], "over mcp\n")
    })
  }
)

describe("toolcap installed without its optional peers", () => {
  const project = projectOf("bare")

  it("npx toolcap call Read answers one JSON line", async () => {
    const { stdout } = await succeed(
      "npx",
      ["--no", "toolcap", "call", "Read", '{"path":"README.md"}', "--data-dir", dataDir],
      project
    )
    const line = JSON.parse(stdout) as Outcome
    assert.strictEqual(line.result["content"], "# bare host\nhello from the host\n")
  })

  it("each feature of a missing peer names the package to install", async () => {
    const script = writeIn(
      project,
      "peers.mjs",
      `import { createToolHost } from "toolcap"
import { aiSdkTools } from "toolcap/ai"
import { serveStdio } from "toolcap/mcp"
const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir)}, sessionId: "peers" })
const ai = await aiSdkTools(host).then(() => "loaded", (error) => error.message)
const mcp = await serveStdio({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir)}, sessionId: "peers-mcp" }).then(() => "served", (error) => error.message)
const checkpoint = await host.checkpoint({ messages: [{ role: "user", id: "u1", text: "hi" }] })
await host.close()
console.log(JSON.stringify({ ai, mcp, checkpoint }))
`
    )
    const { stdout } = await succeed(process.execPath, [script], project)
    const { ai, mcp, checkpoint } = JSON.parse(stdout) as { ai: string; mcp: string; checkpoint: Outcome }
    assert.include(ai, "needs the optional package ai, which is not installed")
    assert.include(ai, "npm install ai")
    assert.include(mcp, "needs the optional package @modelcontextprotocol/sdk, which is not installed")
    assert.strictEqual(checkpoint.error.code, "CHECKPOINT_STORE_FAILED")
    assert.include(checkpoint.error.message, "npm install better-sqlite3")
  })

  it("npx toolcap checkpoint build without the SQLite driver: one JSON line naming it, exit 2", async () => {
    const transcript = writeIn(
      project,
      "transcript.json",
      JSON.stringify({ messages: [{ role: "user", id: "u1", text: "hi" }] })
    )
    const built = await run(
      "npx",
      ["--no", "toolcap", "checkpoint", "build", transcript, "--session", "s1", "--data-dir", dataDir],
      project
    )
    assert.strictEqual(built.code, 2, built.stderr)
    const line = JSON.parse(built.stdout) as Outcome
    assert.strictEqual(line.error.code, "CHECKPOINT_STORE_FAILED")
    assert.include(line.error.message, "needs the optional package better-sqlite3, which is not installed")
    assert.include(line.error.message, "npm install better-sqlite3")
  })

  it("npx toolcap mcp without the MCP SDK: one line naming it, exit 1, no stack", async () => {
    const mcp = await run("npx", ["--no", "toolcap", "mcp", "--data-dir", dataDir], project)
    assert.strictEqual(mcp.code, 1)
    assert.strictEqual(mcp.stdout, "")
    assert.strictEqual(
      mcp.stderr,
      "toolcap: the MCP server needs the optional package @modelcontextprotocol/sdk, which is not installed. Install it beside toolcap: npm install @modelcontextprotocol/sdk\n"
    )
  })

  it("npx toolcap doctor on a broken install (ripgrep's binary gone): ripgrep broken, exit 1", async () => {
    const rg = path.join(project, "node_modules", "@vscode", `ripgrep-linux-${process.arch}`, "bin", "rg")
    fs.renameSync(rg, `${rg}.moved`)
    try {
      const doctor = await run("npx", ["--no", "toolcap", "doctor"], project)
      assert.strictEqual(doctor.code, 1, doctor.stdout)
      assert.match(doctor.stdout, /^ripgrep\s+broken\s+Grep failed: /m)
    } finally {
      fs.renameSync(`${rg}.moved`, rg)
    }
  })

  it("no shipped declaration names a module outside the package or an absolute path", () => {
    const dist = path.join(project, "node_modules", "toolcap", "dist")
    const declarations = fs
      .readdirSync(dist, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".d.ts"))
    assert.includeMembers(declarations, ["index.d.ts", "ai.d.ts", "mcp.d.ts"])
    for (const file of declarations) {
      const text = fs.readFileSync(path.join(dist, file), "utf8")
      const specifiers = [...text.matchAll(/(?:from\s+|import\()\s*["']([^"']+)["']/g)].map(
        (match) => match[1]!
      )
      for (const specifier of specifiers) {
        assert.isTrue(
          specifier.startsWith("./") ||
            specifier.startsWith("node:") ||
            (specifier === "ai" && file === "ai.d.ts"),
          `${file} names ${specifier}`
        )
      }
      assert.notMatch(text, /\/(?:tmp|work|home|root|usr)\//, `${file} holds an absolute path`)
      assert.notInclude(text, packageDir, `${file} holds a path of the build`)
    }
  })
})

/** The most bytes the tarball may take with both launchers. */
const TARBALL_MAX_BYTES = 5 * 1024 * 1024

/** A Bash command printing its shell's pid, the parent's pid, and the parent's executable, as JSON. */
// the parent's program by its argv[0]: under Landlock scopes the shell may not readlink the
// launcher's /proc/<pid>/exe (it is outside the shell's domain), while cmdline stays readable
const PARENT_COMMAND = `ppid=$(cut -d' ' -f4 /proc/$$/stat); printf '{"shell":%s,"parent":%s,"program":"%s"}' $$ "$ppid" "$(tr '\\0' '\\n' < /proc/$ppid/cmdline | head -n 1)"`

/** A Bash and a Grep through the Promise API of the installed package. */
const guardScript = `import { createToolHost } from "toolcap"
const host = await createToolHost({ workspace: process.cwd(), dataDir: ${JSON.stringify(dataDir)}, sessionId: "guard" })
const bash = await host.call("Bash", { command: ${JSON.stringify(PARENT_COMMAND)} })
const grep = await host.call("Grep", { pattern: "hello", path: "README.md" })
await host.close()
console.log(JSON.stringify({ bash, grep }))
`

const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")

const tarball = () =>
  path.join(
    tarballs,
    fs.readdirSync(tarballs).find((file) => file.startsWith("toolcap-"))!
  )
const parentOf = (bash: Outcome) =>
  JSON.parse(String(bash.result["stdout"])) as { shell: number; parent: number; program: string }

describe("the native launcher inside the package", () => {
  const project = projectOf("bare")
  const nativeDir = () => path.join(installed("toolcap", project), "dist", "native")
  const launcher = () => path.join(nativeDir(), `linux-${process.arch}`, "toolcap-confine")

  it("ships the launcher of each architecture built, within 5 MB, the bytes of a fresh build", async () => {
    assert.isAtMost(fs.statSync(tarball()).size, TARBALL_MAX_BYTES)
    const listed = (await succeed("tar", ["-tzf", tarball()], tmp)).stdout.split("\n")
    const built = fs.readdirSync(path.join(packageDir, "..", "tools", "dist", "native"))
    assert.include(built, `linux-${process.arch}`)
    for (const platform of built.filter((entry) => entry.startsWith("linux-")))
      assert.include(listed, `package/dist/native/${platform}/toolcap-confine`)
    // a second build from the sources gives the same bytes: what ships is reproducible
    const again = path.join(tmp, "launcher-again")
    await succeed(
      process.execPath,
      [path.join(packageDir, "..", "tools", "native", "build.mjs"), "--out", again],
      tmp
    )
    for (const platform of fs.readdirSync(again))
      assert.strictEqual(
        sha256(path.join(nativeDir(), platform, "toolcap-confine")),
        sha256(path.join(again, platform, "toolcap-confine")),
        platform
      )
  }, 120_000)

  /** Bash's shell and Grep from the Promise API, and Bash's shell from `toolcap call`. */
  const calls = async () => {
    const api = JSON.parse(
      (await succeed(process.execPath, [writeIn(project, "guard.mjs", guardScript)], project)).stdout
    ) as { bash: Outcome; grep: Outcome }
    const call = JSON.parse(
      (
        await succeed(
          "npx",
          [
            "--no",
            "toolcap",
            "call",
            "Bash",
            JSON.stringify({ command: PARENT_COMMAND }),
            "--data-dir",
            dataDir
          ],
          project
        )
      ).stdout
    ) as Outcome
    const doctor = (await run("npx", ["--no", "toolcap", "doctor"], project)).stdout
    return { bashes: [api.bash, call], grep: api.grep, doctor }
  }

  it("every entry finds it: the shell's parent is the installed launcher, Grep and the doctor report it", async () => {
    const { bashes, grep, doctor } = await calls()
    for (const bash of bashes) {
      assert.isTrue(bash.ok, JSON.stringify(bash))
      const termination = bash.result["termination"] as Record<string, unknown>
      assert.strictEqual(termination["cgroupEntry"], "launcher", JSON.stringify(termination))
      assert.strictEqual(termination["launcher"], true, JSON.stringify(termination))
      assert.strictEqual(termination["landlockScopes"], true, JSON.stringify(termination))
      const { shell, parent, program } = parentOf(bash)
      assert.notStrictEqual(shell, parent)
      assert.strictEqual(program, launcher())
    }
    assert.deepInclude(grep.result["guard"] as Record<string, unknown>, { launcher: true })
    assert.match(doctor, new RegExp(`^launcher\\s+ok\\s+${launcher()} \\(shipped in the package\\)`, "m"))
  }, 120_000)

  it("with the launcher removed from the install, each reports the fallback and why", async () => {
    const file = launcher()
    fs.renameSync(file, `${file}.moved`)
    try {
      const { bashes, grep, doctor } = await calls()
      const why = `no launcher at ${file}`
      for (const bash of bashes) {
        assert.isTrue(bash.ok, JSON.stringify(bash))
        const termination = bash.result["termination"] as Record<string, unknown>
        assert.strictEqual(termination["cgroupEntry"], "prologue", JSON.stringify(termination))
        assert.include(String(termination["fallbackReason"]), why)
        assert.strictEqual(termination["launcher"], false, JSON.stringify(termination))
        assert.strictEqual(termination["landlockScopes"], false, JSON.stringify(termination))
        assert.include(String(termination["landlockScopesReason"]), why)
        assert.notStrictEqual(parentOf(bash).program, file)
      }
      const guard = grep.result["guard"] as Record<string, unknown>
      assert.deepInclude(guard, { launcher: false, landlockRead: false })
      assert.include(String(guard["landlockReadReason"]), why)
      assert.match(doctor, new RegExp(`^launcher\\s+fallback\\s+${why}`, "m"))
    } finally {
      fs.renameSync(`${file}.moved`, file)
    }
  }, 120_000)
})
