/**
 * `toolcap doctor`: what this machine and this install give toolcap, one line per part — the
 * native launcher, cgroup v2 containment, Landlock confinement, ripgrep, the SQLite driver — each
 * `ok`, `fallback` (works, with the weaker guard the line names), `missing` (an optional part not
 * installed) or `broken` (installed but not working). Containment and ripgrep are checked by
 * running a real Bash and Grep call in a temporary workspace. Exits 1 when a line is broken.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolHost } from "@toolcap/adapters"
import type { Budgets } from "@toolcap/limits"
import { Confinement, Supervisor } from "@toolcap/tools"
import * as Sqlite from "./internal/sqlite.js"
import { ExitCode, setExitCode } from "./internal/output.js"
import { bold, dim, green, line, yellow } from "./internal/terminal.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Status = "ok" | "fallback" | "missing" | "broken"

/**
 * @since 0.1.0
 * @category models
 */
export interface Check {
  readonly name: "node" | "launcher" | "cgroup" | "landlock" | "ripgrep" | "sqlite"
  readonly status: Status
  readonly detail: string
}

const node = (): Check =>
  process.features.require_module
    ? { name: "node", status: "ok", detail: `${process.version}` }
    : {
        name: "node",
        status: "broken",
        detail: `${process.version} cannot require() ES modules; toolcap needs Node ^20.19 or >= 22.12`
      }

/** What running without the launcher costs, said once for every fallback line. */
const WITHOUT_LAUNCHER =
  "Bash enters its cgroup through a sh prologue and ripgrep runs without Landlock (TOOLCAP_LAUNCHER names a launcher)"

/** Where the doctor says a launcher came from. */
const LAUNCHER_SOURCE: Record<Confinement.LauncherSource, string> = {
  variable: "named by TOOLCAP_LAUNCHER",
  package: "shipped in the package",
  repository: "the repository's build output"
}

const launcher = (): Check => {
  const found = Effect.runSync(Confinement.launcher)
  switch (found.kind) {
    case "found":
      return {
        name: "launcher",
        status: "ok",
        detail: `${found.path} (${LAUNCHER_SOURCE[found.source]})`
      }
    case "absent":
      return { name: "launcher", status: "fallback", detail: `${found.reason}: ${WITHOUT_LAUNCHER}` }
    case "unusable":
      return {
        name: "launcher",
        status: found.broken ? "broken" : "fallback",
        detail: `${found.reason}: ${WITHOUT_LAUNCHER}`
      }
  }
}

/** Landlock, as a supervisor of its own probes it. */
const landlock: Effect.Effect<Check> = Effect.scoped(
  Effect.map(
    Effect.flatMap(Supervisor.make(), (supervisor) => supervisor.landlock),
    (support): Check =>
      support.kind === "landlock"
        ? {
            name: "landlock",
            status: "ok",
            detail: `ABI ${support.abi}: ripgrep reads only beneath the allowed roots`
          }
        : {
            name: "landlock",
            status: "fallback",
            detail: `not applied (${support.reason}): Grep relies on its user-space path checks`
          }
  )
)

/** The containment and ripgrep lines, from a real Bash and Grep call in a temporary workspace. */
const calls = (
  root: string
): Effect.Effect<{ readonly cgroup: Check; readonly ripgrep: Check }, never, Budgets.Budgets> =>
  Effect.gen(function* () {
    const workspace = path.join(root, "workspace")
    fs.mkdirSync(workspace)
    fs.writeFileSync(path.join(workspace, "probe.txt"), "toolcap doctor\n")
    const host = yield* ToolHost.make({
      workspace,
      dataDir: path.join(root, "data"),
      sessionId: "doctor",
      endSessionOnClose: true,
      fileIndex: false
    })
    const bash = yield* Effect.either(host.call("Bash", { command: "echo ok" }))
    const cgroup: Check = Either.match(bash, {
      onLeft: (error) => ({ name: "cgroup", status: "broken", detail: `Bash failed: ${error.message}` }),
      onRight: (result) =>
        result.termination.containment === "cgroup"
          ? {
              name: "cgroup",
              status: "ok",
              detail: `cgroup v2: every Bash call runs in a cgroup of its own; guards: ${Supervisor.describeContainment(result.termination)}`
            }
          : {
              name: "cgroup",
              status: "fallback",
              detail: `no writable cgroup v2 here (or TOOLCAP_CONTAINMENT=group): Bash's tree is found by process group, parent links and an environment cookie; guards: ${Supervisor.describeContainment(result.termination)}`
            }
    })
    const grep = yield* Effect.either(host.call("Grep", { pattern: "doctor", outputMode: "count" }))
    const ripgrep: Check = Either.match(grep, {
      onLeft: (error) => ({ name: "ripgrep", status: "broken", detail: `Grep failed: ${error.message}` }),
      onRight: (result) =>
        result.count === 1
          ? { name: "ripgrep", status: "ok", detail: "Grep ran ripgrep and found the probe file" }
          : { name: "ripgrep", status: "broken", detail: `Grep found ${result.count} matches of 1` }
    })
    return { cgroup, ripgrep }
  }).pipe(
    Effect.catchAll((error) =>
      Effect.succeed({
        cgroup: {
          name: "cgroup",
          status: "broken",
          detail: `no tool host could start: ${error.message}`
        } as const,
        ripgrep: {
          name: "ripgrep",
          status: "broken",
          detail: `no tool host could start: ${error.message}`
        } as const
      })
    ),
    Effect.scoped
  )

const sqlite = (): Check => {
  const found = Sqlite.probe()
  switch (found.kind) {
    case "ok":
      return { name: "sqlite", status: "ok", detail: `better-sqlite3 with SQLite ${found.version}` }
    case "missing":
      return {
        name: "sqlite",
        status: "missing",
        detail: "better-sqlite3 is not installed; only checkpoints need it: npm install better-sqlite3"
      }
    case "broken":
      return { name: "sqlite", status: "broken", detail: found.message }
  }
}

/**
 * Every check, in a temporary directory removed at the end.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checks: Effect.Effect<ReadonlyArray<Check>, never, Budgets.Budgets> = Effect.acquireUseRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-doctor-"))),
  (root) =>
    Effect.map(Effect.zip(calls(root), landlock), ([{ cgroup, ripgrep }, landlockCheck]) => [
      node(),
      launcher(),
      cgroup,
      landlockCheck,
      ripgrep,
      sqlite()
    ]),
  (root) => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
)

const paintStatus = (status: Status): string =>
  status === "ok"
    ? green(status.padEnd(9))
    : status === "broken"
      ? bold(yellow(status.padEnd(9)))
      : yellow(status.padEnd(9))

/**
 * Prints one line per check and settles on exit code 1 when one is broken, else 0.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run: Effect.Effect<void, never, Budgets.Budgets> = Effect.gen(function* () {
  const found = yield* checks
  for (const check of found)
    yield* line(`${check.name.padEnd(9)} ${paintStatus(check.status)} ${check.detail}`)
  const broken = found.filter((check) => check.status === "broken").length
  yield* line(
    dim(broken === 0 ? "doctor: nothing is broken" : `doctor: ${broken} broken, see the lines above`)
  )
  yield* setExitCode(broken === 0 ? ExitCode.ok : ExitCode.usage)
})
