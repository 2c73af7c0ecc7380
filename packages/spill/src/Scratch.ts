/**
 * The per-session scratch directory and the spill files written into it (rules F1–F8).
 *
 * `<dataDir>/scratch/<sessionId>/` is created on the FIRST spill only (mode 0700), so a session
 * that stayed under budget leaves nothing behind. Spill files live in its `tool-output/`
 * subdirectory as `<label>-<ms>-<seq>.log` (mode 0600), are created exclusively (never
 * overwritten, unique under concurrency) and hold at most `spillMaxBytes`: the whole stream when it
 * fits, else its head and its tail with one line between them (`record` streams a copy while the
 * stream runs, in bounded memory). An `owner.json` marker
 * beside `tool-output/` records the owning process so `sweep` can remove stale sessions whose
 * owner is gone. A spill that cannot be written answers `None`: it costs the caller its hint only.
 *
 * Every level from the data dir down (`scratch/`, the session directory, `tool-output/`) must be
 * a real directory owned by this user, never a symlink: a planted link is refused when the
 * service is built (a clear `ToolInvalidInput`) and, if planted later, no spill is written through
 * it (the spill answers `None`) and `verifySessionDir` tells Read and Grep not to trust it. Spill
 * files are created through a descriptor of `tool-output/` whose real path was checked.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import * as Either from "effect/Either"
import * as nodeFs from "node:fs"
import * as path from "node:path"
import { Budgets, Marker, ToolError } from "@toolcap/limits"
import * as Copy from "./internal/copy.js"
import * as Owner from "./internal/owner.js"
import * as Procfs from "./Procfs.js"
import * as Recorder from "./internal/recorder.js"
import * as SafeDir from "./internal/safeDir.js"
import * as SpillFile from "./internal/spillFile.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ScratchConfig {
  /** The host's data directory; scratch lives in `<dataDir>/scratch/`. Relative paths resolve against the cwd. */
  readonly dataDir: string
  /** The session id: `[A-Za-z0-9._-]{1,128}`, not `.` or `..`. */
  readonly sessionId: string
}

/**
 * The scratch service of one session.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScratchValue {
  readonly sessionId: string
  /** `<dataDir>/scratch/<sessionId>`, absolute; it may not exist yet (created on the first spill). */
  readonly sessionDir: string
  /**
   * Writes a copy of `bytes` to a new file `<sessionDir>/tool-output/<label>-<ms>-<seq>.log`: all
   * of them when they fit `spillMaxBytes`, else their head and tail (see `record`). Answers its
   * absolute path, or `None` when it could not be written (read-only, disk full, too many open
   * files...). Never fails.
   */
  readonly spill: (label: string, bytes: Uint8Array) => Effect.Effect<Option.Option<string>>
  /**
   * Starts recording a stream for its spill copy; nothing is written until it is saved, or until
   * the stream outgrows memory (see `SpillRecorder`).
   */
  readonly record: (label: string) => SpillRecorder
  /**
   * Writes `bytes` whole (no cap) to a new file `<sessionDir>/tool-output/<label>-<ms>-<seq>.log`,
   * created exclusively with mode 0600 through the same no-follow checks as a spill; its path, or
   * `None` when it could not be written. Never fails. For a file the host hands to a call (a
   * command too long for an argument); the caller removes it.
   */
  readonly write: (label: string, bytes: Uint8Array) => Effect.Effect<Option.Option<string>>
  /** Removes the session directory and everything in it; never fails. */
  readonly removeSession: Effect.Effect<void>
}

