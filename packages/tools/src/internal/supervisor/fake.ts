/**
 * The fake supervisor: scripted processes on the `Clock`, under the real supervision. Only the
 * processes are fake — their pipes, exits, members and signals; starting, stopping (the shared
 * stop of ./terminate.ts), draining and the report are the real code's, so the laws of supervision
 * can be property-tested under `TestClock` in milliseconds.
 *
 * A scripted process is a main process and its children. The main process writes the script's
 * output while it lives and exits at `exitAt`; SIGTERM makes a member die `afterMs` later or is
 * ignored; SIGKILL kills whatever is not `stuck`. The pipes end when no member holding them (the
 * main process, children with `holdsPipes`, escapees) is alive. Escapees left the tree: no stop
 * sees them.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Random from "effect/Random"
import type * as Scope from "effect/Scope"
import type { Command, Containment, FakeEvent, ScriptedProcess, SupervisorService } from "../../Supervisor.js"
import * as Admission from "./admission.js"
import * as Launch from "./launch.js"
import type { Source } from "./pipe.js"
import { scoped, type Handle } from "./scoped.js"
import { nothingStopped, terminate, type Member, type TreeOps } from "./terminate.js"
import * as Settings from "./settings.js"

/** A pipe written by the script: pausable, and silent once destroyed. */
const fakeSource = () => {
  const onData: Array<(chunk: Uint8Array) => void> = []
  const onEnd: Array<() => void> = []
  let paused = false
  let ended = false
  let endPending = false
  let destroyed = false
  let queued: Array<Uint8Array> = []
  const emitEnd = () => {
    for (const listener of onEnd.splice(0)) listener()
  }
  const source: Source & { readonly write: (bytes: Uint8Array) => void; readonly end: () => void } = {
    on: (event: "data" | "error", listener: never) => {
      if (event === "data") onData.push(listener)
      return source
    },
    once: (_event: "end", listener: () => void) => onEnd.push(listener),
    off: (_event: "data", listener: (chunk: Uint8Array) => void) =>
      onData.splice(onData.indexOf(listener), 1),
    pause: () => (paused = true),
    resume: () => {
      paused = false
      const flushed = queued
      queued = []
      for (const chunk of flushed) for (const listener of onData) listener(chunk)
      if (endPending) emitEnd()
    },
    destroy: () => {
      destroyed = true
      queued = []
    },
    write: (bytes) => {
      if (destroyed || ended) return
      if (paused) queued.push(bytes)
      else for (const listener of onData) listener(bytes)
    },
    end: () => {
      if (destroyed || ended) return
      ended = true
      if (paused) endPending = true
      else emitEnd()
    }
  }
  return source
}

interface FakeMember extends Member {
  readonly main: boolean
  readonly exitAt: number | undefined
  readonly onTerm: { readonly afterMs: number } | "ignore"
  readonly stuck: boolean
  readonly holdsPipes: boolean
  readonly escaped: boolean
  alive: boolean
  diesAt: number | undefined
}

const encoder = new TextEncoder()

const byTime = Order.mapInput(Order.number, (event: { readonly at: number }) => event.at)

