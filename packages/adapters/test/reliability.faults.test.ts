// Reliability under faults, for the checkpoint store behind a host: the SQLite file locked by
// another process (python3's sqlite3 holding BEGIN EXCLUSIVE for two seconds) while checkpoints are
// saved, and the SQLite file corrupted (its header, then its pages) before and during a session.
// Each call must end in a correct result or a typed error (`{ ok: false }` with a stable code, or
// a rejection carrying one) — never a crash nor a hang — and every checkpoint whose save answered
// ok must read back unchanged afterwards (committed checkpoints lost: 0). Counts are printed and,
// when TOOLCAP_RELIABILITY_OUT names a directory, written there for `pnpm bench`.
import { afterAll, afterEach, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { PromiseHost } from "@toolcap/adapters"
import {
  type Judged,
  reportReliability,
  summariseVerdicts,
  type Verdict,
  verdictCounts
} from "@toolcap/bench-report"
import { makeDirs } from "./fixtures/dirs.js"

/** A call that has not answered after this long counts as a hang (the lock is held 2 s). */
const HANG_MS = 60_000

const verdicts: Array<Judged> = []
let committedLost = 0

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  const pending = cleanups.splice(0)
  pending.reverse()
  for (const cleanup of pending) await cleanup()
})

afterAll(() => {
  reportReliability(
    "faults checkpoint store",
    { ...verdictCounts(verdicts), "committed checkpoints lost": committedLost },
    summariseVerdicts(verdicts)
  )
})

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { readonly code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

/** Runs one call under a fault and records its verdict; `check` names what is wrong with a result. */
const judge = async <A>(
  fault: string,
  call: () => Promise<{ ok: true; result: A } | { ok: false; error: { code: string } }>,
  check: (result: A) => string | undefined = () => undefined
): Promise<{ verdict: Verdict; result?: A }> => {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<"hang">((resolve) => (timer = setTimeout(() => resolve("hang"), HANG_MS)))
  try {
    const outcome = await Promise.race([call(), hang])
    if (outcome === "hang") {
      verdicts.push({ fault, verdict: "hang", detail: "" })
      return { verdict: "hang" }
    }
    if (!outcome.ok) {
      verdicts.push({ fault, verdict: "typed error", detail: outcome.error.code })
      return { verdict: "typed error" }
    }
    const wrong = check(outcome.result)
    verdicts.push({ fault, verdict: wrong === undefined ? "correct" : "wrong", detail: wrong ?? "" })
    return { verdict: wrong === undefined ? "correct" : "wrong", result: outcome.result }
  } catch (error) {
    const code = codeOf(error)
    const verdict = code === undefined ? "crash" : "typed error"
    verdicts.push({ fault, verdict, detail: code ?? String(error) })
    return { verdict }
  } finally {
    clearTimeout(timer)
  }
}

const transcript = (n: number) => ({
  messages: Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { role: "user", id: `u${i}`, text: `question ${i}` }
      : { role: "assistant", id: `a${i}`, text: `answer ${i}`, toolCalls: [] }
  )
})

const setup = async (sessionId: string) => {
  const dirs = makeDirs("toolcap-ckpt-faults-")
  cleanups.push(dirs.remove)
  const checkpointFile = path.join(dirs.dataDir, "checkpoints.sqlite")
  const open = async () => {
    const host = await PromiseHost.createToolHost({
      workspace: dirs.workspace,
      dataDir: dirs.dataDir,
      sessionId,
      checkpointFile
    })
    cleanups.push(host.close)
    return host
  }
  return { dirs, checkpointFile, open }
}

