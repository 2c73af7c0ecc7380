#!/usr/bin/env node
/**
 * The `toolcap` executable. `call` runs without the command-line framework (a call should cost
 * little more than starting Node); everything else, `call --help` included, goes through it.
 *
 * A signal that arrives while the modules load is answered too: a call prints its one JSON
 * line (`TOOL_ABORTED`, exit 2) — nothing was started yet, so nothing needs stopping.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import { writeAllSync } from "./internal/writeSync.js"

const argv = process.argv.slice(2)
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

// `checkpoint build` loads only the checkpoint package and SQLite, unless its command line needs the framework
const fastBuild = argv[0] === "checkpoint" && argv[1] === "build"

const entry = fastCall
  ? await import("./internal/call.js")
  : fastBuild
    ? await import("./internal/checkpointBuild.js")
    : await import("./Cli.js")
// This listener stays: removing the last listener of a signal closes Node's watcher for it, and a
// signal already caught but not yet dispatched would be lost before the runtime's listener exists.
started = true
if (entry.main(argv) === false) {
  started = false
  const cli = await import("./Cli.js")
  started = true
  cli.main(argv)
}
