/**
 * Process supervision as a service. `spawn` starts a process in a scope: its stdout and stderr are
 * `Stream<Uint8Array>` read from the pipes with backpressure (a full buffer pauses the pipe, and
 * the writer then blocks), its exit is an Effect, and closing the scope stops the whole tree and
 * closes the pipes. The release is bounded: it never waits on what the tree does.
 *
 * A contained spawn (`tree`) runs in one of two containment tiers, chosen once per runner:
 *  - `cgroup`: a cgroup v2 per call (see the tools README); the kernel tracks every process.
 *  - `group`: a new session and process group, the `TOOLCAP_RUN_ID` cookie and parent links
 *    (ProcessTree), where no cgroup can be made or `TOOLCAP_CONTAINMENT=group` forces it.
 * Every child is registered with the host's lifeline (a watchdog that stops it if the host dies),
 * and a new runner sweeps what dead hosts left behind.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Readable } from "node:stream"
import { ToolError } from "@toolcap/limits"
import { Procfs } from "@toolcap/spill"
import * as ProcessTree from "./ProcessTree.js"
import * as Cgroup from "./internal/supervisor/cgroup.js"
import * as Proc from "./internal/supervisor/process.js"
import * as Launcher from "./internal/supervisor/launcherServer.js"
import * as Lifeline from "./internal/supervisor/lifeline.js"
import * as Wait from "./internal/supervisor/wait.js"

/**
 * The containment tier of a runner: `cgroup` (cgroup v2 per call) or `group` (process group,
 * cookie and parent links).
 *
 * @since 0.1.0
 * @category models
 */
export type Containment = "cgroup" | "group"

/**
 * The environment variable that forces a tier: `group` forces the fallback; `cgroup` or unset
 * takes the cgroup tier where it works here.
 *
 * @since 0.1.0
 * @category models
 */
export const containmentVariable = "TOOLCAP_CONTAINMENT"

/**
 * How a call's shell enters its cgroup in the cgroup tier: `launcher` (started inside it by the
 * native launcher with `clone3(CLONE_INTO_CGROUP)`; the launcher stays as its parent, outside the
 * cgroup, and exits with its status) or `prologue` (a `/bin/sh` prologue writes its pid into
 * `cgroup.procs`, then execs the command).
 *
 * @since 0.1.0
 * @category models
 */
export type CgroupEntry = "launcher" | "prologue"

/**
 * The environment variable that forces the `prologue` entry into the cgroup tier (`prologue`),
 * e.g. to compare with the launcher; unset, the launcher is used where it works here.
 *
 * @since 0.1.0
 * @category models
 */
export const cgroupEntryVariable = "TOOLCAP_CGROUP_ENTRY"

/**
 * @since 0.1.0
 * @category models
 */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface SpawnOptions {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The whole environment of the process; default: the host's. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Written to stdin, which is then closed; stdin is /dev/null otherwise. */
  readonly stdin?: string | undefined
  /**
   * Run as a contained tree (own session and process group, the runner's tier) stopped as a
   * whole; `runId` names its cgroup and is the cookie value the caller put in `env`.
   */
  readonly tree?:
    | {
        readonly runId: string
        readonly cookie: string
        /** SIGTERM first; SIGKILL (or `cgroup.kill`) to what is left after this long. */
        readonly killGraceMs: number
        /** How long to wait for members to die after SIGKILL before reporting them as survivors. */
        readonly killWaitMs: number
      }
    | undefined
}

