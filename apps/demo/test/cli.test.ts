import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { isLong } from "@toolcap/bench-report"
import { assertBuilt, bin, makeDirs, runCli } from "./fixtures/cli.js"
import { processesWithCookie, runIdOf } from "../../../packages/adapters/test/fixtures/processes.js"

const dirs = makeDirs("toolcap-cli-")
const external = makeDirs("toolcap-cli-external-")
const base = ["--workspace", dirs.workspace, "--data-dir", dirs.dataDir]

beforeAll(() => {
  assertBuilt()
  dirs.write("README.md", "# hello\nworld\n")
  external.write("notes.txt", "outside the workspace\n")
})
afterAll(() => {
  dirs.remove()
  external.remove()
})

/** The single JSON line a `call` printed; fails when stdout is anything else. */
const onlyLine = (stdout: string): Record<string, unknown> => {
  assert.isTrue(stdout.endsWith("\n"), "the line ends with a newline")
  const lines = stdout.slice(0, -1).split("\n")
  assert.strictEqual(lines.length, 1, `exactly one line, got: ${stdout.slice(0, 300)}`)
  return JSON.parse(lines[0]!) as Record<string, unknown>
}

type Json = Record<string, unknown>

/** The stdout of the Bash result a `call` printed. */
const stdoutOf = (run: { readonly stdout: string }) =>
  (onlyLine(run.stdout)["result"] as Json)["stdout"] as string

