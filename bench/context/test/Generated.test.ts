// The committed output of `pnpm bench:context` agrees with itself: the README quotes exactly the
// summary rows of BENCHMARKS.md, and the chart BENCHMARKS.md shows is committed beside it with one
// row per policy of that summary.
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
