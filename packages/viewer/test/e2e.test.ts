import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { PromiseHost } from "@toolcap/adapters"
import { Marker } from "@toolcap/limits"
import { Viewer } from "@toolcap/viewer"
import { launch, screenshotDir } from "./browser.js"
import { makeDirs } from "./fixtures.js"

let browser: Browser
let closeBrowser: () => Promise<Array<number>>
beforeAll(async () => {
  fs.mkdirSync(screenshotDir, { recursive: true })
  ;({ browser, close: closeBrowser } = await launch())
}, 60_000)
afterAll(async () => {
  const left = await closeBrowser()
  assert.deepStrictEqual(left, [], "no Chromium process outlives the tests")
})

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

/** A data dir and workspace, a viewer on them, a host feeding it, and a page showing it. */
const setup = async (sessionId: string) => {
  const dirs = makeDirs()
  cleanups.push(dirs.remove)
  const viewer = await Viewer.start({ workspace: dirs.workspace, dataDir: dirs.dataDir })
  cleanups.push(viewer.close)
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId,
    observer: viewer.observer
  })
  cleanups.push(host.close)
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  cleanups.push(() => context.close())
  const page = await context.newPage()
  await page.goto(viewer.url)
  await page.locator(".connection", { hasText: "live" }).waitFor()
  return { dirs, viewer, host, page }
}

const paneText = (page: Page, stream: "stdout" | "stderr") =>
  page.locator(`.call[data-tool="Bash"] .pane-${stream} .pane-body`).first().textContent()

