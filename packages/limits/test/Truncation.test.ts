// Rules M10: every bounded result also carries a machine-readable truncation object.
import { assert, describe, it } from "@effect/vitest"
import { Truncate, Truncation } from "@toolcap/limits"
import { Schema } from "effect"

const lines = Array.from({ length: 50 }, (_, i) => `row ${i}\n`).join("")

describe("Truncation.fromCut", () => {
  it("reports the kept end, kept and total lines and bytes, and the limit", () => {
    const cut = Truncate.cutString(lines, { keep: "tail", maxBytes: 1024, maxLines: 10 })
    assert.deepStrictEqual(Truncation.fromCut(cut), {
      kept: "tail",
      keptLines: 10,
      totalLines: 50,
      keptBytes: cut.keptBytes,
      totalBytes: lines.length,
      limitLines: 10,
      limitBytes: 1024
    })
  })

  it("names the spill file only when one was written, and the single line when one was cut", () => {
    const cut = Truncate.cutString("q".repeat(5000), { keep: "head", maxBytes: 1024, maxLines: 10 })
    const truncation = Truncation.fromCut(cut, "/s/bash-stdout-1-0.log")
    assert.strictEqual(truncation.spillPath, "/s/bash-stdout-1-0.log")
    assert.strictEqual(truncation.singleLineBytes, 5000)
    assert.strictEqual(truncation.keptLines, 0)
    assert.notProperty(Truncation.fromCut(cut), "spillPath")
  })

  it("is valid against its schema and survives JSON", () => {
    const cut = Truncate.cutString(lines, { keep: "head", maxBytes: 40, maxLines: 10 })
    const truncation = Truncation.fromCut(cut, "/s/x.log")
    const json = JSON.stringify(Schema.encodeSync(Truncation.Truncation)(truncation))
    assert.deepStrictEqual(Schema.decodeUnknownSync(Truncation.Truncation)(JSON.parse(json)), truncation)
  })

  it("says what a spill file holds: complete, or the head and tail byte ranges", () => {
    const cut = Truncate.cutString(lines, { keep: "head", maxBytes: 40, maxLines: 10 })
    const copy = {
      path: "/s/x.log",
      complete: false,
      totalBytes: 300,
      ranges: [
        { from: 0, to: 100, lines: 14 },
        { from: 200, to: 300, lines: 14 }
      ]
    }
    const truncation = Truncation.fromCut(cut, copy)
    assert.strictEqual(truncation.spillPath, "/s/x.log")
    assert.deepStrictEqual(truncation.spillCopy, { complete: false, totalBytes: 300, ranges: copy.ranges })
    assert.notProperty(Truncation.fromCut(cut, "/s/x.log"), "spillCopy")
  })

  it("a head-and-tail cut reports both ends and the sums", () => {
    const head = Truncate.cutString(lines, { keep: "head", maxBytes: 512, maxLines: 3 })
    const tail = Truncate.cutString(lines, { keep: "tail", maxBytes: 512, maxLines: 2 })
    const truncation = Truncation.fromBoth(head, tail, { maxBytes: 1024, maxLines: 5 })
    assert.deepStrictEqual(truncation, {
      kept: "both",
      head: { lines: 3, bytes: head.keptBytes },
      tail: { lines: 2, bytes: tail.keptBytes },
      keptLines: 5,
      totalLines: 50,
      keptBytes: head.keptBytes + tail.keptBytes,
      totalBytes: lines.length,
      limitLines: 5,
      limitBytes: 1024
    })
    assert.deepStrictEqual(Schema.decodeUnknownSync(Truncation.Truncation)(truncation), truncation)
  })
})