describe("toolcap call: one JSON line, exit 0 / 2 / 1", () => {
  it('ok: {"ok":true,"result":...} and exit 0', async () => {
    const run = await runCli(["call", "Read", '{"path":"README.md"}', ...base])
    assert.strictEqual(run.code, 0)
    const line = onlyLine(run.stdout)
    assert.deepStrictEqual(Object.keys(line), ["ok", "result"])
    assert.strictEqual(line["ok"], true)
    const result = line["result"] as Json
    assert.strictEqual(result["content"], "# hello\nworld\n")
    assert.strictEqual(result["path"], "README.md")
    assert.strictEqual(result["root"], "workspace")
  })

  it('tool error: {"ok":false,"error":{"code":"TOOL_...","message":...}} and exit 2', async () => {
    const run = await runCli(["call", "Read", '{"path":"missing.txt"}', ...base])
    assert.strictEqual(run.code, 2)
    const line = onlyLine(run.stdout)
    assert.deepStrictEqual(Object.keys(line), ["ok", "error"])
    const error = line["error"] as Json
    assert.strictEqual(error["code"], "TOOL_NOT_FOUND")
    assert.isString(error["message"])
    assert.strictEqual(Object.keys(error)[0], "code")
  })

  it("a timeout's partial result travels under error.partial, with the killed pids", async () => {
    const run = await runCli(["call", "Bash", '{"command":"echo started; sleep 60","timeout":1}', ...base])
    assert.strictEqual(run.code, 2)
    const error = onlyLine(run.stdout)["error"] as Json
    assert.strictEqual(error["code"], "TOOL_TIMEOUT")
    assert.strictEqual((error["partial"] as Json)["stdout"], "started\n")
    assert.isAtLeast((error["killedPids"] as Array<number>).length, 1)
  })

  it("usage errors exit 1 with nothing on stdout and a message on stderr", async () => {
    const cases: Array<ReadonlyArray<string>> = [
      ["call", "Edit", "{}", ...base],
      ["call", "Read", "{not json", ...base],
      ["call", "Read"],
      ["call", "Read", '{"path":"README.md"}', "--workspace", path.join(dirs.workspace, "nope")],
      ["call", "Read", '{"path":"README.md"}', ...base, "--session", "../escape"],
      ["no-such-command"]
    ]
    const runs = await Promise.all(cases.map((args) => runCli(args)))
    for (const [index, run] of runs.entries()) {
      const args = cases[index]!
      assert.strictEqual(run.code, 1, `exit code of ${args.join(" ")}`)
      assert.strictEqual(run.stdout, "", `stdout of ${args.join(" ")}`)
      assert.isAbove(run.stderr.trim().length, 0, `stderr of ${args.join(" ")}`)
    }
  })

  it("budgets come from TOOLCAP_* variables; an invalid one is a usage error", async () => {
    const run = await runCli(["call", "Bash", '{"command":"seq 1 50"}', ...base], {
      env: { TOOLCAP_SHELL_STDOUT_MAX_LINES: "10" }
    })
    assert.strictEqual(run.code, 0)
    const result = onlyLine(run.stdout)["result"] as Json
    assert.include(result["stdout"] as string, "kept the first 10 of 50 lines")
    const invalid = await runCli(["call", "Bash", '{"command":"true"}', ...base], {
      env: { TOOLCAP_GLOB_LIMIT: "0" }
    })
    assert.strictEqual(invalid.code, 1)
    assert.strictEqual(invalid.stdout, "")
  })

  it("Bash's environment: a host secret is left out by default, passed with --env-include or TOOLCAP_ENV_POLICY; bad values are usage errors", async () => {
    const print = JSON.stringify({ command: 'printf "%s" "${ANTHROPIC_API_KEY-unset}"' })
    const env = { ANTHROPIC_API_KEY: "sk-ant-cli-0001" }
    const [plain, flagged, variable, both] = await Promise.all([
      runCli(["call", "Bash", print, ...base], { env }),
      runCli(["call", "Bash", print, ...base, "--env-include", "ANTHROPIC_API_KEY"], { env }),
      runCli(["call", "Bash", print, ...base], {
        env: { ...env, TOOLCAP_ENV_POLICY: '{"include":["ANTHROPIC_API_KEY"]}' }
      }),
      // a flag replaces the same field of the variable's policy
      runCli(["call", "Bash", print, ...base, "--env-include", "NOTHING"], {
        env: { ...env, TOOLCAP_ENV_POLICY: '{"include":["ANTHROPIC_API_KEY"]}' }
      })
    ])
    assert.strictEqual(stdoutOf(plain), "unset")
    assert.strictEqual(stdoutOf(flagged), "sk-ant-cli-0001")
    assert.strictEqual(stdoutOf(variable), "sk-ant-cli-0001")
    assert.strictEqual(stdoutOf(both), "unset")
    const refused = await Promise.all([
      runCli(["call", "Bash", print, ...base, "--env-inherit", "some"]),
      runCli(["call", "Bash", print, ...base, "--env-set", "NOVALUE"]),
      runCli(["call", "Bash", print, ...base], { env: { TOOLCAP_ENV_POLICY: "inherit=core" } }),
      runCli(["call", "Bash", print, ...base, "--env-set", "TOOLCAP_RUN_ID=x"])
    ])
    for (const run of refused) {
      assert.strictEqual(run.code, 1, run.stderr)
      assert.strictEqual(run.stdout, "")
    }
    assert.include(refused[1]!.stderr, "--env-set")
    assert.include(refused[2]!.stderr, "TOOLCAP_ENV_POLICY")
    assert.include(refused[3]!.stderr, "cookie")
  })

  it("--approve lets the tools reach an external root (absolute paths, root: external)", async () => {
    const target = path.join(fs.realpathSync(external.workspace), "notes.txt")
    const denied = await runCli(["call", "Read", JSON.stringify({ path: target }), ...base])
    assert.strictEqual(denied.code, 2)
    assert.strictEqual((onlyLine(denied.stdout)["error"] as Json)["code"], "TOOL_PATH_DENIED")
    const approved = await runCli([
      "call",
      "Read",
      JSON.stringify({ path: target }),
      ...base,
      "--approve",
      external.workspace
    ])
    assert.strictEqual(approved.code, 0)
    const result = onlyLine(approved.stdout)["result"] as Json
    assert.strictEqual(result["root"], "external")
    assert.strictEqual(result["path"], target)
  })
})

