// Bash output as the model reads it, through `toolcap call Bash` on real programs (rules T5-T7):
// rendered as a terminal shows it, counted in the notice; the raw bytes stay in the `stdout` field,
// the UI chunks and the spill copy.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { assertBuilt, makeDirs, runCli } from "./fixtures/cli.js"

const dirs = makeDirs("toolcap-render-")
const base = ["--workspace", dirs.workspace, "--data-dir", dirs.dataDir]

type Json = Record<string, unknown>

const ESC = "\x1b"
/** What must never reach the model: ESC, CR, any other C0 but \t and \n, DEL, C1. */
// oxlint-disable-next-line no-control-regex -- the control characters are what is matched
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/

const PROGRESS =
  'for i in $(seq 1 50); do printf "\\rprogress %d%%" $((i * 2)); done; printf "\\n\\033[31mERROR\\033[0m\\n"'

const call = async (command: string, extra: ReadonlyArray<string> = []) => {
  const run = await runCli(["call", "Bash", JSON.stringify({ command }), ...base, ...extra])
  assert.strictEqual(run.code, 0, run.stderr)
  return run
}
const resultOf = (stdout: string): Json =>
  (JSON.parse(stdout.trim().split("\n").at(-1)!) as Json)["result"] as Json
/** The stdout section of the model's text. */
const stdoutSection = (output: string): string => output.slice(output.indexOf("--- stdout ---\n") + 15)

beforeAll(() => {
  assertBuilt()
  dirs.write("src/app.ts", "export const answer = 42\n")
  dirs.write("notes.txt", "alpha\nneedle here\nomega\n")
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: dirs.workspace,
      stdio: "ignore"
    })
  git("init", "-q")
  git("add", "-A")
  git("commit", "-q", "-m", "first commit")
})
afterAll(() => dirs.remove())

describe("toolcap call Bash: the model reads rendered text", () => {
  it("a \\r progress bar and a red ERROR reach the model as `progress 100%` and `ERROR`, no ESC or CR", async () => {
    const result = resultOf((await call(PROGRESS)).stdout)
    const output = result["output"] as string
    assert.strictEqual(stdoutSection(output), "progress 100%\nERROR")
    assert.isFalse(CONTROL.test(output), JSON.stringify(output))
    assert.include(
      output,
      "stdout rendered as a terminal shows it: 49 progress frames collapsed, 2 colour codes removed"
    )
    // the raw field keeps the bytes
    const raw = result["stdout"] as string
    assert.include(raw, "\rprogress 2%\rprogress 4%")
    assert.include(raw, `${ESC}[31mERROR${ESC}[0m`)
    const rendering = (result["rendering"] as Json)["stdout"] as Json
    assert.strictEqual(rendering["progressFrames"], 49)
    assert.strictEqual(rendering["colourCodes"], 2)
  })

  it("the spill copy holds the raw bytes, named in the notice though the output was under budget", async () => {
    const result = resultOf((await call(PROGRESS)).stdout)
    assert.isFalse(result["truncated"])
    const spill = (result["spill"] as Json)["stdout"] as string
    assert.isString(spill)
    assert.include(result["output"] as string, `Raw bytes: Full output saved to ${spill}`)
    const expected = execFileSync("bash", ["-c", PROGRESS])
    assert.deepStrictEqual(fs.readFileSync(spill), expected)
  })

  it("the UI chunks hold the raw bytes", async () => {
    const run = await call(PROGRESS, ["--stream"])
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Json)
    const data = lines
      .filter((line) => line["type"] === "chunk" && line["stream"] === "stdout")
      .map((line) => line["data"])
      .join("")
    assert.strictEqual(data, execFileSync("bash", ["-c", PROGRESS]).toString("utf8"))
  })

  it("colour only (ls): rendered, counted, no copy kept when nothing was cut", async () => {
    const result = resultOf((await call("ls --color=always")).stdout)
    const output = result["output"] as string
    assert.strictEqual(stdoutSection(output), "notes.txt\nsrc")
    assert.isFalse(CONTROL.test(output))
    assert.include(result["stdout"] as string, ESC)
    assert.isUndefined((result["spill"] as Json)["stdout"])
    assert.match(output, /stdout rendered as a terminal shows it: \d+ colour codes removed\.\n/)
  })

  it("grep's colour and erase-in-line: rendered, and the raw copy kept (more than colour changed)", async () => {
    const result = resultOf((await call("grep --color=always needle notes.txt")).stdout)
    const output = result["output"] as string
    assert.strictEqual(stdoutSection(output), "needle here")
    assert.isFalse(CONTROL.test(output))
    assert.include(result["stdout"] as string, `${ESC}[K`)
    const spill = (result["spill"] as Json)["stdout"] as string
    assert.deepStrictEqual(
      fs.readFileSync(spill),
      execFileSync("grep", ["--color=always", "needle", "notes.txt"], { cwd: dirs.workspace })
    )
    assert.match(
      output,
      /colour codes removed, \d+ other escape sequences removed\. Raw bytes: Full output saved to /
    )
  })

  it("a real colour program renders to its plain text: git log", async () => {
    const log = resultOf((await call("git -c color.ui=always log --decorate")).stdout)
    const logText = stdoutSection(log["output"] as string)
    assert.isFalse(CONTROL.test(logText))
    assert.match(logText, /^commit [0-9a-f]{40} \(HEAD -> \w+\)\n/)
    assert.include(logText, "    first commit")
    assert.include(log["stdout"] as string, ESC)
  })

  it("plain output is untouched: no notice, no rendering field", async () => {
    const result = resultOf((await call("printf 'a\\tb\\nc\\n'")).stdout)
    assert.strictEqual(stdoutSection(result["output"] as string), "a\tb\nc")
    assert.notInclude(result["output"] as string, "rendered as a terminal")
    assert.isUndefined(result["rendering"])
  })
})
