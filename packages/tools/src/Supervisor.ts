/**
 * Process supervision: the one service that starts processes — Bash's shell, ripgrep, the probes
 * of the containment and Landlock, the launcher server and the lifeline watchdog.
 *
 * A process is a scoped resource. `start` acquires it: started in its containment, its stdout and
 * stderr each a `Stream<Uint8Array>` read with backpressure, its end an Effect of the exit status.
 * Closing the scope is the only way to stop it (a timeout is an interruption that closes it): the
 * release stops the whole tree — SIGTERM, SIGKILL after the kill grace, a bounded wait — reads
 * what is left in the pipes for a bounded time, closes them, and completes `stopped` with what it
 * did. The release never waits on what the tree does.
 *
 * A tree (a command started with `tree`) runs in the layer's containment tier, decided once per
 * layer (on its first tree, or when `containment` is asked) and reported in every result:
 *  - `cgroup` (cgroup v2): a cgroup per call, entered through the native launcher (`launcher`
 *    entry, `clone3` into the cgroup) or a `/bin/sh` prologue (`prologue` entry);
 *  - `group`: a session and process group of its own, the `TOOLCAP_RUN_ID` cookie and parent
 *    links, where no cgroup can be made or `TOOLCAP_CONTAINMENT=group` forces it.
 * Everything else lives in the layer's scope too: the launcher server, the lifeline watchdog
 * (which stops what is left if the host dies), the cgroup parent kept between calls, the host's
 * identity. Closing the layer leaves no process. Run ids come from `Random`, time from `Clock`.
 *
 * `layerTest` is a supervisor over scripted processes, for the laws of supervision under
 * `TestClock` (see `internal/supervisor/fake.ts`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import { Marker, type ToolError } from "@toolcap/limits"
import * as Confine from "./internal/supervisor/confine.js"
import * as Admission from "./internal/supervisor/admission.js"
import * as Fake from "./internal/supervisor/fake.js"
import * as Group from "./internal/supervisor/group.js"
import * as Real from "./internal/supervisor/supervisor.js"
import * as Settings from "./internal/supervisor/settings.js"

/**
 * The environment variable that forces a tier: `group` forces the fallback; `cgroup` or unset
 * takes the cgroup tier where it works here.
 *
 * @since 0.1.0
 * @category models
 */
export const containmentVariable: "TOOLCAP_CONTAINMENT" = Settings.variables.containment.name

/**
 * The environment variable that forces the `prologue` entry into the cgroup tier (`prologue`),
 * e.g. to compare with the launcher; unset, the launcher is used where it works here.
 *
 * @since 0.1.0
 * @category models
 */
export const cgroupEntryVariable: "TOOLCAP_CGROUP_ENTRY" = Settings.variables.cgroupEntry.name

/**
 * The environment variable that turns Landlock scopes off for calls (`off`); see
 * `Options.landlockScopes`.
 *
 * @since 0.1.0
 * @category models
 */
export const scopesVariable: "TOOLCAP_SCOPES" = Settings.variables.scopes.name

/**
 * The environment variable that turns the PID and mount namespaces of calls off (`off`); see
 * `Options.namespaces`.
 *
 * @since 0.1.0
 * @category models
 */
export const namespacesVariable: "TOOLCAP_NAMESPACES" = Settings.variables.namespaces.name

/**
 * The environment variable that leaves cgroup files writable for calls (`writable`); see
 * `Options.cgroupfsWritable`.
 *
 * @since 0.1.0
 * @category models
 */
export const cgroupfsVariable: "TOOLCAP_CGROUPFS" = Settings.variables.cgroupfs.name

/**
 * The environment variable that sets how many Bash calls one host runs at once when
 * `Options.maxConcurrentCalls` does not (a whole number of at least 1).
 *
 * @since 0.1.0
 * @category models
 */
export const maxConcurrentCallsVariable: "TOOLCAP_MAX_CONCURRENT_CALLS" = Admission.variable

/**
 * Why a value cannot be `Options.maxConcurrentCalls` (`must be a whole number of at least 1, got
 * 0`), or undefined when it can: for a host surface to refuse it as its own input.
 *
 * @since 0.1.0
 * @category utils
 */
export const maxConcurrentCallsInvalid: (value: unknown) => string | undefined = Admission.invalid

