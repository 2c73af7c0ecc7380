/**
 * Kernel confinement of the processes that read files for a tool (ripgrep). A search engine reads
 * by path inside its own process, so no check made in ours can close the race of a symlink
 * swapped under it; the kernel can. On Linux with Landlock (5.13+, unprivileged), ripgrep is
 * started through a tiny launcher (`native/confine.c`, built by the package's build into
 * `dist/native/linux-<arch>/toolcap-confine`) that restricts itself to reading beneath the roots in force and
 * then execs ripgrep: whatever is swapped under it, it cannot open a file outside them.
 *
 * Support is detected once per `Supervisor` layer (the supervisor runs the launcher's probe): the
 * launcher must exist and the kernel must answer a Landlock ABI. Without it (another OS, an old kernel, no compiler at build time, or
 * `TOOLCAP_CONFINEMENT=off`), ripgrep runs unconfined and only the user-space checks of `Roots`
 * apply (see the README for what remains open then).
 *
 * Every engine run also has a memory ceiling (`engineMemoryMaxBytes`): `RLIMIT_DATA`, set by the
 * launcher, or by `/bin/sh`'s `ulimit -d` where there is no launcher. Each Grep and Glob result
 * says which guards applied (`guard`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import { Budgets } from "@toolcap/limits"
import type { Scratch } from "@toolcap/spill"
import * as Roots from "./Roots.js"
import * as Supervisor from "./Supervisor.js"
import type { Workspace } from "./Workspace.js"
import * as Landlock from "./internal/supervisor/landlock.js"
import * as Confine from "./internal/supervisor/confine.js"
import * as LauncherPath from "./internal/supervisor/launcherPath.js"
import * as Settings from "./internal/supervisor/settings.js"

/**
 * How reads are confined here.
 *
 * @since 0.1.0
 * @category models
 */
export type Support = Supervisor.Landlock

/**
 * The native launcher this process uses, or why none: `found` (with where it came from: the
 * `TOOLCAP_LAUNCHER` variable, or the package's own `dist/native/<platform>-<arch>/`), `absent`
 * (no file there), or `unusable` (a file that cannot run here: not executable, a `noexec` mount,
 * another architecture; `broken` when reinstalling would fix it). Without one, ripgrep runs
 * without Landlock and Bash's shell enters its cgroup by the `sh` prologue.
 *
 * @since 0.1.0
 * @category models
 */
export type Launcher = LauncherPath.Resolved

/**
 * Where a launcher was found: `variable` (`TOOLCAP_LAUNCHER`), `package` (the running package's
 * own `dist/native/`), `repository` (a bundle of this repository built before the launcher was
 * copied into it: `@toolcap/tools`' build output beside it).
 *
 * @since 0.1.0
 * @category models
 */
export type LauncherSource = LauncherPath.Source

/**
 * The launcher, resolved when run (never when the package loads), `TOOLCAP_LAUNCHER` read from
 * the `ConfigProvider`. A layer resolves its own once; this answers what a layer here would find.
 *
 * @since 0.1.0
 * @category constructors
 */
export const launcher: Effect.Effect<Launcher> = Effect.map(Effect.orDie(Settings.read), (settings) =>
  LauncherPath.here(settings.launcher)
)

/**
 * The launcher's path (where it was looked for when none is used), resolved as `launcher` is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const launcherPath: Effect.Effect<string> = Effect.map(launcher, (found) => found.path)

/**
 * The environment variable that turns confinement off (`off`), e.g. to compare with the fallback.
 *
 * @since 0.1.0
 * @category models
 */
export const disableVariable: "TOOLCAP_CONFINEMENT" = Landlock.disableVariable

/**
 * System settings ripgrep's allocator (jemalloc) reads at start: refused them, it assumes memory
 * is not overcommitted and maps and unmaps its memory piece by piece (125 `mmap` calls instead of
 * 17 for a small search, most of the confined run's extra cost). They hold no user data; a path
 * missing on this machine grants nothing (the launcher skips it).
 */
const ALLOCATOR_SETTINGS: ReadonlyArray<string> = [
  "/proc/sys/vm/overcommit_memory",
  "/sys/kernel/mm/transparent_hugepage/enabled"
]

/** The settings files this process can read (a launcher refused one would not start ripgrep). */
const allocatorSettings = (): ReadonlyArray<string> =>
  ALLOCATOR_SETTINGS.filter((file) => {
    try {
      fs.accessSync(file, fs.constants.R_OK)
      return true
    } catch {
      return false
    }
  })

/**
 * The memory ceiling of an engine run: its size, and how it is enforced (`rlimit`: `RLIMIT_DATA`
 * of the process, which counts what a line or a file read into memory takes, not the files
 * ripgrep maps, nor the binary's own mapping).
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryCeiling = Schema.Struct({
  maxBytes: Schema.Number,
  enforcedBy: Schema.Literal("rlimit"),
  /** Who set it: the launcher, or `/bin/sh`'s `ulimit -d` where no launcher is used (and why). */
  reason: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type MemoryCeiling = typeof MemoryCeiling.Type

/**
 * Which guards applied to the engine (ripgrep) a Grep or Glob ran: whether the native launcher
 * started it, whether Landlock confined its reads to the roots (and why not), and its memory
 * ceiling (absent when the host set none: `engineMemoryMaxBytes` 0, or when no engine ran).
 *
 * @since 0.1.0
 * @category models
 */
