import { assert, describe, it } from "@effect/vitest"
import { Truncate } from "@toolcap/limits"

describe("smoke", () => {
  it("single line", () => {
    const cut = Truncate.cutString("x".repeat(4_200_000), { keep: "head", maxBytes: 98304, maxLines: 4000 })
    assert.strictEqual(
      Truncate.marker(cut),
      "[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 4200000-byte line. Narrow the request to see more.]"
    )
    const lines = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join("")
    const h = Truncate.cutString(lines, { keep: "head", maxBytes: 98304, maxLines: 4000 })
    assert.strictEqual(
      Truncate.marker(h, "/p"),
      "[truncated: kept the first 4000 of 100000 lines; limit 4000 lines / 96KB. Full output saved to /p — Grep it, or Read it with offset/limit.]"
    )
    const t = Truncate.cutString(lines, { keep: "tail", maxBytes: 98304, maxLines: 4000 })
    assert.isTrue(t.text.endsWith("100000\n"))
    assert.strictEqual(t.keptLines, 4000)
  })
})