/**
 * One stream recorded for its spill copy while it runs. The copy is the whole stream when it fits
 * `spillMaxBytes`; otherwise its head and its tail, half of `spillMaxBytes` each, each cut at a
 * line boundary (a UTF-8 boundary inside a line longer than its half), with one line between them
 * stating the bytes and lines left out (`Marker.spillGap`). Memory stays within the capture
 * budget (`captureMaxBytes`) plus one read, whatever the stream's size: a copy larger than that is
 * written to its file as the stream runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpillRecorder {
  /**
   * Feeds the next read, synchronously (it runs in a pipe's read callback). The bytes are kept as
   * they are, not copied: the caller must not change them afterwards.
   */
  readonly push: (bytes: Uint8Array) => void
  /**
   * Writes the copy of everything fed and answers what the file holds, or `None` when it could
   * not be written; never fails. `totalLines` is the stream's line count (the caller counts it
   * anyway); it goes into the gap line. Ends the recording.
   */
  readonly save: (totalLines: number) => Effect.Effect<Option.Option<Marker.SavedCopy>>
  /** Ends the recording without a copy; a file begun on disk is removed. */
  readonly discard: () => void
}

/**
 * @since 0.1.0
 * @category services
 */
export class Scratch extends Context.Tag("@toolcap/spill/Scratch")<Scratch, ScratchValue>() {}

/**
 * What a valid session id looks like (rules F2): it becomes one path segment.
 *
 * @since 0.1.0
 * @category models
 */
export const sessionIdPattern = /^[A-Za-z0-9._-]{1,128}$/

/**
 * Subdirectory of a session directory that holds the spill files.
 *
 * @since 0.1.0
 * @category models
 */
export const toolOutputDirName = "tool-output"

/**
 * File beside `tool-output/` recording which process owns the session.
 *
 * @since 0.1.0
 * @category models
 */
export const ownerFileName = "owner.json"

/**
 * The owner recorded for a session directory.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionOwner = Schema.Struct({
  pid: Schema.Number,
  hostname: Schema.String,
  /** Process start time (Linux clock ticks since boot), to tell a reused pid apart. */
  startTime: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type SessionOwner = typeof SessionOwner.Type

/**
 * Checks a session id; the error names the rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const validateSessionId = (sessionId: unknown): Effect.Effect<string, ToolError.ToolInvalidInput> =>
  typeof sessionId === "string" && sessionIdPattern.test(sessionId) && sessionId !== "." && sessionId !== ".."
    ? Effect.succeed(sessionId)
    : Effect.fail(
        new ToolError.ToolInvalidInput({
          tool: "Scratch",
          field: "sessionId",
          reason: `${JSON.stringify(sessionId)} is not a valid session id; use 1 to 128 characters of A-Z a-z 0-9 . _ - (not "." or "..")`
        })
      )

/**
 * The directory holding every session's scratch directory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scratchRoot = (dataDir: string): string => path.join(path.resolve(dataDir), "scratch")

/**
 * Checks a session directory (which may not exist yet) without following links: `Right` with its
 * real path when every existing level from the data dir down is a real directory owned by this
 * user, `Left` with the problem otherwise (a symlink, a file, a foreign directory).
 *
 * @since 0.1.0
 * @category constructors
 */
export const verifySessionDir = (sessionDir: string): Either.Either<string, string> => {
  const checked = SafeDir.verifyChain(sessionDir, [toolOutputDirName])
  return checked.ok ? Either.right(checked.real) : Either.left(checked.problem)
}

const unsafeScratch = (problem: string) =>
  new ToolError.ToolInvalidInput({
    tool: "Scratch",
    field: "dataDir",
    reason: `${problem}; scratch directories must be real directories of this user with no symlink below the data dir, so remove it`
  })

/**
 * File systems that hold no files of ours (statfs magic numbers): proc, sysfs, cgroup, cgroup2,
 * debugfs, securityfs, devpts. A data dir there accepts no spill (or, on /proc, makes
 * `mkdir -p` fail in ways that never settle), so it is refused at start.
 */
const VIRTUAL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x64626720, "debugfs"],
  [0x73636673, "securityfs"],
  [0x1cd1, "devpts"]
])

