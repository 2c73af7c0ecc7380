/**
 * Whether the kernel can confine reads here: Landlock (Linux 5.13+, unprivileged) through the
 * native launcher, which answers the kernel's Landlock ABI to `--probe`.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Landlock } from "../../Supervisor.js"
import { launcher } from "./launcherPath.js"

/** How a reason starts when the launcher itself did not run: it is then used for nothing else. @internal */
export const PROBE_FAILED = "the launcher failed its probe"

/** The environment variable that turns confinement off (`off`), e.g. to compare with the fallback. @internal */
export const disableVariable = "TOOLCAP_CONFINEMENT"

/** The probe answers within milliseconds; this only guards against a launcher that hangs. */
const PROBE_TIMEOUT_MS = 5000

/**
 * Asks the launcher (run through `run`, which answers its stdout and exit code) for the ABI.
 *
 * @internal
 */
export const detect = (
  run: (
    file: string,
    args: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly stdout: string; readonly code: number | null }, Error>
): Effect.Effect<Landlock> =>
  Effect.gen(function* () {
    if (process.env[disableVariable] === "off")
      return { kind: "none", reason: `${disableVariable}=off` } as const
    if (process.platform !== "linux")
      return { kind: "none", reason: "Landlock exists only on Linux" } as const
    if (launcher.kind !== "found") return { kind: "none", reason: launcher.reason } as const
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
        reason: `${PROBE_FAILED} (${failed ?? "no ABI in its answer"})`
      } as const
    }
    if (abi < 1) return { kind: "none", reason: "the kernel does not offer Landlock" } as const
    return { kind: "landlock", abi, launcher: launcher.path } as const
  })
