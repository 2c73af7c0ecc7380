/**
 * A started process as the supervisor sees it, whoever started it (the host's own spawn, the
 * launcher server, the fake supervisor): its pid, its two output pipes and its exit. And the
 * host's own spawn, which resolves once Node reports the process started.
 */
import * as Effect from "effect/Effect"
import { ToolError } from "@toolcap/limits"
import type { ExitStatus } from "../../Supervisor.js"
import type { Source } from "./pipe.js"
import * as Proc from "./process.js"

/**
 * The exit of a process, settled once by whoever learns it (Node's exit event, the launcher
 * server's answer, the fake's script) — synchronously, so no exit reported before anyone waits
 * is lost. A process the launcher server started and then lost track of (the server went away
 * first) is `lose`d instead: its exit is never known, and waiting for it fails.
 *
 * @internal
 */
export interface ExitLatch {
  readonly status: () => ExitStatus | undefined
  readonly settle: (status: ExitStatus) => void
  /** The exit can no longer be learnt: waiters fail with `lost` (once; a settled latch stays settled). */
  readonly lose: (lost: ToolError.ToolLauncherLost) => void
  /** Why the exit cannot be learnt, once `lose`d. */
  readonly lost: () => ToolError.ToolLauncherLost | undefined
  /** Calls `callback` once the process exited (at once when it has); never for a lost one. */
  readonly onExit: (callback: (status: ExitStatus) => void) => void
  /** Calls `callback` once the latch settled or was lost (at once when it is). */
  readonly onEnd: (callback: (ending: Ending) => void) => void
}

/** How a latch ended: the exit status, or why it will never be known. @internal */
export type Ending = { readonly status: ExitStatus } | { readonly lost: ToolError.ToolLauncherLost }

/** @internal */
export const exitLatch = (): ExitLatch => {
  let ended: Ending | undefined
  const waiting: Array<(ending: Ending) => void> = []
  const end = (ending: Ending) => {
    if (ended !== undefined) return
    ended = ending
    for (const callback of waiting.splice(0)) callback(ending)
  }
  const onEnd = (callback: (ending: Ending) => void) =>
    ended !== undefined ? callback(ended) : void waiting.push(callback)
  return {
    status: () => (ended !== undefined && "status" in ended ? ended.status : undefined),
    settle: (status) => end({ status }),
    lose: (lost) => end({ lost }),
    lost: () => (ended !== undefined && "lost" in ended ? ended.lost : undefined),
    onExit: (callback) => onEnd((ending) => "status" in ending && callback(ending.status)),
    onEnd
  }
}

/** Completes when the latch's process exited; fails when it was lost. @internal */
export const awaitExit = (latch: ExitLatch): Effect.Effect<ExitStatus, ToolError.ToolLauncherLost> =>
  Effect.async<ExitStatus, ToolError.ToolLauncherLost>((resume) =>
    latch.onEnd((ending) =>
      resume("status" in ending ? Effect.succeed(ending.status) : Effect.fail(ending.lost))
    )
  )

/** Completes when the latch's process exited or was lost (a release waiting for either). @internal */
export const awaitEnd = (latch: ExitLatch): Effect.Effect<void> =>
  Effect.async<void>((resume) => latch.onEnd(() => resume(Effect.void)))

/** @internal */
export interface Launched {
  /** The process the supervisor waits on (in the launcher entry, the launcher). */
  readonly pid: number
  readonly stdout: Source
  readonly stderr: Source
  readonly exit: ExitLatch
}

/** @internal */
export const spawnFailed = (file: string, cwd: string, reason: string): ToolError.ToolSpawnFailed =>
  new ToolError.ToolSpawnFailed({ command: file, reason: `${reason} (working directory ${cwd})` })

/** What the host's own spawn is given. @internal */
export interface SpawnRequest {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  /** Written to stdin, which is then closed; stdin is /dev/null otherwise. */
  readonly stdin?: string | undefined
  /** A session and process group of its own. */
  readonly detached: boolean
  /** The name errors give the command (the tier may run it through a launcher or prologue). */
  readonly name: string
}

/**
 * Spawns from the host and resolves once the process started (fails when it could not).
 *
 * @internal
 */
export const spawn = (request: SpawnRequest): Effect.Effect<Launched, ToolError.ToolSpawnFailed> =>
  Effect.async<Launched, ToolError.ToolSpawnFailed>((resume) => {
    let child: ReturnType<typeof Proc.spawnChild>
    try {
      child = Proc.spawnChild(request.file, request.args, {
        cwd: request.cwd,
        env: request.env,
        stdio: [request.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        detached: request.detached
      })
    } catch (error) {
      resume(
        Effect.fail(
          spawnFailed(request.name, request.cwd, error instanceof Error ? error.message : String(error))
        )
      )
      return
    }
    let spawned = false
    const exit = exitLatch()
    child.once("exit", (code, signal) => exit.settle({ code, signal }))
    child.once("error", (error) => {
      if (spawned) return
      child.stdout?.destroy()
      child.stderr?.destroy()
      resume(Effect.fail(spawnFailed(request.name, request.cwd, error.message)))
    })
    child.once("spawn", () => {
      spawned = true
      resume(Effect.succeed({ pid: child.pid!, stdout: child.stdout!, stderr: child.stderr!, exit }))
    })
    if (request.stdin !== undefined) {
      // a process that ends before reading its stdin closes the pipe: not an error
      child.stdin!.on("error", () => {})
      child.stdin!.end(request.stdin)
    }
  })
