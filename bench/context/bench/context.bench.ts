// The context-health benchmark (`pnpm bench:context`): real tool outputs, produced here and now
// (see src/Corpus.ts), through toolcap's real Read, Bash and Grep tools under two budget profiles
// and through other hosts' shell, read and search tools modelled from their sources
// (src/peers/). For each case and policy: tokens reaching the model, and whether the needle is
// seen, reached with the case's follow-up from a saved copy or by a filtered re-run, or lost
// (the one rule in src/Reach.ts). Writes the generated section of BENCHMARKS.md, the chart beside
// it and the summary in the README.
//
// Everything lives in one temp dir (workspace, data dir, spill files, replays), removed at the
// end; the Bash tool stops every process tree it started before it answers; the loopback HTTP
// server the download cases use is closed at the end, and the Docker daemon of the `docker build`
// case (its own data directory in the temp dir) is stopped.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { loadAverage } from "@toolcap/bench-report"
import { Budgets, type Truncation } from "@toolcap/limits"
import { Scratch } from "@toolcap/spill"
import { Bash, Glob, Grep, LineIndex, Read, Supervisor, Workspace } from "@toolcap/tools"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Order from "effect/Order"
import * as prettier from "prettier"
import { cases, type CorpusCase, ladderBytes, SIZE_RUNGS } from "../src/Corpus.js"
import * as ModelText from "../src/ModelText.js"
import { locate, type Needle } from "../src/Needle.js"
import { peers } from "../src/Policies.js"
import { peerRun, type PolicyRun, score, type Scored, type Shown } from "../src/Reach.js"
import {
  type CaseRow,
  chart,
  type ModelTextRow,
  type PolicyInfo,
  section,
  summaryTable,
  totals
} from "../src/Report.js"
import { replaceRegion } from "../src/Region.js"
import { byteLength, lineCount, type RawOutput } from "../src/Text.js"
import * as Tokens from "../src/Tokens.js"
import type { ReadWindow } from "../src/Window.js"
import * as Toolcap from "../src/Toolcap.js"

const repoRoot = path.resolve(fileURLToPath(import.meta.url), "../../../..")
const BENCHMARKS_FILE = path.join(repoRoot, "BENCHMARKS.md")
const CHART_FILE = "benchmarks-context.svg"
const README_FILE = path.join(repoRoot, "README.md")
const REGION = "pnpm bench:context"
/** A Bash case gets the tool's longest timeout: the slowest (vitest, find) take seconds, not minutes. */
const CASE_TIMEOUT_SECONDS = 300
/** Where the peers' file reads say the file is (their texts name it). */
const PEER_WORKSPACE = "/home/user/project"
/** The body the download cases fetch, and how much of it the `cut` route sends before it closes. */
const DOWNLOAD_BYTES = 2 * 1024 * 1024
const DOWNLOAD_CUT_SHARE = 0.75

/** A comma-separated list of case ids runs only those and writes nothing (for working on a case). */
const ONLY_VARIABLE = "TOOLCAP_BENCH_CONTEXT_ONLY"
const only = (process.env[ONLY_VARIABLE] ?? "").split(",").filter((id) => id !== "")
const selected = only.length === 0 ? cases : cases.filter((c) => only.includes(c.id))

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, "-")
const thousands = (n: number): string => n.toLocaleString("en-US")
const bytesText = (n: number): string => `${thousands(n)} bytes`
const lineRange = (from: number, count: number): string =>
  `lines ${thousands(from)}–${thousands(from + count - 1)}`
