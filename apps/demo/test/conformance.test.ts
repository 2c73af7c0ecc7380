/**
 * One conformance suite, five surfaces: the Effect layer, the Promise API, the MCP server (the
 * built `toolcap mcp`, driven by the SDK's client over stdio), the AI SDK tools and the CLI (the
 * built `toolcap call`). Every case sends the same input to all of them; each must answer the
 * case's expected bounded result or error code, and all five answers must be the same once the
 * values that legitimately differ per call (durations, pids, call ids, spill file names) are
 * normalized.
 *
 * The suite is generated from the tool specs (`Specs`): the hand-written cases are keyed by tool
 * name (a tool without cases does not compile), each spec adds the input refusals its input
 * Schema implies (a required field missing, a field of the wrong type, an unknown field), every
 * success must decode with the spec's result Schema, every failure must carry one of the spec's
 * error codes, and every surface lists the definitions derived from the specs.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as path from "node:path"
import { Outcome, PromiseHost, Specs, ToolDefs, ToolHost } from "@toolcap/adapters"
import * as AiSdk from "@toolcap/adapters/AiSdk"
import { Budgets } from "@toolcap/limits"
import { assertBuilt, bin, makeDirs, runCli } from "./fixtures/cli.js"
import { isGone, processesWithCookie } from "../../../packages/adapters/test/fixtures/processes.js"

type Json = Record<string, unknown>
type Call = (tool: string, input: unknown) => Promise<Outcome.Outcome>
/** A definition as a surface lists it (the CLI lists none). */
type Listed = {
  readonly name: string
  readonly description?: string | undefined
  readonly inputSchema: unknown
}
interface Surface {
  readonly name: string
  readonly call: Call
  readonly definitions?: () => Promise<ReadonlyArray<Listed>>
  readonly close: () => Promise<void>
}

const dirs = makeDirs("toolcap-conformance-")
/** Where Bash commands record the pids of their tree, per run id (outside the workspace the search cases walk). */
const trees = path.join(dirs.root, "trees")
const budgets = Budgets.defaults
const surfaces: Array<Surface> = []

const effectSurface = async (): Promise<Surface> => {
  const scope = Effect.runSync(Scope.make())
  const host = await Effect.runPromise(
    ToolHost.make({ workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId: "effect" }).pipe(
      Effect.provide(Budgets.layer),
      Scope.extend(scope)
    )
  )
  return {
    name: "effect",
    call: async (tool, input) => {
      const settled = Outcome.fromExit(tool, await Effect.runPromiseExit(host.call(tool, input)))
      if (Either.isLeft(settled)) throw new Error(`defect: ${String(settled.left)}`)
      return settled.right
    },
    definitions: async () => host.definitions,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const promiseSurface = async (): Promise<Surface> => {
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "promise"
  })
  return {
    name: "promise",
    call: (tool, input) => host.call(tool, input),
    definitions: async () => host.definitions,
    close: host.close
  }
}

const aiSdkSurface = async (): Promise<Surface> => {
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "ai"
  })
  const tools = await AiSdk.tools(host)
  let n = 0
  return {
    name: "ai-sdk",
    call: async (tool, input) => {
      const execute = tools[tool as keyof typeof tools].execute!
      const returned = execute(input, { toolCallId: `call-${n++}`, messages: [] })
      // a streaming tool (Bash) yields preliminary results; its last value is the result
      if (Symbol.asyncIterator in returned) {
        let last: Outcome.Outcome | undefined
        for await (const value of returned) last = value
        return last!
      }
      return (await returned) as Outcome.Outcome
    },
    definitions: async () =>
      Object.entries(tools).map(([name, tool]) => ({
        name,
        description: tool.description ?? "",
        inputSchema: (tool.inputSchema as { readonly jsonSchema: unknown }).jsonSchema
      })),
    close: host.close
  }
}

