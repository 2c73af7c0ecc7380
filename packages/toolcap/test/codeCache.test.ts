/**
 * The V8 code cache loader of the bin's `call` bundle: the first run writes the cache, later runs
 * use it, a corrupt or stale cache is rejected and replaced, and the bundle's `import()` and
 * `require` resolve from its own folder. Each case runs in a child process (the cache is written
 * when a process exits), with the cache directory in a temp dir.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { fnv1a64 } from "../src/internal/codeCache.js"

const run = promisify(execFile)
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-code-cache-"))
const cacheHome = path.join(tmp, "cache")
const bundle = path.join(tmp, "bundle.cjs")
const loader = fileURLToPath(new URL("../src/internal/codeCache.ts", import.meta.url))
const tsx = fileURLToPath(new URL("../../../node_modules/tsx/dist/cli.mjs", import.meta.url))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

fs.writeFileSync(
  bundle,
  `const path = require("node:path")
exports.main = async () => ({ dir: path.basename(__dirname), sum: [1, 2, 3].reduce((a, b) => a + b, 0), url: (await __toolcapImport("node:url")).pathToFileURL(__filename).href })
`
)
const script = path.join(tmp, "run.mts")
fs.writeFileSync(
  script,
  `import * as CodeCache from ${JSON.stringify(loader)}
const entry = CodeCache.load<{ main: () => Promise<unknown> }>(${JSON.stringify(bundle)}, (specifier) => import(specifier))
console.log(JSON.stringify(await entry.main()))
`
)

const runOnce = async (cacheRoot = cacheHome) => {
  const { stdout } = await run(process.execPath, [tsx, script], {
    env: { ...process.env, XDG_CACHE_HOME: cacheRoot }
  })
  return JSON.parse(stdout) as unknown
}
const caches = () =>
  fs.existsSync(path.join(cacheHome, "toolcap")) ? fs.readdirSync(path.join(cacheHome, "toolcap")) : []
const expected = { dir: path.basename(tmp), sum: 6, url: `file://${bundle}` }

describe("CodeCache.load", () => {
  it("writes the cache on the first run, runs the same from it, and replaces a corrupt one", async () => {
    assert.deepStrictEqual(await runOnce(), expected)
    const [file] = caches()
    assert.match(file ?? "", /^code-[0-9a-f]{16}\.v8$/)
    const cacheFile = path.join(cacheHome, "toolcap", file!)
    const written = fs.readFileSync(cacheFile)
    assert.isAbove(written.length, 0)
    const writtenAt = fs.statSync(cacheFile).mtimeMs
    assert.deepStrictEqual(await runOnce(), expected)
    // accepted: a rejected cache would have been written again
    assert.strictEqual(fs.statSync(cacheFile).mtimeMs, writtenAt)
    fs.writeFileSync(cacheFile, "not a code cache")
    assert.deepStrictEqual(await runOnce(), expected)
    assert.notStrictEqual(fs.readFileSync(cacheFile, "utf8"), "not a code cache")
    assert.deepStrictEqual(caches(), [file])
  }, 60_000)

  it("runs without a cache where none can be written (the cache home is a file)", async () => {
    const notADir = path.join(tmp, "not-a-dir")
    fs.writeFileSync(notADir, "")
    assert.deepStrictEqual(await runOnce(notADir), expected)
    assert.deepStrictEqual(await runOnce(notADir), expected)
    assert.strictEqual(fs.readFileSync(notADir, "utf8"), "")
  }, 60_000)

  it("names cache files by FNV-1a 64 (the published test vectors)", () => {
    assert.strictEqual(fnv1a64(""), "cbf29ce484222325")
    assert.strictEqual(fnv1a64("a"), "af63dc4c8601ec8c")
    assert.strictEqual(fnv1a64("foobar"), "85944171f73967e8")
  })
})
