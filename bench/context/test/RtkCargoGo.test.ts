// rtk's cargo and go filters on real cargo and go runs of generated crates and modules in a temp
// dir (offline: no dependencies): `cargo test|build|clippy` filtered from the agent's own output,
// `go test` through rtk's own `-json` run, and what Claude Code's Bash cut shows of each.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { rtk, rtkRuns } from "../src/peers/rtk.js"
import type { RawOutput } from "../src/Text.js"

/** Compiling a crate or a module on a loaded 2-core machine takes seconds, not minutes. */
const BUILD_TIMEOUT_MS = 240_000

const sh = (cwd: string, line: string, env: Record<string, string>): RawOutput => {
  const done = spawnSync("bash", ["-c", line], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env }
  })
  return { stdout: done.stdout, stderr: done.stderr, exitCode: done.status ?? 1, command: line }
}

const through = (cwd: string, command: string, env: Record<string, string>) => {
  const raw = sh(cwd, command, env)
  const hostRuns = rtkRuns(command).map((line) => sh(cwd, line, env))
  return { raw, view: rtk.shell.apply({ ...raw, command, hostRuns }, "/tmp/rtk-saved.txt") }
}

const withDir = async (f: (dir: string) => void): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rtk-cargo-go-"))
  try {
    f(dir)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const tool = (name: string): void => {
  const found = spawnSync("bash", ["-c", `command -v ${name}`]).status === 0
  assert.isTrue(found, `${name} is not on the PATH: install Debian's ${name === "go" ? "golang-go" : name}`)
}

const crate = (dir: string, lib: string): Record<string, string> => {
  fs.mkdirSync(path.join(dir, "src"))
  fs.writeFileSync(
    path.join(dir, "Cargo.toml"),
    '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
  )
  fs.writeFileSync(path.join(dir, "src", "lib.rs"), lib)
  return { CARGO_NET_OFFLINE: "true", CARGO_TARGET_DIR: path.join(dir, "target"), CARGO_TERM_COLOR: "never" }
}

describe("rtk cargo and go", () => {
  it(
    "cargo test: the failure block and the summary lines, the passing tests dropped, cargo's exit code",
    () =>
      withDir((dir) => {
        tool("cargo")
        const tests = Array.from(
          { length: 20 },
          (_, i) =>
            `    #[test]\n    fn total_${i}() { assert_eq!(super::total(${i}), ${i === 13 ? i * 3 + 1 : i * 3}); }\n`
        ).join("")
        const env = crate(
          dir,
          `pub fn total(n: u32) -> u32 { n * 3 }\n\n#[cfg(test)]\nmod tests {\n${tests}}\n`
        )
        const { raw, view } = through(dir, "cargo test", env)
        assert.strictEqual(raw.exitCode, 101, raw.stderr)
        assert.match(raw.stdout, /^test tests::total_0 \.\.\. ok$/m)
        assert.match(view.text, /^Exit code 101\nFAILURES \(\d+\):\n═+\n1\. ---- tests::total_13 stdout ----/)
        assert.notInclude(view.text, "total_0 ... ok")
        // the summary that closes the failures section is taken twice, as the source does
        assert.strictEqual(
          view.text.match(/^test result: FAILED\. 19 passed; 1 failed/gm)?.length,
          2,
          view.text
        )
      }),
    BUILD_TIMEOUT_MS
  )

  it(
    "cargo build: the error block kept whole under the counts (rustc stops before its lints); clippy: grouped with its location",
    () =>
      withDir((dir) => {
        tool("cargo")
        const env = crate(dir, 'pub fn port() -> u16 {\n    let unused = 1;\n    "8080"\n}\n')
        const build = through(dir, "cargo build", env)
        assert.strictEqual(build.raw.exitCode, 101)
        assert.match(build.view.text, /^Exit code 101\ncargo build: 1 errors, 0 warnings \(1 crates\)\n═+\n/)
        assert.match(build.view.text, /^error\[E0308\]: mismatched types$/m)
        assert.strictEqual(
          spawnSync("bash", ["-c", "cargo clippy --version"]).status,
          0,
          "cargo clippy is not installed"
        )
        const lint = through(dir, "cargo clippy", env)
        assert.match(lint.view.text, /cargo clippy: 1 errors, 0 warnings/)
        assert.match(lint.view.text, /^ {4}src\/lib\.rs:\d+:\d+$/m)
      }),
    BUILD_TIMEOUT_MS
  )

  it(
    "go test: rtk's own `go test -json` run, the failed test and its `got`/`expected` line",
    () =>
      withDir((dir) => {
        tool("go")
        const env = {
          GOCACHE: path.join(dir, "cache"),
          GOPATH: path.join(dir, "gopath"),
          GOFLAGS: "-mod=mod",
          GOPROXY: "off",
          GOTOOLCHAIN: "local"
        }
        fs.writeFileSync(path.join(dir, "go.mod"), "module example.com/shop\n\ngo 1.19\n")
        fs.writeFileSync(
          path.join(dir, "total.go"),
          "package shop\n\nfunc Total(n int) int { return n * 3 }\n"
        )
        const tests = Array.from(
          { length: 20 },
          (_, i) =>
            `func TestTotal${i}(t *testing.T) {\n\tif got := Total(${i}); got != ${i === 13 ? i * 3 + 1 : i * 3} {\n\t\tt.Errorf("Total(${i}) = %d, expected ${i === 13 ? i * 3 + 1 : i * 3}", got)\n\t}\n}\n`
        ).join("\n")
        fs.writeFileSync(path.join(dir, "total_test.go"), `package shop\n\nimport "testing"\n\n${tests}`)
        assert.deepStrictEqual(rtkRuns("go test ./..."), ["go test -json ./..."])
        const { raw, view } = through(dir, "go test ./...", env)
        assert.strictEqual(raw.exitCode, 1, raw.stderr)
        assert.match(
          view.text,
          /^Exit code 1\nGo test: 19 passed, 1 failed in 1 packages\n═+\n\n📦 shop \(19 passed, 1 failed\)\n {2}❌ TestTotal13\n {5} *total_test\.go:\d+: Total\(13\) = 39, expected 40$/
        )
      }),
    BUILD_TIMEOUT_MS
  )
})