/**
 * What stopping a process tree did: ProcessTree's report plus the tier it ran in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Termination extends ProcessTree.Termination {
  readonly containment: Containment
}

/**
 * A running process.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunningProcess {
  /**
   * The process Node started and waits on: the command itself, or in the cgroup tier's `launcher`
   * entry the launcher (outside the call's cgroup, the command's parent, ending with its status).
   */
  readonly pid: number
  /**
   * Start time from /proc, read before the process can be reaped (tells a reused pid apart);
   * undefined in the cgroup tier, which does not need it.
   */
  readonly startTime: string | undefined
  readonly containment: Containment
  readonly stdout: Stream.Stream<Uint8Array>
  readonly stderr: Stream.Stream<Uint8Array>
  /**
   * The same bytes as `stdout` and `stderr` (read one way or the other, not both), pulled
   * directly: each pull takes every read buffered since the last one (waiting for one), and fails
   * with `None` at the end. For a consumer on a hot path: no stream machinery per call.
   */
  readonly pull: {
    readonly stdout: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>>
    readonly stderr: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>>
  }
  /**
   * The same bytes again (one way of reading per pipe), handed to a synchronous consumer as each
   * read arrives (what was read before first), without backpressure or any effect per read, until
   * the pipe ends or is closed. For a consumer that never waits (a capture), where the cost per
   * read is the whole cost.
   */
  readonly read: {
    readonly stdout: (onBytes: (bytes: Uint8Array) => void) => void
    readonly stderr: (onBytes: (bytes: Uint8Array) => void) => void
  }
  /**
   * Calls `callback` once the main process exited (at once when it has); returns the unregister.
   * The plain-callback form of `exit`, for waiting on several things without a fiber each.
   */
  readonly onExit: (callback: (status: ExitStatus) => void) => () => void
  /** Calls `callback` once both pipes ended or were closed (at once when they are); returns the unregister. */
  readonly onPipesDone: (callback: () => void) => () => void
  /** Completes when the main process exited (its pipes may still be held open by others). */
  readonly exit: Effect.Effect<ExitStatus>
  /** The main process's exit status once it exited, else undefined (no waiting). */
  readonly exitStatus: () => ExitStatus | undefined
  /** Stops the whole tree (the process alone when not a tree); runs once, later calls share it. */
  readonly stop: Effect.Effect<Termination>
  /** Stops reading: both streams end, the pipes are closed on this side. Idempotent. */
  readonly closePipes: Effect.Effect<void>
  /** Whether both pipes reached end of file (every writer closed them). */
  readonly pipesEnded: () => boolean
}

/**
 * @since 0.1.0
 * @category services
 */
export class ProcessRunner extends Context.Tag("@toolcap/tools/ProcessRunner")<
  ProcessRunner,
  {
    readonly containment: Containment
    /** How shells enter their cgroup (undefined in the group tier). */
    readonly cgroupEntry: CgroupEntry | undefined
    readonly spawn: (
      options: SpawnOptions
    ) => Effect.Effect<RunningProcess, ToolError.ToolSpawnFailed, Scope.Scope>
  }
>() {}

/**
 * Chunks (one pipe read each, at most 64 KiB) buffered per pipe before it is paused: enough to
 * keep the reader busy, small enough to bound the host's memory (about 1 MiB per pipe) whatever
 * the command writes.
 */
const PIPE_BUFFER_CHUNKS = 16

interface Pipe {
  readonly pull: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>>
  readonly read: (onBytes: (bytes: Uint8Array) => void) => void
  readonly stream: Stream.Stream<Uint8Array>
  readonly ended: () => boolean
  readonly close: () => void
}

/**
 * A readable pipe as a Stream with backpressure. Reads are buffered until the consumer pulls,
 * which takes everything buffered at once (one wake-up per batch, not per read); a full buffer
 * pauses the pipe until the next pull.
 */
