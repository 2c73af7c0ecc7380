// rtk's filters that run the tool themselves, on real git, grep, diff and pytest runs in a temp
// dir: the command lines rtk spawns are run for real (as the bench runs them), and what reaches
// the model is Claude Code's Bash cut of what rtk printed, failure paths as shipped.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { compactDiff, filterPytest } from "../src/peers/rtkRuns.js"
import { rtk, rtkRuns, typedIn } from "../src/peers/rtk.js"
import type { RawOutput } from "../src/Text.js"

/** Four pytest runs on a loaded 2-core machine take seconds, not minutes. */
const PYTEST_TIMEOUT_MS = 180_000

/**
 * The runner's environment without its colour switches: `pnpm test` sets FORCE_COLOR (to 0 in CI),
 * and pytest colours its output whenever FORCE_COLOR is set at all, whatever its value.
 */
const { FORCE_COLOR: _force, NO_COLOR: _no, PY_COLORS: _py, ...plainEnv } = process.env

const sh = (cwd: string, line: string): RawOutput => {
  const done = spawnSync("bash", ["-c", line], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...plainEnv,
      GIT_AUTHOR_NAME: "T",
      GIT_AUTHOR_EMAIL: "t@t.invalid",
      GIT_COMMITTER_NAME: "T",
      GIT_COMMITTER_EMAIL: "t@t.invalid"
    }
  })
  return { stdout: done.stdout, stderr: done.stderr, exitCode: done.status ?? 1, command: line }
}

/** The agent's command run for real, and rtk's own lines for it run the way the bench runs them. */
const through = (cwd: string, command: string) => {
  const raw = sh(cwd, command)
  const hostRuns = rtkRuns(command).map((line) => sh(cwd, line))
  return { raw, hostRuns, view: rtk.shell.apply({ ...raw, command, hostRuns }, "/tmp/rtk-saved.txt") }
}