const dataDirRefused = (dir: string, why: string) =>
  new ToolError.ToolInvalidInput({
    tool: "host",
    field: "dataDir",
    reason: `${dir} ${why}; give a normal writable directory (or one that can be created) as the data dir`
  })

const errnoOf = (error: unknown): string =>
  (error as NodeJS.ErrnoException | undefined)?.code ?? String(error)

/**
 * Checks at startup that a data dir is a normal writable directory, or can be created as one: not
 * a file, not on a virtual file system (/proc, /sys...), not read-only. A directory that exists is
 * probed by creating and removing a temporary directory in it; for one that does not exist yet,
 * its nearest existing ancestor must be a writable directory. Nothing is left behind. Answers the
 * absolute path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkDataDir = (dataDir: string): Effect.Effect<string, ToolError.ToolInvalidInput> =>
  Effect.suspend(() => {
    const absolute = path.resolve(dataDir)
    let existing = absolute
    let stats = nodeFs.statSync(existing, { throwIfNoEntry: false })
    while (stats === undefined && path.dirname(existing) !== existing) {
      existing = path.dirname(existing)
      stats = nodeFs.statSync(existing, { throwIfNoEntry: false })
    }
    const what = existing === absolute ? absolute : `${absolute} (its nearest existing ancestor ${existing})`
    if (stats === undefined || !stats.isDirectory())
      return Effect.fail(dataDirRefused(what, "is not a directory"))
    try {
      const kind = VIRTUAL_FILE_SYSTEMS.get(Number(nodeFs.statfsSync(existing).type))
      if (kind !== undefined)
        return Effect.fail(dataDirRefused(what, `is on the ${kind} virtual file system`))
      if (existing === absolute) {
        nodeFs.rmdirSync(nodeFs.mkdtempSync(path.join(absolute, ".toolcap-probe-")))
      } else {
        nodeFs.accessSync(existing, nodeFs.constants.W_OK | nodeFs.constants.X_OK)
      }
    } catch (error) {
      return Effect.fail(dataDirRefused(what, `is not writable (${errnoOf(error)})`))
    }
    return Effect.succeed(absolute)
  })

/** A label becomes part of a file name: anything outside `[A-Za-z0-9._-]` becomes `_`. */
const safeLabel = (label: string): string => {
  const cleaned = label.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64)
  return cleaned.length === 0 || cleaned === "." || cleaned === ".." ? "output" : cleaned
}

/** A recorder of one whole buffer: the copy `spill` writes. */
const spillWith = (
  record: (label: string) => SpillRecorder,
  label: string,
  bytes: Uint8Array
): Effect.Effect<Option.Option<string>> =>
  Effect.suspend(() => {
    const recorder = record(label)
    recorder.push(bytes)
    return Effect.map(
      recorder.save(Copy.countLines(bytes)),
      Option.map((copy) => copy.path)
    )
  })

/**
 * Exclusive creation collides only when another writer took the same `<ms>-<seq>`; a few fresh
 * sequence numbers always resolve that, so more attempts mean something else is wrong.
 */
const MAX_NAME_ATTEMPTS = 8

const encodeOwner = Schema.encodeSync(Schema.parseJson(SessionOwner))
const decodeOwner = Schema.decodeUnknownOption(Schema.parseJson(SessionOwner))

