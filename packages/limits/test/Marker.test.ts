// The markers (rules M2–M7), character for character, and where they go (appended for a
// head cut, prepended for a tail cut; the spill sentence only when a copy was really written).
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { Marker, Truncate } from "@toolcap/limits"

const spillPath = "/data/scratch/s-1/tool-output/bash-stdout-1700000000000-0.log"
const shell = { maxLines: 4000, maxBytes: 96 * 1024 }

describe("Marker.render", () => {
  it("head cut without a spill file", () => {
    assert.strictEqual(
      Marker.render({ keep: "head", keptLines: 4000, totalLines: 51234, keptBytes: 30000, ...shell }),
      "[truncated: kept the first 4000 of 51234 lines; limit 4000 lines / 96KB. Narrow the request to see more.]"
    )
  })

  it("head cut with a spill file (the example of rules M2)", () => {
    assert.strictEqual(
      Marker.render({
        keep: "head",
        keptLines: 4000,
        totalLines: 51234,
        keptBytes: 30000,
        ...shell,
        spillPath: "<path>"
      }),
      "[truncated: kept the first 4000 of 51234 lines; limit 4000 lines / 96KB. Full output saved to <path> \u2014 Grep it, or Read it with offset/limit.]"
    )
  })

  it("tail cut without a spill file (the example of rules M3)", () => {
    assert.strictEqual(
      Marker.render({ keep: "tail", keptLines: 1200, totalLines: 51234, keptBytes: 98000, ...shell }),
      "[truncated: kept the last 1200 of 51234 lines; limit 4000 lines / 96KB. Narrow the request to see more.]"
    )
  })

  it("tail cut with a spill file", () => {
    assert.strictEqual(
      Marker.render({
        keep: "tail",
        keptLines: 1200,
        totalLines: 51234,
        keptBytes: 98000,
        ...shell,
        spillPath
      }),
      `[truncated: kept the last 1200 of 51234 lines; limit 4000 lines / 96KB. Full output saved to ${spillPath} \u2014 Grep it, or Read it with offset/limit.]`
    )
  })

  it("single line without a spill file", () => {
    for (const keep of ["head", "tail"] as const) {
      assert.strictEqual(
        Marker.render({
          keep,
          keptLines: 0,
          totalLines: 1,
          keptBytes: 98304,
          singleLineBytes: 4200000,
          ...shell
        }),
        "[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 4200000-byte line. Narrow the request to see more.]"
      )
    }
  })

  it("single line with a spill file (the example of rules M4)", () => {
    for (const keep of ["head", "tail"] as const) {
      assert.strictEqual(
        Marker.render({
          keep,
          keptLines: 0,
          totalLines: 3,
          keptBytes: 98304,
          singleLineBytes: 4200000,
          ...shell,
          spillPath: "<path>"
        }),
        "[truncated: no complete line fits the 96KB limit; kept 98304 bytes of a single 4200000-byte line. Full output saved to <path> \u2014 Grep it, or Read it with offset/limit.]"
      )
    }
  })

  it("the search budget renders as 48KB / 2000 lines", () => {
    assert.strictEqual(
      Marker.render({
        keep: "head",
        keptLines: 2000,
        totalLines: 2001,
        keptBytes: 4000,
        maxLines: 2000,
        maxBytes: 48 * 1024
      }),
      "[truncated: kept the first 2000 of 2001 lines; limit 2000 lines / 48KB. Narrow the request to see more.]"
    )
  })

  it("the checkpoint marker is its own text", () => {
    assert.strictEqual(
      Marker.checkpointMarker,
      "[checkpoint truncated: this message crossed the retained context budget]"
    )
  })

  it("nextStep names the spill file only when one was written", () => {
    assert.strictEqual(Marker.nextStep(undefined), "Narrow the request to see more.")
    assert.strictEqual(
      Marker.nextStep("/x/y.log"),
      "Full output saved to /x/y.log \u2014 Grep it, or Read it with offset/limit."
    )
  })
})

