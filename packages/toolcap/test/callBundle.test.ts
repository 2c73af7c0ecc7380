/**
 * The bundled `toolcap call` (`dist/bin.cjs` -> `dist/call.cjs`, built by `pnpm run build`): a
 * Read loads none of what only the other tools need (node:crypto, node:child_process) nor Node's
 * stdout stream, and each of the other tools still loads what it needs on first use and answers.
 * Which modules loaded is read in the child at exit (Node's own module list and the require cache),
 * so nothing here depends on timing.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const run = promisify(execFile)
const bin = fileURLToPath(new URL("../dist/bin.cjs", import.meta.url))
const repo = fileURLToPath(new URL("../../..", import.meta.url))
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-call-bundle-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

/** Preloaded into the child: writes the modules it loaded to the file named by the env. */
const recorder = path.join(tmp, "record.cjs")
fs.writeFileSync(
  recorder,
  `const fs = require("node:fs")
process.on("exit", () => {
  fs.writeFileSync(process.env.LOADED_OUT, JSON.stringify({ builtins: process.moduleLoadList, files: Object.keys(require.cache) }))
})
`
)

const call = async (tool: string, input: unknown) => {
  const out = path.join(tmp, `${tool}.json`)
  const { stdout } = await run(
    process.execPath,
    ["--require", recorder, bin, "call", tool, JSON.stringify(input), "--data-dir", path.join(tmp, "data")],
    { cwd: repo, env: { ...process.env, LOADED_OUT: out, XDG_CACHE_HOME: path.join(tmp, "cache") } }
  )
  const loaded = JSON.parse(fs.readFileSync(out, "utf8")) as {
    builtins: ReadonlyArray<string>
    files: ReadonlyArray<string>
  }
  return {
    answer: JSON.parse(stdout) as { ok: boolean; result: Record<string, unknown> },
    builtin: (name: string) => loaded.builtins.includes(`NativeModule ${name}`),
    file: (part: string) => loaded.files.some((file) => file.includes(part))
  }
}

describe("bundled toolcap call", () => {
  it("a Read loads neither crypto, child_process nor the stdout stream", async () => {
    const read = await call("Read", { path: "README.md" })
    assert.isTrue(read.answer.ok)
    assert.match(String(read.answer.result["content"]), /^# toolcap/)
    assert.isFalse(read.builtin("crypto"))
    assert.isFalse(read.builtin("child_process"))
    // the answer goes to fd 1 directly: no stdout stream (for a pipe, a socket) is built
    assert.isFalse(read.builtin("net"))
  }, 60_000)

  it("holds no checkpoint code (a call never checkpoints)", () => {
    const bundle = fs.readFileSync(fileURLToPath(new URL("../dist/call.cjs", import.meta.url)), "latin1")
    assert.notInclude(bundle, "CHECKPOINT_STORE_FAILED")
    assert.include(bundle, "TOOL_PATH_DENIED")
  })

  it("Bash, Glob and Grep load what they need on first use and answer", async () => {
    const bash = await call("Bash", { command: "echo hi" })
    assert.isTrue(bash.answer.ok)
    assert.strictEqual(bash.answer.result["stdout"], "hi\n")
    assert.isTrue(bash.builtin("child_process"))
    const glob = await call("Glob", { pattern: "packages/*/package.json" })
    assert.isTrue(glob.answer.ok)
    assert.include(glob.answer.result["matches"], "packages/toolcap/package.json")
    const grep = await call("Grep", { pattern: '"name": "toolcap"', path: "packages/toolcap/package.json" })
    assert.isTrue(grep.answer.ok)
    assert.deepStrictEqual(grep.answer.result["files"], ["packages/toolcap/package.json"])
  }, 60_000)
})
