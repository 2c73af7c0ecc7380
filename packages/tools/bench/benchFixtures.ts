// Shared by the benches: a temp dir removed at exit (also on Ctrl-C), and the median.
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

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

/** `/proc/loadavg`, printed beside every figure: other work on the machine shows in it. */
export const loadAverage = (): string => `load average: ${fs.readFileSync("/proc/loadavg", "utf8").trim()}`

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

const round = (n: number) => Math.round(n * 1000) / 1000

/** Prints `BENCH {json}` for one figure, with the 1-minute load average at the time. */
export const benchLine = (figure: BenchFigure): void => {
  const load = Number(fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0])
  console.log(
    `BENCH ${JSON.stringify({ ...figure, figure: round(figure.figure), baseline: round(figure.baseline), ratio: round(figure.ratio), load })}`
  )
}