const mcpSurface = async (): Promise<Surface> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", "--workspace", dirs.workspace, "--data-dir", dirs.dataDir, "--session", "mcp"],
    env: getDefaultEnvironment(),
    stderr: "pipe"
  })
  const client = new Client({ name: "conformance", version: "0.0.0" })
  await client.connect(transport)
  return {
    name: "mcp",
    call: async (tool, input) => {
      const result = await client.callTool({ name: tool, arguments: input as Record<string, unknown> })
      const outcome = result.structuredContent as unknown as Outcome.Outcome
      assert.strictEqual(result.isError, !outcome.ok, "isError mirrors the outcome")
      return outcome
    },
    definitions: async () => (await client.listTools()).tools,
    close: () => client.close()
  }
}

const cliSurface = (): Surface => ({
  name: "cli",
  call: async (tool, input) => {
    const run = await runCli([
      "call",
      tool,
      JSON.stringify(input),
      "--workspace",
      dirs.workspace,
      "--data-dir",
      dirs.dataDir,
      "--session",
      "cli"
    ])
    const outcome = JSON.parse(run.stdout) as Outcome.Outcome
    assert.strictEqual(run.code, outcome.ok ? 0 : 2, "exit code 0 for ok, 2 for a tool error")
    return outcome
  },
  close: async () => {}
})

/** Replaces what legitimately differs between two calls of the same input. */
const normalize = (outcome: Outcome.Outcome): unknown =>
  JSON.parse(
    JSON.stringify(outcome, (key, value: unknown) => {
      if (key === "durationMs" || key === "callId" || key === "runId") return "<varies>"
      if (key === "killedPids") return (value as Array<number>).length > 0 ? "<some pids>" : []
      if (key === "lastSeq") return "<chunking varies>"
      // a host with a file index lists Glob from it, a one-shot call through ripgrep: each says so
      if (key === "guard") return "<how the surface listed>"
      if (typeof value !== "string") return value
      return value
        .replace(
          /\/scratch\/[A-Za-z0-9._-]+\/tool-output\/([a-z-]+)-\d+-\d+\.log/g,
          "/scratch/<session>/tool-output/$1.log"
        )
        .replace(/duration: [\d.]+s/g, "duration: <varies>")
        .replace(/\(\d+ processes signalled\)/g, "(<n> processes signalled)")
        .replace(/process\(es\): [\d, ]+/g, "process(es): <pids>")
    })
  )

interface Case {
  readonly name: string
  readonly tool: Specs.ToolName
  readonly input: unknown
  readonly expect: (outcome: Outcome.Outcome) => void
}

const okResult = (outcome: Outcome.Outcome): Json => {
  assert.isTrue(outcome.ok, `expected ok, got ${JSON.stringify(outcome).slice(0, 300)}`)
  return (outcome as Outcome.Success).result as Json
}
const errorCode = (code: string) => (outcome: Outcome.Outcome) => {
  assert.isFalse(outcome.ok, `expected ${code}, got ok`)
  assert.strictEqual((outcome as Outcome.Failure).error.code, code)
}

const bigLines = 30_000
const line = (n: number) => `line ${String(n).padStart(6, "0")} of the big file\n`

