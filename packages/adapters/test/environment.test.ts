// Bash's environment policy on the host surfaces (rules E2): the Promise API's `environment`
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

describe("the environment policy on the Promise API", () => {
  for (const [label, environment, expected] of [
    ["by default ANTHROPIC_API_KEY is not in a call's environment", undefined, "unset|cookie"],
    [
      "with an explicit include ANTHROPIC_API_KEY is in it",
      { include: ["ANTHROPIC_API_KEY"] },
      `${KEY}|cookie`
    ]
  ] as const) {
    it(label, async () => {
      const host = await PromiseHost.createToolHost({
        workspace: dirs.workspace,
        dataDir: dirs.dataDir,
        sessionId: "env-promise",
        environment
      })
      try {
        const outcome = await host.call("Bash", PRINT)
        assert.isTrue(outcome.ok)
        if (outcome.ok) assert.strictEqual(outcome.result.stdout, expected)
      } finally {
        await host.close()
      }
    })
  }

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
  for (const [label, options, expected] of [
    [
      "by default ANTHROPIC_API_KEY in the server's environment is not in a call's",
      undefined,
      "unset|cookie"
    ],
    ["with an explicit include it is", { environment: { include: ["ANTHROPIC_API_KEY"] } }, `${KEY}|cookie`]
  ] as const) {
    it(
      label,
      async () => {
        const server = await connect(dirs.workspace, dirs.dataDir, "env-mcp", {
          env: { ANTHROPIC_API_KEY: KEY },
          ...(options === undefined ? {} : { options })
        })
        try {
          const result = (await server.client.callTool({ name: "Bash", arguments: PRINT })) as CallToolResult
          const structured = result.structuredContent as { ok: boolean; result: { stdout: string } }
          assert.isTrue(structured.ok)
          assert.strictEqual(structured.result.stdout, expected)
        } finally {
          await server.client.close()
        }
      },
      60_000
    )
  }
})
