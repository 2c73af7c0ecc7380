/**
 * The torture scenarios (rules X5, X6): real process trees that try to outlive their call, registered
 * as tests of one supervisor by `registerTorture` — the default tiers in `torture.test.ts`, the
 * tiers without the native launcher in `fallback.test.ts`. After each run no process carrying the
 * run's cookie (nor one named with the scenario's unique tag) is alive, zombies aside, and no chunk
 * arrived after the call returned.
 *
 * Each scenario records the pids of the processes it starts in `pids/` of the workspace and, when
 * it is to be stopped by its timeout, prints `ready` once all of them exist; the deadline starts
 * only then (see `runRecorded`). Every recorded process must be among those the call stopped and
 * be gone afterwards, whatever the machine's load: the timeout never races the forks.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as path from "node:path"
import { Bash, type Supervisor } from "@toolcap/tools"
import { isLong } from "@toolcap/bench-report"
import {
  carriersOf,
  fastGraces,
  isLive,
  processesNamed,
  runRecorded,
  streamText,
  testEnv,
  type Recorded
} from "./bashFixtures.js"

/** One line of the 200 MiB scenario: 100 times `c`, then a newline. */
const line = (c: string) => `${c.repeat(100)}\n`

/** Where the scenarios record pids, relative to the workspace (the command's working directory). */
const PIDS = "pids"

/** `./job <name> <command...>`: records its pid as `pids/<name>`, then execs the command (same pid). */
const JOB_SCRIPT = `#!/bin/sh
echo $$ > "${PIDS}/$1"
shift
exec "$@"
`

/** `./await-jobs <n>`: returns once n pids are recorded (a file appears before its pid is written). */
const AWAIT_JOBS_SCRIPT = `#!/bin/sh
while :; do
  n=0
  for f in ${PIDS}/*; do [ -s "$f" ] && n=$((n + 1)); done
  [ "$n" -ge "$1" ] && exit 0
  sleep 0.01
done
`

/** The line a scenario stopped by its timeout prints once every process it records exists. */
const READY = "ready"

export interface Scenario {
  readonly name: string
  /**
   * Unique text in the command lines of the processes it starts (a `sleep 102.x` duration); `@T`
   * in it and in the command stands for the tier's digit.
   */
  readonly tag: string
  readonly command: string
  /**
   * How the call ends. `timeout`: the command prints `ready` once its processes exist and runs
   * on; the deadline starts at that line. `result`: the main process exits by itself, after its
   * processes exist, leaving them behind.
   */
  readonly ends: "timeout" | "result"
  /** How many processes the command records in `pids/`; each must be stopped by the call. */
  readonly jobs: number
  /** Pushes volume rather than containment: one run per registration outside the long mode. */
  readonly heavy?: boolean
  /** Whether every recorded process outlives SIGTERM, so the call must SIGKILL at least that many. */
  readonly sigkill?: boolean
  readonly check?: (recorded: Recorded) => void
  readonly keepData?: boolean
  /** Seconds; default 1 (the least accepted) for `timeout`, 10 for `result` (it ends by itself). */
  readonly timeout?: number
  /** Escapes only the kernel can follow: run in the cgroup tier alone. */
  readonly cgroupOnly?: boolean
  /** The test's own timeout (ms) for a scenario that moves a lot of data on a loaded machine. */
  readonly testTimeoutMs?: number
}

