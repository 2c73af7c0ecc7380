// `toolcap checkpoint` against a hostile data dir: the files under it are ours. A link planted at
// the checkpoint database or its WAL / shared-memory index / journal is refused with one JSON error
// line and its target is untouched (nothing made outside); a refused transcript or session id
// leaves the data dir as empty as it was; a disk that fills during a save answers one JSON error
// line (exit 2) and the checkpoint saved before stays readable. Each attack runs 3 random cases
// (100 with TOOLCAP_LONG_TESTS=1) through the built CLI, counts reported through reportReliability.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { FastCheck as fc } from "effect"
import { assertBuilt, makeDirs, runCli } from "./fixtures/cli.js"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { digest, plant, plantedKinds, snapshot } from "../../../packages/checkpoint/test/fixtures/files.js"

const RUNS = isLong() ? 100 : 3
const TIMEOUT = isLong() ? 1_800_000 : 240_000

const dirs = makeDirs("toolcap-files-hostile-")
beforeAll(() => assertBuilt())
afterAll(() => dirs.remove())

let cases = 0
/** A fresh data dir and a dir outside it. */
const freshCase = () => {
  const root = path.join(dirs.root, `case-${cases++}`)
  const data = path.join(root, "data")
  const outside = path.join(root, "outside")
  fs.mkdirSync(data, { recursive: true })
  fs.mkdirSync(outside)
  return { root, data, outside }
}

const writeJson = (file: string, value: unknown) => {
  // undefined has no JSON: its text is written, which is not JSON either
  fs.writeFileSync(file, typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)))
  return file
}

const checkpoint = (args: ReadonlyArray<string>) => runCli(["checkpoint", ...args])

/** The CLI's contract for an answer: exactly one JSON line on stdout, nothing on stderr. */
const oneLine = (run: { stdout: string; stderr: string }) => {
  const lines = run.stdout.split("\n").filter((line) => line.length > 0)
  assert.strictEqual(lines.length, 1, `one line on stdout, got: ${run.stdout.slice(0, 500)}`)
  assert.strictEqual(run.stderr, "", "nothing on stderr")
  return JSON.parse(lines[0]!) as {
    ok: boolean
    result?: { checkpointId: number }
    error?: { code: string; message: string }
  }
}

const userMessages = (texts: ReadonlyArray<string>) => texts.map((content) => ({ role: "user", content }))

/** Mounts a tmpfs of `size` at a fresh directory, or says why it cannot. */
const mountSmallDisk = (size: string): { dir: string } | { skip: string } => {
  const dir = path.join(dirs.root, `disk-${cases++}`)
  fs.mkdirSync(dir)
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" })
    return { dir }
  } catch (error) {
    return { skip: `mounting a tmpfs needs root (CAP_SYS_ADMIN): ${String(error).split("\n")[0]}` }
  }
}