/**
 * Builds the scratch service of one session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: ScratchConfig
): Effect.Effect<ScratchValue, ToolError.ToolInvalidInput, FileSystem.FileSystem | Budgets.Budgets> =>
  Effect.gen(function* () {
    const sessionId = yield* validateSessionId(config.sessionId)
    const fs = yield* FileSystem.FileSystem
    const budgets = yield* Budgets.Budgets
    const sessionDir = path.join(scratchRoot(config.dataDir), sessionId)
    const clock = yield* Effect.clock
    // per service, not per module: two hosts in one process keep their own sequence
    let nextSeq = 0
    let ownerWritten = false
    const planted = SafeDir.verifyChain(sessionDir, [toolOutputDirName])
    if (!planted.ok) return yield* unsafeScratch(planted.problem)

    /** A fresh file name of a label: `<label>-<ms>-<seq>.log`. */
    const nextName = (prefix: string): string =>
      `${prefix}-${clock.unsafeCurrentTimeMillis()}-${nextSeq++}.log`

    /**
     * Creates the missing levels one at a time, each checked: never through a planted link.
     * Synchronous: a stream's copy may have to start on disk from inside a pipe's read callback.
     */
    const ensureDirectories = (): void => {
      const chain = SafeDir.verifyChain(sessionDir, [toolOutputDirName])
      if (!chain.ok) throw unsafeScratch(chain.problem)
      nodeFs.mkdirSync(path.dirname(chain.levels[0]!), { recursive: true, mode: 0o700 })
      for (const level of chain.levels.slice(chain.existing)) {
        try {
          nodeFs.mkdirSync(level, { mode: 0o700 })
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        }
        const stats = nodeFs.lstatSync(level, { throwIfNoEntry: false })
        const problem = stats === undefined ? `${level} vanished` : SafeDir.problemOf(level, stats)
        if (problem !== undefined) throw unsafeScratch(problem)
      }
      if (!ownerWritten) {
        nodeFs.writeFileSync(path.join(sessionDir, ownerFileName), encodeOwner(Owner.current()), {
          mode: 0o600
        })
        ownerWritten = true
      }
    }

    /**
     * Opens `tool-output/` without following a link and checks the descriptor's real path, so a
     * file is created exactly there even if a link is swapped in meanwhile. Answers the path to
     * create through (`/proc/self/fd/N/...` where there is one); the caller closes `fd`.
     */
    const openOutputDir = (): { readonly fd: number; readonly real: string; readonly through: string } => {
      const expected = SafeDir.verifyChain(sessionDir, [toolOutputDirName])
      if (!expected.ok) throw unsafeScratch(expected.problem)
      const real = expected.levels[2]!
      const fd = nodeFs.openSync(
        real,
        nodeFs.constants.O_RDONLY | nodeFs.constants.O_DIRECTORY | nodeFs.constants.O_NOFOLLOW
      )
      const held = Procfs.descriptorTarget(fd) ?? real
      const problem =
        held !== real
          ? `${real} moved while a spill was written`
          : SafeDir.problemOf(real, nodeFs.fstatSync(fd))
      if (problem !== undefined) {
        nodeFs.closeSync(fd)
        throw unsafeScratch(problem)
      }
      return { fd, real, through: Procfs.hasDescriptorPaths() ? Procfs.descriptorPath(fd) : real }
    }

    const outputDir = Effect.acquireRelease(
      Effect.try({ try: openOutputDir, catch: (error) => error }),
      (dir) => Effect.sync(() => nodeFs.closeSync(dir.fd))
    )

    /** A new spill file of the disk mode, created exclusively (0600) and open for reading and writing. */
    const createFile = (label: string): Recorder.SpillFile => {
      ensureDirectories()
      const prefix = safeLabel(label)
      for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
        const name = nextName(prefix)
        const dir = openOutputDir()
        try {
          const fd = nodeFs.openSync(path.join(dir.through, name), "wx+", 0o600)
          return SpillFile.make(fd, path.join(dir.real, name), openOutputDir)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        } finally {
          nodeFs.closeSync(dir.fd)
        }
      }
      throw new Error("no free spill file name")
    }

    const writeNew = (name: string, bytes: Uint8Array) =>
      Effect.scoped(
        Effect.flatMap(outputDir, (dir) => {
          const file = path.join(dir.real, name)
          const through = path.join(dir.through, name)
          return fs.writeFile(through, bytes, { flag: "wx", mode: 0o600 }).pipe(
            Effect.as(Option.some(file)),
            Effect.catchTag("SystemError", (error) =>
              error.reason === "AlreadyExists"
                ? Effect.succeed(Option.none<string>())
                : // a half-written file (disk full mid-write) must not be left behind
                  fs.remove(through).pipe(Effect.ignore, Effect.zipRight(Effect.fail(error)))
            )
          )
        })
      )

    /** Writes a whole copy to a new file of `label`. */
    const writeWhole = (label: string, bytes: Uint8Array) => {
      const prefix = safeLabel(label)
      const write = Effect.gen(function* () {
        yield* Effect.try({ try: ensureDirectories, catch: (error) => error })
        for (let attempt = 0; attempt < MAX_NAME_ATTEMPTS; attempt++) {
          const written = yield* writeNew(nextName(prefix), bytes)
          if (Option.isSome(written)) return written
        }
        return Option.none<string>()
      })
      // rules F5: a failed spill costs the hint only, never the tool result
      return write.pipe(
        Effect.catchAll(() => Effect.succeed(Option.none<string>())),
        Effect.catchAllDefect(() => Effect.succeed(Option.none<string>()))
      )
    }

    const record = (label: string): SpillRecorder =>
      Recorder.make({
        spillMaxBytes: budgets.spillMaxBytes,
        memoryBytes: budgets.captureMaxBytes,
        createFile: () => createFile(label),
        writeWhole: (bytes) => writeWhole(label, bytes)
      })

    const spill = Effect.fn("Scratch.spill")(function* (label: string, bytes: Uint8Array) {
      return yield* spillWith(record, label, bytes)
    })

    const removeSession = fs
      .remove(sessionDir, { recursive: true })
      .pipe(
        Effect.ignore,
        Effect.zipRight(Effect.sync(() => (ownerWritten = false))),
        Effect.withSpan("Scratch.removeSession")
      )

    const write = (label: string, bytes: Uint8Array) => writeWhole(label, bytes)

    return { sessionId, sessionDir, spill, record, write, removeSession }
  })

