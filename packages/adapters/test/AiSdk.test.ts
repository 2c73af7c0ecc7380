import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { generateText, simulateReadableStream, stepCountIs, streamText } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { PromiseHost } from "@toolcap/adapters"
import * as AiSdk from "@toolcap/adapters/AiSdk"
import { makeDirs } from "./fixtures/dirs.js"
import { longTreeCommand, processesWithCookie, runIdOf } from "./fixtures/processes.js"

const dirs = makeDirs("toolcap-ai-")
let host: PromiseHost.PromiseToolHost

beforeAll(async () => {
  dirs.write("notes.txt", "alpha\nbeta\n")
  host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "ai"
  })
})
afterAll(async () => {
  await host?.close()
  dirs.remove()
})

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 }
}

/** A mock model that calls one tool, then answers with text once it has seen the result. */
const modelCalling = (toolName: string, input: unknown) =>
  new MockLanguageModelV3({
    doGenerate: async (options) => {
      const answered = options.prompt.some((message) => message.role === "tool")
      return answered
        ? {
            content: [{ type: "text", text: "done" }],
            finishReason: { unified: "stop", raw: "stop" },
            usage,
            warnings: []
          }
        : {
            content: [{ type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) }],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage,
            warnings: []
          }
    }
  })

/** The tool result part the model received in its second request. */
const seenByModel = (model: MockLanguageModelV3) => {
  const second = model.doGenerateCalls[1]!
  const toolMessage = second.prompt.find((message) => message.role === "tool")!
  const part = (
    toolMessage.content as Array<{ type: string; output?: { type: string; value: unknown } }>
  ).find((p) => p.type === "tool-result")!
  return part.output!
}

describe("AiSdk.tools", () => {
  it("exposes the four tools with descriptions and input schemas from the definitions", async () => {
    const tools = await AiSdk.tools(host)
    assert.deepStrictEqual(Object.keys(tools), ["Read", "Glob", "Grep", "Bash"])
    for (const def of host.definitions) {
      assert.strictEqual(tools[def.name].description, def.description)
    }
  })

  it("the mock model drives a Bash call: the model reads the bounded output with its marker", async () => {
    const chunks: Array<string> = []
    const model = modelCalling("Bash", { command: "seq 1 10000" })
    const result = await generateText({
      model,
      prompt: "count",
      tools: await AiSdk.tools(host, { onChunk: (chunk) => chunks.push(chunk.stream) }),
      stopWhen: stepCountIs(3)
    })
    assert.strictEqual(result.text, "done")
    const toolResult = result.steps[0]!.toolResults[0]!
    assert.strictEqual(toolResult.toolName, "Bash")
    const outcome = toolResult.output as { ok: boolean; result: { output: string; truncated: boolean } }
    assert.isTrue(outcome.ok)
    assert.isTrue(outcome.result.truncated)
    const seen = seenByModel(model)
    assert.strictEqual(seen.type, "text")
    assert.strictEqual(seen.value, outcome.result.output)
    assert.include(
      String(seen.value),
      "[truncated: kept the first 4000 of 10000 lines; limit 4000 lines / 96KB."
    )
    assert.isAbove(chunks.length, 0)
  })

  it("a tool error reaches the model as error text led by its stable code", async () => {
    const model = modelCalling("Bash", { command: "true", timeout: 301 })
    const result = await generateText({
      model,
      prompt: "x",
      tools: await AiSdk.tools(host),
      stopWhen: stepCountIs(3)
    })
    const outcome = result.steps[0]!.toolResults[0]!.output as { ok: boolean; error: { code: string } }
    assert.strictEqual(outcome.error.code, "TOOL_INVALID_INPUT")
    const seen = seenByModel(model)
    assert.strictEqual(seen.type, "error-text")
    assert.match(String(seen.value), /^TOOL_INVALID_INPUT: /)
  })

  it("Read through the mock model gives the model the file's lines as plain text, not JSON", async () => {
    const model = modelCalling("Read", { path: "notes.txt" })
    await generateText({ model, prompt: "read", tools: await AiSdk.tools(host), stopWhen: stepCountIs(3) })
    const seen = seenByModel(model)
    assert.strictEqual(seen.type, "text")
    assert.strictEqual(seen.value, "alpha\nbeta\n")
  })

  it("with lineNumbers the model reads Read's lines numbered as cat -n does", async () => {
    const model = modelCalling("Read", { path: "notes.txt" })
    const tools = await AiSdk.tools(host, { text: { lineNumbers: true } })
    await generateText({ model, prompt: "read", tools, stopWhen: stepCountIs(3) })
    assert.deepStrictEqual(seenByModel(model), { type: "text", value: "     1\talpha\n     2\tbeta" })
  })
})

