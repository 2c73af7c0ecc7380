// Roots hold against a racing adversary: a second process flips a symlink (or swaps a file for a
// symlink) between an inside and an outside target as fast as it can while Read, Grep and Glob
// run; another exchanges a searched directory with an outside one (`renameat2(RENAME_EXCHANGE)`,
// and straight back) in a loop. No answer may hold an outside byte (the marker) or an outside
// name. 5 s per tool here; TOOLCAP_LONG_TESTS=1 runs 60 s per tool and at least 5,000 calls per
// tool (the exchange race: 60 s and at least 1,000 calls). Counts are printed (and written where
// TOOLCAP_RELIABILITY_OUT points, for `pnpm bench`).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Confinement, Glob, Grep, Read, Supervisor } from "@toolcap/tools"
import { indexReady, searchEnv, tempDir, writeTree } from "./readFixtures.js"
import { isLong, reportReliability } from "@toolcap/bench-report"

const SECONDS_PER_TOOL = isLong() ? 60 : 5
/** The long mode's floor of calls per tool (shared by its scenarios), whatever the time. */
const MIN_CALLS_PER_TOOL = isLong() ? 5_000 : 0
const SECRET = "RACE-OUTSIDE-SECRET-81d2"
/** Outside files carry this in their names: listed by Glob or Grep, it is an outside name. */
const OUTSIDE_NAME = "outside-only"

/**
 * The adversary, as its own process: `link` mode flips a symlink between two targets; `file` mode
 * swaps a regular inside file and a symlink to the outside target. Each swap is an atomic rename.
 */
const FLIPPER = `
const fs = require("node:fs")
const [mode, name, inside, outside] = process.argv.slice(1)
const tmp = name + ".flip"
for (let i = 0; ; i++) {
  try { fs.rmSync(tmp, { force: true }) } catch {}
  if (mode === "link") fs.symlinkSync(i % 2 === 0 ? inside : outside, tmp)
  else if (i % 2 === 0) fs.writeFileSync(tmp, fs.readFileSync(inside))
  else fs.symlinkSync(outside, tmp)
  fs.renameSync(tmp, name)
}
`

const flipper = (mode: "link" | "file", name: string, inside: string, outside: string) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(process.execPath, ["-e", FLIPPER, mode, name, inside, outside], { stdio: "ignore" })
    ),
    (child: ChildProcess) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill("SIGKILL")
      })
  )

/**
 * The exchanger: swaps two directories with `renameat2(RENAME_EXCHANGE)` and at once swaps them
 * back, then pauses 50 µs, in a loop: the outside directory lies in the workspace only for the
 * instants between two exchanges, as an adversary racing a search would place it.
 */