/**
 * The scratch service on a real file system. Fails with `ToolInvalidInput` on a bad session id.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: ScratchConfig
): Layer.Layer<Scratch, ToolError.ToolInvalidInput, FileSystem.FileSystem | Budgets.Budgets> =>
  Layer.effect(Scratch, make(config))

/**
 * Options of the in-memory scratch.
 *
 * @since 0.1.0
 * @category models
 */
export interface TestOptions {
  readonly sessionId?: string | undefined
  /** Used to build the (fictitious) absolute paths; default `/toolcap-test-data`. */
  readonly dataDir?: string | undefined
  /** Cap of each spill (whole or head and tail, as on disk); default `Budgets.defaults.spillMaxBytes`. */
  readonly spillMaxBytes?: number | undefined
  /** Receives every written spill, path -> bytes, so a test can read it back. */
  readonly files?: Map<string, Uint8Array> | undefined
  /** When true every spill answers `None`, as a read-only or full disk would. */
  readonly failing?: boolean | undefined
}

/**
 * An in-memory scratch for the layers above: same names and copies, nothing touches the disk.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = (options: TestOptions = {}): Layer.Layer<Scratch, ToolError.ToolInvalidInput> =>
  Layer.effect(
    Scratch,
    Effect.gen(function* () {
      const sessionId = yield* validateSessionId(options.sessionId ?? "test-session")
      const sessionDir = path.join(scratchRoot(options.dataDir ?? "/toolcap-test-data"), sessionId)
      const files = options.files ?? new Map<string, Uint8Array>()
      const spillMaxBytes = options.spillMaxBytes ?? Budgets.defaults.spillMaxBytes
      if (Budgets.spillParts({ spillMaxBytes }).tailBytes < Budgets.minByteBudget) {
        return yield* new ToolError.ToolInvalidInput({
          tool: "Scratch",
          field: "spillMaxBytes",
          reason: `${spillMaxBytes} leaves no room for a head-and-tail copy; use at least ${2 * (Budgets.minByteBudget + Marker.spillGapMaxBytes)}`
        })
      }
      const clock = yield* Effect.clock
      let nextSeq = 0
      const write = (label: string, bytes: Uint8Array) =>
        Effect.sync(() => {
          if (options.failing === true) return Option.none<string>()
          const name = `${safeLabel(label)}-${clock.unsafeCurrentTimeMillis()}-${nextSeq++}.log`
          const file = path.join(sessionDir, toolOutputDirName, name)
          files.set(file, bytes.slice())
          return Option.some(file)
        })
      const record = (label: string): SpillRecorder =>
        Recorder.make({
          spillMaxBytes,
          // nothing here touches the disk: every copy is held until it is saved
          memoryBytes: Number.POSITIVE_INFINITY,
          createFile: () => {
            throw new Error("the in-memory scratch has no files")
          },
          writeWhole: (bytes) => write(label, bytes)
        })
      const spill = Effect.fn("Scratch.spill")(function* (label: string, bytes: Uint8Array) {
        return yield* spillWith(record, label, bytes)
      })
      const removeSession = Effect.sync(() => {
        for (const file of files.keys()) if (file.startsWith(sessionDir + path.sep)) files.delete(file)
      })
      return { sessionId, sessionDir, spill, record, write, removeSession }
    })
  )

/**
 * Options of `sweep`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SweepOptions {
  /** A session directory is stale when nothing in it changed for this long. */
  readonly staleAfterMs: number
  /**
   * Whether the recorded owner may still run. Default: an owner on another host counts as alive;
   * on this host the pid must exist with the recorded start time. A session without an owner
   * marker counts as owner gone.
   */
  readonly isOwnerAlive?: ((owner: SessionOwner) => boolean) | undefined
}