/** A word for a POSIX shell, in single quotes. */
const shellWord = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`

/** What a spill file holds, in the stream's bytes. */
const spillHolds = (copy: Truncation.SpillCopy | undefined): string =>
  copy === undefined
    ? "an unknown part of the stream"
    : copy.complete
      ? "the whole stream"
      : copy.ranges.map((range) => `bytes ${thousands(range.from)}–${thousands(range.to)}`).join(" and ")

type Runtime = ManagedRuntime.ManagedRuntime<
  Budgets.Budgets | LineIndex.LineIndex | Workspace.Workspace | Scratch.Scratch | Supervisor.Supervisor,
  never
>

/** The loopback server of the download cases: `/whole/*` sends the body, `/cut/*` closes it early, the rest is 404. */
const loopback = () => {
  let started: Promise<string> | undefined
  const server = http.createServer((request, response) => {
    const body = Buffer.alloc(DOWNLOAD_BYTES, 0x61)
    if (request.url?.startsWith("/whole/") === true) {
      response.writeHead(200, { "content-length": DOWNLOAD_BYTES, "content-type": "application/gzip" })
      response.end(body)
    } else if (request.url?.startsWith("/cut/") === true) {
      response.writeHead(200, { "content-length": DOWNLOAD_BYTES, "content-type": "application/gzip" })
      // the sent part, then the connection closes short of the promised length
      response.write(body.subarray(0, Math.floor(DOWNLOAD_BYTES * DOWNLOAD_CUT_SHARE)), () =>
        response.socket?.end()
      )
    } else {
      response.writeHead(404, { "content-type": "text/plain" })
      response.end("not found\n")
    }
  })
  return {
    serve: () =>
      (started ??= new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
        )
      )),
    close: () =>
      started === undefined
        ? Promise.resolve()
        : new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** How long the Docker daemon may take to answer on a loaded 2-core machine before the run gives up. */
const DOCKER_START_SECONDS = 90
/** How long it may take to stop after SIGTERM before it is killed. */
const DOCKER_STOP_SECONDS = 30

/**
 * The Docker daemon of the `docker build` case: `dockerd` with its own data and exec directories
 * under `dir`, the vfs storage driver (no overlay mounts), and no bridge or iptables rules, so it
 * touches nothing of the machine; started on first use, stopped (SIGTERM, then SIGKILL) at the end.
 */
const dockerDaemon = (dir: string) => {
  let started: Promise<string> | undefined
  let daemon: ChildProcess | undefined
  const host = `unix://${path.join(dir, "docker.sock")}`
  const answers = () =>
    spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], {
      env: { ...process.env, DOCKER_HOST: host },
      encoding: "utf8"
    }).status === 0
  const start = async (): Promise<string> => {
    fs.mkdirSync(path.join(dir, "data"), { recursive: true })
    fs.mkdirSync(path.join(dir, "exec"), { recursive: true })
    const log = fs.openSync(path.join(dir, "dockerd.log"), "w")
    const child = spawn(
      "dockerd",
      [
        "--data-root",
        path.join(dir, "data"),
        "--exec-root",
        path.join(dir, "exec"),
        "--pidfile",
        path.join(dir, "dockerd.pid"),
        "--host",
        host,
        "--storage-driver",
        "vfs",
        "--iptables=false",
        "--ip6tables=false",
        "--ip-masq=false",
        "--bridge=none"
      ],
      { stdio: ["ignore", log, log] }
    )
    daemon = child
    const exited = new Promise<string>((resolve) => {
      child.on("error", (error) => resolve(error.message))
      child.on("exit", (code, signal) => resolve(`exited with ${signal ?? code}`))
    })
    for (let waited = 0; waited < DOCKER_START_SECONDS * 4; waited++) {
      const early = await Promise.race([
        exited,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 250))
      ])
      if (early !== undefined)
        fail(
          `docker-build: dockerd ${early} (${fs.readFileSync(path.join(dir, "dockerd.log"), "utf8").trim().split("\n").slice(-3).join(" / ")}); the case needs Debian's docker.io, run as root`
        )
      if (answers()) return host
    }
    return fail(`docker-build: dockerd did not answer within ${DOCKER_START_SECONDS} s`)
  }
  return {
    docker: () => (started ??= start()),
    close: async () => {
      const child = daemon
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGTERM")
      const stopped = await Promise.race([
        gone.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), DOCKER_STOP_SECONDS * 1000))
      ])
      if (!stopped) {
        child.kill("SIGKILL")
        await gone
      }
    }
  }
}