describe("AiSdk Bash streams preliminary results", () => {
  it("a streamText run shows Bash's output so far before the final result", async () => {
    const command = "echo first; sleep 0.3; echo second; sleep 0.3; echo third"
    let step = 0
    const model = new MockLanguageModelV3({
      doStream: async () => {
        step += 1
        const chunks =
          step === 1
            ? [
                {
                  type: "tool-call",
                  toolCallId: "call-1",
                  toolName: "Bash",
                  input: JSON.stringify({ command })
                },
                { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage }
              ]
            : [
                { type: "text-start", id: "t" },
                { type: "text-delta", id: "t", delta: "done" },
                { type: "text-end", id: "t" },
                { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage }
              ]
        return { stream: simulateReadableStream({ chunks: chunks as Array<never> }) }
      }
    })
    const run = streamText({
      model,
      prompt: "run it",
      tools: await AiSdk.tools(host),
      stopWhen: stepCountIs(3)
    })
    const results: Array<{ preliminary: boolean; output: { ok: boolean; result: Record<string, unknown> } }> =
      []
    for await (const part of run.fullStream) {
      if (part.type === "tool-result") {
        results.push({
          preliminary: part.preliminary === true,
          output: part.output as (typeof results)[number]["output"]
        })
      }
    }
    const preliminary = results.filter((r) => r.preliminary)
    const final = results.filter((r) => !r.preliminary)
    assert.strictEqual(final.length, 1)
    assert.isAbove(preliminary.length, 0)
    assert.strictEqual(results.at(-1), final[0], "the final result comes last")
    assert.isTrue(preliminary[0]!.output.result["running"])
    assert.include(String(preliminary[0]!.output.result["stdout"]), "first\n")
    assert.notInclude(String(preliminary[0]!.output.result["stdout"]), "third", "shown while it still ran")
    assert.strictEqual(final[0]!.output.result["stdout"], "first\nsecond\nthird\n")
  })
})

/** Bash's `execute` of the AI SDK tools: what the SDK iterates. */
const bashExecute = async () => {
  const tools = await AiSdk.tools(host)
  return (input: unknown) =>
    tools.Bash.execute!(input, { toolCallId: "stream-1", messages: [] }) as AsyncIterable<{
      ok: boolean
      result: Record<string, unknown>
    }>
}

describe("AiSdk Bash as a stream consumed at the edge", () => {
  it("a consumer that stops pulling stops Bash's whole process tree before its iterator returns", async () => {
    const execute = await bashExecute()
    let runId: string | undefined
    for await (const value of execute({ command: longTreeCommand })) {
      runId = runIdOf(String(value.result["stdout"]))
      if (runId !== undefined) break
    }
    assert.isDefined(runId)
    assert.deepStrictEqual(processesWithCookie(runId!), [])
  })

  it("a host closed under a running call ends its iterator with TOOL_ABORTED, never its last progress as the result", async () => {
    const own = makeDirs("toolcap-ai-close-")
    const closing = await PromiseHost.createToolHost({
      workspace: own.workspace,
      dataDir: own.dataDir,
      sessionId: "ai-close"
    })
    try {
      const tools = await AiSdk.tools(closing)
      const iterable = tools.Bash.execute!(
        { command: "echo started; sleep 30" },
        { toolCallId: "close-1", messages: [] }
      ) as AsyncIterable<{ ok: boolean; result?: Record<string, unknown>; error?: { code: string } }>
      const seen: Array<{ ok: boolean; result?: Record<string, unknown>; error?: { code: string } }> = []
      for await (const value of iterable) {
        seen.push(value)
        if (String(value.result?.["stdout"]).includes("started")) void closing.close()
      }
      const last = seen.at(-1)!
      assert.isFalse(last.ok, "the SDK would take a progress value for the result")
      assert.strictEqual(last.error?.code, "TOOL_ABORTED")
      assert.isTrue(seen.slice(0, -1).every((value) => value.result?.["running"] === true))
    } finally {
      await closing.close()
      own.remove()
    }
  })

  it("a consumer slower than the output is owed at most one progress value, the newest", async () => {
    const execute = await bashExecute()
    const seen: Array<{ ok: boolean; result: Record<string, unknown> }> = []
    for await (const value of execute({
      command: "for i in $(seq 1 50); do echo line $i; sleep 0.01; done"
    })) {
      seen.push(value)
      // a consumer that takes 150 ms per value: 5 lines (or more) arrive while it is busy
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
    const final = seen.at(-1)!
    assert.strictEqual(final.result["exitCode"], 0)
    const progress = seen.slice(0, -1).map((value) => String(value.result["stdout"]))
    assert.isBelow(progress.length, 50, "chunks were folded, not queued one by one")
    // each progress value holds everything so far: the newest, never a stale, partial one
    for (const [i, stdout] of progress.entries()) {
      assert.isTrue(stdout.startsWith("line 1\n"))
      if (i > 0) assert.isAtLeast(stdout.length, progress[i - 1]!.length)
    }
  })
})