/**
 * Calls admitted at once per core by default (`Options.maxConcurrentCalls`).
 *
 * @since 0.1.0
 * @category models
 */
export const maxConcurrentCallsPerCore: number = Admission.PER_CORE

/**
 * The environment variable that carries a tree's cookie (its run id).
 *
 * @since 0.1.0
 * @category models
 */
export const cookieVariable: "TOOLCAP_RUN_ID" = Group.cookieVariable

/**
 * A call's memory ceiling: its size, how the kernel enforces it — `cgroup` (`memory.max` on the
 * call's cgroup: the whole call, every process together) or `rlimit` (`RLIMIT_DATA` of each
 * process: an allocation past it fails inside the program) — and, after the call, what the kernel
 * counted against it (a `cgroup` ceiling only: the kernel counts nothing for an rlimit).
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryCeiling = Schema.Struct({
  maxBytes: Schema.Number,
  enforcedBy: Schema.Literal("cgroup", "rlimit"),
  /**
   * The kernel's mechanism: `cgroup v2 memory.max` (with `memory.swap.max` 0), `cgroup v1
   * memory.limit_in_bytes` (with `memory.memsw.limit_in_bytes` where swap is accounted), or
   * `RLIMIT_AS` of every process (counts shared mappings; /dev/shm files only a controller bounds).
   */
  mechanism: Schema.optional(
    Schema.Literal("cgroup v2 memory.max", "cgroup v1 memory.limit_in_bytes", "RLIMIT_AS")
  ),
  /** Why the ceiling is per process (`rlimit`) rather than on the call's cgroup, when it is. */
  reason: Schema.optional(Schema.String),
  /** The call's memory reached the ceiling (the kernel reclaimed or killed to stay under it). */
  reached: Schema.optional(Schema.Boolean),
  /** Processes of the call the kernel's OOM killer ended to keep the ceiling. */
  oomKills: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type MemoryCeiling = typeof MemoryCeiling.Type

/**
 * A call's task limit: how many processes and threads it may have at once, how the kernel
 * enforces it — `cgroup` (`pids.max` on the call's v2 cgroup, or on a v1 pids cgroup of the call)
 * or `none` (no pids controller here: no per-call bound exists, and the reason says why) — and,
 * after the call, whether a fork was refused for it.
 *
 * @since 0.1.0
 * @category models
 */