const withDir = async <A>(f: (dir: string) => Promise<A> | A): Promise<A> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rtk-runs-"))
  try {
    return await f(dir)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A repository in `dir/repo` with `n` commits on main and a merged feature branch at HEAD. */
const repoWithMerge = (dir: string, n: number): void => {
  const git = (line: string) => {
    const r = sh(path.join(dir, "repo"), line)
    assert.strictEqual(r.exitCode, 0, `${line}: ${r.stderr}`)
  }
  fs.mkdirSync(path.join(dir, "repo"))
  git("git init -q -b main .")
  for (let i = 0; i < n; i++) {
    fs.writeFileSync(path.join(dir, "repo", "log.txt"), `change ${i}\n`)
    git(`git add -A && git commit -q -m "change ${i}"`)
  }
  git("git checkout -q -b feature")
  fs.writeFileSync(path.join(dir, "repo", "feature.txt"), "retry\n")
  git('git add -A && git commit -q -m "feature: retry uploads"')
  git("git checkout -q main")
  git("git merge -q --no-ff -m \"Merge branch 'feature'\" feature")
}

describe("rtk's own runs", () => {
  it("the agent in a directory: `cd dir &&` and `git -C dir` are the rest of the line typed there", () => {
    assert.deepStrictEqual(typedIn('cd "/a b" && grep -rn x .'), { cwd: "/a b", command: "grep -rn x ." })
    assert.deepStrictEqual(typedIn("git -C history log -p"), { cwd: "history", command: "git log -p" })
    assert.deepStrictEqual(typedIn("NO_COLOR=1 git -C h status"), {
      cwd: "h",
      command: "NO_COLOR=1 git status"
    })
    assert.deepStrictEqual(typedIn("make"), { command: "make" })
  })

  it("git log: rtk's format, -10 and --no-merges, so a merge at HEAD is not in what it prints", () =>
    withDir((dir) => {
      repoWithMerge(dir, 15)
      const { hostRuns, raw, view } = through(dir, "git -C repo log")
      assert.match(raw.stdout, /^Merge: [0-9a-f]+ [0-9a-f]+$/m, "the agent's own git log shows the merge")
      assert.deepStrictEqual(rtkRuns("git -C repo log"), [
        `cd "repo" && git log '--pretty=format:%h %s (%ar) <%an>' -10 --no-merges`
      ])
      const lines = view.text.trimEnd().split("\n")
      assert.strictEqual(lines.length, 10, view.text)
      for (const l of lines)
        assert.match(l, /^[0-9a-f]{7,} (change \d+|feature: retry uploads) \(.+ ago\) <T>$/)
      assert.notInclude(view.text, "Merge")
      assert.strictEqual(hostRuns[0]!.exitCode, 0)
    }))

  it("git log failing (not a repository): git's stderr and exit code, Claude Code's failure path", () =>
    withDir((dir) => {
      const { view } = through(dir, "git log")
      assert.match(view.text, /^Exit code 128\nfatal: not a git repository/)
    }))

  it("git status mid-merge: the conflict is counted, not named; modified files named up to 5", () =>
    withDir((dir) => {
      repoWithMerge(dir, 1)
      const repo = path.join(dir, "repo")
      fs.writeFileSync(path.join(repo, "c.txt"), "base\n")
      sh(repo, "git add -A && git commit -q -m base && git checkout -q -b other")
      fs.writeFileSync(path.join(repo, "c.txt"), "other\n")
      sh(repo, "git commit -q -am other && git checkout -q main")
      fs.writeFileSync(path.join(repo, "c.txt"), "main\n")
      sh(repo, "git commit -q -am main; git merge -q other")
      for (let i = 0; i < 7; i++) fs.writeFileSync(path.join(repo, `m${i}.txt`), "x\n")
      sh(repo, "git add m*.txt && git commit -q -m m --no-verify || true")
      const { raw, view } = through(dir, "git -C repo status")
      assert.match(raw.stdout, /both modified: +c\.txt/)
      assert.include(view.text, "⚠️  Conflicts: 1 files")
      assert.notInclude(view.text, "c.txt")
    }))

  it("grep -rn: clap refuses `-r` before rtk runs anything (exit 2, Claude Code's failure text)", () =>
    withDir((dir) => {
      fs.writeFileSync(path.join(dir, "a.ts"), "export const needle = 1\n")
      assert.deepStrictEqual(rtkRuns("grep -rn needle ."), [])
      const { view } = through(dir, "grep -rn needle .")
      assert.match(view.text, /^Exit code 2\nerror: unexpected argument '-r' found/)
      assert.notInclude(view.text, "export const needle")
    }))

  it("grep without flags: rtk's rg (or grep -rn) grouped by file, lines cut to 80 around the match", () =>
    withDir((dir) => {
      fs.mkdirSync(path.join(dir, "src"))
      fs.writeFileSync(
        path.join(dir, "src", "a.ts"),
        `export const needle = 1\n${"x".repeat(200)} needle tail\n`
      )
      fs.writeFileSync(path.join(dir, "src", "b.ts"), "// no match\n")
      const { view } = through(dir, "grep needle src")
      assert.match(
        view.text,
        /^🔍 2 in 1F:\n\n📄 src\/a\.ts \(2\):\n {5}1: export const needle = 1\n {5}2: \.\.\.x+ needle tail$/
      )
    }))

  it("diff of two files: read by rtk and compared line by line; a file of modifications only is `identical`", () =>
    withDir((dir) => {
      const rows = Array.from({ length: 100 }, (_, i) => `sku-${i},widget ${i},${i}.99`)
      fs.writeFileSync(path.join(dir, "good.csv"), `${rows.join("\n")}\n`)
      rows[55] = rows[55]!.replace(/,(\d+\.99)$/, "$1")
      fs.writeFileSync(path.join(dir, "new.csv"), `${rows.join("\n")}\n`)
      const { raw, view } = through(dir, "diff good.csv new.csv")
      assert.strictEqual(raw.exitCode, 1, "diff itself reports the change")
      // `run` prints `Files are identical` when nothing was added or removed, modifications aside
      assert.strictEqual(view.text, "✅ Files are identical")
      // a line unlike the old one is a removal and an addition, and is shown
      fs.writeFileSync(path.join(dir, "new.csv"), `${rows.slice(0, 50).join("\n")}\nZZZZ\n`)
      assert.include(through(dir, "diff good.csv new.csv").view.text, "+  51 ZZZZ")
    }))

  it("diff -u: clap refuses the flag (exit 2)", () =>
    withDir((dir) => {
      fs.writeFileSync(path.join(dir, "a"), "1\n")
      fs.writeFileSync(path.join(dir, "b"), "2\n")
      assert.match(
        through(dir, "diff -u a b").view.text,
        /^Exit code 2\nerror: unexpected argument '-u' found/
      )
    }))

  it(
    "pytest: rtk's `--tb=short -q` run; a quiet summary has no `===`, so rtk counts no test",
    () =>
      withDir((dir) => {
        fs.writeFileSync(
          path.join(dir, "test_orders.py"),
          "def test_ok():\n    assert 1 == 1\n\ndef test_bad():\n    assert 918 == 919\n"
        )
        const quiet = through(dir, "pytest -p no:cacheprovider -q .")
        assert.strictEqual(quiet.hostRuns[0]!.exitCode, 1)
        assert.strictEqual(quiet.view.text, "Exit code 1\nPytest: No tests collected")
        // with the agent's -v, rtk's added -q cancels it: normal verbosity, header and `===` summary
        const plain = through(dir, "pytest -p no:cacheprovider -v .")
        assert.match(plain.view.text, /^Exit code 1\nPytest: 1 passed, 1 failed\n/)
        assert.include(plain.view.text, "1. ❌ test_bad")
        assert.include(plain.view.text, "E   assert 918 == 919")
      }),
    // four pytest start-ups on a loaded 2-core machine
    PYTEST_TIMEOUT_MS
  )

  it("compact_diff and the pytest state machine on their own", () => {
    const diff = [
      "diff --git a/x.py b/x.py",
      "@@ -1,12 +1,12 @@",
      ...Array.from({ length: 12 }, (_, i) => `-old ${i}`)
    ].join("\n")
    assert.strictEqual(
      compactDiff(diff, 100),
      [
        "",
        "📄 x.py",
        "  @@ -1,12 +1,12 @@",
        ...Array.from({ length: 10 }, (_, i) => `  -old ${i}`),
        "  ... (truncated)",
        "  +0 -12"
      ]
        .join("\n")
        .replace(/^\n/, "\n")
    )
    assert.strictEqual(
      filterPytest("=== test session starts ===\ncollected 2 items\n\n=== 2 passed in 0.1s ===\n"),
      "✓ Pytest: 2 passed"
    )
  })
})