describe("Marker.formatKB and Marker.formatBytes", () => {
  it("prints whole KB as integers (KB = 1024 bytes) and rounds other sizes down, never claiming more than applied and never reading 0", () => {
    // bytes, the markers' {K}, the size in prose: bytes below 1 KB, KB below 1 MB, MB above
    for (const [bytes, kb, prose] of [
      [98304, "96", "96KB"],
      [49152, "48", "48KB"],
      [1024, "1", "1KB"],
      [524288, "512", "512KB"],
      [100000, "97.65", "97.65KB"],
      [1500, "1.46", "1.46KB"],
      [1536, "1.5", "1.5KB"],
      [1024 * 1024 - 1, "1023.99", "1023.99KB"],
      [1023, "0.99", "1023 bytes"],
      [1000, "0.97", "1000 bytes"],
      [4, "0.0039", "4 bytes"],
      [1, "0.00097", "1 byte"],
      [0, "0", "0 bytes"],
      [16 * 1024 * 1024, "16384", "16MB"],
      [9_867_000, "9635.74", "9.4MB"]
    ] as const) {
      assert.strictEqual(Marker.formatKB(bytes), kb)
      assert.strictEqual(Marker.formatBytes(bytes), prose)
    }
  })

  it.prop(
    "never overstates a size, and says it within one hundredth of its unit",
    {
      bytes: fc.oneof(
        fc.nat({ max: 4 * 1024 * 1024 }),
        fc.maxSafeNat().map((n) => Math.floor(n / 1024))
      )
    },
    ({ bytes }) => {
      const text = Marker.formatBytes(bytes)
      const parsed = /^(\d+(?:\.\d+)?)(?: (bytes?)|(KB)|(MB))$/.exec(text)
      assert.isNotNull(parsed, text)
      const unit = parsed![2] !== undefined ? 1 : parsed![3] !== undefined ? 1024 : 1024 * 1024
      const said = Number(parsed![1]) * unit
      assert.isAtMost(said, bytes + 1e-6, text)
      assert.isBelow(bytes, said + 0.01 * unit + 1e-6, text)
      // the largest unit that is at most the size
      assert.isTrue(unit === 1 ? bytes < 1024 : unit === 1024 ? bytes < 1024 * 1024 : true, text)
      assert.isAtLeast(bytes, unit === 1 ? 0 : unit, text)
    }
  )
})

describe("Marker.attach", () => {
  it("appends after a head, on a line of its own", () => {
    assert.strictEqual(Marker.attach("a\nb\n", "head", "[m]"), "a\nb\n[m]")
    assert.strictEqual(Marker.attach("abc", "head", "[m]"), "abc\n[m]")
  })

  it("prepends before a tail, on a line of its own", () => {
    assert.strictEqual(Marker.attach("a\nb\n", "tail", "[m]"), "[m]\na\nb\n")
    assert.strictEqual(Marker.attach("bc", "tail", "[m]"), "[m]\nbc")
  })
})

describe("Truncate.render places the marker of a real cut", () => {
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("")

  it("head: kept text, then the marker", () => {
    const cut = Truncate.cutString(lines, { keep: "head", maxBytes: 1024, maxLines: 3 })
    assert.strictEqual(
      Truncate.render(cut),
      "line 1\nline 2\nline 3\n[truncated: kept the first 3 of 10 lines; limit 3 lines / 1KB. Narrow the request to see more.]"
    )
    assert.strictEqual(
      Truncate.render(cut, spillPath),
      `line 1\nline 2\nline 3\n[truncated: kept the first 3 of 10 lines; limit 3 lines / 1KB. Full output saved to ${spillPath} \u2014 Grep it, or Read it with offset/limit.]`
    )
  })

  it("tail: the marker, then the kept text", () => {
    const cut = Truncate.cutString(lines, { keep: "tail", maxBytes: 1024, maxLines: 2 })
    assert.strictEqual(
      Truncate.render(cut),
      "[truncated: kept the last 2 of 10 lines; limit 2 lines / 1KB. Narrow the request to see more.]\nline 9\nline 10\n"
    )
  })

  it("no marker when nothing was cut, even with a spill path", () => {
    const cut = Truncate.cutString(lines, { keep: "head", maxBytes: 1024, maxLines: 10 })
    assert.isFalse(cut.truncated)
    assert.strictEqual(Truncate.render(cut, spillPath), lines)
  })
})