export const scenarios: ReadonlyArray<Scenario> = [
  {
    name: "nested shells",
    tag: "sleep 102.11@T",
    command: [
      `echo $$ > pids/main`,
      `bash -c 'bash -c "sh -c \\"./job a sleep 102.11@T\\""' &`,
      `bash -c 'sh -c "echo \\$\\$ > pids/b-sh; ./job b sleep 102.11@T; true"' &`,
      `./await-jobs 4; echo ${READY}; wait`
    ].join("\n"),
    ends: "timeout",
    jobs: 4
  },
  {
    name: "& background jobs",
    tag: "sleep 102.21@T",
    command: `echo $$ > pids/main; for i in 1 2 3 4 5; do sleep 102.21@T & echo $! > pids/$i; done; echo ${READY}; wait`,
    ends: "timeout",
    jobs: 6
  },
  {
    name: "setsid escapee holding the pipes after a normal exit",
    tag: "sleep 102.31@T",
    command: "setsid -f ./job escapee sleep 102.31@T; ./await-jobs 1; echo ok",
    ends: "result",
    jobs: 1,
    check: (recorded) => assert.strictEqual(streamText(recorded.chunks, "stdout"), "ok\n")
  },
  {
    name: "setsid escapees on timeout",
    tag: "sleep 102.32@T",
    command: [
      "echo $$ > pids/main",
      "setsid -f ./job a sleep 102.32@T >/dev/null 2>&1",
      "setsid -f ./job b sleep 102.32@T",
      "./job c sleep 102.32@T &",
      `./await-jobs 4; echo ${READY}; wait`
    ].join("\n"),
    ends: "timeout",
    jobs: 4
  },
  {
    name: "double fork, also into a new session",
    tag: "sleep 102.41@T",
    command:
      "( (./job a sleep 102.41@T &) & ); (setsid sh -c './job b sleep 102.41@T & ' &); ./await-jobs 2; echo ok",
    ends: "result",
    jobs: 2
  },
  {
    name: "children that ignore or trap SIGTERM",
    tag: "sleep 102.51@T",
    command: [
      "(trap '' TERM; ./job a sleep 102.51@T) &",
      "(trap 'echo got-term' TERM; echo $BASHPID > pids/b; while :; do sleep 102.51@T & wait; done) &",
      "trap '' TERM",
      "echo $$ > pids/main",
      `./await-jobs 3; echo ${READY}`,
      "while :; do sleep 0.05; done"
    ].join("\n"),
    ends: "timeout",
    jobs: 3,
    sigkill: true
  },
  {
    name: "a child that keeps writing after its parent exits",
    tag: "late-writer-102.6@T",
    // the writer records itself once its first line is written; the parent exits after that
    command: [
      "echo early",
      "(for i in $(seq 1 500); do echo late-writer-102.6@T $i; if [ $i = 1 ]; then echo $BASHPID > pids/writer; fi; sleep 0.02; done) &",
      "./await-jobs 1"
    ].join("\n"),
    ends: "result",
    jobs: 1,
    check: (recorded) => {
      const out = streamText(recorded.chunks, "stdout")
      assert.isTrue(out.startsWith("early\n"), out.slice(0, 40))
      assert.match(out, /late-writer-102\.6\d 1\n/)
      assert.notMatch(out, /late-writer-102\.6\d 500\n/)
    }
  },
  {
    name: "a fork loop bounded in count",
    tag: "sleep 102.71@T",
    command: [
      "echo $$ > pids/main",
      "for i in $(seq 1 30); do (./job a$i sleep 102.71@T &); (setsid -f ./job b$i sleep 102.71@T >/dev/null 2>&1); ./job c$i sleep 102.71@T & done",
      `./await-jobs 91; echo ${READY}; wait`
    ].join("\n"),
    ends: "timeout",
    jobs: 91
  },
  {
    name: "escapees with a scrubbed environment: env -i setsid -f, and a setpgid changer",
    tag: "sleep 102.8@T",
    // neither keeps the cookie, the group or a parent in the tree; the first holds the pipes
    command: [
      "env -i setsid -f ./job a sh -c 'sleep 102.8@T1; true'",
      `env -i ./job b python3 -c 'import os; os.setpgid(0, 0); os.execvp("sleep", ["sleep", "102.8@T2"])' >/dev/null 2>&1 &`,
      "./await-jobs 2; echo ok"
    ].join("\n"),
    ends: "result",
    jobs: 2,
    cgroupOnly: true
  },
  {
    name: "200 MiB to each stream at once",
    heavy: true,
    tag: "fold-102.9@T",
    command:
      "head -c 209715200 /dev/zero | tr '\\0' a | exec -a fold-102.9@T fold -w 100 & head -c 209715200 /dev/zero | tr '\\0' b | exec -a fold-102.9@T fold -w 100 >&2; wait",
    keepData: false,
    timeout: 120,
    testTimeoutMs: 180_000,
    ends: "result",
    jobs: 0,
    check: (recorded) => {
      const result = Either.getOrThrow(recorded.result)
      // fold breaks before the 101st character, so the last of the 2097152 lines has no newline
      const lines = 209715200 / 100
      const bytes = lines * 101 - 1
      const capture = 512 * 1024
      const capturedHead = Math.floor(capture / 101)
      const capturedTail = 1 + Math.floor((capture - 100) / 101)
      const captured = {
        stdout: { lines: capturedHead, bytes: capturedHead * 101 },
        stderr: { lines: capturedTail, bytes: capturedTail * 101 - 1 }
      }
      for (const stream of ["stdout", "stderr"] as const) {
        assert.strictEqual(recorded.chars[stream], bytes, stream)
        assert.strictEqual(
          result.lastSeq[stream],
          recorded.chunks.filter((c) => c.stream === stream).length - 1
        )
        const truncation = result.truncation[stream]!
        assert.strictEqual(truncation.totalBytes, bytes)
        assert.strictEqual(truncation.totalLines, lines)
        // the 96KB budget binds before the 4000 lines: 973 lines of 101 bytes
        assert.strictEqual(truncation.keptLines, 973)
        assert.deepStrictEqual(result.omitted[stream], {
          bytes: bytes - captured[stream].bytes,
          lines: lines - captured[stream].lines
        })
      }
      assert.isTrue(
        result.stdout.startsWith(line("a").repeat(973) + "[truncated: kept the first 973 of 2097152 lines")
      )
      assert.isTrue(result.stderr.startsWith("[truncated: kept the last 973 of 2097152 lines"))
      assert.isTrue(result.stderr.endsWith("]\n" + line("b").repeat(972) + "b".repeat(100)))
    }
  }
]