export const TaskLimit = Schema.Struct({
  maxTasks: Schema.Number,
  enforcedBy: Schema.Literal("cgroup", "none"),
  mechanism: Schema.optional(Schema.Literal("cgroup v2 pids.max", "cgroup v1 pids.max")),
  /** Why no cgroup enforces it, when none does. */
  reason: Schema.optional(Schema.String),
  /** The call reached its limit: a fork (or a thread) was refused with EAGAIN. */
  reached: Schema.optional(Schema.Boolean),
  /** How many forks the kernel refused (`pids.events` max). */
  forkFailures: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type TaskLimit = typeof TaskLimit.Type

/**
 * How a tree is contained, and which guard applied: the tier, how a call's shell enters its cgroup
 * (cgroup tier only), whether the native launcher started it, whether Landlock scopes keep it from
 * reaching the host, its memory ceiling — and, for each weaker choice than the best one this
 * package has, why. Every Bash result carries it (`termination`).
 *
 * @since 0.1.0
 * @category models
 */
export const Containment = Schema.Struct({
  /** `cgroup` (a cgroup v2 per call) or `group` (process group, cookie, parent links). */
  containment: Schema.Literal("cgroup", "group"),
  /** `launcher` (created inside its cgroup) or `prologue` (moved in by `/bin/sh`); cgroup tier only. */
  cgroupEntry: Schema.optional(Schema.Literal("launcher", "prologue")),
  /** Why the tier or the entry is not the best one this package has, e.g. `no cgroup v2 ...`. */
  fallbackReason: Schema.optional(Schema.String),
  /** The native launcher (`toolcap-confine`) started the call's shell. */
  launcher: Schema.Boolean,
  /**
   * Landlock scopes applied to the call: nothing it runs can signal, ptrace, `pidfd_getfd` or open
   * `/proc/<pid>/fd|mem` of a process outside the call (the host, its watchdog, other calls).
   */
  landlockScopes: Schema.Boolean,
  /** Why Landlock scopes were not applied, when they were not. */
  landlockScopesReason: Schema.optional(Schema.String),
  /** The call's memory ceiling, when the host set one (`bashMemoryMaxBytes`). */
  memoryCeiling: Schema.optional(MemoryCeiling),
  /**
   * The call's deadline is also kept by the lifeline watchdog, a process outside the host: if the
   * host has not begun the stop shortly after the deadline (its event loop blocked or saturated),
   * the watchdog sends SIGTERM, then SIGKILL after the kill grace. Absent for a tree without a deadline.
   */
  deadlineBackstop: Schema.optional(Schema.Boolean),
  /** Why the deadline has no backstop outside the host, when it has none. */
  deadlineBackstopReason: Schema.optional(Schema.String),
  /** The call's task limit, when the host set one (`bashTasksMax`, 4096 by default). */
  taskLimit: Schema.optional(TaskLimit),
  /**
   * What keeps the call from writing any cgroup file (moving the host into its cgroup, freezing or
   * killing it through `cgroup.freeze`/`cgroup.kill`): `landlock` (the launcher's write rules
   * leave every cgroup mount out; they also refuse mount changes, so in namespaces the read-only
   * cgroup mounts stay so), `read-only mount` (the call's mount namespace has the cgroup mounts
   * read-only) or `none`.
   */
  cgroupfs: Schema.optional(Schema.Literal("landlock", "read-only mount", "none")),
  /** Why the call's cgroupfs guard is not `landlock`, when it is not. */
  cgroupfsReason: Schema.optional(Schema.String),
  /**
   * What keeps the host's `/proc/<pid>` (`environ`, `cmdline`, `maps`) from the call: `pid
   * namespace` (the call's own PID namespace and `/proc`: no process outside it is listed),
   * `landlock` (a host that is not root: Landlock's ptrace check refuses `environ` and `maps`, not
   * `cmdline`) or `none`.
   */
  proc: Schema.optional(Schema.Literal("pid namespace", "landlock", "none")),
  /** Why the call's `/proc` guard is not `pid namespace`, when it is not. */
  procReason: Schema.optional(Schema.String),
  /**
   * The call's `/dev/shm`: `private` (a tmpfs of its own of `shmMaxBytes`, gone with the call) or
   * `shared` (the host's).
   */
  shm: Schema.optional(Schema.Literal("private", "shared")),
  shmMaxBytes: Schema.optional(Schema.Number),
  /** Why the call's `/dev/shm` is the host's, when it is. */
  shmReason: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Containment = typeof Containment.Type

/**
 * The guards of a containment in one line for people (the CLI's `doctor`), each weaker one with
 * its reason, e.g. `cgroup tier (launcher entry), native launcher, Landlock scopes`.
 *
 * @since 0.1.0
 * @category utils
 */
export const describeContainment = (containment: Containment): string => {
  const ceiling = containment.memoryCeiling
  const tasks = containment.taskLimit
  return [
    `${containment.containment} tier` +
      (containment.cgroupEntry === undefined ? "" : ` (${containment.cgroupEntry} entry)`) +
      (containment.fallbackReason === undefined ? "" : ` [${containment.fallbackReason}]`),
    containment.launcher ? "native launcher" : "no native launcher",
    containment.landlockScopes
      ? "Landlock scopes"
      : `no Landlock scopes [${containment.landlockScopesReason ?? "not offered"}]`,
    ...(ceiling === undefined
      ? []
      : [
          `memory ceiling ${Marker.formatBytes(ceiling.maxBytes)} ` +
            (ceiling.enforcedBy === "cgroup"
              ? "on the call's cgroup"
              : `per process [${ceiling.reason ?? "no cgroup ceiling here"}]`) +
            (ceiling.reached === true ? " (reached)" : "")
        ]),
    ...(tasks === undefined
      ? []
      : [
          `task limit ${tasks.maxTasks} ` +
            (tasks.enforcedBy === "cgroup"
              ? `(${tasks.mechanism ?? "pids.max"})`
              : `not enforced [${tasks.reason ?? "no pids controller here"}]`) +
            (tasks.reached === true ? " (reached)" : "")
        ]),
    ...(containment.cgroupfs === undefined
      ? []
      : [
          `cgroupfs ${containment.cgroupfs === "none" ? "writable" : `denied by ${containment.cgroupfs}`}` +
            (containment.cgroupfsReason === undefined ? "" : ` [${containment.cgroupfsReason}]`)
        ]),
    ...(containment.proc === undefined
      ? []
      : [
          `host /proc ${containment.proc === "none" ? "readable" : `hidden by ${containment.proc}`}` +
            (containment.procReason === undefined ? "" : ` [${containment.procReason}]`)
        ]),
    ...(containment.shm === undefined
      ? []
      : [
          containment.shm === "private"
            ? `private /dev/shm ${Marker.formatBytes(containment.shmMaxBytes ?? 0)}`
            : `shared /dev/shm [${containment.shmReason ?? "no mount namespace"}]`
        ])
  ].join(", ")
}

/**
 * @since 0.1.0
 * @category models
 */
export type Tier = Containment["containment"]

/**
 * @since 0.1.0
 * @category models
 */
export type CgroupEntry = NonNullable<Containment["cgroupEntry"]>

/**
 * How a process ended: an exit code, or the name of the signal that ended it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

/**
 * The shell commands run under: `bash` from PATH (or /bin), else `sh`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Shell {
  readonly file: string
  readonly name: "bash" | "sh"
}

/**
 * Whether reads can be confined by the kernel here: Landlock through the native launcher, or why not.
 *
 * @since 0.1.0
 * @category models
 */
export type Landlock =
  | { readonly kind: "landlock"; readonly abi: number; readonly launcher: string }
  | {
      readonly kind: "none"
      readonly reason: string
      /** Why, as a tag: decisions read this, never the reason's text. */
      readonly cause: LandlockFallback
      /** The launcher, when it still runs here (it sets memory ceilings); absent: none is used. */
      readonly launcher?: string
    }

/**
 * Why reads are not confined: turned off (`TOOLCAP_CONFINEMENT=off`), the launcher turned off
 * (`launcher: false`), no usable launcher, a launcher that failed its probe (then trusted with
 * nothing), not Linux, a kernel without Landlock, or the fake supervisor.
 *
 * @since 0.1.0
 * @category models
 */
export type LandlockFallback =
  "turned-off" | "launcher-off" | "no-launcher" | "probe-failed" | "not-linux" | "kernel" | "fake"

/**
 * How a tree is stopped and how long its release may take: SIGTERM, SIGKILL after `killGraceMs`,
 * up to `killWaitMs` for members to die after it; then the pipes are read for what is left of
 * `killGraceMs + drainMs` since the stop began (at least a short last read), and closed.
 *
 * @since 0.1.0
 * @category models
 */
export interface TreeOptions {
  /** Names the tree's cgroup and is its cookie (`TOOLCAP_RUN_ID`); use `runId` for a fresh one. */
  readonly runId: string
  readonly killGraceMs: number
  readonly killWaitMs: number
  readonly drainMs: number
  /** A memory ceiling for the whole tree, in bytes (0 or undefined: none); see `MemoryCeiling`. */
  readonly memoryMaxBytes?: number | undefined
  /**
   * The caller's deadline for the main process, in milliseconds from the start: the watchdog
   * stops the tree if the host has not begun to `deadlineBackstopMs` after it (see
   * `Containment.deadlineBackstop`). Undefined: no deadline.
   */
  readonly deadlineMs?: number | undefined
  /** A task limit for the whole tree, processes and threads (0 or undefined: none); see `TaskLimit`. */
  readonly tasksMax?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Command {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The whole environment of the process; default: the host's. A tree also gets its cookie. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Written to stdin, which is then closed; stdin is /dev/null otherwise. */
  readonly stdin?: string | undefined
  /** Run as a contained tree in the layer's tier, stopped as a whole; else one plain process. */
  readonly tree?: TreeOptions | undefined
}

/**
 * What the release of a process did. For a plain process, `signalled` is its pid when it had to
 * be killed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stopped {
  /** Every pid that was sent a signal, ascending. Empty when nothing of the tree was alive. */
  readonly signalled: ReadonlyArray<number>
  /** The pids that outlived the kill grace and were sent SIGKILL, ascending. */
  readonly killed: ReadonlyArray<number>
  /** Members this host may not signal (another user's, e.g. run through sudo): not stopped, not waited for. */
  readonly unstoppable: ReadonlyArray<number>
  /** Members still alive when the wait after SIGKILL ran out (e.g. stuck in uninterruptible sleep). */
  readonly survivors: ReadonlyArray<number>
  /** The pipes were still held open (by a process outside the tree) when they were closed. */
  readonly pipesHeld: boolean
  /** What the kernel counted against a `cgroup` memory ceiling (none otherwise). */
  readonly memory?: { readonly reached: boolean; readonly oomKills: number } | undefined
  /** What the kernel counted against a `cgroup` task limit (none otherwise). */
  readonly tasks?: { readonly reached: boolean; readonly forkFailures: number } | undefined
  /**
   * Processes the call did not start, found in its cgroup (a call that may write to cgroup files
   * can move any process it names there, the host included): each moved back to the cgroup it
   * came from (`movedTo`; undefined when the kernel refused) and never signalled.
   */
  readonly foreign?: ReadonlyArray<ForeignMember> | undefined
  /** Frozen cgroups (v2 `cgroup.freeze`, the v1 freezer) the stop thawed first. */
  readonly thawed?: number | undefined
  /** Files the call left in /dev/shm, removed when it ended (see `Options.shmCleanup`). */
  readonly shmRemoved?: ReadonlyArray<string> | undefined
}

/**
 * A process found in a call's cgroup that the call did not start (see `Stopped.foreign`).
 *
 * @since 0.1.0
 * @category models
 */
export const ForeignMember = Schema.Struct({
  pid: Schema.Number,
  /** The cgroup it was moved back to; absent when the kernel refused the move. */
  movedTo: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ForeignMember = typeof ForeignMember.Type

/**
 * A started process, valid in the scope `start` ran in.
 *
 * @since 0.1.0
 * @category models
 */
export interface Process {
  /**
   * The process the supervisor waits on: the command itself, or in the cgroup tier's `launcher`
   * entry the launcher (outside the call's cgroup, the command's parent, exiting with its status).
   */
  readonly pid: number
  /** The tree's containment; undefined for a plain process. */
  readonly containment: Containment | undefined
  /** The pipe's reads in order; a slow consumer pauses the pipe (and then the writer). */
  readonly stdout: Stream.Stream<Uint8Array>
  readonly stderr: Stream.Stream<Uint8Array>
  /**
   * The same reads handed to a synchronous consumer as each arrives (what was read before first),
   * without backpressure, and `onEnd` once the pipe ended or was closed: for a consumer that never
   * waits (a capture, ripgrep's parser), where a Stream's machinery would cost more than the
   * reading. A pipe is read one way.
   */
  readonly tap: (
    stream: "stdout" | "stderr",
    onBytes: (bytes: Uint8Array) => void,
    onEnd?: () => void
  ) => void
  /**
   * Completes when the main process exited (its pipes may still be held open by others). Fails
   * with `TOOL_LAUNCHER_LOST` only for a tree the layer's launcher server started and then went
   * away before it told the exit (no status is made up); a plain process's never fails.
   */
  readonly exit: Effect.Effect<ExitStatus, ToolError.ToolLauncherLost>
  /** The exit status once the main process exited; no waiting. */
  readonly exitStatus: Effect.Effect<Option.Option<ExitStatus>>
  /** Completes when both pipes reached end of file (or were closed). */
  readonly drained: Effect.Effect<void>
  /** Whether both pipes reached end of file or were closed; no waiting. */
  readonly isDrained: Effect.Effect<boolean>
  /** Completes once the scope's release stopped the process and closed the pipes: what it did. */
  readonly stopped: Effect.Effect<Stopped>
}

/**
 * What admitting a call did: how long it waited for a free slot and the host's limit.
 *
 * @since 0.1.0
 * @category models
 */
export type Admitted = Admission.Admitted

/**
 * @since 0.1.0
 * @category models
 */
export interface SupervisorService {
  /** How trees are contained here; decided once per layer (with the startup sweep) on first use. */
  readonly containment: Effect.Effect<Containment>
  /** Whether reads can be confined by the kernel here; probed once per layer. */
  readonly landlock: Effect.Effect<Landlock>
  /** The shell commands run under; resolved once per layer. */
  readonly shell: Effect.Effect<Shell>
  /**
   * A fresh run id, `<host pid>-<host start time>-<layer><random>` in base 36: unique across hosts,
   * layers and calls, and a later host can tell from it whether the owner of a leftover is gone.
   */
  readonly runId: Effect.Effect<string>
  /** Starts a process in the current scope; closing the scope stops it (a tree: the whole tree). */
  readonly start: (command: Command) => Effect.Effect<Process, ToolError.ToolSpawnFailed, Scope.Scope>
  /**
   * Waits for one of the host's `maxConcurrentCalls` slots, first come first served, and holds it
   * until the current scope closes (interruptible while it waits). Bash takes one per call.
   */
  readonly admit: Effect.Effect<Admitted, never, Scope.Scope>
}

/**
 * @since 0.1.0
 * @category services
 */
export class Supervisor extends Context.Tag("@toolcap/tools/Supervisor")<Supervisor, SupervisorService>() {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** `group` forces the group tier; default: `TOOLCAP_CONTAINMENT`, else cgroup where it works. */
  readonly containment?: Tier | undefined
  /** `prologue` forces the prologue entry; default: `TOOLCAP_CGROUP_ENTRY`, else the launcher where it works. */
  readonly cgroupEntry?: CgroupEntry | undefined
  /**
   * Whether the launcher entry keeps a launcher server from the layer's second launch on
   * (default true; false starts the launcher per call from the host, as a host that wants no
   * extra process would).
   */
  readonly launcherServer?: boolean | undefined
  /**
   * `false` never runs the native launcher, as on an install that could not build it (calls then
   * take the prologue entry or the group tier, without Landlock scopes); default: where it is built.
   */
  readonly launcher?: boolean | undefined
  /**
   * `false` applies no Landlock scopes to calls (default: `TOOLCAP_SCOPES`, else scopes wherever
   * the kernel and the launcher offer them). A host that is not root gets `no_new_privs` with the
   * scopes, so setuid programs (`sudo`) inside a call cannot gain privileges; turning scopes off
   * gives that back, and gives a call back the reach of signals, ptrace and `/proc` into the host.
   */
  readonly landlockScopes?: boolean | undefined
  /**
   * `true` lets calls write cgroup files (default: `TOOLCAP_CGROUPFS=writable`, else false: the launcher's Landlock write rules leave
   * every cgroup mount out, where the kernel's Landlock ABI is 2 or later). A call that may write
   * cgroupfs can move the host into its cgroup or freeze it; only a host that runs calls which
   * manage cgroups themselves should turn this on.
   */
  readonly cgroupfsWritable?: boolean | undefined
  /**
   * `false` runs calls without PID and mount namespaces (default: `TOOLCAP_NAMESPACES`, else
   * namespaces wherever the launcher entry runs and the kernel allows them: as root, or through an
   * unprivileged user namespace). In them a call sees only its own processes in `/proc` (pids
   * inside are the namespace's), the cgroup mounts read-only and a private `/dev/shm`.
   */
  readonly namespaces?: boolean | undefined
  /**
   * The size of a call's private `/dev/shm`, in bytes (default: the call's memory ceiling when it
   * has one, so shared memory cannot go past it; else `DEFAULT_SHM_BYTES`).
   */
  readonly shmMaxBytes?: number | undefined
  /**
   * How many Bash calls this host runs at once; the others wait for a slot, report the wait
   * (`admission.waitedMs`) and count their timeout from their start. Default:
   * `TOOLCAP_MAX_CONCURRENT_CALLS`, else `maxConcurrentCallsPerCore` (8) per core
   * (`os.availableParallelism()`). Not a whole number of at least 1: the layer fails to build.
   */
  readonly maxConcurrentCalls?: number | undefined
  /**
   * `false` keeps a call's deadline in the host only, with no backstop in the lifeline watchdog
   * (default true; see `Containment.deadlineBackstop`).
   */
  readonly deadlineBackstop?: boolean | undefined
  /**
   * How long after a call's deadline the watchdog steps in when the host has not begun the stop
   * (default 250 ms: a host whose event loop turns begins within a few milliseconds, the bench's
   * deadline-to-TOOL_TIMEOUT median target is 100 ms, so the backstop never races a healthy host;
   * and it stays far inside the 3 s answer bound of kill grace plus drain grace).
   */
  readonly deadlineBackstopMs?: number | undefined
  /**
   * `false` uses no memory controller for a call's memory ceiling, so it is `RLIMIT_AS` of every
   * process (the fallback of a host without one; default: cgroup v2, else v1, where usable).
   */
  readonly memoryController?: boolean | undefined
  /**
   * `false` uses no cgroup v1 hierarchy for a call's memory ceiling or task limit (default: the
   * v1 memory and pids controllers where v2 lacks them, as on a hybrid host).
   */
  readonly cgroupV1?: boolean | undefined
  /**
   * `false` leaves the files a call wrote to /dev/shm when it ends (default: removed, where no
   * private /dev/shm was mounted for it: memory that would stay pinned after the call). A file is
   * the call's when it appeared during the call, is the host user's, and no process holds it
   * open or mapped at the end.
   */
  readonly shmCleanup?: boolean | undefined
}

/**
 * A call's private `/dev/shm` when it has no memory ceiling: 1 GiB (see `Options.shmMaxBytes`).
 *
 * @since 0.1.0
 * @category models
 */
export const DEFAULT_SHM_BYTES: number = Confine.DEFAULT_SHM_BYTES

/**
 * A supervisor in the current scope; closing the scope ends its launcher server and watchdog.
 * Building it starts nothing: the tier, the shell and Landlock are decided on first use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<SupervisorService, never, Scope.Scope> = Real.make

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<Supervisor> =>
  Layer.scoped(Supervisor, make(options))

/**
 * A scripted process of the fake supervisor (`layerTest`). Times are milliseconds after the start,
 * on the `Clock`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedProcess {
  /** What it writes, when. */
  readonly output?: ReadonlyArray<{
    readonly at: number
    readonly stream: "stdout" | "stderr"
    readonly data: Uint8Array | string
  }>
  /** When it exits by itself and with which code; never when omitted. */
  readonly exitAt?: { readonly at: number; readonly code: number } | undefined
  /** What SIGTERM does: it dies `afterMs` later (default at once), or it is ignored. */
  readonly onTerm?: { readonly afterMs: number } | "ignore" | undefined
  /** SIGKILL kills it, unless it is stuck (uninterruptible sleep): then it survives. */
  readonly stuck?: boolean | undefined
  /** Other members of its tree (a child keeps running after the main process exits). */
  readonly children?: ReadonlyArray<ScriptedChild> | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ScriptedChild {
  readonly exitAt?: number | undefined
  readonly onTerm?: { readonly afterMs: number } | "ignore" | undefined
  readonly stuck?: boolean | undefined
  /** It holds the output pipes open until it dies (they end when the last holder is gone). */
  readonly holdsPipes?: boolean | undefined
  /** It left the tree (`setsid` + scrubbed environment): never signalled, holding the pipes. */
  readonly escaped?: boolean | undefined
}

/**
 * What the fake did, for assertions: a tree started, a signal reached a member, a member died.
 *
 * @since 0.1.0
 * @category models
 */
export type FakeEvent =
  | { readonly _tag: "Started"; readonly at: number; readonly pids: ReadonlyArray<number> }
  | {
      readonly _tag: "Signal"
      readonly at: number
      readonly pid: number
      readonly signal: "SIGTERM" | "SIGKILL"
    }
  | { readonly _tag: "Died"; readonly at: number; readonly pid: number }

/**
 * A supervisor over scripted processes under the `Clock` (use `TestClock`): `script` gives each
 * started command its behaviour, `onEvent` sees what happened. Stopping, draining and reporting
 * are the real supervisor's; only the processes are fake. Its trees report the `group` tier.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = (options: {
  readonly script: (command: Command) => ScriptedProcess
  readonly onEvent?: ((event: FakeEvent) => void) | undefined
  /** Calls admitted at once (default: as `Options.maxConcurrentCalls`). */
  readonly maxConcurrentCalls?: number | undefined
}): Layer.Layer<Supervisor> => Layer.scoped(Supervisor, Fake.make(options))