/** Another process holds an exclusive lock on the database for `ms`; resolves once it holds it. */
const holdLock = (file: string, ms: number) =>
  new Promise<{ readonly released: Promise<void> }>((resolve, reject) => {
    const child = spawn(
      "python3",
      [
        "-c",
        "import sqlite3, sys, time\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(float(sys.argv[2]))\nc.execute('COMMIT')\n",
        file,
        String(ms / 1000)
      ],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    const released = new Promise<void>((done) => child.once("close", () => done()))
    child.once("error", reject)
    child.stdout.once("data", () => resolve({ released }))
    cleanups.push(() => {
      child.kill("SIGKILL")
      return released
    })
  })

const corrupt = (file: string, at: number, length: number) => {
  const fd = fs.openSync(file, "r+")
  try {
    fs.writeSync(fd, Buffer.alloc(length, 0xa5), 0, length, at)
  } finally {
    fs.closeSync(fd)
  }
}

describe("reliability: faults (checkpoint store)", () => {
  it(
    "the SQLite file locked by another process: saves wait or fail typed, and every committed one reads back",
    { timeout: 180_000 },
    async () => {
      const { checkpointFile, open } = await setup("locked")
      const host = await open()
      const first = await judge("save before the lock", () => host.checkpoint(transcript(4)))
      assert.strictEqual(first.verdict, "correct")
      const lock = await holdLock(checkpointFile, 2_000)
      const committed: Array<{ id: number; messages: number }> = []
      // one after another, so the newest committed one is known
      const during: Array<Awaited<ReturnType<typeof judge>>> = []
      for (const n of [6, 8, 10])
        during.push(
          await judge("save while another process holds the database", () => host.checkpoint(transcript(n)))
        )
      const latestDuring = await judge("latest while another process holds the database", () =>
        host.latestCheckpoint()
      )
      await lock.released
      for (const [k, d] of during.entries())
        if (d.verdict === "correct")
          committed.push({
            id: (d.result as { checkpointId: number }).checkpointId,
            messages: [6, 8, 10][k]!
          })
      if (first.result !== undefined)
        committed.push({ id: (first.result as { checkpointId: number }).checkpointId, messages: 4 })
      // a second host on the same file sees every committed checkpoint
      await host.close()
      const again = await open()
      const latest = await judge("latest after the lock", () => again.latestCheckpoint())
      assert.strictEqual(latest.verdict, "correct")
      const newest = committed.find((c) => c.messages === Math.max(...committed.map((x) => x.messages)))?.id
      assert.isDefined(newest)
      if ((latest.result as { checkpointId: number } | null)?.checkpointId !== newest) committedLost++
      for (const v of [...during, latestDuring]) assert.include(["correct", "typed error"], v.verdict)
      assert.strictEqual(committedLost, 0)
    }
  )

  it("the SQLite file corrupted before the host opens it: a typed error, never a crash", async () => {
    const { dirs, checkpointFile, open } = await setup("corrupt-header")
    dirs.write("present.txt", "still readable\n")
    fs.mkdirSync(path.dirname(checkpointFile), { recursive: true })
    fs.writeFileSync(checkpointFile, Buffer.alloc(64 * 1024, 0x5a))
    let host: PromiseHost.PromiseToolHost | undefined
    const opened = await judge("open a garbage SQLite file", async () => {
      host = await open()
      return { ok: true as const, result: null }
    })
    if (host !== undefined) {
      const save = await judge("save into a garbage SQLite file", () => host!.checkpoint(transcript(4)))
      const latest = await judge("latest from a garbage SQLite file", () => host!.latestCheckpoint())
      assert.strictEqual(save.verdict, "typed error")
      assert.include(["typed error"], latest.verdict)
      // the tools do not depend on the store
      const read = await judge(
        "Read beside a garbage SQLite file",
        () => host!.call("Read", { path: "present.txt" }),
        (r) => ((r as { content: string }).content === "still readable\n" ? undefined : "wrong content")
      )
      assert.strictEqual(read.verdict, "correct")
    } else assert.strictEqual(opened.verdict, "typed error")
  })

  it("the SQLite file's pages corrupted mid-session: reads and saves answer typed errors or correct data", async () => {
    const { checkpointFile, open } = await setup("corrupt-pages")
    const host = await open()
    const saved = await judge("save before corruption", () => host.checkpoint(transcript(40)))
    assert.strictEqual(saved.verdict, "correct")
    // every page but the first (the header and schema stay, the data goes), in the database file
    // and in its write-ahead log if it has one
    corrupt(checkpointFile, 4096, Math.max(fs.statSync(checkpointFile).size - 4096, 4096))
    const wal = `${checkpointFile}-wal`
    if (fs.existsSync(wal) && fs.statSync(wal).size > 32) corrupt(wal, 32, fs.statSync(wal).size - 32)
    const savedId = (saved.result as { checkpointId: number }).checkpointId
    const latest = await judge(
      "latest after its pages were corrupted",
      () => host.latestCheckpoint(),
      (r) =>
        r === null || (r as { checkpointId: number }).checkpointId === savedId
          ? undefined
          : `latest is checkpoint ${(r as { checkpointId: number }).checkpointId}, not ${savedId}`
    )
    const save = await judge("save after the pages were corrupted", () => host.checkpoint(transcript(42)))
    await host.close()
    const reopened = await judge(
      "a new host on the corrupted file",
      async () => {
        const again = await open()
        return again.latestCheckpoint()
      },
      (r) =>
        r === null || (r as { checkpointId: number }).checkpointId === savedId
          ? undefined
          : `latest is checkpoint ${(r as { checkpointId: number }).checkpointId}`
    )
    for (const v of [latest, save, reopened]) assert.include(["correct", "typed error"], v.verdict)
  })
})