const pipeOf = (readable: Readable, onDone: () => void): Pipe => {
  let buffer: Array<Uint8Array> = []
  let ended = false
  let done = false
  let paused = false
  let wake: (() => void) | undefined
  const notify = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  // set while a synchronous consumer reads: every read goes straight to it
  let direct: ((bytes: Uint8Array) => void) | undefined
  const onData = (chunk: Uint8Array) => {
    if (direct !== undefined) {
      direct(chunk)
      return
    }
    buffer.push(chunk)
    if (buffer.length >= PIPE_BUFFER_CHUNKS && !paused) {
      paused = true
      readable.pause()
    }
    notify()
  }
  const finish = () => {
    if (done) return
    done = true
    notify()
    onDone()
  }
  readable.on("data", onData)
  readable.once("end", () => {
    ended = true
    finish()
  })
  // a read error ends the stream; the supervisor still stops the tree
  readable.on("error", finish)
  const pull: Effect.Effect<Chunk.Chunk<Uint8Array>, Option.Option<never>> = Effect.suspend(() => {
    if (buffer.length > 0) {
      const batch = buffer
      buffer = []
      if (paused && !done) {
        paused = false
        readable.resume()
      }
      return Effect.succeed(Chunk.unsafeFromArray(batch))
    }
    if (done) return Effect.fail(Option.none())
    return Effect.async<void>((resume) => {
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    }).pipe(Effect.zipRight(pull))
  })
  const read = (onBytes: (bytes: Uint8Array) => void): void => {
    // what was read before comes first
    const before = buffer
    buffer = []
    for (const chunk of before) onBytes(chunk)
    if (done) return
    direct = onBytes
    if (paused) {
      paused = false
      readable.resume()
    }
  }
  return {
    pull,
    read,
    stream: Stream.repeatEffectChunkOption(pull),
    ended: () => ended,
    close: () => {
      if (done && buffer.length === 0) return
      readable.off("data", onData)
      readable.destroy()
      buffer = []
      finish()
    }
  }
}

const spawnFailed = (file: string, cwd: string, reason: string) =>
  new ToolError.ToolSpawnFailed({ command: `${file} -c`, reason: `${reason} (working directory ${cwd})` })

/** What stopping found nothing to stop. */
const nothing = (containment: Containment): Termination => ({
  containment,
  signalled: [],
  killed: [],
  unstoppable: [],
  survivors: []
})

/**
 * A runner in the given tier (`cgroup`: the cgroup parent and entry of the cgroup tier), and what
 * ends its launcher server (a runner whose layer is closed leaves no process behind).
 */
