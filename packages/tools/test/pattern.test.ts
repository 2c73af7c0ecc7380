/**
 * The path-pattern engine behind Glob's `pattern`, Grep's `glob` and the ignore files: it agrees
 * with picomatch (what Glob used before) on the syntax they share, reads ignore-file lines the way
 * ripgrep does, and matches in time linear in the path whatever the pattern: the work it does is
 * bounded by the path's length times the automaton's size, for patterns that make a backtracking
 * matcher run for minutes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { createRequire } from "node:module"
import * as Pattern from "../src/internal/search/pattern/glob.js"
import * as Gitignore from "../src/internal/search/pattern/gitignore.js"
import * as Narrowing from "../src/internal/search/glob.js"

const picomatch = createRequire(import.meta.url)("picomatch") as (
  glob: string,
  options: { readonly dot: boolean }
) => (input: string) => boolean

/** Atoms of one segment in the syntax both read alike (no `**` inside a segment, no quirks). */
const atom = FastCheck.constantFrom(
  "a",
  "b",
  ".",
  "*",
  "?",
  "[ab]",
  "[^a]",
  "[a-c]",
  "{a,b}",
  "{a,bb}",
  "@(a|b)",
  "+(a|b)"
)
const segment = FastCheck.array(atom, { minLength: 1, maxLength: 4 })
  .map((atoms) => atoms.join(""))
  // `**` inside a segment is a picomatch quirk (`**.ts` crosses folders there); `.` segments are
  // never in a listed path
  .filter((text) => !text.includes("**") && text !== "." && text !== "..")
  // picomatch reads `?`, `*` or `+` right after an extglob as a regex quantifier of the group
  .filter((text) => !/\)[?*+]/.test(text))
const globPattern = FastCheck.array(FastCheck.oneof(segment, FastCheck.constant("**")), {
  minLength: 1,
  maxLength: 4
})
  .map((segments) => segments.join("/"))
  // a trailing `/**` reads differently on purpose (picomatch lets `a/**` match `a`)
  .filter((pattern) => !pattern.endsWith("/**"))
  // picomatch's fast path for the whole patterns `*.*` and `**/*.*` wants a character after the
  // dot (`a.` does not match there, though it does in a shell and in ripgrep)
  .filter((pattern) => pattern !== "*.*" && pattern !== "**/*.*")
// listings never hold `.` or `..` segments (picomatch never matches them)
const pathName = FastCheck.array(FastCheck.constantFrom("a", "b", "c", "."), { minLength: 1, maxLength: 5 })
  .map((c) => c.join(""))
  .filter((name) => name !== "." && name !== "..")
const filePath = FastCheck.array(pathName, { minLength: 1, maxLength: 4 }).map((names) => names.join("/"))

/** A family that makes a backtracking matcher explode: `*a*a…*a*b` against a run of `a`s. */
const catastrophic = (stars: number) => `${"*a".repeat(stars)}*b`

