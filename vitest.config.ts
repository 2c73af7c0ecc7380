import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench/*"],
    // vitest's default on a 2-core machine is one worker (cores - 1). Most test files spend their
    // time waiting on the processes, servers and timeouts they drive, not on the CPU: two files at
    // a time halve the suite's wall time there.
    maxWorkers: 2
  }
})