describe("head-and-tail spill copies and cuts", () => {
  const copy: Marker.SavedCopy = {
    path: spillPath,
    complete: false,
    totalBytes: 1288906,
    ranges: [
      { from: 0, to: 262101, lines: 41000 },
      { from: 1026666, to: 1288906, lines: 37463 }
    ]
  }

  it("the sentence of a head-and-tail copy names both parts and the total, in exact bytes", () => {
    assert.strictEqual(
      Marker.nextStep(copy),
      `First 262101 and last 262240 of 1288906 bytes saved to ${spillPath} \u2014 Grep it, or Read it with offset/limit.`
    )
    assert.strictEqual(
      Marker.nextStep({ ...copy, complete: true, ranges: [{ from: 0, to: 1288906, lines: 200001 }] }),
      `Full output saved to ${spillPath} \u2014 Grep it, or Read it with offset/limit.`
    )
  })

  it("a head cut backed by a head-and-tail copy never says Full output saved", () => {
    const marker = Marker.render({
      keep: "head",
      keptLines: 4000,
      totalLines: 200001,
      keptBytes: 23000,
      ...shell,
      spillPath: copy
    })
    assert.strictEqual(
      marker,
      `[truncated: kept the first 4000 of 200001 lines; limit 4000 lines / 96KB. First 262101 and last 262240 of 1288906 bytes saved to ${spillPath} \u2014 Grep it, or Read it with offset/limit.]`
    )
    assert.notInclude(marker, "Full output saved")
  })

  it("the gap line states the lines and bytes left out, and fits spillGapMaxBytes", () => {
    assert.strictEqual(
      Marker.spillGap({ bytes: 764565, lines: 121538 }),
      "[\u2026 121538 lines (764565 bytes) left out here \u2026]"
    )
    const longest = new TextEncoder().encode(
      `\n${Marker.spillGap({ bytes: Number.MAX_SAFE_INTEGER, lines: Number.MAX_SAFE_INTEGER })}\n`
    ).length
    assert.strictEqual(Marker.spillGapMaxBytes, longest)
  })

  it("a head-and-tail cut's marker names both ends, and stands between them", () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("")
    const limit = { maxBytes: 1024, maxLines: 4 }
    const parts = Truncate.splitBudget(limit, 0.5)
    const head = Truncate.cutString(lines, { keep: "head", ...parts.head! })
    const tail = Truncate.cutString(lines, { keep: "tail", ...parts.tail! })
    assert.strictEqual(
      Truncate.renderBoth(head, tail, limit),
      "line 1\nline 2\n[truncated: kept the first 2 and the last 2 of 10 lines (14 and 15 of 71 bytes); limit 4 lines / 1KB. Narrow the request to see more.]\nline 9\nline 10\n"
    )
    assert.strictEqual(Marker.between("abc", "[m]", "xyz"), "abc\n[m]\nxyz")
  })

  it("splitBudget gives the head its share (rounded down) and the tail the rest", () => {
    assert.deepStrictEqual(Truncate.splitBudget({ maxBytes: 8192, maxLines: 200 }, 0.25), {
      head: { maxBytes: 2048, maxLines: 50 },
      tail: { maxBytes: 6144, maxLines: 150 }
    })
    assert.deepStrictEqual(Truncate.splitBudget({ maxBytes: 10, maxLines: 3 }, 1), {
      head: { maxBytes: 10, maxLines: 3 },
      tail: undefined
    })
    assert.deepStrictEqual(Truncate.splitBudget({ maxBytes: 10, maxLines: 3 }, 0), {
      head: undefined,
      tail: { maxBytes: 10, maxLines: 3 }
    })
  })
})