/** The behaviours each tool must show on every surface, by tool name: every spec has some. */
const byTool: { readonly [N in Specs.ToolName]: ReadonlyArray<Case & { readonly tool: N }> } = {
  Read: [
    {
      name: "Read: a small file, byte-faithful, to the end",
      tool: "Read",
      input: { path: "notes/crlf.txt" },
      expect: (o) => {
        const r = okResult(o)
        assert.strictEqual(r["content"], "one\r\ntwo\r\n")
        assert.strictEqual(r["totalLines"], 2)
        assert.strictEqual(r["truncated"], false)
      }
    },
    {
      name: "Read: a big file pages within the budget and names the next offset",
      tool: "Read",
      input: { path: "big.txt", offset: 101 },
      expect: (o) => {
        const r = okResult(o)
        assert.isTrue(r["truncated"])
        assert.isTrue(String(r["content"]).startsWith(line(101)))
        assert.isAtMost(Buffer.byteLength(String(r["content"])), budgets.searchMaxBytes)
        assert.isUndefined(r["totalLines"])
        assert.include(String(r["notice"]), String(101 + Number(r["lineCount"])))
      }
    },
    {
      name: "Read: a long line is clipped at MAX_LINE_CHARS and counted",
      tool: "Read",
      input: { path: "long.txt" },
      expect: (o) => {
        const r = okResult(o)
        assert.isTrue(r["truncated"])
        assert.isString(r["notice"])
      }
    },
    {
      name: "Read: binary content is refused",
      tool: "Read",
      input: { path: "image.bin" },
      expect: errorCode("TOOL_BINARY_CONTENT")
    },
    {
      name: "Read: a missing file",
      tool: "Read",
      input: { path: "missing.txt" },
      expect: errorCode("TOOL_NOT_FOUND")
    },
    {
      name: "Read: a directory",
      tool: "Read",
      input: { path: "src" },
      expect: errorCode("TOOL_IS_DIRECTORY")
    },
    {
      name: "Read: outside every root",
      tool: "Read",
      input: { path: "/etc/passwd" },
      expect: errorCode("TOOL_PATH_DENIED")
    }
  ],
  Glob: [
    {
      name: "Glob: capped at limit, newest first",
      tool: "Glob",
      input: { pattern: "src/**/*.ts", limit: 3 },
      expect: (o) => {
        const r = okResult(o)
        assert.deepStrictEqual(r["matches"], ["src/m09.ts", "src/m08.ts", "src/m07.ts"])
        assert.isTrue(r["truncated"])
      }
    }
  ],
  Grep: [
    {
      name: "Grep: stops at headLimit, newest first",
      tool: "Grep",
      input: { pattern: "TODO", outputMode: "content", headLimit: 2 },
      expect: (o) => {
        const r = okResult(o)
        const matches = r["matches"] as Array<Json>
        assert.deepStrictEqual(
          matches.map((m) => m["path"]),
          ["src/m09.ts", "src/m08.ts"]
        )
        assert.isTrue(r["truncated"])
      }
    },
    {
      name: "Grep: filesWithMatches (and its provider spelling)",
      tool: "Grep",
      input: { pattern: "TODO", outputMode: "files_with_matches", glob: "*.ts" },
      expect: (o) => {
        const r = okResult(o)
        assert.strictEqual((r["files"] as Array<string>).length, 10)
        assert.strictEqual(r["truncated"], false)
      }
    },
    {
      name: "Grep: an invalid regex",
      tool: "Grep",
      input: { pattern: "(unclosed" },
      expect: errorCode("TOOL_PATTERN_INVALID")
    }
  ],
  Bash: [
    {
      name: "Bash: stdout keeps its head with the marker and a spill file of its head and tail",
      tool: "Bash",
      input: { command: "seq 1 100000" },
      expect: (o) => {
        const r = okResult(o)
        const spill = (r["spill"] as Json)["stdout"] as string
        const copy = ((r["truncation"] as Json)["stdout"] as Json)["spillCopy"] as Json
        assert.isFalse(copy["complete"])
        const [head, tail] = copy["ranges"] as Array<{ readonly to: number; readonly from: number }>
        assert.isTrue(
          String(r["stdout"]).endsWith(
            `[truncated: kept the first 4000 of 100000 lines; limit 4000 lines / 96KB. First ${head!.to} and last ${588895 - tail!.from} of 588895 bytes saved to ${spill} — Grep it, or Read it with offset/limit.]`
          )
        )
        const saved = fs.readFileSync(spill, "utf8")
        assert.isTrue(saved.startsWith("1\n2\n") && saved.endsWith("\n100000\n"))
      }
    },
    {
      name: "Bash: stderr keeps its tail; the exit code is reported",
      tool: "Bash",
      input: { command: "seq 1 10000 >&2; echo 'fatal: the real problem' >&2; exit 3" },
      expect: (o) => {
        const r = okResult(o)
        assert.strictEqual(r["exitCode"], 3)
        assert.isTrue(
          String(r["stderr"]).startsWith(
            "[truncated: kept the last 4000 of 10001 lines; limit 4000 lines / 96KB."
          )
        )
        assert.isTrue(String(r["stderr"]).endsWith("fatal: the real problem\n"))
      }
    },
    {
      name: "Bash: a timeout outside 1–300 is refused before anything runs",
      tool: "Bash",
      input: { command: "touch should-not-exist", timeout: 301 },
      expect: (o) => {
        errorCode("TOOL_INVALID_INPUT")(o)
        assert.isFalse(fs.existsSync(path.join(dirs.workspace, "should-not-exist")))
      }
    },
    {
      name: "Bash: a timeout stops the tree and carries the partial result",
      tool: "Bash",
      // the whole tree (the shell, exec'ing the foreground sleep, and the background sleep) exists
      // and is recorded before `partial` is printed, so every surface stops the same two processes
      input: {
        command: `sleep 30 & echo "$$ $!" > '${trees}'/"$TOOLCAP_RUN_ID"; echo partial; exec sleep 30`,
        timeout: 2
      },
      expect: (o) => {
        errorCode("TOOL_TIMEOUT")(o)
        const error = (o as Outcome.Failure).error
        const partial = error["partial"] as Json
        assert.strictEqual(partial["stdout"], "partial\n")
        const runId = String(partial["runId"])
        const tree = fs.readFileSync(path.join(trees, runId), "utf8").trim().split(" ").map(Number)
        assert.strictEqual(tree.length, 2)
        const killed = error["killedPids"] as Array<number>
        if ((partial["termination"] as Json)["proc"] === "pid namespace") {
          // the pids the call recorded are its PID namespace's, the ones signalled the host's
          assert.strictEqual(new Set(killed).size, tree.length)
        } else {
          assert.sameMembers(killed, tree)
          for (const pid of tree) assert.isTrue(isGone(pid), `pid ${pid} of the tree is alive`)
        }
        assert.include(String(partial["output"]), "stopped the process tree: SIGTERM to 2 process(es)")
        assert.deepStrictEqual(processesWithCookie(runId), [])
        for (const pid of killed) assert.isTrue(isGone(pid), `pid ${pid} of the tree is alive`)
      }
    }
  ]
}

