/**
 * Terminal output of the demo: headings, indented lines, a few colours when stdout is a TTY
 * (and NO_COLOR is unset), and a progress line that redraws while a step works.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"

const isTty = process.stdout.isTTY === true && process.env["NO_COLOR"] === undefined

const paint = (code: string) => (text: string) => (isTty ? `\u001b[${code}m${text}\u001b[0m` : text)

/** @internal */
export const bold = paint("1")
/** @internal */
export const dim = paint("2")
/** @internal */
export const green = paint("32")
/** @internal */
export const yellow = paint("33")
/** @internal */
export const cyan = paint("36")

/** @internal */
export const line = (text = ""): Effect.Effect<void> =>
  Effect.sync(() => void process.stdout.write(`${text}\n`))

/** @internal */
export const detail = (text: string): Effect.Effect<void> =>
  line(
    text
      .split("\n")
      .map((l) => `    ${l}`)
      .join("\n")
  )

/** Shows at most `max` characters of a one-line excerpt. @internal */
export const excerpt = (text: string, max = 110): string => {
  const flat = JSON.stringify(text)
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** What a running step reports; `status` is read by the progress line. @internal */
export interface Progress {
  status: string
}

/**
 * Runs a step with a live progress line: on a TTY a spinner with the step's status redraws every
 * 80 ms; elsewhere the status is printed once a second while it changes, so logs show progress too.
 *
 * @internal
 */
export const withProgress = <A, E, R>(
  initial: string,
  body: (progress: Progress) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const progress: Progress = { status: initial }
    let frame = 0
    let shown = ""
    const draw = Effect.sync(() => {
      if (isTty) {
        frame = (frame + 1) % frames.length
        process.stdout.write(`\r\u001b[2K    ${cyan(frames[frame]!)} ${dim(progress.status)}`)
      } else if (progress.status !== shown) {
        shown = progress.status
        process.stdout.write(`    … ${progress.status}\n`)
      }
    })
    const clear = Effect.sync(() => {
      if (isTty) process.stdout.write("\r\u001b[2K")
    })
    const spinner = yield* draw.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(isTty ? 80 : 1000))),
      Effect.forkDaemon
    )
    return yield* body(progress).pipe(Effect.ensuring(Fiber.interrupt(spinner).pipe(Effect.zipRight(clear))))
  })
