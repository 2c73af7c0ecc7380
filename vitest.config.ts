import * as os from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench/*"],
    // vitest's default is one worker fewer than the cores: one worker, one file at a time, on a
    // 2-core machine. Most test files spend their time waiting on the processes, servers and
    // timeouts they drive, not on the CPU, so at least two files run at a time.
    maxWorkers: Math.max(2, os.availableParallelism() - 1)
  }
})
