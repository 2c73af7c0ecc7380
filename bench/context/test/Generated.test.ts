// The committed output of `pnpm bench:context` agrees with itself: the README quotes exactly the
// summary rows of BENCHMARKS.md, which give every policy its four outcome counts and score over the
// corpus (at least 40 cases, each in the grid), and the chart BENCHMARKS.md shows is committed
// beside it with one row per policy of that summary.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { beginComment, endComment } from "../src/Region.js"

const repoRoot = path.resolve(fileURLToPath(import.meta.url), "../../../..")
const read = (file: string): string => fs.readFileSync(path.join(repoRoot, file), "utf8")

const region = (document: string, name: string): string => {
  const begin = document.indexOf(beginComment(name))
  const end = document.indexOf(endComment(name))
  assert.isAtLeast(begin, 0, `the ${name} region begins`)
  assert.isAbove(end, begin, `the ${name} region ends after it begins`)
  return document.slice(begin, end)
}

const tableRows = (text: string): Array<string> => text.split("\n").filter((line) => line.startsWith("| "))

describe("generated context-health output", () => {
  it("the README quotes the summary rows of BENCHMARKS.md exactly", () => {
    const quoted = tableRows(region(read("README.md"), "pnpm bench:context summary"))
    const section = region(read("BENCHMARKS.md"), "pnpm bench:context")
    assert.isAtLeast(quoted.length, 2 + 6, "header, rule and at least six policies")
    assert.include(section, quoted.join("\n"))
    assert.include(read("README.md"), "[BENCHMARKS.md](BENCHMARKS.md)")
  })

  it("the summary gives every policy four outcome counts that add up to the corpus of at least 40 cases", () => {
    const section = region(read("BENCHMARKS.md"), "pnpm bench:context")
    const summary = tableRows(region(read("README.md"), "pnpm bench:context summary"))
    const header = summary[0]!.split("|").map((cell) => cell.trim())
    for (const column of ["seen", "saved copy", "re-run", "lost", "seen + ½·reached"])
      assert.include(header, column)
    const at = (name: string) => header.indexOf(name)
    for (const row of summary.slice(2)) {
      const cells = row.split("|").map((cell) => cell.trim())
      const n = Number(/\/ (\d+)$/.exec(cells[at("seen")]!)?.[1])
      assert.isAtLeast(n, 40, row)
      const [seen, saved, rerun, lost] = ["seen", "saved copy", "re-run", "lost"].map((name) =>
        Number.parseInt(cells[at(name)]!, 10)
      )
      assert.strictEqual(seen! + saved! + rerun! + lost!, n, row)
      assert.strictEqual(
        Number(cells[at("seen + ½·reached")]!.replace(/\*/g, "")),
        seen! + (saved! + rerun!) / 2,
        row
      )
    }
    const grid = section.slice(section.indexOf("### Every case through every policy"))
    const gridRows = tableRows(grid.slice(0, grid.indexOf("###", 4))).slice(2)
    assert.isAtLeast(gridRows.length, 40)
    for (const row of gridRows) assert.strictEqual(row.split(" | ").length, summary.length - 2 + 1, row)
  })

  it("the chart is committed beside BENCHMARKS.md with a row per summarised policy", () => {
    const section = region(read("BENCHMARKS.md"), "pnpm bench:context")
    const chartFile = /!\[[^\]]*\]\(([^)]+\.svg)\)/.exec(section)?.[1]
    assert.isDefined(chartFile)
    const svg = read(chartFile!)
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    const policies = tableRows(region(read("README.md"), "pnpm bench:context summary"))
      .slice(2)
      .map((row) => row.split("|")[1]!.trim())
    assert.isAtLeast(policies.length, 6)
    for (const policy of policies) assert.include(svg, `>${policy}</text>`)
  })
})