/** An input each tool accepts, typed against its spec's input Schema: the base of the refusals below. */
const accepted: { readonly [N in Specs.ToolName]: (typeof Specs.byName)[N]["input"]["Encoded"] } = {
  Read: { path: "notes/crlf.txt", offset: 1, limit: 1 },
  Glob: { pattern: "src/*.ts", path: ".", limit: 1 },
  Grep: { pattern: "TODO", glob: "*.ts", headLimit: 1 },
  Bash: { command: "echo accepted", timeout: 5 }
}

const refusedField = (field: string) => (outcome: Outcome.Outcome) => {
  errorCode("TOOL_INVALID_INPUT")(outcome)
  assert.strictEqual((outcome as Outcome.Failure).error["field"], field)
}

/**
 * The cases each spec implies: its accepted input succeeds; without a required field, with its
 * first field of the wrong type, or with a field its Schema does not have, the input is refused
 * naming that field.
 */
const generated = (spec: (typeof Specs.all)[number]): ReadonlyArray<Case> => {
  const input: Json = { ...accepted[spec.name] }
  const required = ToolDefs.inputSchema(spec.name, budgets).required ?? []
  const [first] = Object.keys(spec.input.fields)
  return [
    { name: `${spec.name}: its accepted input`, tool: spec.name, input, expect: (o) => void okResult(o) },
    ...required.map((field): Case => {
      const { [field]: _, ...without } = input
      return {
        name: `${spec.name}: without ${field}`,
        tool: spec.name,
        input: without,
        expect: refusedField(field)
      }
    }),
    {
      name: `${spec.name}: ${first} of the wrong type`,
      tool: spec.name,
      input: { ...input, [first!]: { wrong: true } },
      expect: refusedField(first!)
    },
    {
      name: `${spec.name}: a field it does not have`,
      tool: spec.name,
      input: { ...input, colour: "red" },
      expect: refusedField("colour")
    }
  ]
}