/** @internal */
export const make = (options: {
  readonly script: (command: Command) => ScriptedProcess
  readonly onEvent?: ((event: FakeEvent) => void) | undefined
  readonly maxConcurrentCalls?: number | undefined
}): Effect.Effect<SupervisorService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const admission = yield* Effect.flatMap(
      Effect.flatMap(Effect.orDie(Settings.read), (settings) =>
        Effect.sync(() => Admission.resolveLimit(options.maxConcurrentCalls, settings.maxConcurrentCalls))
      ),
      Admission.make
    )
    const layerScope = yield* Effect.scope
    const emit = options.onEvent ?? (() => {})
    let nextPid = 1000
    const containment: Containment = {
      containment: "group",
      fallbackReason: "scripted processes (Supervisor.layerTest)",
      launcher: false,
      landlockScopes: false,
      landlockScopesReason: "scripted processes (Supervisor.layerTest)"
    }

    /** Starts the script of `command`: its members, pipes and timeline. */
    const launch = (command: Command) =>
      Effect.gen(function* () {
        const script = options.script(command)
        const startedAt = yield* Clock.currentTimeMillis
        const member = (
          main: boolean,
          spec: {
            readonly exitAt?: number | undefined
            readonly onTerm?: { readonly afterMs: number } | "ignore" | undefined
            readonly stuck?: boolean | undefined
            readonly holdsPipes?: boolean | undefined
            readonly escaped?: boolean | undefined
          }
        ): FakeMember => {
          const pid = nextPid++
          return {
            pid,
            key: String(pid),
            main,
            exitAt: spec.exitAt === undefined ? undefined : startedAt + spec.exitAt,
            onTerm: spec.onTerm ?? { afterMs: 0 },
            stuck: spec.stuck === true,
            holdsPipes: main || spec.holdsPipes === true || spec.escaped === true,
            escaped: spec.escaped === true,
            alive: true,
            diesAt: undefined
          }
        }
        const main = member(true, { ...script, exitAt: script.exitAt?.at })
        const members = [main, ...(script.children ?? []).map((child) => member(false, child))]
        const stdout = fakeSource()
        const stderr = fakeSource()
        const exit = Launch.exitLatch()
        emit({ _tag: "Started", at: startedAt, pids: members.map((m) => m.pid) })

        /** `dying` ends at `at`: by itself (`by` undefined) or by a signal. */
        const die = (dying: FakeMember, at: number, by: "SIGTERM" | "SIGKILL" | undefined) => {
          dying.alive = false
          emit({ _tag: "Died", at, pid: dying.pid })
          if (dying.main) {
            exit.settle(
              by === undefined ? { code: script.exitAt?.code ?? 0, signal: null } : { code: null, signal: by }
            )
          }
          if (!members.some((m) => m.alive && m.holdsPipes)) {
            stdout.end()
            stderr.end()
          }
        }
        /** Applies every death due by `now`, in time order. */
        const settle = (now: number) => {
          const due = members
            .filter((m) => m.alive)
            .map((m) => ({ m, at: Math.min(m.exitAt ?? Infinity, m.diesAt ?? Infinity) }))
            .filter(({ at }) => at <= now)
          for (const { at, m } of Arr.sort(due, byTime))
            die(m, at, m.diesAt !== undefined && m.diesAt <= (m.exitAt ?? Infinity) ? "SIGTERM" : undefined)
        }
        const signal = (target: FakeMember, name: "SIGTERM" | "SIGKILL", now: number) => {
          if (!target.alive) return "gone" as const
          emit({ _tag: "Signal", at: now, pid: target.pid, signal: name })
          if (name === "SIGKILL") {
            if (!target.stuck) die(target, now, "SIGKILL")
          } else if (target.onTerm !== "ignore") {
            target.diesAt = Math.min(target.diesAt ?? Infinity, now + target.onTerm.afterMs)
            settle(now)
          }
          return "sent" as const
        }

        // the script's own timeline: output while the main process lives, exits
        const timeline = Arr.sort(
          [
            ...(script.output ?? []).map((out) => ({ at: startedAt + out.at, out })),
            ...members.flatMap((m) => (m.exitAt === undefined ? [] : [{ at: m.exitAt, out: undefined }]))
          ],
          byTime
        )
        // interruptible, though forked from the acquire: closing the layer ends it
        yield* Effect.forkIn(
          Effect.interruptible(
            Effect.forEach(
              timeline,
              ({ at, out }) =>
                Effect.gen(function* () {
                  const now = yield* Clock.currentTimeMillis
                  if (at > now) yield* Effect.sleep(Duration.millis(at - now))
                  settle(at)
                  if (out !== undefined && main.alive) {
                    const bytes = typeof out.data === "string" ? encoder.encode(out.data) : out.data
                    ;(out.stream === "stdout" ? stdout : stderr).write(bytes)
                  }
                }),
              { discard: true }
            )
          ),
          layerScope
        )

        const now = Clock.currentTimeMillis
        const clock = yield* Effect.clock
        const ops: TreeOps<FakeMember> = {
          scan: Effect.map(now, (at) => {
            settle(at)
            return members.filter((m) => m.alive && !m.escaped)
          }),
          poll: () =>
            Effect.map(now, (at) => {
              settle(at)
              return { live: members.filter((m) => m.alive && !m.escaped), full: true }
            }),
          term: (targets) => targets.map((m) => signal(m, "SIGTERM", clock.unsafeCurrentTimeMillis())),
          kill: (targets) => targets.map((m) => signal(m, "SIGKILL", clock.unsafeCurrentTimeMillis())),
          killReachesAll: false,
          // no polling: sleeps to the next scripted death, or to `until`
          wait: (_stepMs, until) =>
            Effect.flatMap(now, (at) => {
              const next = Math.min(
                until,
                ...members
                  .filter((m) => m.alive)
                  .map((m) => Math.min(m.exitAt ?? Infinity, m.diesAt ?? Infinity))
              )
              return Effect.sleep(Duration.millis(Math.max(0, next - at)))
            })
        }
        const handle: Handle = {
          pid: main.pid,
          containment: command.tree === undefined ? undefined : containment,
          stdout,
          stderr,
          exit,
          stop: () =>
            command.tree === undefined
              ? Effect.sync(() =>
                  signal(main, "SIGKILL", clock.unsafeCurrentTimeMillis()) === "sent"
                    ? { ...nothingStopped, signalled: [main.pid], killed: [main.pid] }
                    : nothingStopped
                )
              : terminate(ops, command.tree)
        }
        return handle
      })

    return {
      containment: Effect.succeed(containment),
      landlock: Effect.succeed({
        kind: "none",
        reason: "the fake supervisor confines nothing",
        cause: "fake"
      }),
      shell: Effect.succeed({ file: "/bin/sh", name: "sh" }),
      runId: Effect.map(Random.nextIntBetween(0, 0x7fffffff), (random) => `1-0-fake${random.toString(36)}`),
      start: (command) => scoped(launch(command), command.tree ?? { killGraceMs: 0, drainMs: 1000 }),
      admit: admission.admit
    } satisfies SupervisorService
  })