/**
 * Startup sweep: removes every `<dataDir>/scratch/<sessionId>` whose owner is gone AND that is
 * older than `staleAfterMs` (newest modification time of the directory, its `tool-output/` and its
 * owner marker). Entries that are not session directories are left alone. Never fails: what
 * cannot be read or removed stays.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sweep = (
  dataDir: string,
  options: SweepOptions
): Effect.Effect<{ readonly removed: Array<string> }, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const root = scratchRoot(dataDir)
    const isOwnerAlive = options.isOwnerAlive ?? Owner.isAlive
    const entries = yield* fs.readDirectory(root).pipe(Effect.orElseSucceed(() => [] as Array<string>))
    const now = yield* Clock.currentTimeMillis
    const modifiedAt = (file: string) =>
      fs.stat(file).pipe(
        Effect.map((info) =>
          Option.getOrElse(
            Option.map(info.mtime, (d) => d.getTime()),
            () => 0
          )
        ),
        Effect.orElseSucceed(() => 0)
      )
    const removed: Array<string> = []
    for (const entry of Arr.sort(entries, Order.string)) {
      if (!sessionIdPattern.test(entry) || entry === "." || entry === "..") continue
      const dir = path.join(root, entry)
      const info = yield* fs.stat(dir).pipe(Effect.option)
      if (Option.isNone(info) || info.value.type !== "Directory") continue
      const ownerFile = path.join(dir, ownerFileName)
      const owner = yield* fs.readFileString(ownerFile).pipe(
        Effect.map(decodeOwner),
        Effect.orElseSucceed(() => Option.none<SessionOwner>())
      )
      if (Option.isSome(owner) && isOwnerAlive(owner.value)) continue
      const lastChange = Math.max(
        yield* modifiedAt(dir),
        yield* modifiedAt(path.join(dir, toolOutputDirName)),
        yield* modifiedAt(ownerFile)
      )
      if (now - lastChange < options.staleAfterMs) continue
      const gone = yield* fs.remove(dir, { recursive: true }).pipe(
        Effect.as(true),
        Effect.orElseSucceed(() => false)
      )
      if (gone) removed.push(dir)
    }
    return { removed }
  }).pipe(Effect.withSpan("Scratch.sweep"))
