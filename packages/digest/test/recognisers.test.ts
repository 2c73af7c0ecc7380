// Each recogniser on a real captured output of its tool (rules G4, G5), produced here by running
// the tool on a project written to a temp dir: passing tests and progress are folded, failures,
// errors and the tool's own summary are kept, and the tool really exited as it says. A tool this
// machine lacks fails its test unless TOOLCAP_DIGEST_SKIP_MISSING=1 names the skip (nothing is
// skipped silently); the tools no CI image here carries (jest, mocha, go, eslint, yarn) are also
// checked on the shape of their documented output, in ./shapes.test.ts.
import { assert, describe, it } from "@effect/vitest"
import { Digest } from "@toolcap/digest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"

const require = createRequire(import.meta.url)

/** A temp dir for the test, removed when its scope closes. */
const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-digest-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const write = (dir: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
}

/** Runs `command` under bash in `cwd`, both streams merged as a terminal shows them; colour off. */
const run = (command: string, cwd: string): { readonly text: string; readonly status: number | null } => {
  const result = spawnSync("bash", ["-c", `${command} 2>&1`], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", CI: "1", GIT_TERMINAL_PROMPT: "0" }
  })
  return { text: result.stdout, status: result.status }
}

/**
 * What a terminal shows for the escapes these tools print even with colour off (tsc --pretty's
 * SGR, git's `\r` progress): colour removed, each line as its last `\r` frame left it. A stand-in
 * for the terminal renderer on these simple shapes.
 */
const ESCAPES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, "g")
const shown = (text: string): string =>
  text
    .replace(ESCAPES, "")
    .split("\n")
    .map((line) => line.slice(line.lastIndexOf("\r") + 1))
    .join("\n")

const has = (tool: string): boolean => spawnSync("bash", ["-c", `command -v ${tool}`]).status === 0

/** A test runs when its tool is here; otherwise it fails, unless the skip is asked for by name. */
const missing = (tool: string): boolean => !has(tool) && process.env.TOOLCAP_DIGEST_SKIP_MISSING === "1"

const compact = { maxBytes: 56 * 1024, maxLines: 1000, headShare: 0.5 }

const digest = (text: string, status: number | null, budget = compact) => {
  const outcome = Digest.ofText(shown(text), { failed: status !== 0, budget })
  const lines = outcome.shown.flatMap((s) => (s.type === "line" ? [s.text] : []))
  return { outcome, lines, text: outcome.render({ bytes: text.length, lines: 0 }) }
}

/** Two real tsc runs take 20–40 s on a loaded 2-core machine; the default 30 s is too tight. */
const TSC_TIMEOUT_MS = 120_000

const includesLine = (lines: ReadonlyArray<string>, pattern: RegExp): boolean =>
  lines.some((l) => pattern.test(l))

