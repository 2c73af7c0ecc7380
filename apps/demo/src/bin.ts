#!/usr/bin/env node
/**
 * The `toolcap` executable (see `internal/launch.ts`).
 *
 * @since 0.1.0
 */
import { launch } from "./internal/launch.js"

await launch(process.argv.slice(2), {
  call: () => import("./internal/call.js"),
  cli: () => import("./Cli.js"),
  checkpointBuild: () => import("./internal/checkpointBuild.js"),
  mcp: () => import("./internal/mcp.js")
})