describe("glob patterns", () => {
  it.prop(
    "agree with picomatch (dot: true) on their shared syntax",
    [globPattern, FastCheck.array(filePath, { minLength: 1, maxLength: 8 })],
    ([pattern, paths]) => {
      const ours = Pattern.compileGlob(pattern)
      const theirs = picomatch(pattern, { dot: true })
      for (const candidate of paths)
        assert.strictEqual(ours.matches(candidate), theirs(candidate), `${pattern} against ${candidate}`)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "match in linear time: work at most (path length + 1) x 2 x automaton size, whatever the pattern",
    [
      FastCheck.oneof(
        globPattern,
        FastCheck.integer({ min: 1, max: 30 }).map(catastrophic),
        FastCheck.integer({ min: 1, max: 12 }).map((k) => `a/${"**/x/".repeat(k)}**/c`)
      ),
      FastCheck.oneof(
        filePath,
        FastCheck.integer({ min: 1, max: 250 }).map((n) => "a".repeat(n)),
        FastCheck.integer({ min: 1, max: 60 }).map((n) => `a/${"x/".repeat(n)}y`)
      )
    ],
    ([pattern, candidate]) => {
      const compiled = Pattern.compileGlob(pattern)
      const automaton = compiled.automaton!
      const before = automaton.work()
      compiled.matches(candidate)
      assert.isAtMost(automaton.work() - before, (candidate.length + 1) * 2 * (automaton.size + 1))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("a 20-star pattern against names of 60 to 200 `a`s answers false after linear work", () => {
    const compiled = Pattern.compileGlob(catastrophic(20))
    for (const length of [60, 100, 200]) {
      const before = compiled.automaton!.work()
      assert.isFalse(compiled.matches("a".repeat(length)))
      assert.isTrue(compiled.matches(`${"a".repeat(length)}b`))
      assert.isAtMost(
        compiled.automaton!.work() - before,
        2 * (2 * length + 2) * (compiled.automaton!.size + 1)
      )
    }
  })

  it("reads the syntax Glob documents", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
      ["a/**", ["a/b", "a/b/c"], ["ab", "a"]],
      ["./src/*.ts", ["src/a.ts"], ["a.ts"]],
      ["**/b", ["b", "a/b", "a/c/b"], ["ab"]],
      ["a/**/b", ["a/b", "a/x/y/b"], ["ab", "a/xb"]],
      ["*.{ts,tsx}", ["a.ts", "a.tsx"], ["a.t", "d/a.ts"]],
      ["{src,test}/**/*.ts", ["src/a.ts", "test/x/y.ts"], ["lib/a.ts"]],
      ["{a,b/c}/*", ["a/x", "b/c/x"], ["b/x"]],
      ["f{1..3}", ["f1", "f3"], ["f4"]],
      ["f{01..10..3}", ["f01", "f04", "f10"], ["f02", "f1"]],
      ["[!a]x", ["bx"], ["ax", "/x"]],
      ["[[:digit:]]", ["7"], ["a"]],
      ["src/!(test)/*.ts", ["src/lib/a.ts"], ["src/test/a.ts"]],
      ["!*.ts", ["a.js", "d/a.ts.bak"], ["a.ts"]],
      ["\\*", ["*"], ["a"]],
      ["(a|b)", ["(a|b)"], ["a"]],
      ["?", ["😀", "é"], ["ab", "/"]]
    ]
    for (const [pattern, yes, no] of cases) {
      const compiled = Pattern.compileGlob(pattern)
      for (const candidate of yes)
        assert.isTrue(compiled.matches(candidate), `${pattern} matches ${candidate}`)
      for (const candidate of no)
        assert.isFalse(compiled.matches(candidate), `${pattern} rejects ${candidate}`)
    }
  })

  it("refuses what it cannot read with a reason, before matching anything", () => {
    for (const [pattern, reason] of [
      ["a/!(b)c/*", "whole path segment"],
      ["@(a/b)", "/ inside"],
      ["{1..100000}", "more than 1024"],
      [`${"{".repeat(70)}a,b${"}".repeat(70)}`, "deep"]
    ] as const)
      assert.throws(() => Pattern.compileGlob(pattern), Pattern.PatternError, reason)
  })

  it("names the literal folders a pattern starts with", () => {
    assert.deepStrictEqual(Pattern.scanBase("src/lib/*.ts"), { names: ["src", "lib"], rest: "*.ts" })
    assert.deepStrictEqual(Pattern.scanBase("a/\\*b/c*"), { names: ["a", "*b"], rest: "c*" })
    assert.deepStrictEqual(Pattern.scanBase("{a,b}/c/*"), { names: [], rest: "{a,b}/c/*" })
    assert.deepStrictEqual(Pattern.scanBase("x.ts"), { names: [], rest: "x.ts" })
    assert.deepStrictEqual(Pattern.compileGlob("!src/*.ts").base, [])
  })
})

/** One ignore-file line's verdict on a path, as a walk asks it. */
const judge = (line: string, candidate: string, isDirectory = false) => {
  const rule = Gitignore.parseRule(line)
  if (rule === undefined || (rule.onlyDirectories && !isDirectory)) return "none"
  return rule.automaton.matches(candidate) ? (rule.whitelist ? "whitelist" : "ignore") : "none"
}

describe("ignore-file rules", () => {
  it("reads lines as ripgrep does", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean, string]> = [
      ["*.log", "a.log", false, "ignore"],
      ["*.log", "d/e/a.log", false, "ignore"],
      ["/top.txt", "top.txt", false, "ignore"],
      ["/top.txt", "d/top.txt", false, "none"],
      ["build/", "build", true, "ignore"],
      ["build/", "build", false, "none"],
      ["!keep.log", "keep.log", false, "whitelist"],
      ["a/**", "a/x/y", false, "ignore"],
      ["a/**", "a", true, "none"],
      ["**/c/*.txt", "x/c/d.txt", false, "ignore"],
      ["\\#hash", "#hash", false, "ignore"],
      ["# comment", "# comment", false, "none"],
      ["top.txt   ", "top.txt", false, "ignore"],
      ["a\\ ", "a ", false, "ignore"],
      ["{a,b}.txt", "b.txt", false, "ignore"],
      ["ab[", "ab[", false, "ignore"],
      ["a}", "a}", false, "none"],
      ["x**y", "xay", false, "ignore"],
      ["x**y", "x/y", false, "none"]
    ]
    for (const [line, candidate, isDirectory, verdict] of cases)
      assert.strictEqual(
        judge(line, candidate, isDirectory),
        verdict,
        `${JSON.stringify(line)} on ${candidate}`
      )
  })

  it.prop(
    "match in linear time whatever the line: the rules that stall a backtracking matcher included",
    [
      FastCheck.oneof(
        FastCheck.integer({ min: 1, max: 12 }).map((k) => `a/${"**/".repeat(k)}c`),
        FastCheck.integer({ min: 1, max: 12 }).map((k) => `a/${"**/x/".repeat(k)}**/c`),
        FastCheck.integer({ min: 1, max: 30 }).map(catastrophic)
      ),
      FastCheck.integer({ min: 1, max: 60 })
    ],
    ([line, depth]) => {
      const rule = Gitignore.parseRule(line)!
      const candidate = `a/${"x/".repeat(depth)}y`
      const before = rule.automaton.work()
      assert.isFalse(rule.automaton.matches(candidate))
      assert.isAtMost(rule.automaton.work() - before, (candidate.length + 1) * 2 * (rule.automaton.size + 1))
    },
    { fastCheck: { numRuns: 200 } }
  )
})