const cases: ReadonlyArray<Case> = Specs.all.flatMap((spec) => [...byTool[spec.name], ...generated(spec)])

/** What every answer must be, whatever the case: a success fits the result Schema, a failure carries one of the spec's codes. */
const fitsSpec = (tool: Specs.ToolName, outcome: Outcome.Outcome): void => {
  const spec = Specs.byName[tool]
  if (outcome.ok) {
    const decoded = Schema.decodeUnknownEither(spec.result as Schema.Schema<unknown, unknown>)(
      outcome.result,
      {
        onExcessProperty: "error"
      }
    )
    assert.isTrue(
      Either.isRight(decoded),
      `the ${tool} result fits its result Schema: ${String(Either.isLeft(decoded) ? decoded.left : "")}`
    )
  } else {
    assert.include(
      [...Object.keys(spec.errors), Outcome.abortedCode],
      outcome.error.code,
      `${tool} fails only with its spec's codes`
    )
  }
}

beforeAll(async () => {
  assertBuilt()
  fs.mkdirSync(trees)
  dirs.write("notes/crlf.txt", "one\r\ntwo\r\n")
  dirs.write("big.txt", Array.from({ length: bigLines }, (_, i) => line(i + 1)).join(""))
  dirs.write("long.txt", `${"y".repeat(budgets.maxLineChars * 3)}\nshort\n`)
  dirs.write("image.bin", Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 0, 1, 2, 3]))
  const base = Math.floor(Date.now() / 1000) - 1000
  for (let i = 0; i < 10; i++)
    dirs.write(`src/m${String(i).padStart(2, "0")}.ts`, `// TODO ${i}\n`, base + i * 10)
  surfaces.push(
    await effectSurface(),
    await promiseSurface(),
    await mcpSurface(),
    await aiSdkSurface(),
    cliSurface()
  )
}, 60_000)

afterAll(async () => {
  for (const surface of surfaces) await surface.close()
  dirs.remove()
})

describe("conformance: Effect layer, Promise API, MCP, AI SDK, CLI", () => {
  it.each(cases)("$name", async (testCase) => {
    const outcomes = await Promise.all(surfaces.map((surface) => surface.call(testCase.tool, testCase.input)))
    for (const [index, outcome] of outcomes.entries()) {
      try {
        fitsSpec(testCase.tool, outcome)
        testCase.expect(outcome)
      } catch (error) {
        throw new Error(
          `${surfaces[index]!.name}: ${error instanceof Error ? error.message : String(error)}`,
          {
            cause: error
          }
        )
      }
    }
    const reference = normalize(outcomes[0]!)
    for (const [index, outcome] of outcomes.entries()) {
      assert.deepStrictEqual(
        normalize(outcome),
        reference,
        `${surfaces[index]!.name} answers like ${surfaces[0]!.name}`
      )
    }
  })
})

describe("conformance: every surface lists the definitions derived from the specs", () => {
  it("Effect layer, Promise API, MCP and AI SDK list the same definitions", async () => {
    const expected = JSON.parse(JSON.stringify(ToolDefs.builtinToolDefs(budgets))) as unknown
    for (const surface of surfaces) {
      if (surface.definitions === undefined) continue
      const listed = (await surface.definitions()).map((def) => ({
        name: def.name,
        description: def.description,
        inputSchema: def.inputSchema
      }))
      assert.deepStrictEqual(JSON.parse(JSON.stringify(listed)), expected, surface.name)
    }
  })
})
