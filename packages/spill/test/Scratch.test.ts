import * as FileSystem from "@effect/platform/FileSystem"
import { SystemError, type SystemErrorReason } from "@effect/platform/Error"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Budgets, Utf8 } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { readOnlyDir, tempDir } from "./fixtures.js"

const live = Layer.mergeAll(NodeFileSystem.layer, Budgets.layer)

const scratchIn = (
  dataDir: string,
  sessionId = "s1",
  deps: Layer.Layer<FileSystem.FileSystem | Budgets.Budgets> = live
) => Scratch.make({ dataDir, sessionId }).pipe(Effect.provide(deps))

const NAME = /^bash-stdout-(\d+)-(\d+)\.log$/

const mode = (file: string) => fs.statSync(file).mode & 0o777

describe("Scratch.spill on a real directory", () => {
  it.scopedLive("creates nothing until the first spill, then the session dir 0700 and the file 0600", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const scratch = yield* scratchIn(dataDir)
      assert.strictEqual(scratch.sessionDir, path.join(dataDir, "scratch", "s1"))
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])

      const bytes = Utf8.encode("line 1\nline 2 — é\n")
      const written = yield* scratch.spill("bash-stdout", bytes)
      assert.isTrue(Option.isSome(written))
      const file = Option.getOrThrow(written)
      assert.isTrue(path.isAbsolute(file))
      assert.strictEqual(path.dirname(file), path.join(scratch.sessionDir, "tool-output"))
      assert.match(path.basename(file), NAME)
      assert.deepStrictEqual(new Uint8Array(fs.readFileSync(file)), bytes)
      assert.strictEqual(mode(scratch.sessionDir), 0o700)
      assert.strictEqual(mode(path.join(scratch.sessionDir, "tool-output")), 0o700)
      assert.strictEqual(mode(file), 0o600)
      const owner = JSON.parse(fs.readFileSync(path.join(scratch.sessionDir, "owner.json"), "utf8"))
      assert.strictEqual(owner.pid, process.pid)
      assert.strictEqual(owner.hostname, os.hostname())
    })
  )

  it.scopedLive("names are unique and never overwrite under concurrency, also across two instances", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const first = yield* scratchIn(dataDir)
      const second = yield* scratchIn(dataDir)
      const paths = yield* Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) => (i % 2 === 0 ? first : second).spill("bash-stdout", Utf8.encode(`payload ${i}\n`)),
        { concurrency: "unbounded" }
      )
      const files = paths.map(Option.getOrThrow)
      assert.strictEqual(new Set(files).size, 60)
      files.forEach((file, i) => {
        assert.match(path.basename(file), NAME)
        assert.strictEqual(fs.readFileSync(file, "utf8"), `payload ${i}\n`)
      })
    })
  )

  it.live.prop(
    "a spill is the bytes when they fit spillMaxBytes, else a head-and-tail copy no larger than it",
    [FastCheck.string({ unit: "binary", maxLength: 600 }), FastCheck.integer({ min: 160, max: 400 })],
    ([text, cap]) =>
      Effect.scoped(
        Effect.gen(function* () {
          const dataDir = yield* tempDir()
          const budgets = Budgets.layerWith({
            shellStdoutMaxBytes: 4,
            shellStderrMaxBytes: 4,
            spillMaxBytes: cap
          }).pipe(Layer.orDie)
          const scratch = yield* scratchIn(dataDir, "cap", Layer.mergeAll(NodeFileSystem.layer, budgets))
          const bytes = Utf8.encode(text)
          const file = Option.getOrThrow(yield* scratch.spill("bash-stdout", bytes))
          const written = new Uint8Array(fs.readFileSync(file))
          assert.isAtMost(written.length, cap)
          if (bytes.length <= cap) return assert.deepStrictEqual(written, bytes)
          // the head is a prefix at a UTF-8 boundary, the tail a suffix, the gap line between them
          const decoded = new TextDecoder("utf-8", { fatal: true }).decode(written)
          const gap = decoded.indexOf("[\u2026 ")
          assert.isAbove(gap, 0)
          assert.isTrue(text.startsWith(decoded.slice(0, gap).replace(/\n$/, "")))
          assert.isTrue(text.endsWith(decoded.slice(decoded.indexOf("\u2026]\n", gap) + 3)))
        })
      ),
    { fastCheck: { numRuns: 40 } }
  )

  it.scopedLive("removeSession deletes the session dir; a later spill creates it again", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const scratch = yield* scratchIn(dataDir)
      const file = Option.getOrThrow(yield* scratch.spill("bash-stderr", Utf8.encode("x\n")))
      assert.isTrue(fs.existsSync(file))
      yield* scratch.removeSession
      assert.isFalse(fs.existsSync(scratch.sessionDir))
      yield* scratch.removeSession // twice is fine
      const again = Option.getOrThrow(yield* scratch.spill("bash-stderr", Utf8.encode("y\n")))
      assert.strictEqual(fs.readFileSync(again, "utf8"), "y\n")
      assert.isTrue(fs.existsSync(path.join(scratch.sessionDir, "owner.json")))
    })
  )

  it.scopedLive("a label outside [A-Za-z0-9._-] cannot leave the tool-output directory", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const scratch = yield* scratchIn(dataDir)
      const file = Option.getOrThrow(yield* scratch.spill("../../escape", Utf8.encode("x")))
      assert.strictEqual(path.dirname(file), path.join(scratch.sessionDir, "tool-output"))
      assert.match(path.basename(file), /^\.\._\.\._escape-\d+-\d+\.log$/)
    })
  )
})

