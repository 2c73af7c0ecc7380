/**
 * Kernel confinement of the processes that read files for a tool (ripgrep). A search engine reads
 * by path inside its own process, so no check made in ours can close the race of a symlink
 * swapped under it; the kernel can. On Linux with Landlock (5.13+, unprivileged), ripgrep is
 * started through a tiny launcher (`native/confine.c`, built by the package's build into
 * `dist/native/toolcap-confine`) that restricts itself to reading beneath the roots in force and
 * then execs ripgrep: whatever is swapped under it, it cannot open a file outside them.
 *
 * Support is detected once per `Supervisor` layer (the supervisor runs the launcher's probe): the
 * launcher must exist and the kernel must answer a Landlock ABI. Without it (another OS, an old kernel, no compiler at build time, or
 * `TOOLCAP_CONFINEMENT=off`), ripgrep runs unconfined and only the user-space checks of `Roots`
 * apply (see the README for what remains open then).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as fs from "node:fs"
import type { Scratch } from "@toolcap/spill"
import * as Roots from "./Roots.js"
import * as Supervisor from "./Supervisor.js"
import type { Workspace } from "./Workspace.js"
import * as Landlock from "./internal/supervisor/landlock.js"
import * as LauncherPath from "./internal/supervisor/launcherPath.js"

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
 * The launcher, resolved once when the package loads.
 *
 * @since 0.1.0
 * @category models
 */
export const launcher: Launcher = LauncherPath.launcher

/**
 * The launcher's path (where it was looked for when none is used).
 *
 * @since 0.1.0
 * @category models
 */
export const launcherPath: string = LauncherPath.launcherPath

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
 * Runs `effect` with its searches confined to the roots in force (workspace, verified scratch,
 * approved external roots).
 *
 * @since 0.1.0
 * @category constructors
 */
export const withinRoots = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Workspace | Scratch.Scratch> =>
  Effect.flatMap(Roots.roots, (all) =>
    Effect.locally(
      effect,
      readBeneath,
      all.map((root) => root.path)
    )
  )

/**
 * The command that runs `executable` with `args`, confined to reading beneath `directories` (and
 * the executable itself, `/dev/null` and the allocator's two settings files) when the kernel
 * supports it; unchanged otherwise.
 *
 * @since 0.1.0
 * @category constructors
 */
export const command = (
  executable: string,
  args: ReadonlyArray<string>,
  directories: ReadonlyArray<string> | undefined
): Effect.Effect<
  { readonly file: string; readonly args: ReadonlyArray<string> },
  never,
  Supervisor.Supervisor
> =>
  directories === undefined
    ? Effect.succeed({ file: executable, args })
    : Effect.map(support, (mode) => {
        if (mode.kind === "none") return { file: executable, args }
        const rules: Array<string> = []
        for (const directory of [...directories, executable, "/dev/null", ...allocatorSettings()])
          rules.push("--read", directory)
        return { file: mode.launcher, args: [...rules, "--", executable, ...args] }
      })