describe("toolcap call --text and --profile", () => {
  it("--text prints what the model reads: the file's lines, or CODE: message (exit codes unchanged)", async () => {
    dirs.write("q.ts", 'const s = "hello\tworld";\n')
    const read = await runCli(["call", "Read", '{"path":"q.ts"}', ...base, "--text"])
    assert.strictEqual(read.code, 0)
    assert.strictEqual(read.stdout, 'const s = "hello\tworld";\n')
    const grep = await runCli([
      "call",
      "Grep",
      '{"pattern":"hello.world","outputMode":"content"}',
      ...base,
      "--text"
    ])
    assert.strictEqual(grep.stdout, 'q.ts:1:const s = "hello\tworld";\n')
    // the guards ripgrep ran under, for the person reading, on stderr
    assert.match(
      grep.stderr,
      /toolcap: Grep: (ripgrep started by the launcher|no launcher); reads (confined to the roots by Landlock|not confined by the kernel \(.+\)); memory ceiling 1024 MiB \(RLIMIT_DATA/
    )
    // and the guards Bash's shell ran under: tier, launcher, Landlock scopes
    const bash = await runCli(["call", "Bash", '{"command":"echo hi"}', ...base, "--text"])
    assert.strictEqual(bash.code, 0)
    assert.match(
      bash.stderr,
      /^toolcap: Bash: (cgroup|group) tier.*, (no )?native launcher, (Landlock scopes|no Landlock scopes \[.+\])/m
    )
    const missing = await runCli(["call", "Read", '{"path":"missing.txt"}', ...base, "--text"])
    assert.strictEqual(missing.code, 2)
    assert.match(missing.stdout, /^TOOL_NOT_FOUND: /)
  })

  it("--profile compact cuts Bash to its head and tail; an unknown preset or --text with --stream is a usage error", async () => {
    // the cut itself: compact also digests Bash output unless the call says `digest: false`
    const run = await runCli([
      "call",
      "Bash",
      '{"command":"seq 1 2000","digest":false}',
      ...base,
      "--profile",
      "compact"
    ])
    assert.strictEqual(run.code, 0)
    const stdout = String((onlyLine(run.stdout)["result"] as Json)["stdout"])
    assert.include(stdout, "kept the first 500 and the last 500 of 2000 lines")
    assert.isTrue(stdout.endsWith("\n2000\n"))
    for (const extra of [
      ["--profile", "tiny"],
      ["--text", "--stream"]
    ]) {
      const refused = await runCli(["call", "Bash", '{"command":"true"}', ...base, ...extra])
      assert.strictEqual(refused.code, 1, extra.join(" "))
      assert.strictEqual(refused.stdout, "")
    }
  })
})

describe("the answer is one whole JSON line for a slow Python reader", () => {
  /**
   * Runs per case (exit 0, exit 2 after a timeout, SIGTERM abort): 3 in the default suite (each run
   * is a CLI start and, for two cases, a 1 s timeout or abort: 6 per case took 48 s of a loaded
   * suite), 20 in the long mode (TOOLCAP_LONG_TESTS=1), which `pnpm bench` runs; TOOLCAP_PIPE_RUNS
   * overrides.
   */
  const runs = Number(process.env["TOOLCAP_PIPE_RUNS"] ?? (isLong() ? "20" : "3"))

  it(`subprocess with captured stdout parses ${runs} of ${runs} answers for exit 0, exit 2 and SIGTERM`, async () => {
    const reader = fileURLToPath(new URL("./fixtures/pipe_reader.py", import.meta.url))
    const child = spawn(
      "python3",
      [reader, process.execPath, bin, dirs.workspace, dirs.dataDir, String(runs), "6"],
      {
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (data: string) => (stdout += data))
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(status, 0)
    const report = JSON.parse(stdout) as Record<string, Array<[number, string, number]>>
    const verdicts = (name: string) => report[name]!.map(([code, verdict]) => `${code} ${verdict}`)
    assert.deepStrictEqual(
      verdicts("exit0"),
      Array.from({ length: runs }, () => "0 ok")
    )
    assert.deepStrictEqual(
      verdicts("exit2"),
      Array.from({ length: runs }, () => "2 TOOL_TIMEOUT")
    )
    assert.deepStrictEqual(
      verdicts("sigterm"),
      Array.from({ length: runs }, () => "2 TOOL_ABORTED")
    )
    // the pipe's capacity (64 KiB) is no limit: the timeout's partial output is larger
    for (const [, , bytes] of report["exit2"]!) assert.isAbove(bytes, 65_536, JSON.stringify(report["exit2"]))
  }, 300_000)
})

describe("toolcap call --stream: NDJSON chunks, then the result", () => {
  it("one chunk line per chunk (type, stream, seq, data), per-stream seq from 0, then the result line", async () => {
    const command = 'for i in 1 2 3; do echo "out $i"; echo "err $i" >&2; sleep 0.05; done'
    const run = await runCli(["call", "Bash", JSON.stringify({ command }), ...base, "--stream"])
    assert.strictEqual(run.code, 0)
    const lines = run.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Json)
    const chunks = lines.slice(0, -1)
    const last = lines.at(-1)!
    for (const chunk of chunks) assert.deepStrictEqual(Object.keys(chunk), ["type", "stream", "seq", "data"])
    for (const stream of ["stdout", "stderr"]) {
      const ofStream = chunks.filter((c) => c["stream"] === stream)
      assert.deepStrictEqual(
        ofStream.map((c) => c["seq"]),
        ofStream.map((_, i) => i)
      )
      assert.strictEqual(
        ofStream.map((c) => c["data"]).join(""),
        stream === "stdout" ? "out 1\nout 2\nout 3\n" : "err 1\nerr 2\nerr 3\n"
      )
      assert.strictEqual(((last["result"] as Json)["lastSeq"] as Json)[stream], ofStream.length - 1)
    }
    assert.deepStrictEqual(Object.keys(last), ["type", "result"])
    assert.strictEqual(last["type"], "result")
  })

  it("ends with an error line for a tool error (exit 2)", async () => {
    const run = await runCli([
      "call",
      "Bash",
      '{"command":"echo a; sleep 60","timeout":1}',
      ...base,
      "--stream"
    ])
    assert.strictEqual(run.code, 2)
    const lines = run.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Json)
    assert.deepStrictEqual(lines[0], { type: "chunk", stream: "stdout", seq: 0, data: "a\n" })
    const last = lines.at(-1)!
    assert.deepStrictEqual(Object.keys(last), ["type", "error"])
    assert.strictEqual((last["error"] as Json)["code"], "TOOL_TIMEOUT")
  })

  it("SIGTERM stops the call's whole tree and still answers TOOL_ABORTED (exit 2)", async () => {
    const command =
      'sleep 300 & (sleep 300 &); setsid sleep 300 & echo "run $TOOLCAP_RUN_ID"; while true; do sleep 0.2; done'
    let runId: string | undefined
    const run = await runCli(["call", "Bash", JSON.stringify({ command }), ...base, "--stream"], {
      onLine: (line, child) => {
        const chunk = JSON.parse(line) as Json
        if (runId === undefined && chunk["type"] === "chunk") {
          runId = runIdOf(String(chunk["data"]))
          if (runId !== undefined) child.kill("SIGTERM")
        }
      }
    })
    assert.isString(runId)
    assert.strictEqual(run.code, 2)
    const last = JSON.parse(run.stdout.trimEnd().split("\n").at(-1)!) as Json
    assert.strictEqual((last["error"] as Json)["code"], "TOOL_ABORTED")
    assert.deepStrictEqual(processesWithCookie(runId!), [])
  })
})

