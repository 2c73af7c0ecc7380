import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import { Budgets, Marker } from "@toolcap/limits"
import { PromiseHost } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"
import { isGone, longTreeCommand, processesWithCookie, runIdOf } from "./fixtures/processes.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

const setup = async (options: Partial<PromiseHost.ToolHostOptions> = {}) => {
  const dirs = makeDirs()
  cleanups.push(dirs.remove)
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "promise-test",
    ...options
  })
  cleanups.push(host.close)
  return { dirs, host }
}

/** Resolves with the run id once the call printed it, so the test can look for its processes. */
const runIdFrom = () => {
  let resolve!: (runId: string) => void
  const runId = new Promise<string>((r) => (resolve = r))
  let seen = ""
  const onChunk = (chunk: { readonly stream: string; readonly data: string }) => {
    if (chunk.stream !== "stdout") return
    seen += chunk.data
    const id = runIdOf(seen)
    if (id !== undefined) resolve(id)
  }
  return { runId, onChunk }
}

describe("PromiseHost.createToolHost", () => {
  it("runs Bash with the bounded result, marker and spill file, and close() removes the scratch dir", async () => {
    const { host } = await setup()
    const outcome = await host.call("Bash", { command: "seq 1 100000" })
    assert.isTrue(outcome.ok)
    if (!outcome.ok) return
    const result = outcome.result
    assert.isTrue(result.truncated)
    const spill = result.spill.stdout
    assert.isString(spill)
    assert.isTrue(spill!.startsWith(host.sessionDir))
    assert.isTrue(fs.existsSync(spill!))
    // 588895 bytes do not fit the 512KB spill: the marker names the head and tail it holds
    const copy = result.truncation.stdout!.spillCopy!
    assert.isFalse(copy.complete)
    assert.isTrue(
      result.stdout.endsWith(
        `[truncated: kept the first ${host.budgets.shellStdoutMaxLines} of 100000 lines; limit ${host.budgets.shellStdoutMaxLines} lines / ${Marker.formatKB(host.budgets.shellStdoutMaxBytes)}KB. First ${copy.ranges[0]!.to} and last ${588895 - copy.ranges[1]!.from} of 588895 bytes saved to ${spill} — Grep it, or Read it with offset/limit.]`
      )
    )
    assert.strictEqual(host.modelText("Bash", outcome), result.output)
    await host.close()
    assert.isFalse(fs.existsSync(host.sessionDir))
  })

  it("answers tool errors as values with their stable code, never by rejecting", async () => {
    const { host } = await setup()
    const badTimeout = await host.call("Bash", {
      command: "true",
      timeout: host.budgets.bashTimeoutMaxSeconds + 1
    })
    assert.deepStrictEqual(badTimeout.ok ? "ok" : badTimeout.error.code, "TOOL_INVALID_INPUT")
    const unknownTool = await host.call("Edit", { path: "x" })
    assert.isFalse(unknownTool.ok)
    if (unknownTool.ok) return
    assert.strictEqual(unknownTool.error.code, "TOOL_INVALID_INPUT")
    assert.include(unknownTool.error.message, "Read, Glob, Grep, Bash")
  })

  it("a timeout answers TOOL_TIMEOUT with the partial result and the killed pids, all gone", async () => {
    const { host } = await setup()
    const outcome = await host.call("Bash", {
      command: "echo started; sleep 300 & sleep 300; echo never",
      timeout: 1
    })
    assert.isFalse(outcome.ok)
    if (outcome.ok) return
    assert.strictEqual(outcome.error.code, "TOOL_TIMEOUT")
    const partial = outcome.error["partial"] as { stdout: string }
    assert.strictEqual(partial.stdout, "started\n")
    const killed = outcome.error["killedPids"] as Array<number>
    assert.isAtLeast(killed.length, 2)
    assert.isTrue(killed.every(isGone))
  })

  it("aborting the signal stops the whole tree: TOOL_ABORTED, no process left with the cookie", async () => {
    const { host } = await setup()
    const controller = new AbortController()
    const { runId, onChunk } = runIdFrom()
    const chunks: Array<string> = []
    const pending = host.call(
      "Bash",
      { command: longTreeCommand },
      {
        signal: controller.signal,
        onChunk: (chunk) => {
          chunks.push(chunk.data)
          onChunk(chunk)
        }
      }
    )
    const id = await runId
    assert.isAtLeast(processesWithCookie(id).length, 3)
    controller.abort()
    const outcome = await pending
    const chunksAtEnd = chunks.length
    assert.isFalse(outcome.ok)
    if (outcome.ok) return
    assert.strictEqual(outcome.error.code, "TOOL_ABORTED")
    assert.include((outcome.error["partial"] as { stdout: string }).stdout, `run ${id}`)
    assert.deepStrictEqual(processesWithCookie(id), [])
    await new Promise((r) => setTimeout(r, 300))
    assert.strictEqual(chunks.length, chunksAtEnd, "no chunk after the end")
  })

  it("close() stops a running call (its caller gets TOOL_ABORTED) and leaves no process", async () => {
    const { host } = await setup()
    const { runId, onChunk } = runIdFrom()
    const pending = host.call("Bash", { command: longTreeCommand }, { onChunk })
    const id = await runId
    await host.close()
    const outcome = await pending
    assert.strictEqual(outcome.ok ? "ok" : outcome.error.code, "TOOL_ABORTED")
    assert.deepStrictEqual(processesWithCookie(id), [])
    let rejected = false
    await host.call("Bash", { command: "true" }).catch(() => (rejected = true))
    assert.isTrue(rejected, "a closed host refuses new calls")
  })

  it("persists checkpoints under the data dir: a second host of the session reads the latest back", async () => {
    const { dirs, host } = await setup()
    const transcript = {
      messages: [
        { role: "user", id: "u1", text: "first question" },
        { role: "assistant", id: "a1", text: "", toolCalls: [{ id: "c1", name: "Read", arguments: "{}" }] },
        { role: "tool", id: "t1", callId: "c1", text: "a tool result that must not cross" },
        { role: "user", id: "u2", text: "second question" }
      ]
    }
    const none = await host.latestCheckpoint()
    assert.deepStrictEqual(none, { ok: true, result: null })
    const saved = await host.checkpoint(transcript, { summary: "what happened" })
    assert.isTrue(saved.ok)
    if (!saved.ok) return
    assert.deepStrictEqual(
      saved.result.checkpoint.context.map((entry) => [entry.origin, entry.message.id]),
      [
        ["retained", "u1"],
        ["retained", "u2"],
        ["summary", "checkpoint:summary"]
      ]
    )
    await host.close()
    const again = await PromiseHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "promise-test"
    })
    cleanups.push(again.close)
    const latest = await again.latestCheckpoint()
    assert.deepStrictEqual(latest, saved)
    const invalid = await again.checkpoint({ messages: [{ role: "robot", id: "x", text: "" }] })
    assert.strictEqual(invalid.ok ? "ok" : invalid.error.code, "CHECKPOINT_INVALID")
  })

  it("budget overrides reach both the enforcement and the tool descriptions", async () => {
    const { host } = await setup({ budgets: { shellStdoutMaxLines: 10 } })
    const bash = host.definitions.find((def) => def.name === "Bash")!
    assert.include(bash.description, "first 10 lines")
    const outcome = await host.call("Bash", { command: "seq 1 50" })
    assert.isTrue(outcome.ok)
    if (!outcome.ok) return
    assert.include((outcome.result as { stdout: string }).stdout, "kept the first 10 of 50 lines")
  })

  it("the compact profile reaches the enforcement and the descriptions, and a field still overrides it", async () => {
    const { host } = await setup({ profile: "compact", budgets: { grepHeadLimit: 7 } })
    assert.strictEqual(host.budgets.readWindowLines, Budgets.profiles.compact.readWindowLines)
    assert.strictEqual(host.budgets.grepHeadLimit, 7)
    const bash = host.definitions.find((def) => def.name === "Bash")!
    assert.include(bash.description, "its first 500 lines / 28KB and its last 500 lines / 28KB")
    assert.include(bash.description, "Output over 4 KB is digested")
    // compact digests Bash output: 2000 near-identical lines fold between the first and the last
    const digested = await host.call("Bash", { command: "seq 1 2000" })
    assert.isTrue(digested.ok)
    if (!digested.ok) return
    // the model reads the digest in `output`; `stdout` keeps the raw excerpt
    assert.include(digested.result.output, "[… 1,998 more lines like these, raw lines 2–1999 …]")
    const outcome = await host.call("Bash", { command: "seq 1 2000", digest: false })
    assert.isTrue(outcome.ok)
    if (!outcome.ok) return
    assert.include(outcome.result.stdout, "kept the first 500 and the last 500 of 2000 lines")
    assert.isTrue(outcome.result.stdout.endsWith("1999\n2000\n"))
  })

  it("modelText gives the model plain text: Read's lines, and CODE: message for an error", async () => {
    const { dirs, host } = await setup()
    fs.writeFileSync(`${dirs.workspace}/a.ts`, 'const s = "hello\tworld";\n')
    const read = await host.call("Read", { path: "a.ts" })
    assert.strictEqual(host.modelText("Read", read), 'const s = "hello\tworld";\n')
    const missing = await host.call("Read", { path: "nope.ts" })
    assert.isTrue(host.modelText("Read", missing).startsWith("TOOL_NOT_FOUND: "))
  })

  it("an unknown profile is refused, naming the presets", async () => {
    const dirs = makeDirs()
    cleanups.push(dirs.remove)
    const options = {
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "ok",
      profile: "tiny" as never
    }
    const refused = await PromiseHost.createToolHost(options).then(
      (host) => host.close().then(() => undefined),
      (error: unknown) => error
    )
    assert.instanceOf(refused, Budgets.BudgetsInvalid)
    assert.include(String((refused as Error).message), "spec, compact")
  })

  it("rejects a workspace that is not a directory, a bad session id, and an invalid budget", async () => {
    const dirs = makeDirs()
    cleanups.push(dirs.remove)
    const base = { workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId: "ok" }
    const reasons: Array<string> = []
    for (const options of [
      { ...base, workspace: `${dirs.workspace}/missing` },
      { ...base, sessionId: "../escape" },
      { ...base, budgets: { globLimit: 0 } }
    ]) {
      await PromiseHost.createToolHost(options).then(
        (host) => host.close().then(() => reasons.push("resolved")),
        (error: unknown) => reasons.push(error instanceof Error ? error.name : String(error))
      )
    }
    assert.deepStrictEqual(reasons, ["ToolPathDenied", "ToolInvalidInput", "BudgetsInvalid"])
  })

  it("a missing data dir or workspace is named in a clear error, not a TypeError from deep inside", async () => {
    const dirs = makeDirs()
    cleanups.push(dirs.remove)
    const messages: Array<string> = []
    for (const options of [
      { workspace: dirs.workspace, sessionId: "s" },
      { dataDir: dirs.dataDir, sessionId: "s" }
    ]) {
      await PromiseHost.createToolHost(options as unknown as PromiseHost.ToolHostOptions).then(
        (host) => host.close().then(() => messages.push("resolved")),
        (error: unknown) => messages.push(error instanceof Error ? error.message : String(error))
      )
    }
    assert.match(messages[0]!, /^createToolHost: options\.dataDir must be a non-empty string/)
    assert.match(messages[1]!, /^createToolHost: options\.workspace must be a non-empty string/)
  })

  it("maxConcurrentCalls reaches the host's admission (results report the limit and the wait); 0 is refused naming it", async () => {
    const { host } = await setup({ maxConcurrentCalls: 1 })
    const [first, second] = await Promise.all([
      host.call("Bash", { command: "sleep 0.5" }),
      host.call("Bash", { command: "true" })
    ])
    assert.isTrue(first.ok && second.ok)
    const admissions = [first, second].map((outcome) =>
      outcome.ok
        ? (outcome.result as { admission?: { waitedMs: number; limit: number } }).admission
        : undefined
    )
    assert.deepStrictEqual(
      admissions.map((admission) => admission?.limit),
      [1, 1]
    )
    // one of the two waited for the other's slot
    assert.isAtLeast(Math.max(...admissions.map((admission) => admission!.waitedMs)), 400)
    const dirs = makeDirs()
    cleanups.push(dirs.remove)
    const refused = await PromiseHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "s",
      maxConcurrentCalls: 0
    }).then(
      (other) => other.close().then(() => "resolved"),
      (error: unknown) => (error instanceof Error ? error.message : String(error))
    )
    assert.match(
      refused,
      /^createToolHost: options\.maxConcurrentCalls must be a whole number of at least 1, got 0/
    )
  })
})
