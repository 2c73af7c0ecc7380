/**
 * `toolcap doctor` on this machine, through the built CLI: one line per part (launcher, cgroup,
 * Landlock, ripgrep, SQLite, and Node) with its status; exit 0 while nothing is broken, 1 when a
 * part is installed but does not work (here: a launcher file that cannot be executed); a missing
 * launcher is a fallback, not a failure. It leaves no temporary directory behind.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assertBuilt, runCli } from "./fixtures/cli.js"

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-doctor-test-"))
const scratch = path.join(tmp, "tmp")
beforeAll(() => {
  assertBuilt()
  fs.mkdirSync(scratch)
})
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

const parts = ["node", "launcher", "cgroup", "landlock", "ripgrep", "sqlite"]

/** The doctor's lines by part: `{ status, detail }`. */
const doctor = async (env: Record<string, string> = {}) => {
  const run = await runCli(["doctor"], { env: { TMPDIR: scratch, NO_COLOR: "1", ...env } })
  const lines = new Map<string, { status: string; detail: string }>()
  for (const text of run.stdout.split("\n")) {
    const match = /^(\w+)\s+(ok|fallback|missing|broken)\s+(.*)$/.exec(text)
    if (match !== null) lines.set(match[1]!, { status: match[2]!, detail: match[3]! })
  }
  return { run, lines }
}

describe("toolcap doctor", () => {
  it("prints one line per part; ripgrep and SQLite work in this repository; exit 0", async () => {
    const { run, lines } = await doctor()
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    assert.deepStrictEqual([...lines.keys()], parts)
    assert.strictEqual(lines.get("ripgrep")?.status, "ok")
    assert.strictEqual(lines.get("sqlite")?.status, "ok")
    assert.match(lines.get("sqlite")!.detail, /SQLite \d+\.\d+/)
    assert.include(["ok", "fallback"], lines.get("cgroup")?.status)
    // which launcher was found, and where: the package's own build output (where a compiler built it)
    if (lines.get("launcher")?.status === "ok")
      assert.match(
        lines.get("launcher")!.detail,
        new RegExp(`/dist/native/linux-${process.arch}/toolcap-confine \\(shipped in the package\\)$`)
      )
    else assert.include(lines.get("launcher")!.detail, "no launcher at")
    // the guards a Bash call got: tier, launcher, Landlock scopes (each weaker one with its reason)
    assert.match(
      lines.get("cgroup")!.detail,
      /guards: (cgroup|group) tier.*, (no )?native launcher, (no )?Landlock scopes/
    )
    assert.deepStrictEqual(fs.readdirSync(scratch), [], "the doctor removed its temporary directory")
  })

  it("a launcher that is not there is a fallback that names what it costs", async () => {
    const { run, lines } = await doctor({ TOOLCAP_LAUNCHER: path.join(tmp, "absent") })
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    assert.strictEqual(lines.get("launcher")?.status, "fallback")
    assert.include(lines.get("launcher")!.detail, "without Landlock")
    assert.strictEqual(lines.get("landlock")?.status, "fallback")
    assert.include(
      lines.get("cgroup")!.detail,
      "no native launcher, no Landlock scopes [TOOLCAP_LAUNCHER names"
    )
  })

  it("a launcher that cannot be executed is broken: exit 1", async () => {
    const file = path.join(tmp, "toolcap-confine")
    fs.writeFileSync(file, "not a program\n", { mode: 0o644 })
    const { run, lines } = await doctor({ TOOLCAP_LAUNCHER: file })
    assert.strictEqual(run.code, 1, run.stdout + run.stderr)
    assert.strictEqual(lines.get("launcher")?.status, "broken")
    assert.include(lines.get("launcher")!.detail, "not executable")
  })
})
