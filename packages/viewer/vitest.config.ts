import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default mergeConfig(shared, {
  test: {
    // the front end is bundled once before the tests, as the package's build does
    globalSetup: ["test/globalSetup.ts"],
    // each browser test file launches one Chromium: files run one at a time to keep the load small
    fileParallelism: false
  }
})
