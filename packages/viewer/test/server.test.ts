import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { PromiseHost } from "@toolcap/adapters"
import * as Guard from "../src/internal/guard.js"
import { get, makeDirs, startViewer } from "./fixtures.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

const setup = async () => {
  const dirs = makeDirs()
  cleanups.push(dirs.remove)
  const viewer = await startViewer(dirs)
  cleanups.push(viewer.close)
  const auth = { cookie: `${Guard.cookieName(viewer.token)}=${viewer.token}` }
  return { dirs, viewer, auth }
}

describe("viewer server: who may ask", () => {
  it("binds 127.0.0.1 and trades the printed URL's token for an HttpOnly SameSite=Strict cookie", async () => {
    const { viewer, auth } = await setup()
    assert.match(viewer.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/)
    const first = await get(viewer.port, new URL(viewer.url).pathname + new URL(viewer.url).search)
    assert.strictEqual(first.status, 303)
    assert.strictEqual(first.headers.location, "/")
    const cookie = String(first.headers["set-cookie"])
    assert.include(cookie, `${Guard.cookieName(viewer.token)}=${viewer.token}`)
    assert.include(cookie, "HttpOnly")
    assert.include(cookie, "SameSite=Strict")
    const page = await get(viewer.port, "/", auth)
    assert.strictEqual(page.status, 200)
    assert.include(page.body, "/app.js")
    assert.include(String(page.headers["content-security-policy"]), "default-src 'none'")
    const script = await get(viewer.port, "/app.js", auth)
    assert.strictEqual(script.status, 200)
  })

  it("refuses a request without the token or with a wrong one, page and API alike", async () => {
    const { viewer } = await setup()
    for (const target of [
      "/",
      "/app.js",
      "/api/info",
      "/api/events",
      "/api/read?path=a.txt",
      "/api/checkpoints?session=s"
    ]) {
      const bare = await get(viewer.port, target)
      assert.strictEqual(bare.status, 401, target)
      assert.include(bare.body, "VIEWER_REFUSED")
    }
    const wrong = await get(viewer.port, "/api/info", {
      cookie: `${Guard.cookieName(viewer.token)}=${"x".repeat(43)}`
    })
    assert.strictEqual(wrong.status, 401)
    // the token with its last character changed (to "A", or "B" when it already ends in "A")
    const changed = viewer.token.endsWith("A") ? "B" : "A"
    const wrongInUrl = await get(viewer.port, `/api/info?token=${viewer.token.slice(0, -1)}${changed}`)
    assert.strictEqual(wrongInUrl.status, 401)
  })

  it("refuses a foreign Origin, a cross-site fetch, a rebound Host name and any write", async () => {
    const { viewer, auth } = await setup()
    const foreign = await get(viewer.port, "/api/info", { ...auth, origin: "http://evil.example" })
    assert.strictEqual(foreign.status, 403)
    const otherPort = await get(viewer.port, "/api/info", {
      ...auth,
      origin: `http://127.0.0.1:${viewer.port + 1}`
    })
    assert.strictEqual(otherPort.status, 403)
    const crossSite = await get(viewer.port, "/api/info", { ...auth, "sec-fetch-site": "cross-site" })
    assert.strictEqual(crossSite.status, 403)
    const rebound = await get(viewer.port, "/api/info", { ...auth, host: `evil.example:${viewer.port}` })
    assert.strictEqual(rebound.status, 421)
    const post = await get(viewer.port, "/api/info", auth, "POST")
    assert.strictEqual(post.status, 405)
    const own = await get(viewer.port, "/api/info", { ...auth, origin: `http://127.0.0.1:${viewer.port}` })
    assert.strictEqual(own.status, 200)
    const localhost = await get(viewer.port, "/api/info", { ...auth, host: `localhost:${viewer.port}` })
    assert.strictEqual(localhost.status, 200)
  })

  it("refuses ../../etc/passwd and any file outside the workspace and the data dir's scratch, through Read's roots", async () => {
    const { dirs, viewer, auth } = await setup()
    fs.writeFileSync(path.join(dirs.dataDir, "checkpoints.sqlite"), "not for the page")
    for (const target of [
      "../../etc/passwd",
      "/etc/passwd",
      "../data/checkpoints.sqlite",
      path.join(dirs.dataDir, "scratch", "..", "checkpoints.sqlite")
    ]) {
      for (const api of ["read", "grep"]) {
        const answer = await get(
          viewer.port,
          `/api/${api}?path=${encodeURIComponent(target)}&pattern=root`,
          auth
        )
        assert.strictEqual(answer.status, 403, `${api} ${target}`)
        assert.strictEqual(JSON.parse(answer.body).error.code, "TOOL_PATH_DENIED")
      }
    }
    fs.symlinkSync("/etc/passwd", path.join(dirs.workspace, "passwd-link"))
    const viaLink = await get(viewer.port, "/api/read?path=passwd-link", auth)
    assert.strictEqual(viaLink.status, 403)
  })
})

describe("viewer server: what it serves", () => {
  it("pages a spill file through Read windows and finds a line through Grep", async () => {
    const { dirs, viewer, auth } = await setup()
    const host = await PromiseHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId: "s1"
    })
    cleanups.push(host.close)
    const outcome = await host.call("Bash", { command: "seq 1 100000" })
    assert.isTrue(outcome.ok)
    if (!outcome.ok) return
    const spill = outcome.result.spill.stdout!
    const info = JSON.parse((await get(viewer.port, "/api/info", auth)).body)
    assert.deepStrictEqual(
      info.sessions.map((s: { sessionId: string; spills: Array<{ path: string }> }) => [
        s.sessionId,
        s.spills.map((f) => f.path)
      ]),
      [["s1", [spill]]]
    )
    const window = JSON.parse(
      (await get(viewer.port, `/api/read?path=${encodeURIComponent(spill)}&offset=5000&limit=3`, auth)).body
    )
    assert.isTrue(window.ok)
    assert.strictEqual(window.result.content, "5000\n5001\n5002\n")
    assert.strictEqual(window.result.offset, 5000)
    const found = JSON.parse(
      (
        await get(
          viewer.port,
          `/api/grep?path=${encodeURIComponent(spill)}&pattern=${encodeURIComponent("^5000$")}`,
          auth
        )
      ).body
    )
    assert.isTrue(found.ok)
    assert.deepStrictEqual(
      found.result.matches.map((m: { line: number; text: string }) => [m.line, m.text]),
      [[5000, "5000"]]
    )
    // the result's guard reaches the page: ripgrep's memory ceiling at least (Landlock where it exists)
    assert.strictEqual(found.result.guard.memoryCeiling.maxBytes, 1024 * 1024 * 1024)
    const workspaceFile = JSON.parse((await get(viewer.port, "/api/read?path=missing.txt", auth)).body)
    assert.strictEqual(workspaceFile.error.code, "TOOL_NOT_FOUND")
  })
})