describe("session id validation", () => {
  it.live.prop(
    "accepts every id of [A-Za-z0-9._-]{1,128} except . and ..",
    [FastCheck.stringMatching(/^[A-Za-z0-9._-]{1,128}$/).filter((s) => s !== "." && s !== "..")],
    ([sessionId]) =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(Scratch.validateSessionId(sessionId))
        assert.isTrue(Exit.isSuccess(exit))
      })
  )

  it.live.prop(
    "refuses anything else with TOOL_INVALID_INPUT naming sessionId",
    [
      FastCheck.oneof(
        FastCheck.constantFrom("", ".", "..", "a/b", "../x", "a b", "é", "x".repeat(129), "a\0b"),
        FastCheck.string({ minLength: 1, maxLength: 20 }).filter((s) => /[^A-Za-z0-9._-]/.test(s))
      )
    ],
    ([sessionId]) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(Scratch.validateSessionId(sessionId))
        assert.strictEqual(error.code, "TOOL_INVALID_INPUT")
        assert.strictEqual(error.field, "sessionId")
      })
  )

  it.scopedLive("the layer fails on a bad id and touches nothing", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const exit = yield* Effect.exit(
        Effect.provide(
          Scratch.Scratch,
          Scratch.layer({ dataDir, sessionId: "../evil" }).pipe(Layer.provide(live))
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])
    })
  )
})

const injected = (reason: SystemErrorReason, method: string, pathOrDescriptor: string) =>
  new SystemError({
    reason,
    module: "FileSystem",
    method,
    pathOrDescriptor,
    description: `injected ${reason}`
  })

/** A real file system whose writes fail on demand with a chosen errno-like reason. */
const failingFileSystem = (failure: { current: SystemErrorReason | undefined; midWrite?: boolean }) => {
  const fail = (method: string, pathOrDescriptor: string) =>
    injected(failure.current!, method, pathOrDescriptor)
  return Layer.effect(
    FileSystem.FileSystem,
    Effect.gen(function* () {
      const real = yield* FileSystem.FileSystem
      return {
        ...real,
        makeDirectory: (p, o) =>
          failure.current !== undefined && failure.midWrite !== true
            ? Effect.fail(fail("makeDirectory", p))
            : real.makeDirectory(p, o),
        writeFileString: (p, d, o) =>
          failure.current !== undefined && failure.midWrite !== true
            ? Effect.fail(fail("writeFileString", p))
            : real.writeFileString(p, d, o),
        writeFile: (p, d, o) =>
          failure.current === undefined
            ? real.writeFile(p, d, o)
            : failure.midWrite === true
              ? // the file gets created and half written, then the disk is full
                real
                  .writeFile(p, d.subarray(0, d.length >> 1), o)
                  .pipe(Effect.zipRight(Effect.fail(fail("writeFile", p))))
              : Effect.fail(fail("writeFile", p))
      } satisfies FileSystem.FileSystem
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))
}

describe("a spill that cannot be written", () => {
  it.scopedLive("answers None on ENOSPC/EMFILE/EROFS-like failures and recovers when the fault clears", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const failure: { current: SystemErrorReason | undefined } = { current: "Unknown" }
      const scratch = yield* scratchIn(
        dataDir,
        "s1",
        Layer.mergeAll(failingFileSystem(failure), Budgets.layer)
      )
      for (const reason of ["Unknown", "PermissionDenied", "WriteZero", "Busy"] as const) {
        failure.current = reason
        assert.isTrue(Option.isNone(yield* scratch.spill("bash-stdout", Utf8.encode("x\n"))))
      }
      failure.current = undefined
      const file = Option.getOrThrow(yield* scratch.spill("bash-stdout", Utf8.encode("ok\n")))
      assert.strictEqual(fs.readFileSync(file, "utf8"), "ok\n")
    })
  )

  it.scopedLive("a write failing half-way leaves no partial file behind", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const failure = { current: "WriteZero" as SystemErrorReason | undefined, midWrite: true }
      const scratch = yield* scratchIn(
        dataDir,
        "s1",
        Layer.mergeAll(failingFileSystem(failure), Budgets.layer)
      )
      assert.isTrue(Option.isNone(yield* scratch.spill("bash-stdout", Utf8.encode("0123456789\n"))))
      assert.deepStrictEqual(fs.readdirSync(path.join(scratch.sessionDir, "tool-output")), [])
    })
  )

  it.scopedLive("answers None in a real read-only data directory", () =>
    Effect.gen(function* () {
      const ro = yield* readOnlyDir()
      const scratch = yield* scratchIn(ro.path)
      assert.isTrue(Option.isNone(yield* scratch.spill("bash-stdout", Utf8.encode("x\n"))), ro.mechanism)
    })
  )

  it.scopedLive("answers None when the session's tool-output dir exists but is read-only", () =>
    Effect.gen(function* () {
      const ro = yield* readOnlyDir((dir) => {
        fs.mkdirSync(path.join(dir, "scratch", "s1", "tool-output"), { recursive: true })
        fs.writeFileSync(path.join(dir, "scratch", "s1", "owner.json"), "{}")
      })
      const scratch = yield* scratchIn(ro.path)
      assert.isTrue(Option.isNone(yield* scratch.spill("bash-stdout", Utf8.encode("x\n"))), ro.mechanism)
      assert.deepStrictEqual(fs.readdirSync(path.join(ro.path, "scratch", "s1", "tool-output")), [])
    })
  )
})

