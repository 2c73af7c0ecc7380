import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url))

// Tests run against sources, not dist: every workspace package resolves to its src barrel.
export default defineConfig({
  resolve: {
    alias: [
      // subpath entries (`@toolcap/adapters/Mcp`) resolve to their module, not under the barrel
      {
        find: /^@toolcap\/adapters\/(\w+)$/,
        replacement: fileURLToPath(new URL("./packages/adapters/src/$1.ts", import.meta.url))
      },
      ...Object.entries({
        "@toolcap/limits": src("limits"),
        "@toolcap/digest": src("digest"),
        "@toolcap/spill": src("spill"),
        "@toolcap/tools": src("tools"),
        "@toolcap/checkpoint": src("checkpoint"),
        "@toolcap/adapters": src("adapters"),
        "@toolcap/viewer": src("viewer"),
        "@toolcap/bench-report": fileURLToPath(new URL("./bench/report/src/index.ts", import.meta.url))
      }).map(([find, replacement]) => ({ find, replacement }))
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // files of a worker share its module graph (effect and the sources load once per worker, not
    // once per file: ~25 s less CPU for the tools alone); every test builds its own layers and
    // state, and what reads the environment at import runs in a child process of its own
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
