/**
 * Kernel confinement of the processes that read files for a tool (ripgrep). A search engine reads
 * by path inside its own process, so no check made in ours can close the race of a symlink
 * swapped under it; the kernel can. On Linux with Landlock (5.13+, unprivileged), ripgrep is
 * started through a tiny launcher (`native/confine.c`, built by the package's build into
 * `dist/native/toolcap-confine`) that restricts itself to reading beneath the roots in force and
 * then execs ripgrep: whatever is swapped under it, it cannot open a file outside them.
 *
 * Support is detected once per process: the launcher must exist and the kernel must answer a
 * Landlock ABI. Without it (another OS, an old kernel, no compiler at build time, or
 * `TOOLCAP_CONFINEMENT=off`), ripgrep runs unconfined and only the user-space checks of `Roots`
 * apply (see the README for what remains open then).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import type { Scratch } from "@toolcap/spill"
import * as Roots from "./Roots.js"
import type { Workspace } from "./Workspace.js"
import * as Launcher from "./internal/supervisor/launcherPath.js"

/**
 * How reads are confined in this process.
 *
 * @since 0.1.0
 * @category models
 */
export type Support =
  | { readonly kind: "landlock"; readonly abi: number; readonly launcher: string }
  | { readonly kind: "none"; readonly reason: string }

/**
 * Where the launcher is: `TOOLCAP_LAUNCHER` where a host names it (e.g. one that bundles toolcap),
 * else where the package's build puts it (the same place from `src/` and from `dist/`).
 *
 * @since 0.1.0
 * @category models
 */
export const launcherPath: string = Launcher.launcherPath

/**
 * The environment variable that turns confinement off (`off`), e.g. to compare with the fallback.
 *
 * @since 0.1.0
 * @category models
 */
export const disableVariable = "TOOLCAP_CONFINEMENT"

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

/** The probe answers within milliseconds; this only guards against a launcher that hangs. */
const PROBE_TIMEOUT_MS = 5000

let detected: Support | undefined

const detect = (): Support => {
  if (process.env[disableVariable] === "off") return { kind: "none", reason: `${disableVariable}=off` }
  if (process.platform !== "linux") return { kind: "none", reason: "Landlock exists only on Linux" }
  if (!fs.existsSync(launcherPath)) {
    return {
      kind: "none",
      reason: `the launcher ${launcherPath} was not built (no C compiler at build time?)`
    }
  }
  const probe = spawnSync(launcherPath, ["--probe"], { encoding: "utf8", timeout: PROBE_TIMEOUT_MS })
  const abi = Number(probe.stdout?.trim())
  if (probe.status !== 0 || !Number.isSafeInteger(abi)) {
    return {
      kind: "none",
      reason: `the launcher failed its probe (${probe.error?.message ?? `exit ${probe.status}`})`
    }
  }
  if (abi < 1) return { kind: "none", reason: "the kernel does not offer Landlock" }
  return { kind: "landlock", abi, launcher: launcherPath }
}

/**
 * Whether reads can be confined by the kernel here (detected once).
 *
 * @since 0.1.0
 * @category constructors
 */
export const support = (): Support => (detected ??= detect())

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
): { readonly file: string; readonly args: ReadonlyArray<string> } => {
  const mode = directories === undefined ? undefined : support()
  if (mode === undefined || mode.kind === "none") return { file: executable, args }
  const rules: Array<string> = []
  for (const directory of [...directories!, executable, "/dev/null", ...allocatorSettings()])
    rules.push("--read", directory)
  return { file: mode.launcher, args: [...rules, "--", executable, ...args] }
}