const makeSession = (dataDir: string, id: string, owner: object | undefined, ageMs: number) => {
  const dir = path.join(dataDir, "scratch", id)
  fs.mkdirSync(path.join(dir, "tool-output"), { recursive: true })
  fs.writeFileSync(path.join(dir, "tool-output", "bash-stdout-1-0.log"), "x")
  if (owner !== undefined) fs.writeFileSync(path.join(dir, "owner.json"), JSON.stringify(owner))
  const at = new Date(Date.now() - ageMs)
  for (const p of [path.join(dir, "owner.json"), path.join(dir, "tool-output"), dir]) {
    if (fs.existsSync(p)) fs.utimesSync(p, at, at)
  }
  return dir
}

/** The pid of a process that has exited and been reaped. */
const deadPid = () => {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" })
  return Number(r.stdout.trim())
}

describe("sweep", () => {
  it.scopedLive("removes stale sessions whose owner is gone, keeps live, fresh and foreign entries", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const hour = 3_600_000
      const me = { pid: process.pid, hostname: os.hostname() }
      const gone = { pid: deadPid(), hostname: os.hostname() }
      const staleGone = makeSession(dataDir, "stale-gone", gone, 3 * hour)
      const staleNoOwner = makeSession(dataDir, "stale-no-owner", undefined, 3 * hour)
      const staleAlive = makeSession(dataDir, "stale-alive", me, 3 * hour)
      const freshGone = makeSession(dataDir, "fresh-gone", gone, 0)
      const otherHost = makeSession(
        dataDir,
        "other-host",
        { pid: 1, hostname: `${os.hostname()}-x` },
        3 * hour
      )
      const foreign = path.join(dataDir, "scratch", "not a session")
      fs.mkdirSync(foreign)
      fs.writeFileSync(path.join(dataDir, "scratch", "file.txt"), "x")

      const { removed } = yield* Scratch.sweep(dataDir, { staleAfterMs: hour }).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      assert.sameMembers(removed, [staleGone, staleNoOwner])
      assert.isFalse(fs.existsSync(staleGone))
      assert.isFalse(fs.existsSync(staleNoOwner))
      for (const kept of [staleAlive, freshGone, otherHost, foreign]) assert.isTrue(fs.existsSync(kept), kept)
      assert.isTrue(fs.existsSync(path.join(dataDir, "scratch", "file.txt")))
    })
  )

  it.scopedLive("a pid reused by another process does not keep a dead owner's session alive", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const dir = makeSession(
        dataDir,
        "reused",
        { pid: process.pid, hostname: os.hostname(), startTime: "1" },
        10_000
      )
      const { removed } = yield* Scratch.sweep(dataDir, { staleAfterMs: 1000 }).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      assert.deepStrictEqual(removed, [dir])
    })
  )

  it.scopedLive("isOwnerAlive decides, and a missing scratch root sweeps nothing", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const empty = yield* Scratch.sweep(dataDir, { staleAfterMs: 0 }).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      assert.deepStrictEqual(empty.removed, [])
      const dir = makeSession(dataDir, "s", { pid: process.pid, hostname: os.hostname() }, 10_000)
      const seen: Array<number> = []
      const { removed } = yield* Scratch.sweep(dataDir, {
        staleAfterMs: 1000,
        isOwnerAlive: (owner) => {
          seen.push(owner.pid)
          return false
        }
      }).pipe(Effect.provide(NodeFileSystem.layer))
      assert.deepStrictEqual(seen, [process.pid])
      assert.deepStrictEqual(removed, [dir])
    })
  )

  it.scopedLive("a session written by Scratch is kept while its owner runs", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const scratch = yield* scratchIn(dataDir)
      yield* scratch.spill("bash-stdout", Utf8.encode("x"))
      const { removed } = yield* Scratch.sweep(dataDir, { staleAfterMs: 0 }).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      assert.deepStrictEqual(removed, [])
      assert.isTrue(fs.existsSync(scratch.sessionDir))
    })
  )
})