describe("viewer in Chromium", () => {
  it("a Bash call printing 300,000 lines streams into the page while it runs, ends with the marker, and the marker opens the spill file where a search finds line 5,000", async () => {
    const { dirs, host, page } = await setup("e2e-stream")
    // the command waits halfway for a file the test creates, so "while it runs" is not a race
    const command = "seq 1 150000; while [ ! -e go ]; do sleep 0.05; done; seq 150001 300000"
    const call = host.call("Bash", { command })
    const stdoutPane = page.locator('.call[data-tool="Bash"] .pane-stdout .pane-body')
    await stdoutPane.filter({ hasText: /\n150000\n$/ }).waitFor()
    const callView = page.locator('.call[data-tool="Bash"]')
    assert.strictEqual(await callView.locator(".status").textContent(), "running")
    assert.isFalse(await callView.evaluate((element) => element.classList.contains("ended")))
    assert.match(
      (await callView.locator(".pane-stdout .chunk").last().getAttribute("title")) ?? "",
      /^seq \d+(–\d+)?$/
    )
    fs.writeFileSync(path.join(dirs.workspace, "go"), "")
    const outcome = await call
    assert.isTrue(outcome.ok)
    if (!outcome.ok) return
    const spill = outcome.result.spill.stdout!
    await page.locator(".call.ended").waitFor()
    assert.isTrue((await paneText(page, "stdout"))?.endsWith("\n300000\n"))
    const marker = callView.locator("button.marker")
    assert.strictEqual(
      await marker.textContent(),
      `[truncated: kept the first 4000 of 300000 lines; limit 4000 lines / 96KB. ${Marker.nextStep({ path: spill, ...outcome.result.truncation.stdout!.spillCopy! })}]`
    )
    assert.deepInclude(JSON.parse((await callView.locator(".truncation").textContent()) ?? ""), {
      stdout: outcome.result.truncation.stdout
    })
    await marker.scrollIntoViewIfNeeded()
    await page.screenshot({ path: path.join(screenshotDir, "live-calls.png") })

    await marker.click()
    await page.locator("#view-output").waitFor({ state: "visible" })
    assert.strictEqual(await page.locator("#file-path").inputValue(), spill)
    await page.locator('.line[data-line="1"]').waitFor()
    assert.strictEqual(await page.locator('.line[data-line="1"] .text').textContent(), "1")
    await page.locator("#search-pattern").fill("^5000$")
    await page.keyboard.press("Enter")
    const hit = page.locator('.hit[data-line="5000"]')
    await hit.waitFor()
    assert.strictEqual(await page.locator(".hit-count").textContent(), "1 match")
    // how ripgrep was guarded, as the Grep result reports it
    assert.match(
      (await page.locator(".search-guard").textContent()) ?? "",
      /^ripgrep (confined by Landlock|not confined), memory ≤ 1024 MiB$/
    )
    await hit.click()
    const target = page.locator('.line.target[data-line="5000"]')
    await target.waitFor()
    assert.strictEqual(await target.locator(".text").textContent(), "5000")
    assert.strictEqual(await target.locator(".ln").textContent(), "5000")
    await page.screenshot({ path: path.join(screenshotDir, "full-output.png") })
  })

  it("a timed-out call shows TOOL_TIMEOUT and the pids it stopped", async () => {
    const { host, page } = await setup("e2e-timeout")
    const outcome = await host.call("Bash", { command: "echo started; sleep 30 & sleep 30", timeout: 1 })
    assert.isFalse(outcome.ok)
    if (outcome.ok) return
    assert.strictEqual(outcome.error.code, "TOOL_TIMEOUT")
    const pids = outcome.error["killedPids"] as Array<number>
    assert.isAtLeast(pids.length, 2)
    const callView = page.locator(".call.ended")
    await callView.waitFor()
    assert.strictEqual(await callView.locator(".status").textContent(), "TOOL_TIMEOUT")
    assert.strictEqual(
      await callView.locator(".stopped-pids").textContent(),
      `stopped pids: ${pids.join(", ")}`
    )
    assert.include(await callView.locator(".exit").textContent(), "timed out")
    // the guards the call ran under, as its result reports them
    const termination = (
      outcome.error["partial"] as { termination: { containment: string; landlockScopes: boolean } }
    ).termination
    const guards = (await callView.locator(".guards").textContent()) ?? ""
    assert.include(guards, `guards: ${termination.containment} tier`)
    assert.include(guards, termination.landlockScopes ? "· Landlock scopes" : "· no Landlock scopes")
    assert.strictEqual(await paneText(page, "stdout"), "started\n")
  })

  it("a checkpoint shows the crossing message's 75/25 head and tail around the marker, and the batch before and after", async () => {
    const { host, page } = await setup("e2e-checkpoint")
    const crossing = `HEAD-START ${"alpha ".repeat(30_000)}TAIL-END`
    const transcript = {
      messages: [
        { role: "user", id: "u1", text: crossing },
        { role: "user", id: "u2", text: "Why does the build fail?" },
        {
          role: "assistant",
          id: "a1",
          text: "Looking.",
          toolCalls: [
            { id: "c1", name: "Bash", arguments: "{}" },
            { id: "c2", name: "Read", arguments: "{}" }
          ]
        },
        { role: "tool", id: "t1", callId: "c1", text: "beta ".repeat(40_000) },
        { role: "tool", id: "t2", callId: "c2", text: "small result" }
      ]
    }
    const saved = await host.checkpoint(transcript)
    assert.isTrue(saved.ok)
    if (!saved.ok) return
    const { checkpoint } = saved.result
    const cut = checkpoint.cut!
    assert.strictEqual(cut.messageId, "u1")

    // the tabs are keyboard-driven: arrows move between views
    await page.locator("#tab-live").focus()
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    assert.strictEqual(await page.locator("#tab-checkpoints").getAttribute("aria-selected"), "true")
    assert.isTrue(
      await page.locator("#tab-checkpoints").evaluate((tab) => tab === tab.ownerDocument.activeElement)
    )
    assert.isTrue(await page.locator("#view-checkpoints").isVisible())
    assert.isFalse(await page.locator("#view-live").isVisible())
    await page.locator("#session").fill("e2e-checkpoint")
    await page.keyboard.press("Enter")
    const entry = page.locator('.entry.crossing[data-message-id="u1"]')
    await entry.waitFor()
    const kept = cut.headTokens + cut.tailTokens
    assert.strictEqual(
      await entry.locator(".cut-share").textContent(),
      `head ${Math.round((cut.headTokens / kept) * 100)}% / tail ${Math.round((cut.tailTokens / kept) * 100)}%`
    )
    assert.strictEqual(await entry.locator(".cut-share").textContent(), "head 75% / tail 25%")
    const head = (await entry.locator(".cut-head").textContent()) ?? ""
    const tail = (await entry.locator(".cut-tail").textContent()) ?? ""
    assert.isTrue(head.startsWith("HEAD-START alpha"))
    assert.isTrue(tail.endsWith("alpha TAIL-END"))
    assert.strictEqual(head.length, cut.headLength)
    assert.strictEqual(tail.length, cut.tailLength)
    assert.strictEqual(
      await entry.locator(".checkpoint-marker").textContent(),
      "[checkpoint truncated: this message crossed the retained context budget]"
    )
    const batch = checkpoint.batch!
    const big = batch.results.find((result) => result.callId === "c1")!
    const row = page.locator('.batch tr[data-call-id="c1"]')
    assert.strictEqual(await row.locator(".before").textContent(), big.originalTokens.toLocaleString("en-US"))
    assert.strictEqual(await row.locator(".after").textContent(), big.tokens.toLocaleString("en-US"))
    assert.isBelow(big.tokens, big.originalTokens)
    await entry.locator(".checkpoint-marker").scrollIntoViewIfNeeded()
    await page.screenshot({ path: path.join(screenshotDir, "checkpoints.png") })
  })
})