describe("an ignore file's rules together", () => {
  const ruleLine = FastCheck.constantFrom(
    "*.log", "!keep.log", "build/", "/top.txt", "a/**/b.txt", "**/tmp", "docs/*.md", "x?y.txt", "[ab].txt",
    "sub/", "!sub/", "*.ts", "!*.d.ts", "/a", "a/", "b", "**/c/*.txt", "\\#hash.txt", "dir/**", "*", "*a*b",
    "!dir/**/keep.txt", "# comment", "", "top.txt   ", "{a,b}.txt", "**/a/b", "a/b", "*og"
  ) // prettier-ignore
  const candidate = FastCheck.constantFrom(
    "keep.log", "a.log", "top.txt", "a/b.txt", "a/x/b.txt", "tmp", "x/tmp", "docs/r.md", "xzy.txt", "a.txt",
    "sub", "x/sub", "x.ts", "x.d.ts", "a", "b", "x/b", "c/d.txt", "#hash.txt", "dir/z/keep.txt", "dir/y",
    "b.txt", "x/a/b", "a/b", "dog", "ab"
  ) // prettier-ignore

  it.prop(
    "judge a path as the last of its lines that matches it (lookups and wildcard lines alike)",
    [FastCheck.array(ruleLine, { maxLength: 12 }), candidate, FastCheck.boolean()],
    ([lines, path, isDirectory]) => {
      const together = Gitignore.compileFile(lines.join("\n"))
      let expected: "ignore" | "whitelist" | "none" = "none"
      for (const line of lines) {
        const verdict = judge(line, path, isDirectory)
        if (verdict !== "none") expected = verdict
      }
      assert.strictEqual(together?.judge(path, isDirectory) ?? "none", expected, JSON.stringify(lines))
    },
    { fastCheck: { numRuns: 500 } }
  )
})

describe("ripgrep narrowing globs", () => {
  it("exclude every name but the one on the way down, at each level", () => {
    assert.deepStrictEqual(Narrowing.narrowingGlobs(["src"]), [
      "!/[!s]*",
      "!/s[!r]*",
      "!/s",
      "!/sr[!c]*",
      "!/sr",
      "!/src?*"
    ])
    // a name ripgrep's globs cannot spell stops the narrowing there
    assert.deepStrictEqual(Narrowing.narrowingGlobs(["a b", "c"]), [])
    assert.deepStrictEqual(Narrowing.narrowingGlobs(["a", "{x}"]).slice(2), [
      "!/a/[!{]*",
      "!/a/\\{[!x]*",
      "!/a/\\{",
      "!/a/\\{x[!}]*",
      "!/a/\\{x",
      "!/a/\\{x\\}?*"
    ])
  })
})