/** The pids recorded in `pids/` of the workspace. */
const recordedPids = (workspace: string): Array<number> =>
  fs.readdirSync(path.join(workspace, PIDS)).map((name) => {
    const pid = Number(fs.readFileSync(path.join(workspace, PIDS, name), "utf8").trim())
    assert.isTrue(Number.isInteger(pid) && pid > 0, `pids/${name} holds no pid`)
    return pid
  })

/**
 * Registers the scenarios as tests of one supervisor: `containment` forced, `supervisor`'s other
 * options, `runs` runs each; `mark` (one digit) makes the commands and tags unique to this
 * registration, so registrations running at once never see each other's processes.
 */
export const registerTorture = (options: {
  readonly label: string
  readonly containment: Supervisor.Tier
  readonly supervisor?: Supervisor.Options
  readonly mark: string
  readonly runs: number
  readonly include?: (scenario: Scenario) => boolean
}): void => {
  const { containment, label, mark, runs, supervisor = {} } = options
  const include = options.include ?? (() => true)
  // concurrent: the scenarios also show that stopping one call's tree leaves the others' alone
  describe.concurrent(`torture (${label}): no process survives its call, no chunk follows its end`, () => {
    for (const scenario of scenarios) {
      if (scenario.cgroupOnly === true && containment !== "cgroup") continue
      if (!include(scenario)) continue
      const scenarioRuns = scenario.heavy === true && !isLong() ? 1 : runs
      it.scopedLive(
        `${scenario.name} (${scenarioRuns} run${scenarioRuns === 1 ? "" : "s"})`,
        () =>
          Effect.gen(function* () {
            // a timed-out scenario's deadline starts at its ready line (the fixture's Clock), which the
            // watchdog's backstop, keeping the real deadline, cannot see: off here (admission.test.ts
            // proves the backstop)
            const env = yield* testEnv(fastGraces, undefined, {
              ...supervisor,
              containment,
              deadlineBackstop: false
            })
            const layer = env.layer
            fs.writeFileSync(path.join(env.workspace, "job"), JOB_SCRIPT, { mode: 0o755 })
            fs.writeFileSync(path.join(env.workspace, "await-jobs"), AWAIT_JOBS_SCRIPT, { mode: 0o755 })
            const timedOut = scenario.ends === "timeout"
            // tags and commands differ per registration, so no two see each other's processes
            const command = scenario.command.replaceAll("@T", mark)
            const tag = scenario.tag.replaceAll("@T", mark)
            for (let run = 0; run < scenarioRuns; run++) {
              fs.rmSync(path.join(env.workspace, PIDS), { recursive: true, force: true })
              fs.mkdirSync(path.join(env.workspace, PIDS))
              // taken at the ready line for a timeout: what the deadline found, not what forked later
              let jobs: Array<number> | undefined
              const recorded = yield* runRecorded(
                { command, timeout: scenario.timeout ?? (timedOut ? 1 : 10) },
                {
                  keepData: scenario.keepData ?? true,
                  ...(timedOut
                    ? { ready: { line: READY, onReady: () => void (jobs = recordedPids(env.workspace)) } }
                    : {})
                }
              ).pipe(Effect.provide(layer))

              // checked at once: the call returned only after the whole tree was gone
              assert.deepStrictEqual(carriersOf(recorded.runId), [], `run ${run}`)
              assert.deepStrictEqual(processesNamed(tag), [], `run ${run}`)

              if (timedOut) {
                assert.isTrue(recorded.ready.seen, `run ${run}: the command never printed ${READY}`)
                assert.isTrue(
                  recorded.ready.deadlineWaited,
                  `run ${run}: the deadline did not wait for ${READY}`
                )
              } else {
                jobs = recordedPids(env.workspace)
              }
              const started = jobs ?? []
              assert.strictEqual(new Set(started).size, scenario.jobs, `run ${run}: recorded pids ${started}`)

              const { killed, termination } = Either.match(recorded.result, {
                onLeft: (error) => {
                  assert.strictEqual(scenario.ends, "timeout", `run ${run}: ${error.code}`)
                  assert.instanceOf(error, Bash.ToolTimeout)
                  if (scenario.sigkill === true) {
                    const sigkilled = /SIGKILL to (\d+) still alive/.exec(error.partial.output)?.[1]
                    assert.isAtLeast(Number(sigkilled), scenario.jobs, error.partial.output)
                  }
                  return { killed: error.killedPids, termination: error.partial.termination }
                },
                onRight: (result) => {
                  assert.strictEqual(scenario.ends, "result", `run ${run}`)
                  return { killed: result.killedPids, termination: result.termination }
                }
              })
              assert.strictEqual(termination.containment, containment, `run ${run}`)
              assert.deepStrictEqual(termination.survivors, [], `run ${run}`)
              if (termination.proc === "pid namespace") {
                // the pids a call records are its PID namespace's, the ones signalled the host's:
                // each recorded job was among them (and none is alive: its tag is gone above)
                assert.isAtLeast(new Set(killed).size, started.length, `run ${run}: signalled ${killed}`)
              } else {
                for (const pid of started) {
                  assert.include(killed, pid, `run ${run}: recorded pid ${pid} was not stopped by the call`)
                  assert.isFalse(isLive(pid), `run ${run}: recorded pid ${pid} is alive`)
                }
              }
              assert.strictEqual(
                termination.foreign,
                undefined,
                `run ${run}: the call's own taken for foreign`
              )
              scenario.check?.(recorded)

              yield* Effect.sleep("50 millis")
              assert.strictEqual(recorded.lateChunks(), 0, `run ${run}`)
              assert.deepStrictEqual(carriersOf(recorded.runId), [], `run ${run}`)
            }
          }),
        scenario.testTimeoutMs
      )
    }
  })
}