describe("defaults and sessions", () => {
  it("workspace = cwd, data dir = $TOOLCAP_DATA_DIR, session = default; `session end` removes it; `sweep` finds orphans", async () => {
    const dataDir = path.join(dirs.root, "env-data")
    const run = await runCli(["call", "Bash", '{"command":"seq 1 100000"}'], {
      cwd: dirs.workspace,
      env: { TOOLCAP_DATA_DIR: dataDir }
    })
    assert.strictEqual(run.code, 0)
    const spill = ((onlyLine(run.stdout)["result"] as Json)["spill"] as Json)["stdout"] as string
    assert.isTrue(spill.startsWith(path.join(dataDir, "scratch", "default", "tool-output") + path.sep))
    assert.isTrue(fs.existsSync(spill), "the spill outlives the call, for a later Read or Grep")
    const grep = await runCli(["call", "Grep", JSON.stringify({ pattern: "^77777$", path: spill })], {
      cwd: dirs.workspace,
      env: { TOOLCAP_DATA_DIR: dataDir }
    })
    assert.strictEqual((onlyLine(grep.stdout)["result"] as Json)["count"], 1)

    const ended = await runCli(["session", "end", "default"], { env: { TOOLCAP_DATA_DIR: dataDir } })
    assert.strictEqual(ended.code, 0)
    assert.strictEqual((onlyLine(ended.stdout)["result"] as Json)["removed"], true)
    assert.isFalse(fs.existsSync(spill))

    // The session of a finished CLI call is owned by a process that is gone: sweep removes it once stale.
    await runCli(["call", "Bash", '{"command":"seq 1 100000"}', "--session", "orphan"], {
      cwd: dirs.workspace,
      env: { TOOLCAP_DATA_DIR: dataDir }
    })
    const swept = await runCli(["sweep", "--stale-after", "0"], { env: { TOOLCAP_DATA_DIR: dataDir } })
    assert.strictEqual(swept.code, 0)
    assert.deepStrictEqual((onlyLine(swept.stdout)["result"] as Json)["removed"], [
      path.join(dataDir, "scratch", "orphan")
    ])
  })

  it("without $TOOLCAP_DATA_DIR the data dir is $XDG_DATA_HOME/toolcap", async () => {
    const xdg = path.join(dirs.root, "xdg")
    const run = await runCli(["call", "Bash", '{"command":"seq 1 100000"}', "--workspace", dirs.workspace], {
      env: { TOOLCAP_DATA_DIR: undefined, XDG_DATA_HOME: xdg }
    })
    const spill = ((onlyLine(run.stdout)["result"] as Json)["spill"] as Json)["stdout"] as string
    assert.isTrue(spill.startsWith(path.join(xdg, "toolcap", "scratch", "default") + path.sep))
  })
})