export const Guard = Schema.Struct({
  /** The native launcher (`toolcap-confine`) started the engine. */
  launcher: Schema.Boolean,
  /** Landlock confined the engine's reads to the roots in force. */
  landlockRead: Schema.Boolean,
  /** Why Landlock did not confine the reads, when it did not. */
  landlockReadReason: Schema.optional(Schema.String),
  memoryCeiling: Schema.optional(MemoryCeiling)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Guard = typeof Guard.Type

/**
 * Whether reads can be confined by the kernel here (the supervisor's probe, once per layer).
 *
 * @since 0.1.0
 * @category constructors
 */
export const support: Effect.Effect<Support, never, Supervisor.Supervisor> = Effect.flatMap(
  Supervisor.Supervisor,
  (supervisor) => supervisor.landlock
)

/**
 * The directories a confined run may read beneath, for the fiber running a search; unset, a run
 * is not confined.
 *
 * @since 0.1.0
 * @category models
 */
export const readBeneath: FiberRef.FiberRef<ReadonlyArray<string> | undefined> = FiberRef.unsafeMake<
  ReadonlyArray<string> | undefined
>(undefined)

/**
 * The memory ceiling of the engine runs of the fiber running a search, in bytes (0: none).
 *
 * @since 0.1.0
 * @category models
 */
export const engineMemory: FiberRef.FiberRef<number> = FiberRef.unsafeMake<number>(0)

/**
 * Runs `effect` with its searches confined to the roots in force (workspace, verified scratch,
 * approved external roots) and under the host's engine memory ceiling (`engineMemoryMaxBytes`;
 * the default where no `Budgets` is provided).
 *
 * @since 0.1.0
 * @category constructors
 */
export const withinRoots = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Workspace | Scratch.Scratch> =>
  Effect.flatMap(Roots.roots, (all) =>
    Effect.flatMap(Effect.serviceOption(Budgets.Budgets), (budgets) =>
      effect.pipe(
        Effect.locally(
          readBeneath,
          all.map((root) => root.path)
        ),
        Effect.locally(engineMemory, Option.getOrElse(budgets, () => Budgets.defaults).engineMemoryMaxBytes)
      )
    )
  )

/**
 * The guards of the engine runs of the current fiber (inside `withinRoots`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const currentGuard: Effect.Effect<Guard, never, Supervisor.Supervisor> = Effect.flatMap(
  FiberRef.get(readBeneath),
  (directories) =>
    Effect.flatMap(FiberRef.get(engineMemory), (memoryBytes) => guard(directories, memoryBytes))
)

/**
 * The guards of an engine run here: `directories` its reads are confined beneath (undefined: not
 * confined), `memoryBytes` its ceiling (0: none).
 *
 * @since 0.1.0
 * @category constructors
 */
export const guard = (
  directories: ReadonlyArray<string> | undefined,
  memoryBytes: number
): Effect.Effect<Guard, never, Supervisor.Supervisor> =>
  Effect.map(support, (mode): Guard => {
    const confined = directories !== undefined && mode.kind === "landlock"
    // the layer decided: a launcher turned off, missing or failing its probe names none here
    const launcherRuns = mode.kind === "landlock" || mode.launcher !== undefined
    const launcherUsed = confined || (memoryBytes > 0 && launcherRuns)
    return {
      launcher: launcherUsed,
      landlockRead: confined,
      ...(confined
        ? {}
        : {
            landlockReadReason:
              directories === undefined
                ? "the run was not given roots to confine it to"
                : mode.kind === "none"
                  ? mode.reason
                  : "not confined"
          }),
      ...(memoryBytes > 0
        ? {
            memoryCeiling: {
              maxBytes: memoryBytes,
              enforcedBy: "rlimit" as const,
              ...(launcherUsed
                ? {}
                : {
                    reason: `set by /bin/sh's ulimit -d: no launcher (${mode.kind === "none" ? mode.reason : "not used"})`
                  })
            }
          }
        : {})
    }
  })

/**
 * The command that runs `executable` with `args` under the guards of `guard` (`directories`,
 * `memoryBytes`): confined to reading beneath `directories` (and the executable itself,
 * `/dev/null` and the allocator's two settings files) when the kernel supports it, with its data
 * ceiling set by the launcher, else by `/bin/sh`'s `ulimit -d`; unchanged when neither applies.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = (
  executable: string,
  args: ReadonlyArray<string>,
  directories: ReadonlyArray<string> | undefined,
  memoryBytes = 0
): Effect.Effect<
  { readonly file: string; readonly args: ReadonlyArray<string>; readonly guard: Guard },
  never,
  Supervisor.Supervisor
> =>
  Effect.flatMap(guard(directories, memoryBytes), (applied) =>
    Effect.map(support, (mode) => {
      const memory = applied.memoryCeiling === undefined ? [] : ["--memory", String(memoryBytes)]
      if (applied.launcher) {
        const rules: Array<string> = []
        if (applied.landlockRead && mode.kind === "landlock")
          for (const directory of [...directories!, executable, "/dev/null", ...allocatorSettings()])
            rules.push("--read", directory)
        const file = mode.launcher!
        return { file, args: [...rules, ...memory, "--", executable, ...args], guard: applied }
      }
      // the exit 125 of a refused ceiling is never read as ripgrep's own exit 2
      if (applied.memoryCeiling !== undefined)
        return { ...Confine.underDataCeiling(memoryBytes, executable, args), guard: applied }
      return { file: executable, args, guard: applied }
    })
  )
