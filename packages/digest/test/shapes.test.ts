// The recognisers line by line (rules G4, G5), on the documented output shapes of the tools this
// machine does not carry (jest, mocha, go test, eslint, yarn, apt, turbo's prefixes) and on the
// lines whose verdict decides what may fold: each line's expected kind is written beside it.
import { assert, describe, it } from "@effect/vitest"
import { Digest, Shape } from "@toolcap/digest"

/** Judges `lines` in order, as the digest does (looking ahead into the lines after each). */
const judgeAll = (lines: ReadonlyArray<string>): Array<Shape.Kind> => {
  const recogniser = Shape.make(Digest.tailLinesOnFailure)
  return lines.map((line, i) => recogniser.judge(line, (n) => lines[i + n]).kind)
}

const cases: ReadonlyArray<readonly [tool: string, lines: ReadonlyArray<readonly [string, Shape.Kind]>]> = [
  [
    "jest",
    [
      ["PASS src/sum.test.js", "pass"],
      ["  ✓ adds 1 + 2 to equal 3 (3 ms)", "pass"],
      ["FAIL src/div.test.js", "error"],
      ["  ● divide › by zero", "stack"],
      ["    expect(received).toBe(expected) // Object.is equality", "stack"],
      ["      at Object.<anonymous> (src/div.test.js:4:20)", "error"],
      ["Test Suites: 1 failed, 1 passed, 2 total", "summary"],
      ["Tests:       1 failed, 1 passed, 2 total", "summary"],
      ["Time:        0.512 s", "summary"]
    ]
  ],
  [
    "mocha",
    [
      ["  Array", "plain"],
      ["    ✔ returns -1 when absent", "pass"],
      ["    1) finds the index", "plain"],
      ["  1 passing (8ms)", "summary"],
      ["  1 failing", "summary"],
      ["  AssertionError [ERR_ASSERTION]: expected 0 to equal 1", "error"],
      ["      at Context.<anonymous> (test/array.js:9:14)", "error"]
    ]
  ],
  [
    "go test -v",
    [
      ["=== RUN   TestAdd", "progress"],
      ["--- PASS: TestAdd (0.00s)", "pass"],
      ["=== RUN   TestDiv", "progress"],
      ["    div_test.go:12: got 0, want 1", "error"],
      ["--- FAIL: TestDiv (0.00s)", "error"],
      ["FAIL", "summary"],
      ["FAIL\texample.com/calc\t0.004s", "summary"],
      ["ok  \texample.com/other\t0.002s", "summary"]
    ]
  ],
  [
    "eslint",
    [
      ["/repo/src/a.js", "plain"],
      ["  1:7   warning  'x' is assigned a value but never used  no-unused-vars", "warning"],
      ["  2:1   error    Unexpected console statement             no-console", "error"],
      ["✖ 2 problems (1 error, 1 warning)", "summary"]
    ]
  ],
  [
    "yarn",
    [
      ["[1/4] Resolving packages...", "plain"],
      ["success Saved lockfile.", "plain"],
      ['error An unexpected error occurred: "ENOTFOUND".', "error"],
      ["Done in 1.42s.", "summary"]
    ]
  ],
  [
    "apt",
    [
      ["Get:1 http://deb.example.org/debian stable/main amd64 make amd64 4.3-4.1 [396 kB]", "progress"],
      ["Selecting previously unselected package make.", "progress"],
      ["Unpacking make (4.3-4.1) ...", "progress"],
      ["Setting up make (4.3-4.1) ...", "progress"],
      ["0 upgraded, 1 newly installed, 0 to remove and 0 not upgraded.", "summary"],
      ["E: Unable to locate package nosuch", "error"]
    ]
  ],
  [
    "turbo prefixes",
    [
      ["@acme/core:test:  ✓ test/a.test.ts (4 tests) 12ms", "pass"],
      ["@acme/core:test:  FAIL  test/b.test.ts > parses", "error"],
      ["@acme/core:test:  Test Files  1 failed | 1 passed (2)", "summary"],
      ["web:build: Compiled successfully", "plain"]
    ]
  ],
  [
    "git",
    [
      ["commit 5d1c0a2f9e0b7c3d4e5f60718293a4b5c6d7e8f9 (HEAD -> main, origin/main)", "structure"],
      ["commit 1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", "structure"],
      ["Merge: 9f8e7d6 5c4b3a2", "structure"],
      ["Author: Dev <dev@example.com>", "plain"],
      ["f00dfee Merge pull request #12 from fork/feature", "structure"],
      ["diff --git a/x.ts b/x.ts", "structure"],
      ["--- a/x.ts", "structure"],
      ["+++ b/x.ts", "structure"],
      ["@@ -1,3 +1,4 @@ export const x = 1", "structure"],
      ["+const error = 2", "content"],
      [" unchanged", "content"],
      ["Receiving objects:  42% (420/1000), 1.20 MiB | 2.40 MiB/s", "progress"],
      [" 3 files changed, 10 insertions(+), 2 deletions(-)", "summary"]
    ]
  ]
]

describe("Shape", () => {
  for (const [tool, lines] of cases) {
    it(`judges ${tool} output by its shape`, () => {
      const kinds = judgeAll(lines.map(([line]) => line))
      lines.forEach(([line, expected], i) => assert.strictEqual(kinds[i], expected, line))
    })
  }

  it("a passing test named after an error is kept: an error word wins over a check mark", () => {
    assert.deepStrictEqual(judgeAll([" ✓ reports a fatal error on bad input"]), ["error"])
  })

  it("a TAP subtest header folds with its test only when that test passes", () => {
    assert.deepStrictEqual(judgeAll(["# Subtest: a", "ok 1 - a", "# Subtest: b", "not ok 2 - b"]), [
      "pass",
      "pass",
      "plain",
      "error"
    ])
  })
})