describe("toolcap checkpoint", () => {
  const transcript = {
    messages: [
      { role: "user", id: "u1", text: "Find the flaky test." },
      {
        role: "assistant",
        id: "a1",
        text: "",
        toolCalls: [{ id: "c1", name: "Grep", arguments: '{"pattern":"flaky"}' }]
      },
      { role: "tool", id: "t1", callId: "c1", text: "tests/a.test.ts:3: it.flaky(...)" },
      { role: "user", id: "u2", text: "Now fix it." }
    ]
  }

  it("build persists and prints the reconstructed context; show reads it back in a new process", async () => {
    const file = path.join(dirs.root, "transcript.json")
    fs.writeFileSync(file, JSON.stringify(transcript))
    const built = await runCli([
      "checkpoint",
      "build",
      file,
      "--session",
      "cp",
      "--data-dir",
      dirs.dataDir,
      "--summary",
      "Looked for the flaky test."
    ])
    assert.strictEqual(built.code, 0, built.stderr)
    const result = onlyLine(built.stdout)["result"] as Json
    const context = (result["checkpoint"] as Json)["context"] as Array<Json>
    assert.deepStrictEqual(
      context.map((entry) => [entry["origin"], (entry["message"] as Json)["id"]]),
      [
        ["retained", "u1"],
        ["retained", "u2"],
        ["summary", "checkpoint:summary"]
      ]
    )
    const shown = await runCli(["checkpoint", "show", "--session", "cp", "--data-dir", dirs.dataDir])
    assert.strictEqual(shown.code, 0)
    assert.deepStrictEqual(onlyLine(shown.stdout)["result"], result)
  })

  it("refuses a bad transcript (exit 2, CHECKPOINT_INVALID) and reports a missing checkpoint (exit 2)", async () => {
    const file = path.join(dirs.root, "bad.json")
    fs.writeFileSync(
      file,
      JSON.stringify({ messages: [{ role: "tool", id: "t", callId: "nobody", text: "" }] })
    )
    const bad = await runCli(["checkpoint", "build", file, "--session", "cp2", "--data-dir", dirs.dataDir])
    assert.strictEqual(bad.code, 2)
    assert.strictEqual((onlyLine(bad.stdout)["error"] as Json)["code"], "CHECKPOINT_INVALID")
    const none = await runCli(["checkpoint", "show", "--session", "never", "--data-dir", dirs.dataDir])
    assert.strictEqual(none.code, 2)
    assert.strictEqual((onlyLine(none.stdout)["error"] as Json)["code"], "CHECKPOINT_NOT_FOUND")
  })

  it("refuses an empty transcript (exit 2, CHECKPOINT_INVALID empty); the session's latest checkpoint stays", async () => {
    const file = path.join(dirs.root, "good.json")
    fs.writeFileSync(file, JSON.stringify(transcript))
    const built = await runCli(["checkpoint", "build", file, "--session", "cp3", "--data-dir", dirs.dataDir])
    assert.strictEqual(built.code, 0, built.stderr)
    const saved = onlyLine(built.stdout)["result"]
    for (const empty of ["[]", '{"messages":[]}']) {
      const emptyFile = path.join(dirs.root, "empty.json")
      fs.writeFileSync(emptyFile, empty)
      const refused = await runCli([
        "checkpoint",
        "build",
        emptyFile,
        "--session",
        "cp3",
        "--data-dir",
        dirs.dataDir
      ])
      assert.strictEqual(refused.code, 2, empty)
      const error = onlyLine(refused.stdout)["error"] as Json
      assert.strictEqual(error["code"], "CHECKPOINT_INVALID")
      assert.strictEqual(error["reason"], "empty")
    }
    const shown = await runCli(["checkpoint", "show", "--session", "cp3", "--data-dir", dirs.dataDir])
    assert.strictEqual(shown.code, 0)
    assert.deepStrictEqual(onlyLine(shown.stdout)["result"], saved)
  })

  it("--store and TOOLCAP_CHECKPOINT_STORE choose the store (here a SQLite file outside the data dir)", async () => {
    const file = path.join(dirs.root, "store.json")
    fs.writeFileSync(file, JSON.stringify(transcript))
    const store = path.join(dirs.root, "elsewhere", "fleet.sqlite")
    const built = await runCli([
      "checkpoint",
      "build",
      file,
      "--session",
      "cp4",
      "--data-dir",
      dirs.dataDir,
      "--store",
      store
    ])
    assert.strictEqual(built.code, 0, built.stderr)
    assert.isTrue(fs.existsSync(store))
    const viaEnv = await runCli(["checkpoint", "show", "--session", "cp4", "--data-dir", dirs.dataDir], {
      env: { TOOLCAP_CHECKPOINT_STORE: store }
    })
    assert.strictEqual(viaEnv.code, 0, viaEnv.stderr)
    assert.deepStrictEqual(onlyLine(viaEnv.stdout)["result"], onlyLine(built.stdout)["result"])
    // the data dir's own store never saw that session
    const local = await runCli(["checkpoint", "show", "--session", "cp4", "--data-dir", dirs.dataDir])
    assert.strictEqual(local.code, 2)
  })

  it("checkpoint build: a command line that is not plain is the framework's to refuse (exit 1, nothing on stdout)", async () => {
    const file = path.join(dirs.root, "plain.json")
    fs.writeFileSync(file, JSON.stringify({ messages: [{ role: "user", id: "u1", text: "Hi." }] }))
    const ok = await runCli(["checkpoint", "build", file, "--session=cp5", "--data-dir", dirs.dataDir])
    assert.strictEqual(ok.code, 0, ok.stderr)
    // usage errors are the framework's: exit 1, nothing on stdout
    for (const bad of [
      ["checkpoint", "build", file, "--data-dir", dirs.dataDir],
      ["checkpoint", "build", path.join(dirs.root, "missing.json"), "--session", "x"],
      ["checkpoint", "build", file, "--session", "x", "--format", "yaml"],
      ["checkpoint", "build", file, "--session", "x", "--bogus", "1"],
      ["checkpoint", "build", file, "--session", "x", "--session", "y"]
    ]) {
      const run = await runCli(bad)
      assert.strictEqual(run.code, 1, `${bad.join(" ")}: ${run.stdout}`)
      assert.strictEqual(run.stdout, "")
    }
  })
})

