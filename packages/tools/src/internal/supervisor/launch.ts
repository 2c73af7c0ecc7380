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
 * is lost.
 *
 * @internal
 */
export interface ExitLatch {
  readonly status: () => ExitStatus | undefined
  readonly settle: (status: ExitStatus) => void
  /** Calls `callback` once the process exited (at once when it has). */
  readonly onExit: (callback: (status: ExitStatus) => void) => void
}

/** @internal */
export const exitLatch = (): ExitLatch => {
  let settled: ExitStatus | undefined
  const waiting: Array<(status: ExitStatus) => void> = []
  return {
    status: () => settled,
    settle: (status) => {
      if (settled !== undefined) return
      settled = status
      for (const callback of waiting.splice(0)) callback(status)
    },
    onExit: (callback) => (settled !== undefined ? callback(settled) : void waiting.push(callback))
  }
}

/** Completes when the latch's process exited. @internal */
export const awaitExit = (latch: ExitLatch): Effect.Effect<ExitStatus> =>
  Effect.async<ExitStatus>((resume) => latch.onExit((status) => resume(Effect.succeed(status))))

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
