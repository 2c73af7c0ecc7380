/**
 * The bundled `toolcap checkpoint build` (`dist/bin.cjs` -> `dist/checkpoint.cjs`, built by
 * `pnpm run build`): a plain command line runs the checkpoint entry through the V8 code cache (the
 * one bundle a run of it compiles, so its cache file is the only one written), saves, and saves
 * incrementally on a second run; an empty transcript is refused and leaves the latest checkpoint
 * as it was; a command line the fast path cannot take (a missing file) goes to the framework, which
 * words it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const bin = fileURLToPath(new URL("../dist/bin.cjs", import.meta.url))
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-checkpoint-bundle-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

const cache = path.join(tmp, "cache")
const dataDir = path.join(tmp, "data")

const build = async (file: string) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [bin, "checkpoint", "build", file, "--session", "s1", "--data-dir", dataDir],
      { env: { ...process.env, XDG_CACHE_HOME: cache } }
    )
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

const transcript = (name: string, texts: ReadonlyArray<string>) => {
  const file = path.join(tmp, name)
  const messages = texts.map((text, i) => ({ role: "user", id: `u${i}`, text }))
  fs.writeFileSync(file, JSON.stringify({ messages }))
  return file
}

const cacheFiles = () =>
  fs.existsSync(path.join(cache, "toolcap"))
    ? fs.readdirSync(path.join(cache, "toolcap")).filter((f) => f.endsWith(".v8"))
    : []

describe("bundled toolcap checkpoint build", () => {
  it("runs from its code-cached entry, saves, and saves again after an appended message", async () => {
    const first = await build(transcript("one.json", ["first question"]))
    assert.strictEqual(first.code, 0, first.stderr)
    const saved = JSON.parse(first.stdout) as {
      ok: boolean
      result: { checkpointId: number; sessionId: string }
    }
    assert.isTrue(saved.ok)
    assert.strictEqual(saved.result.sessionId, "s1")
    // the checkpoint entry is the only code-cached bundle this command line runs
    assert.strictEqual(cacheFiles().length, 1)

    const second = await build(transcript("two.json", ["first question", "second question"]))
    assert.strictEqual(second.code, 0, second.stderr)
    const again = JSON.parse(second.stdout) as { ok: boolean; result: { checkpointId: number } }
    assert.isTrue(again.ok)
    assert.isAbove(again.result.checkpointId, saved.result.checkpointId)
    // the second run read the cache it left: no other file
    assert.strictEqual(cacheFiles().length, 1)
  })

  it("refuses an empty transcript with exit 2 and one JSON line", async () => {
    const refused = await build(transcript("empty.json", []))
    assert.strictEqual(refused.code, 2)
    const line = JSON.parse(refused.stdout) as { ok: boolean; error: { code: string } }
    assert.isFalse(line.ok)
    assert.strictEqual(line.error.code, "CHECKPOINT_INVALID")
  })

  it("leaves a command line it cannot take to the framework (a missing file is worded)", async () => {
    const missing = path.join(tmp, "missing.json")
    const result = await build(missing)
    assert.notStrictEqual(result.code, 0)
    assert.include(result.stdout + result.stderr, missing)
  })
})
