/**
 * What runs around a call's shell, and the command lines that put it there: the native launcher
 * (`native/confine.c`) when the layer uses it, the Landlock scopes it applies (so nothing the call
 * runs can signal or inspect the host, its watchdog or another call) and a per-process memory
 * ceiling. Every entry applies them before the shell's first instruction, keeping the shell's pid:
 * the launcher entry in the child it creates inside the cgroup, the prologue and the group tier by
 * exec'ing `toolcap-confine --scope … -- shell` in place. Without the launcher only a memory
 * ceiling can still be applied, by `/bin/sh`'s `ulimit -d`.
 */
import type { Containment } from "../../Supervisor.js"

/**
 * A call's private `/dev/shm` when it has no memory ceiling: 1 GiB, above what shared-memory users
 * ask in practice (browsers, worker pools; Docker's 64 MiB default is a known cause of their
 * crashes) and far below the memory of a machine that runs an agent.
 */
export const DEFAULT_SHM_BYTES = 1024 * 1024 * 1024

/** The launcher this layer runs, or why it runs none. */
export type LauncherChoice =
  | { readonly path: string; readonly reason?: undefined }
  | { readonly path: undefined; readonly reason: string }

/** What a call's shell runs under. */
export interface Guards {
  /** The launcher's path, when this layer runs it. */
  readonly launcher: string | undefined
  /** Landlock scopes on the shell and all it starts (needs the launcher). */
  readonly scope: boolean
  /** `RLIMIT_AS` of every process of the call, in bytes, when the ceiling is per process. */
  readonly memoryBytes: number | undefined
  /** The call's cgroup v1 cgroups (memory, pids) its shell joins before it runs. */
  readonly cgroup1?: ReadonlyArray<string> | undefined
  /** Landlock write rules that leave every cgroup mount out (needs the launcher). */
  readonly denyCgroupfs?: boolean | undefined
  /** PID and mount namespaces with a private `/dev/shm` of this many bytes (launcher entry only). */
  readonly shmBytes?: number | undefined
}

/** A command line. */
export interface Line {
  readonly file: string
  readonly args: ReadonlyArray<string>
}

/**
 * A prologue run by /bin/sh: it writes its own pid into the call's cgroup, then execs the real
 * command with the same pid. The command runs only once the move succeeded (exit 125 otherwise,
 * the code `env` and `timeout` use for "could not run").
 */
export const PROLOGUE = 'echo $$ > "$0/cgroup.procs" || exit 125; exec "$@"'

/** The per-process memory ceiling without the launcher: `$0` KiB of data, then the command (same pid). */
const ULIMIT = 'ulimit -d "$0" || exit 125; exec "$@"'

/**
 * `file args` under a data ceiling set by `/bin/sh`'s `ulimit -d`, as the same process: what is
 * left where there is no launcher (Bash's shell, ripgrep). ulimit counts KiB, rounded down so the
 * ceiling is never above what was asked; a refused ceiling exits 125.
 */
export const underDataCeiling = (memoryBytes: number, file: string, args: ReadonlyArray<string>): Line => ({
  file: "/bin/sh",
  args: ["-c", ULIMIT, String(Math.max(1, Math.floor(memoryBytes / 1024))), file, ...args]
})

/**
 * Without the launcher: the shell joins the call's v1 cgroups (`$1`... up to `--`) and sets its
 * address-space ceiling (`$0` KiB, `-` for none), then becomes the command (same pid); 125 when
 * either is refused. It joins by writing 0 (itself) to `tasks`: the shell has one thread, and the
 * kernel moves the writer's own thread without the global lock a pid written to `cgroup.procs`
 * takes, which waits out an RCU grace period (see `apply_call_bounds` in native/confine.c).
 */
const BOUNDS_PROLOGUE =
  'while [ "$1" != -- ]; do echo 0 > "$1/tasks" || exit 125; shift; done; shift; ' +
  '[ "$0" = - ] || ulimit -v "$0" || exit 125; exec "$@"'

/** `file args` joining the v1 cgroups and under the address-space ceiling, by `/bin/sh` (no launcher). */
const underBounds = (guards: Guards, file: string, args: ReadonlyArray<string>): Line => ({
  file: "/bin/sh",
  args: [
    "-c",
    BOUNDS_PROLOGUE,
    guards.memoryBytes === undefined ? "-" : String(Math.max(1, Math.floor(guards.memoryBytes / 1024))),
    ...(guards.cgroup1 ?? []),
    "--",
    file,
    ...args
  ]
})

/** The launcher's options for what it applies to the program itself. */
const launcherOptions = (guards: Guards): Array<string> => [
  ...(guards.scope ? ["--scope"] : []),
  ...(guards.denyCgroupfs === true ? ["--deny-cgroupfs"] : []),
  ...(guards.memoryBytes === undefined ? [] : ["--address-space", String(guards.memoryBytes)]),
  ...(guards.cgroup1 ?? []).flatMap((dir) => ["--cgroup1", dir])
]

