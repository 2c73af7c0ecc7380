// Bash's environment policy on the host surfaces (rules B14): the Promise API's `environment`
// option and the MCP server's (a real stdio child process whose own environment holds the
// secret). `ANTHROPIC_API_KEY` in the host's environment is not in a call's by default and is
// with an explicit include; a bad policy is refused before the host starts.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { PromiseHost } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"
import { connect } from "./fixtures/mcpClient.js"

const KEY = "sk-ant-surface-0001"
const dirs = makeDirs("toolcap-env-")

beforeAll(() => {
  process.env["ANTHROPIC_API_KEY"] = KEY
})
afterAll(() => {
  delete process.env["ANTHROPIC_API_KEY"]
  dirs.remove()
})

const PRINT = { command: 'printf "%s|%s" "${ANTHROPIC_API_KEY-unset}" "${TOOLCAP_RUN_ID:+cookie}"' }

/** What a Promise API host's Bash call sees of the secret and the cookie. */
const promiseCall = async (environment?: PromiseHost.ToolHostOptions["environment"]) => {
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "env-promise",
    environment
  })
  try {
    const outcome = await host.call("Bash", PRINT)
    assert.isTrue(outcome.ok)
    return outcome.ok ? outcome.result.stdout : ""
  } finally {
    await host.close()
  }
}

/** What a real MCP server's Bash call sees, the secret in the server's own environment. */
const mcpCall = async (options?: Record<string, unknown>) => {
  const server = await connect(dirs.workspace, dirs.dataDir, "env-mcp", {
    env: { ANTHROPIC_API_KEY: KEY },
    ...(options === undefined ? {} : { options })
  })
  try {
    const result = (await server.client.callTool({ name: "Bash", arguments: PRINT })) as CallToolResult
    const structured = result.structuredContent as { ok: boolean; result: { stdout: string } }
    assert.isTrue(structured.ok)
    return structured.result.stdout
  } finally {
    await server.client.close()
  }
}

describe("the environment policy on the Promise API", () => {
  it("by default ANTHROPIC_API_KEY is not in a call's environment", async () => {
    assert.strictEqual(await promiseCall(), "unset|cookie")
  })

  it("with an explicit include ANTHROPIC_API_KEY is in it", async () => {
    assert.strictEqual(await promiseCall({ include: ["ANTHROPIC_API_KEY"] }), `${KEY}|cookie`)
  })

  it("a bad policy rejects createToolHost with ENV_POLICY_INVALID naming the field", async () => {
    const error = await PromiseHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "env-bad",
      environment: { inherit: "some" as "all" }
    }).then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string }
    )
    assert.strictEqual(error?.code, "ENV_POLICY_INVALID")
    assert.match(error?.message ?? "", /inherit/)
  })
})

describe("the environment policy on the MCP server", () => {
  it("by default ANTHROPIC_API_KEY in the server's environment is not in a call's", async () => {
    assert.strictEqual(await mcpCall(), "unset|cookie")
  }, 60_000)

  it("with an explicit include it is", async () => {
    assert.strictEqual(await mcpCall({ environment: { include: ["ANTHROPIC_API_KEY"] } }), `${KEY}|cookie`)
  }, 60_000)
})
