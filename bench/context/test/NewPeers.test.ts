// The two peers added in the second version of the benchmark. pi: its bash tool keeps the tail
// (2000 lines / 50 KB) and names the temp file with the whole output; its read keeps the head
// without line numbers; its grep caps matches, line width and bytes. rtk: its hook rewrites the
// commands it knows, its filters run over what the real tool prints (captured here by running
// the real tool), and Claude Code's Bash cut applies on top; other commands are Claude Code's.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { Location } from "../src/Peer.js"
import { claudeCode } from "../src/peers/claudeCode.js"
import { PI_GREP_LIMIT, PI_GREP_LINE_CHARS, PI_MAX_BYTES, PI_MAX_LINES, pi } from "../src/peers/pi.js"
import { rtk, rtkLsFilter, rtkRewrite, rtkTscFilter, rtkVitestFilter } from "../src/peers/rtk.js"
import { byteLength, type RawOutput } from "../src/Text.js"

const SAVED = "/tmp/pi-bash-0123456789abcdef.log"
const runs = { fastCheck: { numRuns: 120 } }
const packageRoot = path.resolve(fileURLToPath(import.meta.url), "../..")

const output: fc.Arbitrary<string> = fc.oneof(
  fc.constant(""),
  fc.integer({ min: 1, max: 5000 }).map((n) => Array.from({ length: n }, (_, i) => `line ${i}\n`).join("")),
  fc
    .record({ unit: fc.constantFrom("x", "é", "中"), n: fc.integer({ min: 1, max: 90_000 }) })
    .map(({ n, unit }) => unit.repeat(n)),
  fc
    .array(fc.string({ unit: fc.constantFrom("a", "b", " ", "é"), maxLength: 200 }), { maxLength: 800 })
    .map((lines) => lines.join("\n"))
)

const file = (content: string): Location => ({ kind: "file", path: "/work/f.txt", content })