/** The namespaces option: it keeps the launcher as the program's parent, so never in place. */
const isolateOptions = (guards: Guards): Array<string> =>
  guards.shmBytes === undefined ? [] : ["--isolate", String(guards.shmBytes)]

/** Whether the launcher runs for a call with these guards entering by `entry` (undefined: the group tier). */
export const usesLauncher = (guards: Guards, entry: "launcher" | "prologue" | undefined): boolean =>
  guards.launcher !== undefined && (entry === "launcher" || launcherOptions(guards).length > 0)

/** `file args` with the guards applied before it runs, as the same process (exec in place). */
export const inPlace = (guards: Guards, file: string, args: ReadonlyArray<string>): Line => {
  const options = launcherOptions(guards)
  if (options.length === 0) return { file, args }
  if (guards.launcher !== undefined) return { file: guards.launcher, args: [...options, "--", file, ...args] }
  // no launcher, so no scope: only the bounds are left
  return underBounds(guards, file, args)
}

/**
 * The command that runs `file args` inside the cgroup `dir`, with the guards applied. Either way
 * it runs only once inside, and exit status 125 means it could not get there (nothing ran).
 */
export const intoCgroup = (
  entry: "launcher" | "prologue",
  dir: string,
  guards: Guards,
  file: string,
  args: ReadonlyArray<string>
): Line => {
  if (entry === "launcher" && guards.launcher !== undefined) {
    return {
      file: guards.launcher,
      args: ["--cgroup", dir, ...launcherOptions(guards), ...isolateOptions(guards), "--", file, ...args]
    }
  }
  const inner = inPlace(guards, file, args)
  return { file: "/bin/sh", args: ["-c", PROLOGUE, dir, inner.file, ...inner.args] }
}

/** The options field of a launcher server's `run-with` request; undefined when a plain `run` does. */
export const serverOptions = (guards: Guards): string | undefined => {
  const options = [
    ...(guards.scope ? ["scope"] : []),
    ...(guards.denyCgroupfs === true ? ["deny-cgroupfs"] : []),
    ...(guards.memoryBytes === undefined ? [] : [`as=${guards.memoryBytes}`]),
    ...(guards.cgroup1 ?? []).map((dir) => `cgroup1=${dir}`),
    ...(guards.shmBytes === undefined ? [] : [`isolate=${guards.shmBytes}`])
  ]
  return options.length === 0 ? undefined : options.join(",")
}

/** What a layer decided for every call: the launcher it runs and whether calls get Landlock scopes. */
export interface LayerGuards {
  readonly launcher: string | undefined
  readonly scope: boolean
  /** Landlock write rules that leave every cgroup mount out. */
  readonly denyCgroupfs?: boolean | undefined
  /** PID and mount namespaces per call (launcher entry), with `/dev/shm` of `shmMaxBytes` or the call's ceiling. */
  readonly isolate?: boolean | undefined
  readonly shmMaxBytes?: number | undefined
}

/** The size of a call's private `/dev/shm`: the host's option, else the call's memory ceiling, else the default. */
export const shmBytesFor = (layer: LayerGuards, maxBytes: number): number =>
  layer.shmMaxBytes ?? (maxBytes > 0 ? maxBytes : DEFAULT_SHM_BYTES)

/**
 * One call's guards and containment: the layer's, with the call's bounds (./bounds.ts) — the v1
 * cgroups its shell joins, `RLIMIT_AS` where the memory ceiling is per process — and what they are.
 */
export const forCall = (
  layer: LayerGuards,
  base: Containment,
  bounds: {
    readonly memoryCeiling: Containment["memoryCeiling"]
    readonly taskLimit: Containment["taskLimit"]
    readonly addressSpaceBytes: number | undefined
    readonly cgroup1: ReadonlyArray<string>
  }
): { readonly guards: Guards; readonly containment: Containment } => {
  const shmBytes =
    layer.isolate === true ? shmBytesFor(layer, bounds.memoryCeiling?.maxBytes ?? 0) : undefined
  const guards: Guards = {
    ...layer,
    memoryBytes: bounds.addressSpaceBytes,
    ...(bounds.cgroup1.length > 0 ? { cgroup1: bounds.cgroup1 } : {}),
    shmBytes
  }
  return {
    guards,
    containment: {
      ...base,
      ...(shmBytes === undefined ? {} : { shmMaxBytes: shmBytes }),
      launcher: usesLauncher(guards, base.cgroupEntry),
      ...(bounds.memoryCeiling === undefined ? {} : { memoryCeiling: bounds.memoryCeiling }),
      ...(bounds.taskLimit === undefined ? {} : { taskLimit: bounds.taskLimit })
    }
  }
}
