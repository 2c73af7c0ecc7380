import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default mergeConfig(shared, {
  test: {
    // the CLI suites start a fresh `toolcap` process (Node, the bundle, its layers) for nearly
    // every case, several per test: on a loaded 2-core machine one start alone took seconds, and
    // the shared 30 s ran out mid-test. A timeout here only catches a hang; what a case proves is
    // asserted on its output, never on how long it took.
    testTimeout: 120_000
  }
})