const makeRunner = (
  containment: Containment,
  cgroup: { readonly parent: string; readonly entry: CgroupEntry } | undefined,
  launcherServer: boolean
): { readonly runner: ProcessRunner["Type"]; readonly release: () => void } => {
  // the launcher entry's server, started from the runner's second launch on (see
  // internal/supervisor/launcherServer.ts)
  let server: Launcher.Server | undefined
  let launches = 0
  let released = false
  const startServer = () => {
    if (released || (server !== undefined && Launcher.usable(server))) return
    try {
      server = Launcher.start()
    } catch {
      server = undefined
    }
  }
  /**
   * The server and the fields of this spawn's call when the server takes it, else undefined (then
   * it is spawned as usual).
   */
  const serve = (
    dir: string,
    options: SpawnOptions
  ): { readonly server: Launcher.Server; readonly fields: ReadonlyArray<string> } | undefined => {
    // from a runner's second launch on (a host that makes one call starts no server), after this
    // launch is on its way
    if (!launcherServer) return undefined
    if (++launches >= 2 && (server === undefined || !Launcher.usable(server))) setImmediate(startServer)
    const ready = server
    if (ready === undefined || !Launcher.usable(ready)) return undefined
    const fields = Launcher.request(dir, options.cwd, options.file, options.args, options.env ?? process.env)
    return fields === undefined ? undefined : { server: ready, fields }
  }
  const release = () => {
    released = true
    if (server !== undefined) Launcher.dismiss(server)
    server = undefined
  }
  const runner: ProcessRunner["Type"] = {
    containment,
    cgroupEntry: cgroup?.entry,
    spawn: (options) =>
      Effect.gen(function* () {
        const tree = options.tree
        const cgroupDir =
          tree !== undefined && cgroup !== undefined ? Cgroup.create(cgroup.parent, tree.runId) : undefined
        if (tree !== undefined && containment === "cgroup" && cgroupDir === undefined) {
          return yield* spawnFailed(options.file, options.cwd, "could not create the call's cgroup")
        }
        // registered before the spawn: a host that dies right after it still has its lifeline. A run
        // id of this host is covered by one standing registration of all its call cgroups (no
        // message to the watchdog per call); any other is registered for the call's life.
        const unregisterCgroup =
          cgroupDir === undefined
            ? () => {}
            : tree!.runId.startsWith(Proc.hostRunPrefix())
              ? (Lifeline.registerStanding({
                  kind: "cgs",
                  parent: cgroup!.parent,
                  prefix: Proc.hostRunPrefix()
                }),
                () => {})
              : Lifeline.register({ kind: "cg", dir: cgroupDir })
        // the group tier knows the cookie before the spawn, the process group only after it: until
        // then the cookie alone names the tree (a host killed while the shell already runs)
        const unregisterCookie =
          tree !== undefined && cgroupDir === undefined
            ? Lifeline.register({ kind: "pg", pgid: undefined, cookie: tree.cookie })
            : () => {}
        const removeCgroup = (waitMs: number) =>
          cgroupDir === undefined
            ? Effect.void
            : Effect.flatMap(Cgroup.removeDir(cgroupDir, waitMs), (removed) =>
                removed ? Effect.sync(unregisterCgroup) : Effect.void
              )
        const exited = Wait.once<ExitStatus>()

        // through the launcher, the pid Node sees is the launcher's (outside the cgroup, exiting with
        // the shell's status); the members, stopping and the report come from the cgroup either way
        const launched = cgroupDir !== undefined && cgroup!.entry === "launcher"
        const { file, args } =
          cgroupDir !== undefined
            ? Cgroup.command(cgroup!.entry, cgroupDir, options.file, options.args)
            : { file: options.file, args: options.args }
        // the runner's launcher server takes the call when it runs (no stdin to write)
        const served = launched && options.stdin === undefined ? serve(cgroupDir, options) : undefined
        const started = yield* Effect.async<
          { child: ReturnType<typeof Proc.spawnChild> | Launcher.Served; pid: number },
          ToolError.ToolSpawnFailed
        >((resume) => {
          /** The host's own spawn of the command (or of its launcher). */
          const spawnHere = () => {
            let child: ReturnType<typeof Proc.spawnChild>
            try {
              child = Proc.spawnChild(file, args, {
                cwd: options.cwd,
                env: options.env ?? process.env,
                stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
                // a tree runs in a session of its own; through the launcher the command gets it from
                // the launcher (one new session per call, not two)
                detached: tree !== undefined && !launched,
                lifeline: tree !== undefined ? "none" : "pid"
              })
            } catch (error) {
              resume(
                Effect.fail(
                  spawnFailed(
                    options.file,
                    options.cwd,
                    error instanceof Error ? error.message : String(error)
                  )
                )
              )
              return
            }
            let spawned = false
            child.once("error", (error) => {
              if (spawned) return
              child.stdout?.destroy()
              child.stderr?.destroy()
              resume(Effect.fail(spawnFailed(options.file, options.cwd, error.message)))
            })
            child.once("spawn", () => {
              spawned = true
              resume(Effect.succeed({ child, pid: child.pid! }))
            })
            child.once("exit", (code, signal) => exited.happen({ code, signal }))
            if (options.stdin !== undefined) {
              // a process that ends before reading its stdin closes the pipe: not an error
              child.stdin!.on("error", () => {})
              child.stdin!.end(options.stdin)
            }
          }
          if (served === undefined) {
            spawnHere()
            return
          }
          let interrupted = false
          Launcher.call(served.server, served.fields, (answer) => {
            if (interrupted) {
              // nobody waits for this call any more: its pipes are closed and its cgroup killed
              if (typeof answer === "object" && !(answer instanceof Error)) {
                answer.stdout.destroy()
                answer.stderr.destroy()
                Cgroup.kill(cgroupDir!)
              }
            } else if (answer === "not started") spawnHere()
            else if (answer instanceof Error) {
              resume(Effect.fail(spawnFailed(options.file, options.cwd, answer.message)))
            } else {
              answer.once("exit", (code, signal) => exited.happen({ code, signal }))
              resume(Effect.succeed({ child: answer, pid: answer.pid }))
            }
          })
          return Effect.sync(() => {
            interrupted = true
          })
        }).pipe(Effect.tapError(() => Effect.zipRight(Effect.sync(unregisterCookie), removeCgroup(0))))
        const { child, pid } = started
        // still readable here: the exit of the child (if any) is reaped only after the spawn event.
        // Only the group tier needs it (to tell the root from a reused pid); a cgroup names its members
        const startTime = cgroupDir === undefined ? Procfs.startTimeOf(pid) : undefined
        const unregisterGroupOnly =
          tree !== undefined && cgroupDir === undefined
            ? Lifeline.register({ kind: "pg", pgid: pid, cookie: tree.cookie })
            : () => {}
        const unregisterGroup = () => {
          unregisterGroupOnly()
          unregisterCookie()
        }
        const pipesDone = Wait.once<void>()
        let pipesOpen = 2
        const pipeDone = () => {
          if (--pipesOpen === 0) pipesDone.happen()
        }
        const stdout = pipeOf(child.stdout!, pipeDone)
        const stderr = pipeOf(child.stderr!, pipeDone)
        const pipesEnded = () => stdout.ended() && stderr.ended()
        const closePipes = Effect.sync(() => {
          stdout.close()
          stderr.close()
        })
        const exitDone = () => exited.value() !== undefined
        const exit = Effect.async<ExitStatus>((resume) => {
          const unregister = exited.on((status) => resume(Effect.succeed(status)))
          return Effect.sync(unregister)
        })

        const stopTree: Effect.Effect<Termination> = Effect.gen(function* () {
          if (tree === undefined) {
            if (!exitDone()) Proc.sendSignal(pid, "SIGKILL")
            return nothing(containment)
          }
          if (cgroupDir !== undefined) {
            // the common end, every member gone: the kernel removes only an empty cgroup, so one
            // successful removal is the whole stop (no listing of members)
            let stopped = nothing(containment)
            if (Cgroup.removeIfEmpty(cgroupDir)) {
              unregisterCgroup()
              Cgroup.releaseParentSoon(cgroupDir)
            } else {
              stopped = { containment, ...(yield* Cgroup.terminate(cgroupDir, tree)) }
              // an emptied cgroup goes at once; one with survivors cannot go, so it is not waited
              // for (the lifeline keeps it registered, the watchdog retries when the host ends)
              yield* removeCgroup(stopped.survivors.length > 0 ? 0 : tree.killWaitMs)
            }
            // the launcher (outside the cgroup) ends right after its child: waited for, so closing
            // the scope leaves no process of the call behind
            if (launched && !exitDone()) {
              yield* Effect.timeoutOption(exit, Duration.millis(tree.killWaitMs))
            }
            return stopped
          }
          // the cheap path: the shell exited, both pipes are closed and its group is empty, so no
          // process of the tree is known to be left and no scan of /proc is needed
          if (exitDone() && pipesEnded() && Proc.probe(-pid) === "gone") {
            unregisterGroup()
            return nothing(containment)
          }
          const stopped = yield* ProcessTree.terminate(
            { rootPid: pid, runId: tree.runId, rootStartTime: startTime },
            tree
          )
          if (stopped.survivors.length === 0) unregisterGroup()
          return { containment, ...stopped }
        })
        const stop = yield* Effect.cached(stopTree.pipe(Effect.uninterruptible))

        yield* Effect.addFinalizer(() => Effect.zipRight(stop, closePipes))

        return {
          pid,
          startTime,
          containment,
          stdout: stdout.stream,
          stderr: stderr.stream,
          pull: { stdout: stdout.pull, stderr: stderr.pull },
          read: { stdout: stdout.read, stderr: stderr.read },
          onExit: exited.on,
          onPipesDone: (callback) => pipesDone.on(callback),
          exit,
          exitStatus: exited.value,
          stop,
          closePipes,
          pipesEnded
        } satisfies RunningProcess
      })
  }
  return { runner, release }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions {
  readonly containment?: Containment | undefined
  /** `prologue` forces the prologue entry; default: `TOOLCAP_CGROUP_ENTRY`, else the launcher where it works. */
  readonly cgroupEntry?: CgroupEntry | undefined
  /**
   * Whether the launcher entry keeps a launcher server from the runner's second launch on
   * (default true; false starts the launcher per call from the host, as a host that wants no extra
   * process would).
   */
  readonly launcherServer?: boolean | undefined
}

/**
 * The tier a runner takes: `group` when forced (option, else `TOOLCAP_CONTAINMENT=group`), else
 * the cgroup tier when a cgroup can be created and a process moved into it here; in the cgroup
 * tier, the launcher entry unless the prologue is forced or the launcher does not work here.
 */
const make = (options: RunnerOptions = {}) =>
  Effect.gen(function* () {
    const wanted = options.containment ?? (process.env[containmentVariable] === "group" ? "group" : "cgroup")
    const parent = wanted === "cgroup" ? yield* Cgroup.detect : undefined
    const containment: Containment = parent !== undefined ? "cgroup" : "group"
    const forcedEntry =
      options.cgroupEntry ?? (process.env[cgroupEntryVariable] === "prologue" ? "prologue" : undefined)
    const entry =
      parent === undefined ? undefined : forcedEntry === "prologue" ? "prologue" : yield* Cgroup.entry(parent)
    yield* startupSweep(parent)
    return makeRunner(
      containment,
      parent !== undefined && entry !== undefined ? { parent, entry } : undefined,
      options.launcherServer ?? true
    )
  })

/**
 * What hosts that died left running, stopped when the next runner starts: in the cgroup tier the
 * call cgroups of dead hosts; in the group tier the processes carrying the cookie of a dead host's
 * run (that scan reads every process's environment once, so it runs in the background).
 */
const startupSweep = (parent: string | undefined) =>
  parent !== undefined ? Effect.asVoid(Cgroup.sweep(parent)) : Effect.asVoid(Effect.forkDaemon(sweepCookies))

/** Processes whose environment is read between two yields of the background cookie sweep. */
const SWEEP_SLICE = 100

/**
 * SIGKILL to every process carrying the cookie of a run whose host is gone; the number stopped.
 * It yields between slices so a host's first calls are not held up behind it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sweepCookies: Effect.Effect<number> = Effect.gen(function* () {
  let stopped = 0
  let seen = 0
  const ownerAlive = new Map<string, boolean>()
  for (const info of Procfs.listProcesses()) {
    if (++seen % SWEEP_SLICE === 0) yield* Effect.yieldNow()
    if (info.state === "Z" || info.state === "X") continue
    const runId = Procfs.environValue(info, ProcessTree.cookieVariable)
    if (runId === null) continue
    const owner = Cgroup.ownerOf(runId)
    if (owner === undefined) continue
    const key = `${owner.pid}:${owner.startTime}`
    let alive = ownerAlive.get(key)
    if (alive === undefined) {
      alive = Procfs.isRunning(owner.pid, owner.startTime)
      ownerAlive.set(key, alive)
    }
    if (!alive && Proc.sendSignal(info.pid, "SIGKILL") === "sent") stopped++
  }
  return stopped
})

/**
 * The runner: the tier is decided (and what dead hosts left is swept) when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: RunnerOptions = {}): Layer.Layer<ProcessRunner> =>
  Layer.scoped(
    ProcessRunner,
    Effect.flatMap(make(options), ({ release, runner }) =>
      Effect.as(
        Effect.addFinalizer(() => Effect.sync(release)),
        runner
      )
    )
  )

let shared: Effect.Effect<ProcessRunner["Type"]> | undefined

/**
 * The runner used where none is provided: one per host process, built on first use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const current: Effect.Effect<ProcessRunner["Type"]> = Effect.suspend(() =>
  Effect.flatMap(Effect.serviceOption(ProcessRunner), (provided) => {
    if (Option.isSome(provided)) return Effect.succeed(provided.value)
    if (shared === undefined) {
      shared = Effect.runSync(Effect.cached(Effect.map(make(), ({ runner }) => runner)))
    }
    return shared
  })
)