const main = async (): Promise<void> => {
  const startedAt = performance.now()
  const loadBefore = loadAverage()
  const count = await Tokens.o200k()
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-bench-context-"))
  const workspace = path.join(tmp, "workspace")
  const dataDir = path.join(tmp, "data")
  const replays = path.join(tmp, "replay")
  fs.mkdirSync(workspace, { recursive: true })
  fs.mkdirSync(replays, { recursive: true })
  const server = loopback()
  const docker = dockerDaemon(path.join(tmp, "docker"))
  const runtimes: ReadonlyArray<{ readonly profile: Toolcap.ToolcapProfile; readonly runtime: Runtime }> =
    Toolcap.profiles.map((profile) => {
      const budgets = Layer.succeed(Budgets.Budgets, Toolcap.budgetsOf(profile))
      return {
        profile,
        runtime: ManagedRuntime.make(
          Layer.mergeAll(
            budgets,
            LineIndex.layer(),
            Supervisor.layer(),
            Workspace.layer({ root: workspace }).pipe(Layer.orDie),
            Scratch.layer({ dataDir, sessionId: `bench-context-${slug(profile.name)}` }).pipe(
              Layer.provide(Layer.merge(NodeFileSystem.layer, budgets)),
              Layer.orDie
            )
          )
        )
      }
    })
  const specRuntime = runtimes[0]!.runtime
  const modelText = ModelText.toolcapModelText
  try {
    /** toolcap's own Grep over `place`, asked for the follow-up's term. */
    const grepFor = async (runtime: Runtime, place: string, pattern: RegExp): Promise<Shown> => {
      const result = await runtime.runPromise(
        Grep.grep({ pattern: pattern.source, path: place, outputMode: "content" })
      )
      const shown =
        "matches" in result ? result.matches.filter((m) => m.context !== true).map((m) => m.text) : []
      return { text: modelText({ tool: "Grep", result }), shown: shown.join("\n") }
    }

    /** toolcap's own Read of `place` at a window (its offset and limit, the tool clamping the limit). */
    const readFor = async (runtime: Runtime, place: string, window: ReadWindow): Promise<Shown> => {
      const result = await runtime.runPromise(
        Read.read({
          path: place,
          offset: window.offset,
          ...(window.limit === undefined ? {} : { limit: window.limit })
        })
      )
      return { text: modelText({ tool: "Read", result }), shown: result.content }
    }

    /** One real Bash call; its streams in arrival order make the raw output. */
    const bash = async (runtime: Runtime, command: string) => {
      const streams = { stdout: [] as Array<string>, stderr: [] as Array<string> }
      const arrival: Array<{ readonly stream: "stdout" | "stderr"; readonly data: string }> = []
      const result = await runtime.runPromise(
        Bash.run(
          { command, timeout: CASE_TIMEOUT_SECONDS },
          {
            onChunk: (chunk) => {
              streams[chunk.stream].push(chunk.data)
              arrival.push({ stream: chunk.stream, data: chunk.data })
            }
          }
        )
      )
      const raw: RawOutput = {
        stdout: streams.stdout.join(""),
        stderr: streams.stderr.join(""),
        exitCode: result.exitCode ?? 1,
        command,
        arrival
      }
      return { raw, result }
    }

    /** The same bytes on the same streams with the same exit code, through another profile's Bash. */
    const replay = async (runtime: Runtime, raw: RawOutput, name: string) => {
      const base = path.join(replays, name)
      fs.writeFileSync(`${base}.stdout`, raw.stdout)
      fs.writeFileSync(`${base}.stderr`, raw.stderr)
      const command = `cat ${JSON.stringify(`${base}.stdout`)}; cat ${JSON.stringify(`${base}.stderr`)} >&2; exit ${raw.exitCode}`
      return (await bash(runtime, command)).result
    }

    /** The raw output a peer's shell gets: with the outputs of the lines it runs itself, run here and now. */
    const forPeer = async (peer: (typeof peers)[number], of: RawOutput): Promise<RawOutput> => {
      const own = of.command === undefined ? [] : (peer.shell.hostRuns?.(of.command) ?? [])
      if (own.length === 0) return of
      const hostRuns: Array<RawOutput> = []
      for (const line of own) hostRuns.push((await bash(specRuntime, line)).raw)
      return { ...of, hostRuns }
    }

    const rows: Array<CaseRow> = []
    for (const corpusCase of selected) rows.push(await runCase(corpusCase))

    async function runCase(corpusCase: CorpusCase): Promise<CaseRow> {
      const caseStart = performance.now()
      if (corpusCase.followUp.pattern.source === corpusCase.needle.pattern.source)
        fail(`${corpusCase.id}: the follow-up is the needle's own pattern`)
      const { command, file } = await corpusCase.setup({
        workspace,
        repoRoot,
        serve: server.serve,
        docker: docker.docker
      })
      const followUp = corpusCase.followUp.pattern
      // the re-run: the command (or, for a file, grep of it) filtered by the follow-up's term;
      // produced once, through toolcap's Bash under spec, and given to every policy
      const rerunCommand =
        corpusCase.kind === "bash"
          ? `{ ${command ?? fail(`${corpusCase.id} has no command`)}\n} 2>&1 | grep -E -e ${shellWord(followUp.source)}`
          : `grep -E -e ${shellWord(followUp.source)} ${shellWord(file ?? fail(`${corpusCase.id} has no file`))}`
      let rerunSpec: Promise<{ readonly raw: RawOutput; readonly result: Bash.BashResult }> | undefined
      const rerunReal = () => (rerunSpec ??= bash(specRuntime, rerunCommand))
      const rerunOf = async (profile: number): Promise<Shown> => {
        const { raw: again, result } = await rerunReal()
        const output =
          profile === 0
            ? result.output
            : (await replay(runtimes[profile]!.runtime, again, `${corpusCase.id}-rerun-${profile}`)).output
        return { text: output, shown: output }
      }

      let raw: RawOutput
      const firsts: Array<(needle: Needle) => { readonly run: PolicyRun; readonly where: string }> = []
      if (corpusCase.kind === "bash") {
        const real = await bash(specRuntime, command!)
        raw = real.raw
        const results = [real.result]
        // every other profile gets exactly those bytes, on the same streams, with the same exit code
        for (const { runtime } of runtimes.slice(1)) results.push(await replay(runtime, raw, corpusCase.id))
        results.forEach((result, p) =>
          firsts.push((needle) => {
            const named = (["stdout", "stderr"] as const).flatMap((stream) => {
              const spill = result.spill[stream]
              return spill !== undefined && result.output.includes(spill) ? [spill] : []
            })
            const kept = result.truncation[needle.stream]
            const excerpt =
              kept === undefined
                ? "nothing"
                : kept.kept === "both"
                  ? `the first ${bytesText(kept.head?.bytes ?? 0)} and the last ${bytesText(kept.tail?.bytes ?? 0)}`
                  : `the ${kept.kept === "tail" ? "last" : "first"} ${bytesText(kept.keptBytes)}`
            return {
              run: {
                first: { text: result.output, shown: result.output, truncated: result.truncated },
                ...(named.length === 0
                  ? {}
                  : {
                      searchSaved: (pattern: RegExp) =>
                        Promise.all(named.map((spill) => grepFor(runtimes[p]!.runtime, spill, pattern))),
                      readSaved: {
                        places: named,
                        read: (spill: string, window: ReadWindow) =>
                          readFor(runtimes[p]!.runtime, spill, window)
                      }
                    }),
                rerun: () => rerunOf(p)
              },
              where: `the needle starts at byte ${thousands(needle.byteOffset)} of ${needle.stream} (${bytesText(byteLength(raw[needle.stream]))}); the excerpt keeps ${excerpt}; ${named.length === 0 ? "no spill file is named, so the follow-up is the re-run" : `the follow-up searches ${named.length === 1 ? "the spill file" : "both spill files"} (${needle.stream}'s holds ${spillHolds(kept?.spillCopy)})`}`
            }
          })
        )
      } else {
        const name = file!
        raw = { stdout: fs.readFileSync(path.join(workspace, name), "utf8"), stderr: "" }
        for (const [p, { runtime }] of runtimes.entries()) {
          const result = await runtime.runPromise(Read.read({ path: name }))
          const text = modelText({ tool: "Read", result })
          firsts.push((needle) => ({
            run: {
              // the needle is judged in the window's text, as the model reads it once decoded
              first: { text, shown: result.content, truncated: result.truncated },
              ...(result.truncated && result.notice !== undefined
                ? { searchSaved: async (pattern: RegExp) => [await grepFor(runtime, name, pattern)] }
                : {}),
              rerun: () => rerunOf(p)
            },
            where: `the needle is on line ${thousands(needle.line)}; the window shows ${lineRange(result.offset, result.lineCount)}`
          }))
        }
      }
      const needle = locate(corpusCase.needle, raw)
      const toolcapRuns = firsts.map((first) => first(needle))
      const cells: Array<Scored> = []
      const mode = corpusCase.followUp.mode ?? "search"
      for (const { run } of toolcapRuns) cells.push(await score(run, needle, followUp, count, mode))
      const peerRerun = async (peer: (typeof peers)[number]) => ({
        raw: await forPeer(peer, (await rerunReal()).raw),
        savedPath: `/tmp/${slug(peer.name)}/tool-output/${corpusCase.id}-rerun.txt`
      })
      for (const peer of peers) {
        const view =
          corpusCase.kind === "bash"
            ? peer.shell.apply(
                await forPeer(peer, raw),
                `/tmp/${slug(peer.name)}/tool-output/${corpusCase.id}.txt`
              )
            : peer.read.apply({ kind: "file", path: `${PEER_WORKSPACE}/${file}`, content: raw.stdout })
        cells.push(
          await score(
            peerRun(peer, view, () => peerRerun(peer)),
            needle,
            followUp,
            count,
            mode
          )
        )
      }
      const row: CaseRow = {
        id: corpusCase.id,
        title: corpusCase.title,
        kind: corpusCase.kind,
        ...(corpusCase.group === undefined ? {} : { group: corpusCase.group }),
        source:
          corpusCase.kind === "bash" ? `Bash: ${corpusCase.title}` : `Read \`${file}\`: ${corpusCase.title}`,
        why: corpusCase.why,
        followUp: `\`${corpusCase.followUp.pattern.source.replace(/\|/g, "\\|")}\`, from ${corpusCase.followUp.from}`,
        ...(corpusCase.targetBytes === undefined ? {} : { targetBytes: corpusCase.targetBytes }),
        rawBytes: byteLength(raw.stdout) + byteLength(raw.stderr),
        rawLines: lineCount(raw.stdout) + lineCount(raw.stderr),
        needle: corpusCase.needle.describe,
        needleAt: `${needle.stream === "stderr" ? "stderr" : corpusCase.kind === "read" ? "file" : "stdout"} line ${thousands(needle.line)} of ${thousands(needle.totalLines)}`,
        misses: toolcapRuns.flatMap(({ where }, p) =>
          cells[p]!.outcome === "lost"
            ? [
                {
                  policy: runtimes[p]!.profile.name,
                  why:
                    mode === "read" && toolcapRuns[p]!.run.readSaved !== undefined
                      ? `${where}; the Read of the saved copy at the window its marker names does not show it.`
                      : `${where}; the follow-up \`${followUp.source}\` does not show it.`
                }
              ]
            : []
        ),
        cells
      }
      const marks = row.cells
        .map((cell) => {
          const tokens = cell.tokens + cell.followUpTokens
          return `${cell.outcome}:${tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k` : tokens}`
        })
        .join(" ")
      console.log(
        `${corpusCase.id.padEnd(22)} raw ${(row.rawBytes / 1024).toFixed(0).padStart(6)} KB  needle ${row.needleAt.padEnd(32)} ${marks}  (${((performance.now() - caseStart) / 1000).toFixed(1)}s)`
      )
      for (const miss of row.misses) console.log(`  ${miss.policy} lost it: ${miss.why}`)
      return row
    }

    const modelTextRows = await measureModelText(specRuntime, workspace, rows, count)

    const policies: ReadonlyArray<PolicyInfo> = [
      ...runtimes.map(({ profile }) => ({
        name: profile.name,
        version: "this commit",
        toolcap: true,
        describe: [Toolcap.describe(profile)],
        sources: [
          {
            numbers: `\`Budgets.profiles.${profile.preset}\``,
            from: "`packages/limits/src/Budgets.ts` (its README has the table of numbers and why)"
          }
        ]
      })),
      ...peers.map((peer) => ({
        name: peer.name,
        version: peer.version,
        toolcap: false,
        describe: [
          `Shell: ${peer.shell.describe}`,
          `Read: ${peer.read.describe}`,
          `Search: ${peer.search.describe}`
        ],
        sources: peer.sources
      }))
    ]
    const rungs = Array.from(
      { length: SIZE_RUNGS },
      (_, k) => `${thousands(Math.round(ladderBytes(k) / 1024))} KB`
    )
    const results = {
      policies,
      rows,
      modelText: modelTextRows,
      toolcapModelText:
        modelText === ModelText.json
          ? "the result object serialised to JSON"
          : "plain text, as `ModelOutput` of `@toolcap/adapters` renders them on every host surface (no line numbers, the default)",
      tokenizer: Tokens.TOKENIZER,
      sizeRule: `The cases added with the second corpus that have a size knob are sized by one rule, fixed before any policy ran: the k-th of them in corpus order aims at 2 KB × 5000^(k/${SIZE_RUNGS - 1}) (${rungs.join(", ")}), reached by a count of units (files, tests, commits, packages) computed from the bytes one unit prints; the table shows the size aimed at beside the size measured. The other cases have the size their tool gives them.`,
      machine: `${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores, Linux ${os.release()}, Node ${process.version}; load average ${loadBefore} before the run and ${loadAverage()} after; the run took ${((performance.now() - startedAt) / 1000).toFixed(0)} s; ${new Date().toISOString().slice(0, 10)}`
    }

    for (const t of totals(results))
      console.log(
        `${t.policy.padEnd(16)} seen ${t.seen} saved ${t.saved} rerun ${t.rerun} lost ${t.lost}  score ${t.score}  ${t.tokens.toString().padStart(9)} tokens (${t.spent.toString().padStart(9)} with follow-ups, ${t.perNeedle ?? "-"} per needle)  ESC/CR ${t.control}`
      )
    for (const row of modelTextRows)
      console.log(
        `${row.call.padEnd(60)} json ${row.json}  plain ${row.plain}${row.numbered === undefined ? "" : `  numbered ${row.numbered}`}`
      )

    if (selected.length < cases.length) {
      console.log(`ran ${selected.length} of ${cases.length} cases (${ONLY_VARIABLE}); nothing written`)
      return
    }
    await writeFormatted(
      BENCHMARKS_FILE,
      replaceRegion(
        fs.existsSync(BENCHMARKS_FILE)
          ? fs.readFileSync(BENCHMARKS_FILE, "utf8")
          : "# Benchmarks\n\nFigures measured on one machine by the repository's benchmark commands. Each section is generated; rerun its command to refresh it.\n",
        REGION,
        section(results, CHART_FILE)
      )
    )
    fs.writeFileSync(path.join(repoRoot, CHART_FILE), chart(results))
    await writeFormatted(
      README_FILE,
      replaceRegion(
        fs.readFileSync(README_FILE, "utf8"),
        `${REGION} summary`,
        [
          `Context health, from [BENCHMARKS.md](BENCHMARKS.md) (${rows.length} real tool outputs, toolcap's real tools under two budget profiles against other hosts' tools modelled from their sources; seen in the first result, reached with one follow-up from a saved copy or a filtered re-run, or lost; tokens: ${Tokens.TOKENIZER}):`,
          "",
          summaryTable(results)
        ].join("\n")
      )
    )
    console.log(
      `wrote BENCHMARKS.md, ${CHART_FILE} and the README summary in ${((performance.now() - startedAt) / 1000).toFixed(1)}s (load average ${loadAverage()})`
    )
  } finally {
    await server.close()
    await docker.close()
    for (const { runtime } of runtimes) {
      await runtime
        .runPromise(Effect.flatMap(Scratch.Scratch, (scratch) => scratch.removeSession))
        .catch(() => {})
      await runtime.dispose()
    }
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

/** Sources of this monorepo copied into the workspace for the model-text sample. */
const SAMPLE_PACKAGES = ["limits", "spill", "tools"]

/**
 * The same real Read, Grep and Glob results rendered as JSON, as plain text, and (Read) as plain
 * text with `cat -n` numbers: the Reads of the file cases, Reads of this monorepo's sources, and
 * a Grep in each output mode and a Glob over them.
 */
const measureModelText = async (
  runtime: Runtime,
  workspace: string,
  rows: ReadonlyArray<CaseRow>,
  estimate: Tokens.Count
): Promise<ReadonlyArray<ModelTextRow>> => {
  const plain = ModelText.plain({ lineNumbers: false })
  const numbered = ModelText.plain({ lineNumbers: true })
  const count = (
    calls: ReadonlyArray<ModelText.ToolResult>,
    call: string,
    withNumbers: boolean
  ): ModelTextRow => {
    const sum = (render: ModelText.ModelText) => calls.reduce((total, c) => total + estimate(render(c)), 0)
    return {
      call,
      json: sum(ModelText.json),
      plain: sum(plain),
      ...(withNumbers ? { numbered: sum(numbered) } : {})
    }
  }
  const sampleRoot = path.join(workspace, "sources")
  const sourceFiles: Array<string> = []
  for (const pkg of SAMPLE_PACKAGES) {
    const from = path.join(repoRoot, "packages", pkg, "src")
    for (const entry of Arr.sort(fs.readdirSync(from, { recursive: true, encoding: "utf8" }), Order.string)) {
      if (!entry.endsWith(".ts")) continue
      const target = path.join(sampleRoot, pkg, entry)
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.copyFileSync(path.join(from, entry), target)
      sourceFiles.push(path.relative(workspace, target))
    }
  }
  const read = (file: string) =>
    runtime
      .runPromise(Read.read({ path: file }))
      .then((result): ModelText.ToolResult => ({ tool: "Read", result }))
  const grep = (input: Record<string, unknown>) =>
    runtime
      .runPromise(Grep.grep({ path: "sources", ...input }))
      .then((result): ModelText.ToolResult => ({ tool: "Grep", result }))
  const out: Array<ModelTextRow> = []
  for (const row of rows.filter((r) => r.kind === "read")) {
    const file = /^Read `([^`]+)`/.exec(row.source)?.[1]
    if (file !== undefined) out.push(count([await read(file)], `Read \`${file}\` (\`${row.id}\`)`, true))
  }
  const sources = await Promise.all(sourceFiles.map(read))
  out.push(
    count(
      sources,
      `Read of each of ${sourceFiles.length} source files (\`packages/{${SAMPLE_PACKAGES.join(",")}}/src\`)`,
      true
    )
  )
  out.push(
    count(
      [await grep({ pattern: "Effect\\.gen", outputMode: "content" })],
      "Grep `Effect\\.gen`, content",
      false
    )
  )
  out.push(
    count(
      [await grep({ pattern: "Schema", outputMode: "filesWithMatches" })],
      "Grep `Schema`, files with matches",
      false
    )
  )
  out.push(count([await grep({ pattern: "yield\\*", outputMode: "count" })], "Grep `yield\\*`, count", false))
  const globbed = await runtime.runPromise(Glob.glob({ pattern: "**/*.ts", path: "sources" }))
  out.push(count([{ tool: "Glob", result: globbed }], "Glob `**/*.ts`", false))
  return out
}

const fail = (message: string): never => {
  throw new Error(message)
}

const writeFormatted = async (file: string, text: string): Promise<void> => {
  const options = (await prettier.resolveConfig(file)) ?? {}
  fs.writeFileSync(file, await prettier.format(text, { ...options, filepath: file }))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
