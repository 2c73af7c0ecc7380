#!/usr/bin/env node
/**
 * The `toolcap` executable.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Exit from "effect/Exit"
import * as Cli from "./Cli.js"

NodeRuntime.runMain(Cli.run(process.argv), {
  disableErrorReporting: false,
  teardown: (exit, onExit) => {
    const settled = Cli.exitCode()
    if (settled !== undefined) return onExit(settled)
    onExit(Exit.isSuccess(exit) ? 0 : Exit.isInterrupted(exit) ? 130 : 1)
  }
})