const EXCHANGER = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#define EXCHANGE (1 << 1)
int main(int argc, char **argv) {
  struct timespec pause = {0, 50000};
  if (argc == 4) return syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], EXCHANGE) == 0 ? 0 : 1;
  if (argc != 3) return 2;
  for (;;) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], EXCHANGE) != 0) return 1;
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], EXCHANGE) != 0) return 1;
    nanosleep(&pause, 0);
  }
}
`

/** The exchanger built with the machine's C compiler (the build of the launcher needs one too). */
const exchangerBinary = Effect.gen(function* () {
  const dir = yield* tempDir("toolcap-exchanger-")
  fs.writeFileSync(path.join(dir, "exchange.c"), EXCHANGER)
  const built = spawnSync(
    process.env["CC"] ?? "cc",
    ["-O2", "-o", path.join(dir, "exchange"), path.join(dir, "exchange.c")],
    {
      encoding: "utf8"
    }
  )
  if (built.status !== 0)
    throw new Error(`cannot build the exchanger: ${built.stderr ?? built.error?.message}`)
  return path.join(dir, "exchange")
})

/**
 * The exchanger, running for the scope. Killed between its two exchanges it would leave the
 * folders swapped (the outside one, then, simply inside): the release swaps them back, so the
 * next scenario starts from the same layout. `inside` names a file only the inside folder holds.
 */
const exchanger = (binary: string, a: string, b: string, inside: string) =>
  Effect.acquireRelease(
    Effect.sync(() => spawn(binary, [a, b], { stdio: "ignore" })),
    (child: ChildProcess) =>
      Effect.async<void>((resume) => {
        const restore = () => {
          if (!fs.existsSync(path.join(a, inside))) spawnSync(binary, [a, b, "once"])
          resume(Effect.void)
        }
        if (child.exitCode !== null || child.signalCode !== null) return restore()
        child.once("exit", restore)
        child.kill("SIGKILL")
      })
  )

const raceEnv = Effect.gen(function* () {
  const env = yield* searchEnv()
  const w = env.workspace
  const o = env.outside
  writeTree(w, {
    "real/file.txt": "inside needle\n",
    "real/inside-a.txt": "inside needle\n",
    "inside.txt": "inside needle\n",
    "plain/keep.txt": "inside needle\n"
  })
  writeTree(o, {
    "file.txt": `${SECRET} needle\n`,
    [`${OUTSIDE_NAME}-1.txt`]: `${SECRET} needle\n`,
    [`${OUTSIDE_NAME}-2.txt`]: `${SECRET} needle\n`,
    "secret.txt": `${SECRET} needle\n`
  })
  fs.symlinkSync(path.join(w, "real"), path.join(w, "dir"))
  fs.symlinkSync(path.join(w, "inside.txt"), path.join(w, "swap.txt"))
  fs.copyFileSync(path.join(w, "inside.txt"), path.join(w, "plain/swapped.txt"))
  return env
})

type Flip = readonly ["link" | "file", string, string, string]

/** The three swaps: a file link, a folder link, a regular file traded for a link. */
const flips = (env: { readonly workspace: string; readonly outside: string }) => {
  const w = env.workspace
  return {
    swappedFile: [
      "link",
      path.join(w, "swap.txt"),
      path.join(w, "inside.txt"),
      path.join(env.outside, "file.txt")
    ],
    swappedFolder: ["link", path.join(w, "dir"), path.join(w, "real"), env.outside],
    fileForLink: [
      "file",
      path.join(w, "plain/swapped.txt"),
      path.join(w, "inside.txt"),
      path.join(env.outside, "secret.txt")
    ]
  } satisfies Record<string, Flip>
}

interface Scenario {
  readonly name: string
  readonly flip: Flip
  readonly call: () => Effect.Effect<unknown, { readonly code: string }, never>
}

/** How ripgrep is confined on this machine (a supervisor of the test's own probes it once). */
const confinementKind = (
  await Effect.runPromise(Confinement.support.pipe(Effect.provide(Supervisor.layer())))
).kind

/** Tallies a race's scenarios and reports them as one reliability line; answers escapes + crashes. */
const tally = (suite: string, tool: string, what: string) => {
  const counts: Array<string> = []
  const evidence: Array<string> = []
  let escapes = 0
  let inputs = 0
  let crashes = 0
  return {
    add: (
      name: string,
      run: {
        readonly calls: number
        readonly denied: number
        readonly found: number
        readonly crashes: number
        readonly evidence: string | undefined
      }
    ) => {
      counts.push(`${name}: ${run.calls} calls, ${run.denied} denied, ${run.found} escapes`)
      if (run.evidence !== undefined) evidence.push(`${name}: ${run.evidence}`)
      escapes += run.found
      inputs += run.calls
      crashes += run.crashes
    },
    /** What leaked or crashed first in each scenario, for the failure message. */
    evidence: () => evidence.join("\n"),
    report: () => {
      console.log(`${suite} (${confinementKind}):\n  ${counts.join("\n  ")}`)
      reportReliability(
        `${suite} ${tool}`,
        { inputs, escapes, crashes },
        `${tool} ${what}, confinement ${confinementKind}: ${counts.join("; ")}`
      )
      return escapes + crashes
    }
  }
}

/** Calls `call` until `until` (and at least `minCalls` times); counts calls, denials, leaks, defects. */
const hammer = (
  call: () => Effect.Effect<unknown, { readonly code: string }, never>,
  until: number,
  minCalls: number
) =>
  Effect.gen(function* () {
    let calls = 0
    let found = 0
    let denied = 0
    let crashes = 0
    // the first leak or defect, shown when the test fails
    let evidence: string | undefined
    while (performance.now() < until || calls < minCalls) {
      const answer = yield* Effect.either(call()).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.sync(() => {
            crashes++
            evidence ??= `defect: ${String(defect)}`
            return Either.left({ code: "a defect" })
          })
        )
      )
      calls++
      if (Either.isLeft(answer) && answer.left.code === "TOOL_PATH_DENIED") denied++
      if (leaks(answer)) {
        found++
        evidence ??= `leak: ${JSON.stringify(answer).slice(0, 600)}`
      }
    }
    return { calls, found, denied, crashes, evidence }
  })

const leaks = (answer: unknown): boolean => {
  const text = JSON.stringify(answer) ?? ""
  return text.includes(SECRET) || text.includes(OUTSIDE_NAME)
}

/** Runs each scenario for its share of the tool's time; answers escapes + crashes. */
const race = (tool: string, scenarios: ReadonlyArray<Scenario>) =>
  Effect.gen(function* () {
    const report = tally("hostile symlink-swap race", tool, "under a racing symlink swap")
    for (const scenario of scenarios) {
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* flipper(...scenario.flip)
          const until = performance.now() + (SECONDS_PER_TOOL * 1000) / scenarios.length
          const run = yield* hammer(scenario.call, until, Math.ceil(MIN_CALLS_PER_TOOL / scenarios.length))
          report.add(scenario.name, run)
        })
      )
    }
    const failures = report.report()
    assert.strictEqual(failures, 0, report.evidence())
    return failures
  })

describe("swap race", () => {
  const timeout = { timeout: (isLong() ? 1_200 : SECONDS_PER_TOOL + 30) * 1000 }

  it.scopedLive(
    "Read: 0 outside bytes",
    () =>
      Effect.gen(function* () {
        const env = yield* raceEnv
        const run = (p: string) => Read.read({ path: p }).pipe(Effect.provide(env.context))
        const escapes = yield* race("Read", [
          {
            name: "Read swapped file",
            flip: flips(env).swappedFile,
            call: () => run("swap.txt")
          },
          {
            name: "Read file in swapped folder",
            flip: flips(env).swappedFolder,
            call: () => run("dir/file.txt")
          }
        ])
        assert.strictEqual(escapes, 0)
      }),
    timeout
  )

  it.scopedLive(
    "Grep: 0 outside bytes or names",
    () =>
      Effect.gen(function* () {
        const env = yield* raceEnv
        const run = (p: string, outputMode = "content") =>
          Grep.grep({ pattern: "needle", path: p, outputMode }).pipe(Effect.provide(env.context))
        const escapes = yield* race("Grep", [
          {
            name: "Grep swapped folder",
            flip: flips(env).swappedFolder,
            call: () => run("dir")
          },
          {
            name: "Grep file in swapped folder",
            flip: flips(env).swappedFolder,
            call: () => run("dir/file.txt")
          },
          {
            name: "Grep swapped file",
            flip: flips(env).swappedFile,
            call: () => run("swap.txt")
          },
          {
            name: "Grep workspace, a file swapped for a link",
            flip: flips(env).fileForLink,
            call: () => run(".", "content")
          }
        ])
        assert.strictEqual(escapes, 0)
      }),
    timeout
  )

  it.scopedLive(
    "Glob: 0 outside names",
    () =>
      Effect.gen(function* () {
        const env = yield* raceEnv
        const run = (input: Record<string, unknown>) => Glob.glob(input).pipe(Effect.provide(env.context))
        const escapes = yield* race("Glob", [
          {
            name: "Glob pattern through swapped folder",
            flip: flips(env).swappedFolder,
            call: () => run({ pattern: "dir/*" })
          },
          {
            name: "Glob path = swapped folder",
            flip: flips(env).swappedFolder,
            call: () => run({ pattern: "**/*.txt", path: "dir" })
          }
        ])
        assert.strictEqual(escapes, 0)
      }),
    timeout
  )
})

/** The long mode's floor of calls of the exchange race, shared by its scenarios. */
const MIN_EXCHANGE_CALLS = isLong() ? 1_000 : 0

/**
 * The exchange race's folders, inside and outside, of the same shape: both hold subfolders of the
 * same names, so a walk that reaches them by name through the exchanged folder has as many
 * chances to land in the outside one. Answers [inside folder, outside folder].
 */
const layout = (env: { readonly workspace: string; readonly outside: string }) => {
  const files: Record<string, string> = {}
  const outsideFiles: Record<string, string> = {}
  for (let k = 0; k < 40; k++) {
    files[`xdir/inside-${k}.txt`] = "inside needle\n"
    files[`xdir/d${k}/inside-s${k}.txt`] = "inside needle\n"
    outsideFiles[`xdir/${OUTSIDE_NAME}-${k}.txt`] = `${SECRET} needle\n`
    outsideFiles[`xdir/d${k}/${OUTSIDE_NAME}-s${k}.txt`] = `${SECRET} needle\n`
  }
  writeTree(env.workspace, files)
  writeTree(env.outside, outsideFiles)
  return [path.join(env.workspace, "xdir"), path.join(env.outside, "xdir")] as const
}

describe("exchange race", () => {
  it.scopedLive(
    "Glob (and Grep) of a directory exchanged with an outside one by renameat2: 0 outside names",
    () =>
      Effect.gen(function* () {
        const binary = yield* exchangerBinary
        const oneShot = yield* searchEnv()
        const indexed = yield* searchEnv({}, { fileIndex: true })
        const oneShotDirs = layout(oneShot)
        const indexedDirs = layout(indexed)
        // the long-lived host's index of the folder is complete before the race starts
        assert.isTrue(yield* indexReady(indexed, indexedDirs[0]))
        const globIn = (
          name: string,
          env: typeof oneShot,
          dirs: readonly [string, string],
          pattern: string
        ) => ({
          name,
          dirs,
          call: () => Glob.glob({ pattern, path: "xdir" }).pipe(Effect.provide(env.context))
        })
        const scenarios: ReadonlyArray<{
          readonly name: string
          readonly dirs: readonly [string, string]
          readonly call: () => Effect.Effect<unknown, { readonly code: string }, never>
        }> = [
          globIn("Glob **/* in it", oneShot, oneShotDirs, "**/*"),
          globIn("Glob *.txt in it", oneShot, oneShotDirs, "*.txt"),
          globIn("Glob */*.txt in it", oneShot, oneShotDirs, "*/*.txt"),
          globIn("Glob **/* in it, through a file index", indexed, indexedDirs, "**/*"),
          {
            name: "Grep in it",
            dirs: oneShotDirs,
            call: () =>
              Grep.grep({ pattern: "needle", path: "xdir", outputMode: "content" }).pipe(
                Effect.provide(oneShot.context)
              )
          }
        ]
        const report = tally(
          "hostile renameat2-exchange race",
          "Glob",
          "of a directory exchanged with an outside one"
        )
        for (const scenario of scenarios) {
          yield* Effect.scoped(
            Effect.gen(function* () {
              yield* exchanger(binary, ...scenario.dirs, "inside-0.txt")
              const until = performance.now() + (SECONDS_PER_TOOL * 1000) / scenarios.length
              const run = yield* hammer(
                scenario.call,
                until,
                Math.ceil(MIN_EXCHANGE_CALLS / scenarios.length)
              )
              report.add(scenario.name, run)
            })
          )
        }
        assert.strictEqual(report.report(), 0, report.evidence())
      }),
    { timeout: (isLong() ? 1_200 : SECONDS_PER_TOOL + 60) * 1000 }
  )
})
