/**
 * What the `toolcap` executable does before any tool code loads: names the process, answers a
 * signal that arrives while the modules load (a call prints its one JSON line, `TOOL_ABORTED`,
 * exit 2 — nothing was started yet, so nothing needs stopping), then runs `call` without the
 * command-line framework (a call should cost little more than starting Node), a plain
 * `checkpoint build` and `mcp` without it too, and everything else, `call --help` included,
 * through it. How each entry is loaded is the caller's: the
 * bundled package loads `call` from a V8 code cache.
 */
import * as os from "node:os"
import { writeAllSync } from "./writeSync.js"

/** A loaded entry point. @internal */
export interface Entry {
  readonly main: (argv: ReadonlyArray<string>) => unknown
}

/** Runs the executable with `argv` (without node and the script). @internal */
export const launch = async (
  argv: ReadonlyArray<string>,
  entries: {
    readonly call: () => Promise<Entry>
    readonly cli: () => Promise<Entry>
    /** `checkpoint build` without the framework; its `main` answers `false` when its command line needs it. */
    readonly checkpointBuild?: () => Promise<Entry>
    /** `mcp` without the framework; its `main` answers `false` when its command line needs it. */
    readonly mcp?: () => Promise<Entry>
  }
): Promise<void> => {
  // `ps` shows what runs (and a host, or a test, can see that the signal handlers below are set)
  process.title = argv[0] === undefined ? "toolcap" : `toolcap ${argv[0]}`
  const isCall = argv[0] === "call"
  const fastCall = isCall && !argv.includes("--help") && !argv.includes("-h")

  let started = false
  const onEarlySignal = (signal: NodeJS.Signals) => {
    // once started, the runtime's own listener (called with this one) handles the signal
    if (started) return
    if (isCall) {
      const tool = argv[1] ?? "call"
      const error = {
        code: "TOOL_ABORTED",
        message: `${tool} was aborted before it started. Run it again if the result is still needed.`
      }
      const line = argv.includes("--stream") ? { type: "error", error } : { ok: false, error }
      writeAllSync(1, `${JSON.stringify(line)}\n`)
      process.exit(2)
    }
    process.exit(128 + (os.constants.signals[signal] ?? 15))
  }
  process.on("SIGINT", onEarlySignal)
  process.on("SIGTERM", onEarlySignal)

  // `checkpoint build` loads only the checkpoint package and SQLite, and `mcp` only the host and
  // the protocol, unless their command line needs the framework
  const fastEntry =
    argv[0] === "checkpoint" && argv[1] === "build"
      ? entries.checkpointBuild
      : argv[0] === "mcp"
        ? entries.mcp
        : undefined

  const entry = fastCall
    ? await entries.call()
    : fastEntry !== undefined
      ? await fastEntry()
      : await entries.cli()
  // This listener stays: removing the last listener of a signal closes Node's watcher for it, and
  // a signal already caught but not yet dispatched would be lost before the runtime's listener exists.
  started = true
  if (entry.main(argv) === false) {
    started = false
    const cli = await entries.cli()
    started = true
    cli.main(argv)
  }
}