describe("recognisers on real output", () => {
  it.scoped.skipIf(missing("node"))(
    "vitest --reporter=verbose: passing tests folded, the failure and the summary kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const cases = Array.from(
          { length: 300 },
          (_, i) => `  it("adds ${i}", () => expect(${i} + 1).toBe(${i + 1}))`
        )
        write(dir, {
          "a.test.ts": `describe("math", () => {\n${cases.join("\n")}\n  it("breaks", () => expect(1).toBe(2))\n})\n`
        })
        const vitest = path.join(path.dirname(require.resolve("vitest/package.json")), "vitest.mjs")
        const { status, text } = run(`node ${vitest} run --root . --globals --reporter=verbose`, dir)
        assert.strictEqual(status, 1)
        const { lines, outcome } = digest(text, status)
        assert.isTrue(outcome.folded)
        assert.isAtLeast(outcome.counts.pass, 300)
        assert.isTrue(includesLine(lines, /breaks/))
        assert.isTrue(includesLine(lines, /AssertionError: expected 1 to be 2/))
        assert.isTrue(includesLine(lines, /a\.test\.ts:\d+:\d+/))
        assert.isTrue(includesLine(lines, /Test Files\s+1 failed/))
        assert.isTrue(includesLine(lines, /Tests\s+1 failed \| 300 passed/))
        assert.isFalse(includesLine(lines, /✓ .*adds 150/))
      })
  )

  it.scoped.skipIf(missing("node"))(
    "node --test, spec and TAP: passing tests and their TAP blocks folded, the failure and the counts kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        write(dir, {
          "a.test.mjs": `import { test } from "node:test"\nimport assert from "node:assert"\nfor (let i = 0; i < 200; i++) test("adds " + i, () => assert.strictEqual(i + 1, i + 1))\ntest("breaks", () => assert.strictEqual(1, 2))\n`
        })
        for (const reporter of ["spec", "tap"]) {
          const { status, text } = run(`node --test --test-reporter=${reporter} a.test.mjs`, dir)
          assert.strictEqual(status, 1)
          const { lines, outcome } = digest(text, status)
          assert.isTrue(outcome.folded, reporter)
          assert.isAtLeast(outcome.counts.pass, 200, reporter)
          assert.isTrue(
            includesLine(lines, reporter === "tap" ? /^not ok \d+ - breaks/ : /✖ breaks/),
            reporter
          )
          assert.isTrue(includesLine(lines, /AssertionError|ERR_ASSERTION/), reporter)
          assert.isTrue(includesLine(lines, /^[#ℹ] fail 1$/), reporter)
          assert.isTrue(includesLine(lines, /^[#ℹ] pass 200$/), reporter)
          assert.isFalse(includesLine(lines, /adds 100\b/), reporter)
        }
      })
  )

  it.scoped.skipIf(missing("python3"))(
    "pytest -v and -q: PASSED lines and dot rows folded, the failure, its E lines and the summary kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        write(dir, {
          "test_a.py": `import pytest\n@pytest.mark.parametrize("i", range(400))\ndef test_ok(i):\n    assert i == i\ndef test_bad():\n    assert 1 == 2\n`
        })
        const verbose = run("python3 -m pytest -v -p no:cacheprovider test_a.py", dir)
        assert.strictEqual(verbose.status, 1)
        const v = digest(verbose.text, verbose.status)
        assert.isTrue(v.outcome.folded)
        // all but the passing lines among the last 20 (a failed run keeps those whatever they are)
        assert.isAtLeast(v.outcome.counts.pass, 400 - Digest.tailLinesOnFailure)
        assert.isTrue(includesLine(v.lines, /test_bad FAILED/))
        assert.isTrue(includesLine(v.lines, /^E\s+assert 1 == 2/))
        assert.isTrue(includesLine(v.lines, /^=+ 1 failed, 400 passed in [\d.]+s =+$/))
        const quiet = run("python3 -m pytest -q -p no:cacheprovider test_a.py", dir)
        assert.strictEqual(quiet.status, 1)
        const q = digest(quiet.text, quiet.status, { maxBytes: 2048, maxLines: 40, headShare: 0.5 })
        assert.isTrue(includesLine(q.lines, /^E\s+assert 1 == 2/))
        assert.isTrue(includesLine(q.lines, /^1 failed, 400 passed in [\d.]+s$/))
        assert.isTrue(includesLine(q.lines, /FAILED test_a\.py::test_bad/))
      })
  )

  it.scoped.skipIf(missing("cargo"))(
    "cargo test: `... ok` lines folded, the panic, the failures and the test result kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const tests = Array.from(
          { length: 300 },
          (_, i) => `    #[test] fn adds_${i}() { assert_eq!(${i} + 1, ${i + 1}); }`
        )
        write(dir, {
          "Cargo.toml": `[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n`,
          "src/lib.rs": `#[cfg(test)]\nmod tests {\n${tests.join("\n")}\n    #[test] fn breaks() { assert_eq!(1, 2); }\n}\n`
        })
        const { status, text } = run(
          "CARGO_TARGET_DIR=target cargo test --offline -q -- --test-threads=1 --format=pretty",
          dir
        )
        assert.strictEqual(status, 101)
        const { lines, outcome } = digest(text, status)
        assert.isTrue(outcome.folded)
        assert.isAtLeast(outcome.counts.pass, 300)
        assert.isTrue(includesLine(lines, /test tests::breaks \.\.\. FAILED/))
        assert.isTrue(includesLine(lines, /panicked at src\/lib\.rs:\d+:\d+/))
        assert.isTrue(includesLine(lines, /^test result: FAILED\. 300 passed; 1 failed/))
        assert.isFalse(includesLine(lines, /adds_150 \.\.\. ok/))
      })
  )

  it.scoped.skipIf(missing("node"))(
    "tsc plain and --pretty: every error kept (or counted), the Found line kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const body = Array.from({ length: 120 }, (_, i) => `const v${i}: number = "s${i}"`).join("\n")
        write(dir, { "a.ts": body + "\n" })
        const tsc = path.join(path.dirname(require.resolve("typescript/package.json")), "bin", "tsc")
        for (const pretty of [false, true]) {
          const { status, text } = run(`node ${tsc} --noEmit --pretty ${pretty} a.ts`, dir)
          assert.strictEqual(status, 2)
          const tight = { maxBytes: 8 * 1024, maxLines: 200, headShare: 0.5 }
          const { lines, outcome } = digest(text, status, tight)
          const errors = shown(text)
            .split("\n")
            .filter((l) => /error TS2322/.test(l))
          assert.strictEqual(errors.length, 120)
          const kept = lines.filter((l) => /error TS2322/.test(l)).length
          assert.strictEqual(kept + outcome.mustKeepOmitted >= errors.length, true)
          // tsc prints its count only with --pretty
          if (pretty) assert.isTrue(includesLine(lines, /^Found 120 errors/))
          assert.isFalse(includesLine(lines, /No errors|\b0 errors/))
        }
      }),
    // two real tsc runs: slow on a loaded machine, not a measure of the digest
    TSC_TIMEOUT_MS
  )

  it.scoped.skipIf(missing("node"))(
    "tsc: a flood of one code does not crowd out the first error of another code, kept with its excerpt",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        // 300 unused locals (TS6133) and, at 70% of the files, one type error (TS2322)
        const files: Record<string, string> = {}
        for (let f = 0; f < 60; f++) {
          const body = Array.from({ length: 5 }, (_, u) => `  const unused${u} = ${f * 10 + u}`).join("\n")
          const defect = f === 42 ? `  const port: number = "80${f}"\n  return port\n` : "  return 0\n"
          files[`src/m${String(f).padStart(3, "0")}.ts`] =
            `export function run${f}(): number {\n${body}\n${defect}}\n`
        }
        write(dir, files)
        const tsc = path.join(path.dirname(require.resolve("typescript/package.json")), "bin", "tsc")
        for (const pretty of [false, true]) {
          const { status, text } = run(
            `node ${tsc} --noEmit --noUnusedLocals --strict --pretty ${pretty} src/*.ts`,
            dir
          )
          assert.strictEqual(status, 2)
          const rendered = shown(text).split("\n")
          assert.strictEqual(rendered.filter((l) => /error TS6133/.test(l)).length, 300)
          const at = rendered.findIndex((l) => /error TS2322/.test(l))
          assert.isTrue(at > rendered.length / 2)
          // a budget that holds a fraction of the flood: in order, the other code would be cut
          const tight = { maxBytes: 6 * 1024, maxLines: 200, headShare: 0.5 }
          const { lines, outcome } = digest(text, status, tight)
          assert.isTrue(outcome.mustKeepOmitted > 0)
          assert.isTrue(includesLine(lines, /error TS2322/))
          assert.isTrue(includesLine(lines, /error TS6133/))
          // --pretty's source excerpt under the error goes with it
          if (pretty) {
            const shownAt = lines.findIndex((l) => /error TS2322/.test(l))
            assert.isTrue(
              lines.slice(shownAt + 1, shownAt + 4).some((l) => l.includes(`const port: number = "8042"`))
            )
          }
        }
      }),
    // two real tsc runs: slow on a loaded machine, not a measure of the digest
    TSC_TIMEOUT_MS
  )

  it.scoped.skipIf(missing("gcc"))(
    "gcc: repeats of one -W code folded beyond the first and last with a count, the error kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const vars = Array.from({ length: 80 }, (_, i) => `  int unused_${i};`).join("\n")
        write(dir, { "a.c": `int main(void) {\n${vars}\n  return missing;\n}\n` })
        const { status, text } = run("gcc -Wall -c a.c -o a.o", dir)
        assert.strictEqual(status, 1)
        const { lines, outcome, text: rendered } = digest(text, status)
        assert.isTrue(outcome.folded)
        assert.isTrue(includesLine(lines, /error: .missing. undeclared/))
        // a failed command keeps its last lines whatever they are; before them, the first and the last
        const total = shown(text).split("\n").length - 1
        const warnings = outcome.shown.filter(
          (s) =>
            s.type === "line" &&
            /warning: unused variable/.test(s.text) &&
            s.raw <= total - Digest.tailLinesOnFailure
        )
        assert.strictEqual(warnings.length, 2, "the first and the last")
        assert.isAbove(outcome.counts.warning, 0)
        assert.include(rendered.split("\n")[0]!, "-Wunused-variable")
      })
  )

  it.scoped.skipIf(missing("git"))(
    "git: clone progress folded; a log's merge commit and HEAD kept; every hunk header of a diff kept",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const git = (args: string) =>
          run(`git -c user.email=t@example.com -c user.name=t -c init.defaultBranch=main ${args}`, dir)
        git("init -q repo")
        const repo = path.join(dir, "repo")
        const inRepo = (args: string) => run(`git -c user.email=t@example.com -c user.name=t ${args}`, repo)
        const base = Array.from({ length: 400 }, (_, i) => `line ${i} of a file long enough to diff`)
        fs.writeFileSync(path.join(repo, "f.txt"), base.join("\n") + "\n")
        inRepo("add f.txt && git -c user.email=t@example.com -c user.name=t commit -qm base")
        inRepo("checkout -qb side")
        for (let i = 0; i < 40; i++) {
          fs.writeFileSync(path.join(repo, `side${i}.txt`), `${i}\n`)
          inRepo(`add . && git -c user.email=t@example.com -c user.name=t commit -qm "side change ${i}"`)
        }
        inRepo("checkout -q main")
        fs.writeFileSync(path.join(repo, "main.txt"), "m\n")
        inRepo("add . && git -c user.email=t@example.com -c user.name=t commit -qm main-change")
        inRepo("merge -q --no-ff side -m 'Merge branch side'")
        const log = inRepo("log --no-color --decorate")
        assert.strictEqual(log.status, 0)
        const l = digest(log.text, log.status, { maxBytes: 2048, maxLines: 30, headShare: 1 })
        assert.isTrue(includesLine(l.lines, /^commit [0-9a-f]+ \(HEAD -> main\)/))
        assert.isTrue(includesLine(l.lines, /^Merge: /))
        // a diff touching every 10th line: 40 hunks
        fs.writeFileSync(
          path.join(repo, "f.txt"),
          base.map((x, i) => (i % 10 === 5 ? `${x} changed` : x)).join("\n") + "\n"
        )
        const diff = inRepo("diff --no-color -U3")
        const hunks = diff.text.split("\n").filter((x) => x.startsWith("@@"))
        assert.strictEqual(hunks.length, 40)
        const d = digest(diff.text, diff.status, { maxBytes: 8192, maxLines: 200, headShare: 0.5 })
        assert.isTrue(d.outcome.changed, "the diff is over its budget")
        for (const hunk of hunks) assert.include(d.lines, hunk)
        const clone = git(`clone --progress --no-local ${repo} copy`)
        assert.strictEqual(clone.status, 0)
        const c = digest(clone.text, clone.status)
        assert.isTrue(includesLine(c.lines, /^Cloning into/))
        assert.isFalse(includesLine(c.lines, /\r/))
      })
  )

  it.scoped.skipIf(missing("npm"))(
    "npm: the added-packages summary kept; an install that fails keeps its npm error lines",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        write(dir, {
          "package.json": `{"name":"probe","version":"1.0.0"}`,
          "dep/package.json": `{"name":"dep","version":"1.0.0"}`
        })
        const ok = run("npm install ./dep --offline --no-audit --no-fund", dir)
        assert.strictEqual(ok.status, 0)
        const good = digest(ok.text, ok.status)
        assert.isTrue(includesLine(good.lines, /added 1 package/))
        const bad = run("npm install ./missing --offline --no-audit --no-fund", dir)
        assert.notStrictEqual(bad.status, 0)
        const failed = digest(bad.text, bad.status)
        assert.isTrue(includesLine(failed.lines, /npm (?:error|ERR!)/))
      })
  )

  it.scoped.skipIf(missing("make"))(
    "make: the failing recipe's error and make's *** line kept, directory changes and repeats folded",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const steps = Array.from(
          { length: 300 },
          (_, i) => `\t@$(MAKE) -C sub step N=${i}; echo built step ${i} of 300`
        )
        write(dir, {
          Makefile: `all:\n${steps.join("\n")}\n\t@echo "fatal: the linker was not found" >&2; exit 3\n`,
          "sub/Makefile": "step:\n\t@true\n"
        })
        const { status, text } = run("make", dir)
        assert.strictEqual(status, 2)
        const { lines, outcome } = digest(text, status)
        assert.isTrue(outcome.folded)
        assert.isAbove(outcome.counts.repeat, 250)
        assert.isAbove(outcome.counts.progress, 500)
        assert.isTrue(includesLine(lines, /fatal: the linker was not found/))
        assert.isTrue(includesLine(lines, /^make: \*\*\* \[Makefile:\d+: all\] Error 3/))
      })
  )

  it.scoped.skipIf(missing("python3"))("pip: an install that cannot resolve keeps its ERROR lines", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { status, text } = run(
        "python3 -m pip install --no-index --disable-pip-version-check no-such-package-toolcap",
        dir
      )
      assert.notStrictEqual(status, 0)
      const { lines } = digest(text, status)
      assert.isTrue(includesLine(lines, /^ERROR: /))
    })
  )
})