describe("layerTest", () => {
  it.live("keeps spills in memory with the same names and cap, or fails them all", () =>
    Effect.gen(function* () {
      const files = new Map<string, Uint8Array>()
      const scratch = yield* Effect.provide(Scratch.Scratch, Scratch.layerTest({ files, spillMaxBytes: 200 }))
      const file = Option.getOrThrow(
        yield* scratch.spill("bash-stdout", Utf8.encode("0123456789".repeat(30)))
      )
      assert.match(path.basename(file), NAME)
      assert.isTrue(file.startsWith(scratch.sessionDir + path.sep))
      // one 300-byte line: its first 100 bytes, the gap line, its last bytes, at most 200 in all
      const copy = Utf8.decode(files.get(file)!)
      assert.isTrue(copy.startsWith(`${"0123456789".repeat(10)}\n[\u2026 1 lines (`), copy)
      assert.isAtMost(files.get(file)!.length, 200)
      assert.isTrue(copy.endsWith("789"))
      yield* scratch.removeSession
      assert.strictEqual(files.size, 0)
      const failing = yield* Effect.provide(Scratch.Scratch, Scratch.layerTest({ failing: true }))
      assert.isTrue(Option.isNone(yield* failing.spill("bash-stdout", Utf8.encode("x"))))
    })
  )
})

describe("Scratch: a planted symlink below the data dir", () => {
  it.scopedLive("at the session directory is refused when the service is built, naming it", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const target = yield* tempDir("toolcap-spill-target-")
      fs.mkdirSync(path.join(dataDir, "scratch"))
      fs.symlinkSync(target, path.join(dataDir, "scratch", "s1"))
      const exit = yield* Effect.exit(scratchIn(dataDir))
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? String(exit.cause) : ""
      assert.include(error, "is a symlink")
      assert.isTrue(Either.isLeft(Scratch.verifySessionDir(path.join(dataDir, "scratch", "s1"))))
    })
  )

  it.scopedLive("planted after the start (at any level), no spill is written through it", () =>
    Effect.gen(function* () {
      for (const level of ["scratch", "scratch/s1", "scratch/s1/tool-output"]) {
        const dataDir = yield* tempDir()
        const target = yield* tempDir("toolcap-spill-target-")
        const scratch = yield* scratchIn(dataDir)
        const planted = path.join(dataDir, level)
        fs.mkdirSync(path.dirname(planted), { recursive: true })
        fs.rmSync(planted, { recursive: true, force: true })
        fs.symlinkSync(target, planted)
        const written = yield* scratch.spill("bash-stdout", Utf8.encode("secret\n"))
        assert.isTrue(Option.isNone(written), level)
        assert.deepStrictEqual(fs.readdirSync(target), [], level)
        assert.isTrue(Either.isLeft(Scratch.verifySessionDir(scratch.sessionDir)), level)
      }
    })
  )
})

describe("Scratch.checkDataDir", () => {
  it.scopedLive("accepts a writable directory (or one that can be created) and leaves nothing behind", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      assert.strictEqual(yield* Scratch.checkDataDir(dataDir), dataDir)
      assert.deepStrictEqual(fs.readdirSync(dataDir), [])
      const later = path.join(dataDir, "not", "yet")
      assert.strictEqual(yield* Scratch.checkDataDir(later), later)
      assert.isFalse(fs.existsSync(path.join(dataDir, "not")))
    })
  )

  it.scopedLive("refuses /proc/1, a file, and a read-only directory, naming it", () =>
    Effect.gen(function* () {
      const dataDir = yield* tempDir()
      const file = path.join(dataDir, "file")
      fs.writeFileSync(file, "x")
      const ro = yield* readOnlyDir()
      for (const [dir, says] of [
        ["/proc/1", "proc"],
        ["/proc/1/below", "proc"],
        [file, "is not a directory"],
        [ro.path, "is not writable"]
      ] as const) {
        const refused = yield* Effect.flip(Scratch.checkDataDir(dir))
        assert.strictEqual(refused.code, "TOOL_INVALID_INPUT", dir)
        assert.include(refused.message, says, dir)
        assert.include(refused.message, "dataDir", dir)
      }
    })
  )
})