describe("toolcap demo", () => {
  it("completes, shows every step passing, and removes its temporary data", async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-demo-test-"))
    try {
      const run = await runCli(["demo"], { env: { TMPDIR: tmp } })
      assert.strictEqual(run.code, 0, run.stderr)
      for (const title of [
        "Bash stdout keeps its head",
        "Bash stderr keeps its tail",
        "stream separately",
        "timeout stops the whole process tree",
        "Read pages a multi-megabyte file",
        "Binary content is refused",
        "Grep stops at headLimit",
        "Glob returns the newest matches",
        "explicit path reaches into an ignored tree",
        "checkpoint"
      ]) {
        assert.include(run.stdout, title)
      }
      assert.notInclude(run.stdout, "✗", "every check of the tour passed")
      assert.notInclude(run.stdout, "skipped:", "no step was skipped (SQLite is installed here)")
      assert.include(run.stdout, "[truncated: kept the first 4000 of 300000 lines")
      // the timed-out call's guards, as its result reports them
      assert.match(run.stdout, /guards: (cgroup|group) tier.*, (no )?native launcher, (no )?Landlock scopes/)
      assert.deepStrictEqual(fs.readdirSync(tmp), [], "the demo removed its temporary data")
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})

describe("papercuts", () => {
  it("works from any directory; a relative --workspace resolves against the caller's directory", async () => {
    const run = await runCli(["call", "Read", '{"path":"README.md"}', "--workspace", "workspace"], {
      cwd: dirs.root,
      env: { TOOLCAP_DATA_DIR: dirs.dataDir }
    })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual((onlyLine(run.stdout)["result"] as Json)["content"], "# hello\nworld\n")
  })

  it("`pnpm -w --silent toolcap` from a subdirectory runs in that directory", async () => {
    const fixtures = fileURLToPath(new URL("./fixtures", import.meta.url))
    const child = spawn(
      "pnpm",
      ["-w", "--silent", "toolcap", "call", "Read", '{"path":"pipe_reader.py","limit":1}'],
      {
        cwd: fixtures,
        env: { ...process.env, INIT_CWD: undefined, TOOLCAP_DATA_DIR: dirs.dataDir },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (data: string) => (stdout += data))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    assert.strictEqual(code, 0, stdout)
    const result = onlyLine(stdout)["result"] as Json
    assert.strictEqual(result["path"], "pipe_reader.py")
    assert.match(result["content"] as string, /^"""Runs `toolcap call`/)
  })

  it("--help into a pipe carries no ANSI codes, even without NO_COLOR", async () => {
    for (const args of [["--help"], ["call", "--help"], ["mcp", "--help"]]) {
      const run = await runCli(args, { env: { NO_COLOR: undefined, FORCE_COLOR: undefined } })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "toolcap")
      assert.notInclude(run.stdout, "\u001b[", `${args.join(" ")} printed ANSI codes`)
    }
  })

  it("Bash refuses a field its schema does not have, and counts one process in the singular", async () => {
    const extra = await runCli(["call", "Bash", '{"command":"true","cwd":"/"}', ...base])
    assert.strictEqual(extra.code, 2)
    const error = onlyLine(extra.stdout)["error"] as Json
    assert.strictEqual(error["code"], "TOOL_INVALID_INPUT")
    assert.strictEqual(error["field"], "cwd")
    const single = await runCli(["call", "Bash", '{"command":"exec sleep 60","timeout":1}', ...base])
    const timeout = onlyLine(single.stdout)["error"] as Json
    assert.strictEqual(timeout["code"], "TOOL_TIMEOUT")
    assert.deepStrictEqual((timeout["killedPids"] as Array<number>).length, 1)
    assert.include(timeout["message"] as string, "(1 process signalled)")
  })
})
