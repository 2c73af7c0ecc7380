// Shared by the benches: a temp dir removed at exit (also on Ctrl-C), the median, and a bench
// file bundled for the child processes that measure a host's own CPU and memory.
import { loadAverage as loadAverages, reportFigure } from "@toolcap/bench-report"
import { spawn } from "node:child_process"
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** Runs a bundled bench in a child process of its own and parses the JSON it prints on stdout. */
export const runBundled = <A>(
  bundle: string,
  args: ReadonlyArray<string>,
  env?: NodeJS.ProcessEnv
): Promise<A> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
      env: env ?? process.env
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0
        ? resolve(JSON.parse(out) as A)
        : reject(new Error(`${args.join(" ")}: child exited ${code}`))
    )
  })

/**
 * Bundles a bench file (its `import.meta.url`) into `dir` with the esbuild that tsx depends on (no
 * dependency of our own): its children run it as plain JavaScript, as a host runs compiled code
 * (the tsx loader alone holds ~140 MB of RSS).
 */
export const bundleBench = async (benchUrl: string, dir: string, name: string): Promise<string> => {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"))
  const esbuild = fromTsx("esbuild") as { build: (options: Record<string, unknown>) => Promise<unknown> }
  const outfile = path.join(dir, `${name}.mjs`)
  await esbuild.build({
    entryPoints: [fileURLToPath(benchUrl)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@toolcap/source"],
    outfile,
    logLevel: "error"
  })
  return outfile
}

/**
 * The launcher this package's build made for this machine (`native/build.mjs` writes
 * `dist/native/<platform>-<arch>/toolcap-confine`). A bench's children run a bundle outside the
 * package, where the launcher would not be found, so they are told this path; a path that does
 * not exist would make them measure the prologue entry without saying why.
 */
export const builtLauncher = (): string =>
  fileURLToPath(
    new URL(`../dist/native/${process.platform}-${process.arch}/toolcap-confine`, import.meta.url)
  )

/** A new temp dir, removed when the process exits or is interrupted. */
export const tempDirRemovedOnExit = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true })
  process.once("exit", cleanup)
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      cleanup()
      process.exit(130)
    })
  }
  return dir
}

export const median = (values: ReadonlyArray<number>): number =>
  Arr.sort(values, Order.number)[Math.floor(values.length / 2)]!

/** The load averages, printed beside every figure: other work on the machine shows in it. */
export const loadAverage = (): string => `load average: ${loadAverages()}`

/** Runs a bench's main; a throw or a missed target (`missed > 0`) exits 1. */
export const runMain = (main: () => Promise<number>): void => {
  main().then(
    (missed) => {
      if (missed > 0) process.exitCode = 1
    },
    (error: unknown) => {
      console.error(error)
      process.exitCode = 1
    }
  )
}

/** One figure a bench compares against a target, printed as a `BENCH {json}` line (collected by `pnpm bench`). */
export interface BenchFigure {
  readonly issue: number
  /** What was measured, short. */
  readonly measure: string
  readonly figure: number
  readonly baseline: number
  readonly unit: string
  /** What the in-run baseline is. */
  readonly baselineName: string
  readonly ratio: number
  /** The target as text, e.g. `<= 2.0`. */
  readonly target: string
  readonly met: boolean
}

/**
 * Prints `BENCH {json}` for one figure through the repository's one line format (`bench/report`):
 * the target text `<= 2` bounds the ratio, `<= 150 MB` (a unit after the number) the figure itself.
 */
export const benchLine = (figure: BenchFigure): void => {
  const target = /^(<=|<|>=|>)\s*([\d.]+)\s*(\S+)?$/.exec(figure.target.trim())
  if (target === null) throw new Error(`benchLine: unreadable target ${figure.target}`)
  const met = reportFigure({
    issue: figure.issue,
    measure: figure.measure,
    figure: figure.figure,
    baseline: figure.baseline,
    baselineName: figure.baselineName,
    unit: figure.unit,
    ratio: figure.ratio,
    target: {
      op: target[1] as "<=" | "<" | ">=" | ">",
      value: Number(target[2]),
      ...(target[3] === undefined ? {} : { of: "figure" as const })
    }
  })
  if (met !== figure.met)
    throw new Error(`benchLine: ${figure.measure}: the bench and the report disagree on the target`)
}
