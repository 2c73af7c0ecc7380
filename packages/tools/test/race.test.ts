// Roots hold against a racing adversary: a second process flips a symlink (or swaps a file for a
// symlink) between an inside and an outside target as fast as it can while Read, Grep and Glob
// run. No answer may hold an outside byte (the marker) or an outside name. 5 s per tool here;
// TOOLCAP_LONG_TESTS=1 runs 60 s per tool and at least 5,000 calls per tool. Counts are printed
// (and written where TOOLCAP_RELIABILITY_OUT points, for `pnpm bench`).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Confinement, Glob, Grep, Read, Supervisor } from "@toolcap/tools"
import { searchEnv, writeTree } from "./readFixtures.js"
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

const leaks = (answer: unknown): boolean => {
  const text = JSON.stringify(answer) ?? ""
  return text.includes(SECRET) || text.includes(OUTSIDE_NAME)
}

/** Runs each scenario for its share of the tool's time; answers [calls, escapes] per scenario. */
const race = (tool: string, scenarios: ReadonlyArray<Scenario>) =>
  Effect.gen(function* () {
    const counts: Array<string> = []
    let escapes = 0
    let inputs = 0
    let crashes = 0
    for (const scenario of scenarios) {
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* flipper(...scenario.flip)
          const until = performance.now() + (SECONDS_PER_TOOL * 1000) / scenarios.length
          let calls = 0
          let found = 0
          let denied = 0
          const minCalls = Math.ceil(MIN_CALLS_PER_TOOL / scenarios.length)
          while (performance.now() < until || calls < minCalls) {
            const answer = yield* Effect.either(scenario.call()).pipe(
              Effect.catchAllDefect(() =>
                Effect.sync(() => {
                  crashes++
                  return Either.left({ code: "a defect" })
                })
              )
            )
            calls++
            if (Either.isLeft(answer) && answer.left.code === "TOOL_PATH_DENIED") denied++
            if (leaks(answer)) found++
          }
          escapes += found
          inputs += calls
          counts.push(`${scenario.name}: ${calls} calls, ${denied} denied, ${found} escapes`)
        })
      )
    }
    const confinement = (yield* Confinement.support.pipe(Effect.provide(Supervisor.layer()))).kind
    console.log(`swap race (${confinement}):\n  ${counts.join("\n  ")}`)
    reportReliability(
      `hostile symlink-swap race ${tool}`,
      { inputs, escapes, crashes },
      `${tool} under a racing symlink swap, confinement ${confinement}: ${counts.join("; ")}`
    )
    return escapes + crashes
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
