#!/usr/bin/env node
/**
 * The `toolcap` executable of the package: `call` runs from a CommonJS bundle loaded through a
 * V8 code cache (`internal/codeCache.ts`), everything else from the ES module bundle.
 *
 * @since 0.1.0
 */
import { fileURLToPath } from "node:url"
import { launch } from "@toolcap/demo/launch"
import type { Entry } from "@toolcap/demo/launch"
import * as CodeCache from "./internal/codeCache.js"

await launch(process.argv.slice(2), {
  call: async () =>
    CodeCache.load<Entry>(
      fileURLToPath(new URL("./call.cjs", import.meta.url)),
      (specifier) => import(specifier)
    ),
  cli: () => import("@toolcap/demo/cli")
})
