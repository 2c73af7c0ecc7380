import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default mergeConfig(shared, {
  test: {
    // a real PostgreSQL server, started once for the package's tests and removed after
    globalSetup: ["test/globalSetup.ts"]
  }
})
