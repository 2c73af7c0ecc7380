// Hostile input, round three, as an unprivileged user in a delegated cgroup (rules B13, B14, H7):
// a user made with useradd runs a Promise API host (the built packages) inside a cgroup v2
// directory chowned to it, with ANTHROPIC_API_KEY in its environment and a `dir\n/etc/shadow`
// file in its workspace. The secret is not in a call's environment by default and is with an
// explicit include; a 1 MB command runs; Grep's and Glob's model text forge no line; the host
// answers every call. Needs root (to make the user and the cgroup): elsewhere the test says so
// in its title and does not run.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const isRoot = process.getuid?.() === 0
const hasTools = isRoot && spawnSync("sh", ["-c", "command -v useradd && command -v setpriv"]).status === 0
const builtAdapters = fileURLToPath(new URL("../dist/index.js", import.meta.url))

/** The cgroup v2 mount, when there is one. */
const cgroup2Mount = (): string | undefined =>
  fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" "))
    .find((fields) => fields[fields.indexOf("-") + 1] === "cgroup2")?.[4]

const user = `tcenv${process.pid}`
let root = ""
let delegated: string | undefined
let uid = -1
let gid = -1

const removeTree = (dir: string) => {
  if (!fs.existsSync(dir)) return
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) removeTree(path.join(dir, entry.name))
  fs.rmdirSync(dir)
}

beforeAll(() => {
  if (!hasTools) return
  const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user], {
    encoding: "utf8"
  })
  assert.strictEqual(made.status, 0, made.stderr)
  uid = Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim())
  gid = Number(spawnSync("id", ["-g", user], { encoding: "utf8" }).stdout.trim())
  root = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-unpriv-"))
  fs.chmodSync(root, 0o755)
  const workspace = path.join(root, "workspace")
  fs.mkdirSync(path.join(workspace, "dir\n", "etc"), { recursive: true })
  fs.writeFileSync(path.join(workspace, "dir\n", "etc", "shadow"), "NEEDLE\n")
  fs.mkdirSync(path.join(root, "data"))
  for (const dir of [
    workspace,
    path.join(workspace, "dir\n"),
    path.join(workspace, "dir\n", "etc"),
    path.join(root, "data")
  ])
    fs.chownSync(dir, uid, gid)
  fs.chownSync(path.join(workspace, "dir\n", "etc", "shadow"), uid, gid)
  const mount = cgroup2Mount()
  if (mount !== undefined) {
    delegated = path.join(mount, `toolcap-unpriv-${process.pid}`)
    fs.mkdirSync(delegated)
    for (const file of ["", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"])
      fs.chownSync(path.join(delegated, file), uid, gid)
  }
})

afterAll(() => {
  if (!hasTools) return
  if (delegated !== undefined) removeTree(delegated)
  if (root !== "") fs.rmSync(root, { recursive: true, force: true })
  spawnSync("userdel", [user])
})

const hostScript = (adapters: string) => `
import { PromiseHost } from ${JSON.stringify(pathToFileURL(adapters).href)}
const [workspace, dataDir] = process.argv.slice(2)
const out = { uid: process.getuid() }
const host = await PromiseHost.createToolHost({ workspace, dataDir, sessionId: "u1" })
const plain = await host.call("Bash", { command: 'printf %s "\${ANTHROPIC_API_KEY-unset}"' })
out.plain = plain.ok ? plain.result.stdout : plain.error
out.containment = plain.ok ? plain.result.termination.containment : undefined
const big = await host.call("Bash", { command: "p=" + "a".repeat(1024 * 1024) + "\\nprintf %s \${#p}" })
out.big = big.ok ? big.result.stdout : big.error
out.grep = host.modelText("Grep", await host.call("Grep", { pattern: "NEEDLE", outputMode: "content" }))
out.glob = host.modelText("Glob", await host.call("Glob", { pattern: "**/*" }))
await host.close()
const included = await PromiseHost.createToolHost({ workspace, dataDir, sessionId: "u2", environment: { include: ["ANTHROPIC_API_KEY"] } })
const seen = await included.call("Bash", { command: 'printf %s "\${ANTHROPIC_API_KEY-unset}"' })
out.included = seen.ok ? seen.result.stdout : seen.error
await included.close()
console.log(JSON.stringify(out))
`

/**
 * Lets other users through every folder above `file` (a checkout inside a 0700 temp folder would
 * hide the built code from the unprivileged user); what it changed, to put back after the suite.
 */
const openPathToOthers = (file: string): Array<readonly [string, number]> => {
  const changed: Array<readonly [string, number]> = []
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const mode = fs.statSync(dir).mode & 0o7777
    if ((mode & 0o001) === 0) {
      fs.chmodSync(dir, mode | 0o001)
      changed.push([dir, mode])
    }
    if (path.dirname(dir) === dir) return changed
  }
}

describe("as an unprivileged user in a delegated cgroup (needs root, useradd and setpriv; skipped, and reported as such, elsewhere)", () => {
  let opened: Array<readonly [string, number]> = []
  beforeAll(() => {
    if (hasTools) opened = openPathToOthers(builtAdapters)
  })
  afterAll(() => {
    for (const [dir, mode] of opened) fs.chmodSync(dir, mode)
  })
  it.skipIf(!hasTools)(
    "the secret stays out unless included, a 1 MB command runs, no name forges a line",
    () => {
      assert.isTrue(fs.existsSync(builtAdapters), `${builtAdapters} is missing: build first`)
      const script = path.join(root, "host.mjs")
      fs.writeFileSync(script, hostScript(builtAdapters))
      fs.chmodSync(script, 0o644)
      const enter =
        delegated === undefined ? "" : `echo $$ > ${JSON.stringify(path.join(delegated, "cgroup.procs"))} && `
      const run = spawnSync(
        "sh",
        [
          "-c",
          `${enter}exec setpriv --reuid=${uid} --regid=${gid} --clear-groups "$@"`,
          "sh",
          process.execPath,
          script,
          path.join(root, "workspace"),
          path.join(root, "data")
        ],
        {
          encoding: "utf8",
          cwd: root,
          env: {
            PATH: process.env["PATH"] ?? "/usr/bin:/bin",
            HOME: root,
            ANTHROPIC_API_KEY: "sk-ant-unpriv-0001"
          },
          timeout: 120_000
        }
      )
      assert.strictEqual(run.status, 0, run.stderr)
      const out = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>
      assert.strictEqual(out["uid"], uid)
      assert.strictEqual(out["plain"], "unset")
      assert.strictEqual(out["included"], "sk-ant-unpriv-0001")
      assert.strictEqual(out["big"], String(1024 * 1024))
      for (const text of [out["grep"], out["glob"]] as Array<string>) {
        assert.include(text, '"dir\\n/etc/shadow"')
        for (const line of text.split("\n")) assert.isFalse(line.startsWith("/etc/"), text)
      }
      // the cgroup tier where the delegated cgroup could hold the calls, else the fallback named
      if (delegated !== undefined) assert.strictEqual(out["containment"], "cgroup", run.stdout)
    },
    180_000
  )
})