describe("pi", () => {
  it.prop(
    "bash: whole within 2000 lines and 50 KB, else the tail and a marker naming the lines and the full output's path",
    { stdout: output, stderr: output, exitCode: fc.constantFrom(0, 1, 2) },
    ({ exitCode, stderr, stdout }) => {
      const raw: RawOutput = {
        stdout,
        stderr,
        exitCode,
        arrival: [
          { stream: "stderr", data: stderr },
          { stream: "stdout", data: stdout }
        ]
      }
      const view = pi.shell.apply(raw, SAVED)
      const all = stderr + stdout
      const lines = all.split("\n").length
      const status = exitCode === 0 ? "" : `\n\nCommand exited with code ${exitCode}`
      assert.isTrue(view.text.endsWith(status), "a failure says its exit code last")
      if (lines <= PI_MAX_LINES && byteLength(all) <= PI_MAX_BYTES) {
        assert.isFalse(view.truncated)
        assert.strictEqual(view.text, `${all === "" ? "(no output)" : all}${status}`)
        return
      }
      assert.isTrue(view.truncated)
      assert.isTrue(all.endsWith(view.tail), "the tail is the end of the output (arrival order)")
      assert.isAtMost(byteLength(view.tail), PI_MAX_BYTES)
      assert.isAtMost(view.tail.split("\n").length, PI_MAX_LINES)
      assert.match(
        view.marker!,
        /^\[Showing (lines \d+-\d+ of \d+( \(50\.0KB limit\))?|last .+ of line \d+ \(line is .+\))\. Full output: /
      )
      assert.isTrue(
        view.marker!.endsWith(`Full output: ${SAVED}]`),
        "the marker names the full output's path"
      )
      assert.strictEqual(view.text, `${view.tail}\n\n${view.marker}${status}`)
      assert.strictEqual(view.location?.content, all, "the temp file holds the whole output")
      const range = /^\[Showing lines (\d+)-(\d+) of (\d+)/.exec(view.marker!)
      if (range !== null) {
        assert.strictEqual(Number(range[2]), lines)
        assert.strictEqual(Number(range[3]), lines)
        assert.strictEqual(lines - Number(range[1]) + 1, view.tail.split("\n").length)
      }
    },
    runs
  )

  it("bash: the marker, exactly (the accumulator counts the empty piece after the last newline)", () => {
    const stdout = Array.from({ length: 3000 }, (_, i) => `line ${i}\n`).join("")
    const view = pi.shell.apply({ stdout, stderr: "", exitCode: 1 }, SAVED)
    assert.isTrue(view.text.startsWith("line 1001\n"))
    assert.isTrue(
      view.text.endsWith(
        `line 2999\n\n\n[Showing lines 1002-3001 of 3001. Full output: ${SAVED}]\n\nCommand exited with code 1`
      )
    )
    const wide = pi.shell.apply({ stdout: "x".repeat(60_000), stderr: "", exitCode: 0 }, SAVED)
    assert.strictEqual(wide.marker, `[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: ${SAVED}]`)
  })

  it("read: the first whole lines within 2000 lines and 50 KB, no line numbers, a notice naming the next offset", () => {
    const many = Array.from({ length: 2500 }, (_, i) => `row ${i}`).join("\n")
    const view = pi.read.apply(file(many))
    assert.isTrue(view.text.startsWith("row 0\nrow 1\n"))
    assert.isTrue(
      view.text.endsWith("row 1999\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    )
    const wide = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(1000, "y")).join("\n")
    const byBytes = pi.read.apply(file(wide))
    assert.match(
      byBytes.text,
      /\n\n\[Showing lines 1-51 of 100 \(50\.0KB limit\)\. Use offset=52 to continue\.\]$/
    )
    assert.strictEqual(pi.read.apply(file("a\nb\n")).text, "a\nb\n")
    assert.match(
      pi.read.apply(file("z".repeat(60_000))).text,
      /^\[Line 1 is 58\.6KB, exceeds 50\.0KB limit\. Use bash: sed -n '1p' /
    )
  })

  it("grep: at most 100 matches, lines clipped at 500 characters, each limit named", () => {
    const lines = Array.from({ length: 150 }, (_, i) => (i === 3 ? `ERR ${"w".repeat(900)}` : `ERR ${i}`))
    const result = pi.search.apply({ kind: "copy", path: SAVED, content: lines.join("\n") }, /ERR/)
    assert.strictEqual(result.shown.length, PI_GREP_LIMIT)
    assert.strictEqual(result.shown[3], `${lines[3]!.slice(0, PI_GREP_LINE_CHARS)}... [truncated]`)
    assert.isTrue(result.text.startsWith(`${path.basename(SAVED)}:1: ERR 0\n`))
    assert.include(
      result.text,
      "[100 matches limit reached. Use limit=200 for more, or refine pattern. Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
  })
})

/** Runs a command of the real tool; the test's temp dir is removed after. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string): RawOutput => {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", CI: "1", LC_ALL: "C" }
  })
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.status ?? 1 }
}

const withDir = <A>(f: (dir: string) => A): A => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rtk-peer-"))
  try {
    return f(dir)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("rtk", () => {
  it("the hook rewrites the commands it knows, its env prefix aside, and leaves the rest", () => {
    assert.strictEqual(rtkRewrite("tsc --noEmit"), "tsc")
    assert.strictEqual(rtkRewrite("npx tsc -p ."), "tsc")
    assert.strictEqual(rtkRewrite("FORCE_COLOR=1 npx vitest run"), "vitest")
    assert.strictEqual(rtkRewrite("pnpm test"), "vitest")
    assert.strictEqual(rtkRewrite("git status"), "git")
    assert.strictEqual(rtkRewrite("grep -rn x ."), "grep")
    assert.strictEqual(rtkRewrite("python -m pytest -q"), "pytest")
    // the first command must be the tool: a chain or another launcher is left alone
    for (const command of [
      "cd a && tsc",
      "node node_modules/typescript/bin/tsc -p .",
      "python3 -m pytest",
      "make",
      "rtk tsc",
      undefined
    ])
      assert.isUndefined(rtkRewrite(command), String(command))
  })

  it("tsc: a real compiler run's errors, every one, grouped by file, under Claude Code's failure path", () =>
    withDir((dir) => {
      fs.mkdirSync(path.join(dir, "src"))
      fs.writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [] }, include: ["src"] })
      )
      fs.writeFileSync(
        path.join(dir, "src/a.ts"),
        'export const n: number = "one"\nexport const m: string = 2\n'
      )
      fs.writeFileSync(path.join(dir, "src/b.ts"), "export const k: boolean = missing\n")
      const tsc = path.join(packageRoot, "node_modules/typescript/bin/tsc")
      const raw = {
        ...run(process.execPath, [tsc, "-p", dir, "--pretty", "false"], dir),
        command: `tsc -p ${dir} --pretty false`
      }
      assert.strictEqual(raw.exitCode, 2, raw.stdout)
      const filtered = rtkTscFilter(`${raw.stdout}\n${raw.stderr}`)
      assert.isTrue(filtered.startsWith("TypeScript: 3 errors in 2 files\n═"), filtered)
      assert.include(filtered, "Top codes: TS2322 (2x), TS2304 (1x)")
      assert.match(
        filtered,
        /src\/a\.ts \(2 errors\)\n  L1: TS2322 Type 'string' is not assignable to type 'number'\.\n  L2: TS2322 /
      )
      assert.include(filtered, "  L1: TS2304 Cannot find name 'missing'.")
      const view = rtk.shell.apply(raw, "/tmp/saved.txt")
      assert.strictEqual(
        view.text,
        `Exit code 2\n${filtered}`,
        "Claude Code's failure text of what rtk printed"
      )
      assert.isUndefined(view.location, "nothing saved")
      assert.notInclude(view.text, "): error TS", "the compiler's own lines are gone")
    }))

  it("vitest: a real run's counts and its failure's name and message line, as rtk's report prints them", () =>
    withDir((dir) => {
      fs.writeFileSync(
        path.join(dir, "math.test.mjs"),
        'test("adds", () => { expect(1 + 1).toBe(3) })\ntest("subtracts", () => { expect(2 - 1).toBe(1) })\n'
      )
      const vitest = path.join(packageRoot, "node_modules/vitest/vitest.mjs")
      const raw = {
        ...run(process.execPath, [vitest, "run", "--root", dir, "--globals"], dir),
        command: "npx vitest run"
      }
      assert.strictEqual(raw.exitCode, 1, raw.stdout + raw.stderr)
      const filtered = rtkVitestFilter(raw)
      assert.match(
        filtered.stdout,
        /^PASS \(1\) FAIL \(1\)\n\n1\. adds\n {3}AssertionError: expected 2 to be 3 \/\/ Object\.is equality\n\nTime: \d+ms$/
      )
      assert.notInclude(filtered.stdout, "subtracts", "a passing test is only counted")
      const view = rtk.shell.apply(raw, "/tmp/saved.txt")
      assert.strictEqual(view.text, `Exit code 1\n${filtered.stdout}`)
      assert.isBelow(view.text.length, raw.stdout.length)
    }))

  it("ls: a real `ls -la` listing as `name/` and `name  size`, noise directories out without -a, and its summary", () =>
    withDir((dir) => {
      fs.mkdirSync(path.join(dir, "src"))
      fs.mkdirSync(path.join(dir, "node_modules"))
      fs.writeFileSync(path.join(dir, "a.ts"), "x".repeat(2048))
      fs.writeFileSync(path.join(dir, "b.ts"), "y")
      fs.writeFileSync(path.join(dir, "README"), "z".repeat(10))
      const listing = run("ls", ["-l", dir], dir)
      const raw = { ...listing, command: `LC_ALL=C ls -l ${dir}` }
      const filtered = rtkLsFilter(raw.stdout, false)
      assert.strictEqual(
        filtered,
        "src/\nREADME  10B\na.ts  2.0K\nb.ts  1B\n\n📊 3 files, 1 dirs (2 .ts, 1 no ext)\n"
      )
      const view = rtk.shell.apply(raw, "/tmp/s.txt")
      assert.strictEqual(view.text, filtered.trimEnd(), "Claude Code passes the short text whole")
      const all = rtkLsFilter(run("ls", ["-la", dir], dir).stdout, true)
      assert.include(all, "node_modules/", "-a keeps the noise directories")
      // without the long format rtk runs `ls -la` itself: the agent's output is not its input
      const short = { ...run("ls", [dir], dir), command: `ls ${dir}` }
      assert.deepStrictEqual(
        rtk.shell.apply(short, "/tmp/s.txt"),
        claudeCode.shell.apply(short, "/tmp/s.txt")
      )
    }))

  it("find: a directory given as find's start path is rtk's glob pattern and matches no name", () =>
    withDir((dir) => {
      fs.writeFileSync(path.join(dir, "one.txt"), "1")
      const raw = { ...run("find", [dir], dir), command: `find ${dir}` }
      assert.include(raw.stdout, "one.txt", "find itself lists the file")
      const view = rtk.shell.apply(raw, "/tmp/s.txt")
      assert.strictEqual(view.text, `0 for '${dir}'`)
      const named = { ...run("find", [dir, "-name", "*.txt"], dir), command: `find ${dir} -name *.txt` }
      assert.deepStrictEqual(
        rtk.shell.apply(named, "/tmp/s.txt"),
        claudeCode.shell.apply(named, "/tmp/s.txt")
      )
    }))

  it("a command the hook leaves alone is Claude Code's result (a real `git ls-files`)", () =>
    withDir((dir) => {
      run("git", ["init", "-q"], dir)
      fs.writeFileSync(path.join(dir, "new.txt"), "x\n")
      for (const command of ["git ls-files --others", "cd . && git ls-files --others"]) {
        const raw = { ...run("git", ["ls-files", "--others"], dir), command }
        assert.include(raw.stdout, "new.txt")
        assert.deepStrictEqual(
          rtk.shell.apply(raw, "/tmp/s.txt"),
          claudeCode.shell.apply(raw, "/tmp/s.txt"),
          command
        )
      }
    }))
})