describe("toolcap checkpoint: the files under the data dir are ours", () => {
  it(
    "a link planted at the database or a companion: one JSON error line, exit 2, its target untouched",
    { timeout: TIMEOUT },
    async () => {
      const counts = { inputs: 0, escapes: 0, "wrong results": 0 }
      const attack = fc.tuple(
        fc.constantFrom("", "-wal", "-shm", "-journal"),
        fc.constantFrom(...plantedKinds),
        fc.constantFrom("build", "show"),
        fc.boolean()
      )
      const samples = [
        // the finding: the database itself, as a dangling link and as a link to another store
        ["", "dangling", "build", false] as const,
        ["", "to a store", "build", false] as const,
        ...fc.sample(attack, { numRuns: RUNS, seed: 246 })
      ]
      try {
        for (const [suffix, kind, command, existing] of samples) {
          counts.inputs++
          const { root, data, outside } = freshCase()
          const transcript = writeJson(path.join(root, "t.json"), userMessages(["keep this"]))
          const build = ["build", transcript, "--session", "s", "--data-dir", data]
          if (existing) assert.isTrue(oneLine(await checkpoint(build)).ok)
          const otherData = path.join(outside, "other")
          fs.mkdirSync(otherData)
          assert.isTrue(
            oneLine(await checkpoint(["build", transcript, "--session", "victim", "--data-dir", otherData]))
              .ok
          )
          const otherStore = path.join(otherData, "checkpoints.sqlite")
          const planted = path.join(data, `checkpoints.sqlite${suffix}`)
          plant(kind, planted, outside, otherStore)
          const before = snapshot(outside)
          const run = await checkpoint(
            command === "build" ? build : ["show", "--session", "s", "--data-dir", data]
          )
          const answer = oneLine(run)
          const changed = JSON.stringify(snapshot(outside)) !== JSON.stringify(before)
          if (changed) counts.escapes++
          if (answer.error?.code !== "CHECKPOINT_STORE_FAILED") counts["wrong results"]++
          assert.strictEqual(run.code, 2)
          assert.strictEqual(answer.error?.code, "CHECKPOINT_STORE_FAILED", JSON.stringify(answer))
          assert.include(answer.error!.message, `checkpoints.sqlite${suffix}`)
          assert.isFalse(changed, `nothing outside changed (${suffix} ${kind} ${command})`)
          assert.strictEqual(digest(otherStore), before["other/checkpoints.sqlite"])
        }
      } finally {
        reportReliability(
          "hostile checkpoint store links",
          counts,
          `symbolic and hard links planted at checkpoints.sqlite and its -wal, -shm, -journal (missing targets, plain files, another store), then checkpoint build / show through the built CLI (fast-check seed 246)`
        )
      }
    }
  )

  it(
    "a refused transcript or session id leaves the data dir as it was: empty",
    { timeout: TIMEOUT },
    async () => {
      const counts = { inputs: 0, "wrong results": 0 }
      const refused = fc.oneof(
        fc.record({
          session: fc.constant("s"),
          body: fc.oneof(
            fc.constantFrom<unknown>(
              [],
              { messages: [] },
              "not json {",
              7,
              [{ role: "bogus", content: "hi" }],
              { messages: [{ role: "tool", id: "t", callId: "nowhere", text: "orphan" }] },
              [{ role: "assistant", content: "no user message" }]
            ),
            fc.anything({ maxDepth: 2 }).filter((value) => !Array.isArray(value) || value.length === 0),
            fc
              .uint8Array({ minLength: 1, maxLength: 64 })
              .map((bytes) => Buffer.from([0xff, ...bytes]).toString("latin1"))
          )
        }),
        fc.record({
          session: fc.constantFrom("..", ".", "a/b", "x".repeat(129), "sp ace", "ü"),
          body: fc.constant<unknown>(userMessages(["fine"]))
        })
      )
      const samples = [
        { session: "s", body: [] as unknown },
        ...fc.sample(refused, { numRuns: RUNS, seed: 247 })
      ]
      try {
        for (const { session, body } of samples) {
          counts.inputs++
          const { root, data } = freshCase()
          const file = path.join(root, "t.json")
          if (typeof body === "string") fs.writeFileSync(file, Buffer.from(body, "latin1"))
          else writeJson(file, body)
          const run = await checkpoint(["build", file, "--session", session, "--data-dir", data])
          const left = fs.readdirSync(data)
          if (left.length > 0 || run.code === 0) counts["wrong results"]++
          assert.notStrictEqual(run.code, 0, `refused: ${run.stdout.slice(0, 300)}`)
          assert.deepStrictEqual(
            left,
            [],
            `nothing written for ${String(JSON.stringify(body)).slice(0, 200)}`
          )
        }
      } finally {
        reportReliability(
          "hostile checkpoint refused transcripts",
          counts,
          `malformed, empty, non-UTF-8 and non-JSON transcripts and invalid session ids into checkpoint build through the built CLI (fast-check seed 247); the data dir checked empty after each`
        )
      }
    }
  )

  it(
    "a disk that fills during a save: one JSON error line, exit 2, the checkpoint saved before intact",
    { timeout: TIMEOUT },
    async (context) => {
      const disk = mountSmallDisk("512k")
      if ("skip" in disk) return context.skip(disk.skip)
      const counts = { inputs: 0, "committed checkpoints lost": 0, "wrong results": 0 }
      try {
        const stored = ["hi"]
        const transcript = path.join(dirs.root, `disk-transcript-${cases++}.json`)
        const build = () =>
          checkpoint([
            "build",
            writeJson(transcript, userMessages(stored)),
            "--session",
            "s",
            "--data-dir",
            disk.dir
          ])
        const first = oneLine(await build())
        assert.isTrue(first.ok)
        let latest = first.result!.checkpointId
        // messages of incompressible text; the first attempt is the finding's 2 MB save
        const sizes = [
          2 * 1024 * 1024,
          ...fc.sample(fc.integer({ min: 1024, max: 3 * 1024 * 1024 }), { numRuns: RUNS, seed: 248 })
        ]
        for (const size of sizes) {
          counts.inputs++
          const added: Array<string> = []
          for (let left = size; left > 0; left -= 64 * 1024)
            added.push(randomBytes(Math.min(left, 64 * 1024) * 0.75).toString("base64"))
          stored.push(...added)
          const run = await build()
          const answer = oneLine(run)
          if (answer.ok) latest = answer.result!.checkpointId
          else {
            // the save did not happen: the next one extends what is stored
            stored.splice(stored.length - added.length)
            if (answer.error?.code !== "CHECKPOINT_STORE_FAILED" || run.code !== 2) counts["wrong results"]++
            assert.strictEqual(run.code, 2)
            assert.strictEqual(answer.error?.code, "CHECKPOINT_STORE_FAILED")
            assert.include(answer.error!.message, "full")
          }
          const shown = oneLine(await checkpoint(["show", "--session", "s", "--data-dir", disk.dir]))
          if (shown.result?.checkpointId !== latest) counts["committed checkpoints lost"]++
          assert.strictEqual(shown.result?.checkpointId, latest, "the latest committed checkpoint reads back")
        }
      } finally {
        execFileSync("umount", [disk.dir])
        reportReliability(
          "hostile checkpoint full disk",
          counts,
          `checkpoint build of 1 KB–3 MB of new messages into a 512 KiB tmpfs through the built CLI (fast-check seed 248), each followed by checkpoint show`
        )
      }
    }
  )
})
