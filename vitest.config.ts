import * as os from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench/*"],
    // vitest's default is one worker fewer than the cores: one worker, one file at a time, on a
    // 2-core machine. Most test files spend their time waiting on the processes, servers and
    // timeouts they drive, not on the CPU, so one file more than the cores runs at a time.
    maxWorkers: os.availableParallelism() + 1
  }
})
