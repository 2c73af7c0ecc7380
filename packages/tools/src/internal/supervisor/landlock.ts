/**
 * Whether the kernel can confine reads here: Landlock (Linux 5.13+, unprivileged) through the
 * native launcher, which answers the kernel's Landlock ABI to `--probe`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Landlock } from "../../Supervisor.js"
import type { Resolved } from "./launcherPath.js"
import * as Settings from "./settings.js"

/** How a reason starts when the launcher itself did not run: it is then used for nothing else. */
const PROBE_FAILED = "the launcher failed its probe"

/** The environment variable that turns confinement off (`off`), e.g. to compare with the fallback. @internal */
export const disableVariable: "TOOLCAP_CONFINEMENT" = Settings.variables.confinement.name

/** The probe answers within milliseconds; this only guards against a launcher that hangs. */
const PROBE_TIMEOUT_MS = 5000

/**
 * Asks the layer's `launcher` (run through `run`, which answers its stdout and exit code) for the
 * ABI; `disabled` when the host turned confinement off. Each fallback names its cause, and the
 * launcher when it still runs (for memory ceilings).
 *
 * @internal
 */
export const detect = (
  run: (
    file: string,
    args: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly stdout: string; readonly code: number | null }, Error>,
  { disabled, launcher }: { readonly launcher: Resolved; readonly disabled: boolean }
): Effect.Effect<Landlock> =>
  Effect.gen(function* () {
    const runs = launcher.kind === "found" ? { launcher: launcher.path } : {}
    if (disabled)
      return { kind: "none", reason: `${disableVariable}=off`, cause: "turned-off", ...runs } as const
    if (process.platform !== "linux")
      return { kind: "none", reason: "Landlock exists only on Linux", cause: "not-linux" } as const
    if (launcher.kind !== "found")
      return { kind: "none", reason: launcher.reason, cause: "no-launcher" } as const
    const probe = yield* run(launcher.path, ["--probe"]).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(PROBE_TIMEOUT_MS),
        onTimeout: () => new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)
      }),
      Effect.either
    )
    const failed = Either.match(probe, {
      onLeft: (error) => error.message,
      onRight: (answer) => (answer.code !== 0 ? `exit ${answer.code}` : undefined)
    })
    const abi = Either.isRight(probe) ? Number(probe.right.stdout.trim()) : Number.NaN
    if (failed !== undefined || !Number.isSafeInteger(abi)) {
      return {
        kind: "none",
        reason: `${PROBE_FAILED} (${failed ?? "no ABI in its answer"})`,
        cause: "probe-failed"
      } as const
    }
    if (abi < 1)
      return { kind: "none", reason: "the kernel does not offer Landlock", cause: "kernel", ...runs } as const
    return { kind: "landlock", abi, launcher: launcher.path } as const
  })
