#!/usr/bin/env node
/**
 * The `toolcap` executable of the package, a CommonJS file: Node starts it without its ES module
 * loader, which a call would otherwise pay for before anything of toolcap runs. `call` runs from
 * a CommonJS bundle loaded through a V8 code cache (`internal/codeCache.ts`); everything else
 * from the ES module bundle's `cli.js`, imported on demand.
 *
 * @since 0.1.0
 */
import { fileURLToPath } from "node:url"
import { launch } from "@toolcap/demo/launch"
import type { Entry } from "@toolcap/demo/launch"
import * as CodeCache from "./internal/codeCache.js"

/** The command-line framework's entry, built beside this file (not resolved at build time). */
const cliEntry = "./cli.js"

void launch(process.argv.slice(2), {
  call: async () =>
    CodeCache.load<Entry>(
      fileURLToPath(new URL("./call.cjs", import.meta.url)),
      (specifier) => import(specifier)
    ),
  checkpointBuild: async () =>
    CodeCache.load<Entry>(
      fileURLToPath(new URL("./checkpoint.cjs", import.meta.url)),
      (specifier) => import(specifier)
    ),
  cli: () => import(cliEntry) as Promise<Entry>
})
