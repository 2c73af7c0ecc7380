// The viewer lists only regular files inside the spill directory, never following a link (rules
// V9): with symlinks to /etc planted as a session's tool-output/, as a session directory, as the
// scratch root, as spill entries and a hard link beside a real spill, `/api/info` lists the real
// spill file only, nothing of /etc (by name, size or time); reading a planted link stays 403. The
// path fallback (hosts without /proc) is forced and holds the same.
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { PromiseHost } from "@toolcap/adapters"
import { Scratch } from "@toolcap/spill"
import * as Guard from "../src/internal/guard.js"
import * as Listing from "../src/internal/listing.js"
import { get, makeDirs, startViewer } from "./fixtures.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

type Info = { sessions: Array<{ sessionId: string; spills: Array<{ path: string; name: string }> }> }

const etcNames = new Set(fs.readdirSync("/etc"))

/** A data dir with one real spill (session s1) and every kind of planted link beside it. */
const planted = async () => {
  const dirs = makeDirs("toolcap-viewer-links-")
  cleanups.push(dirs.remove)
  const host = await PromiseHost.createToolHost({
    workspace: dirs.workspace,
    dataDir: dirs.dataDir,
    sessionId: "s1"
  })
  const outcome = await host.call("Bash", { command: "seq 1 100000" })
  assert.isTrue(outcome.ok)
  const spill = outcome.ok ? outcome.result.spill.stdout! : ""
  // keep the session's files: close() would remove them
  const scratchRoot = Scratch.scratchRoot(dirs.dataDir)
  const spillDir = path.dirname(spill)
  fs.symlinkSync("/etc/passwd", path.join(spillDir, "passwd.log"))
  fs.symlinkSync("/etc", path.join(spillDir, "etc.log"))
  // a hard link to a file outside (as /etc/shadow would be where links to others' files are allowed)
  fs.writeFileSync(path.join(dirs.root, "outside-secret"), "secret\n")
  fs.linkSync(path.join(dirs.root, "outside-secret"), path.join(spillDir, "hardlink.log"))
  fs.mkdirSync(path.join(spillDir, "subdir.log"))
  // a session whose tool-output is a link to /etc, and a session that is a link to a directory
  fs.mkdirSync(path.join(scratchRoot, "s2"))
  fs.symlinkSync("/etc", path.join(scratchRoot, "s2", Scratch.toolOutputDirName))
  fs.mkdirSync(path.join(dirs.root, "elsewhere", Scratch.toolOutputDirName), { recursive: true })
  fs.writeFileSync(path.join(dirs.root, "elsewhere", Scratch.toolOutputDirName, "outside.log"), "x")
  fs.symlinkSync(path.join(dirs.root, "elsewhere"), path.join(scratchRoot, "s3"))
  return { dirs, host, spill, scratchRoot }
}

describe("the viewer's spill listing", () => {
  it("/api/info lists only the regular files inside the spill directory, nothing through a link", async () => {
    const { dirs, host, spill } = await planted()
    const viewer = await startViewer(dirs)
    cleanups.push(() => viewer.close())
    cleanups.push(host.close)
    const auth = { cookie: `${Guard.cookieName(viewer.token)}=${viewer.token}` }
    const info = JSON.parse((await get(viewer.port, "/api/info", auth)).body) as Info
    assert.deepStrictEqual(
      info.sessions.map((session) => [session.sessionId, session.spills.map((file) => file.path)]),
      [
        ["s1", [spill]],
        ["s2", []]
      ]
    )
    for (const session of info.sessions)
      for (const file of session.spills) assert.isFalse(etcNames.has(file.name), file.name)
    const viaLink = await get(
      viewer.port,
      `/api/read?path=${encodeURIComponent(path.join(path.dirname(spill), "passwd.log"))}`,
      auth
    )
    assert.strictEqual(viaLink.status, 403)
  })

  it("a scratch root swapped for a link to /etc lists nothing of /etc", async () => {
    const { dirs, host, scratchRoot } = await planted()
    const viewer = await startViewer(dirs)
    cleanups.push(() => viewer.close())
    cleanups.push(host.close)
    fs.renameSync(scratchRoot, `${scratchRoot}.moved`)
    fs.symlinkSync("/etc", scratchRoot)
    cleanups.push(() => {
      fs.unlinkSync(scratchRoot)
      fs.renameSync(`${scratchRoot}.moved`, scratchRoot)
    })
    const auth = { cookie: `${Guard.cookieName(viewer.token)}=${viewer.token}` }
    const info = JSON.parse((await get(viewer.port, "/api/info", auth)).body) as Info
    assert.deepStrictEqual(info.sessions, [])
  })

  it("the path fallback (no /proc) lists the same", async () => {
    const { host, spill, scratchRoot } = await planted()
    cleanups.push(host.close)
    const names = async (session: string) =>
      (await Listing.spillFilesWithoutProc(scratchRoot, session, Scratch.toolOutputDirName)).map(
        (file) => file.path
      )
    assert.deepStrictEqual(await names("s1"), [spill])
    assert.deepStrictEqual(await names("s2"), [])
    assert.deepStrictEqual(await names("s3"), [])
    assert.deepStrictEqual(
      (await Listing.spillFiles(scratchRoot, "s1", Scratch.toolOutputDirName)).map((file) => file.path),
      [spill]
    )
  })
})
