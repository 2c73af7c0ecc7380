// Every tool's input, fuzzed through the Promise API (1,000 runs per tool; 5,000 with
// TOOLCAP_LONG_TESTS=1, counts printed and written where TOOLCAP_RELIABILITY_OUT points): each input gets a typed
// error (a known wire code, a message of at most 2KB) or a bounded result, never a rejection; no
// result holds a byte of the outside file beside the workspace (links to it, to `/` and to the
// parent are planted); the host (in a process of its own) peaks at most 256MB above its start. Each call is also
// watched by a hang detector (a call that never settles fails the run); the slowest is printed.
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as fs from "node:fs"
import * as path from "node:path"
import { type ChildProcess, fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import { ToolError } from "@toolcap/limits"
import { makeDirs } from "./fixtures/dirs.js"
import { isLong, reportReliability } from "@toolcap/bench-report"

const fc = FastCheck
// 300 inputs per tool in the default suite, 5000 in the long mode (pnpm bench runs it)
const RUNS = isLong() ? 5000 : 300
const SECRET = "FUZZ-OUTSIDE-SECRET-5e0c"
/** Generous: only a call that hangs meets it (per-input work is bounded far below). */
const HANG_MS = 2000 * 10
const MEMORY_GROWTH_MAX = 256 * 1024 * 1024
/** Largest wire outcome of any tool: Bash's two 96KB streams, JSON-escaped, plus fields. */
const OUTCOME_MAX_BYTES = 1024 * 1024

const dirs = makeDirs("toolcap-fuzz-")
const outside = path.join(dirs.root, "outside")
/** The host runs in a process of its own, so its memory is measured apart from the fuzzer's. */
const hostScript = fileURLToPath(new URL("./fixtures/fuzzHost.ts", import.meta.url))
let host: ChildProcess
let baselineRss = 0
let peakRss = 0
let seq = 0
const pending = new Map<number, (answer: HostAnswer) => void>()

interface HostAnswer {
  readonly seq: number
  readonly outcome?: {
    readonly ok: boolean
    readonly error?: { readonly code: string; readonly message: string }
  }
  readonly rejected?: string
  readonly peakRss: number
}

const call = (tool: string, input: unknown) =>
  new Promise<HostAnswer>((resolve) => {
    const id = seq++
    pending.set(id, resolve)
    host.send({ seq: id, tool, input })
  })
const slowest: Record<string, number> = {}
/** Per tool: inputs tried and what went wrong (each also fails the run where it happens). */
const tally: Record<
  string,
  Record<"inputs" | "escapes" | "crashes" | "hangs" | "unbounded results" | "untyped errors", number>
> = {}

beforeAll(async () => {
  dirs.write("README.md", "# readme\nneedle here\n")
  dirs.write("src/a.ts", "export const needle = 1\n")
  dirs.write("src/deep/b.txt", "x\n".repeat(5000))
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.txt"), `${SECRET} needle\n`)
  fs.symlinkSync("/", path.join(dirs.workspace, "rootlink"))
  fs.symlinkSync("..", path.join(dirs.workspace, "up"))
  fs.symlinkSync(outside, path.join(dirs.workspace, "outlink"))
  host = fork(
    hostScript,
    [JSON.stringify({ workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId: "fuzz" })],
    {
      // The heap is capped so V8 collects garbage before it grows the heap: the growth bound then
      // measures what the host keeps, not how lazily a loaded machine collects (a full suite at load
      // 15 once saw 258 MB, where the same run alone grows ~150 MB). A host that really kept memory
      // would run out of heap and its calls would never settle, which fails the run.
      execArgv: ["--conditions=@toolcap/source", "--import", "tsx", "--max-old-space-size=160"],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"]
    }
  )
  baselineRss = await new Promise<number>((resolve, reject) => {
    host.once("error", reject)
    host.once("message", (ready: { readonly rss: number }) => resolve(ready.rss))
  })
  peakRss = baselineRss
  host.on("message", (answer: HostAnswer) => {
    pending.get(answer.seq)?.(answer)
    pending.delete(answer.seq)
  })
})

afterAll(async () => {
  await new Promise<void>((resolve) => {
    if (host.exitCode !== null) return resolve()
    host.once("exit", () => resolve())
    host.disconnect()
  })
  dirs.remove()
  const grown = ((peakRss - baselineRss) / 1024 / 1024).toFixed(1)
  console.log(`fuzz: slowest call per tool (ms) ${JSON.stringify(slowest)}; peak RSS growth ${grown} MB`)
  for (const [tool, counts] of Object.entries(tally))
    reportReliability(
      `hostile fuzz Promise API ${tool}`,
      counts,
      `fast-check inputs for ${tool} through PromiseHost.call (host in its own process); slowest call ${slowest[tool] ?? 0} ms; host peak RSS growth ${grown} MB`
    )
})

const codes = new Set<string>(ToolError.ToolErrorCode.literals)

/** One call through the Promise API, judged. */
const judge = async (tool: string, input: unknown) => {
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<"hang">((resolve) => (timer = setTimeout(() => resolve("hang"), HANG_MS)))
  const sent = input instanceof Deep ? { path: nested(input.depth) } : input
  const answer = await Promise.race([call(tool, sent), hang]).finally(() => clearTimeout(timer))
  const took = performance.now() - started
  slowest[tool] = Math.max(slowest[tool] ?? 0, Math.round(took))
  const t = (tally[tool] ??= {
    inputs: 0,
    escapes: 0,
    crashes: 0,
    hangs: 0,
    "unbounded results": 0,
    "untyped errors": 0
  })
  t.inputs++
  if (answer === "hang") t.hangs++
  else {
    const text = JSON.stringify(answer.outcome ?? null)
    if (answer.rejected !== undefined) t.crashes++
    if (text.includes(SECRET)) t.escapes++
    if (Buffer.byteLength(text) > OUTCOME_MAX_BYTES) t["unbounded results"]++
    if (answer.outcome?.ok === false && !codes.has(answer.outcome.error?.code ?? "missing"))
      t["untyped errors"]++
  }
  assert.notStrictEqual(answer, "hang", `${tool} never settled`)
  if (answer === "hang") return
  peakRss = Math.max(peakRss, answer.peakRss)
  assert.isUndefined(answer.rejected, "the call never rejects")
  const outcome = answer.outcome!
  const text = JSON.stringify(outcome)
  assert.isAtMost(Buffer.byteLength(text), OUTCOME_MAX_BYTES, "bounded outcome")
  assert.notInclude(text, SECRET, "no outside bytes")
  if (!outcome.ok) {
    const error = outcome.error ?? { code: "missing", message: "" }
    assert.isTrue(codes.has(error.code), `known code, got ${error.code}`)
    assert.isAtMost(Buffer.byteLength(error.message), 2048, "short message")
  }
  assert.isAtMost(peakRss - baselineRss, MEMORY_GROWTH_MAX, "host memory")
}

/** An input nesting arrays `depth` deep, built when sent (so a counterexample prints short). */
class Deep {
  constructor(readonly depth: number) {}
}

/** Nested arrays `depth` deep, built without recursion. */
const nested = (depth: number): unknown => {
  let value: unknown = "x"
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const hostilePath = fc.oneof(
  fc.constantFrom(
    "README.md",
    "src",
    ".",
    "..",
    "../outside/secret.txt",
    "/etc/passwd",
    "/proc/self/environ",
    "/proc/self/cwd",
    "/dev/zero",
    "/dev/stdin",
    "rootlink/etc/passwd",
    "rootlink/etc",
    "up/outside/secret.txt",
    "outlink/secret.txt",
    "outlink",
    "README.md\0.png",
    "",
    "src/deep/b.txt"
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 40, unit: "binary" }),
  fc.integer({ min: 1, max: 300_000 }).map((n) => "a/".repeat(n)),
  fc
    .tuple(fc.constantFrom("src/", "rootlink/", "up/", "outlink/", "/"), fc.string({ maxLength: 20 }))
    .map(([a, b]) => a + b)
)

const hostilePattern = fc.oneof(
  fc.constantFrom(
    "**/*",
    "**/*.ts",
    "{..,.}/**",
    "rootlink/etc/*shadow*",
    "rootlink/root/.*",
    "up/**",
    "outlink/*",
    "[",
    "{a,b}".repeat(20),
    "{1..100000}",
    "*".repeat(5000),
    "/etc/*",
    "../**"
  ),
  fc.stringMatching(/^[{}a-c,.*/\\[\]!?]{0,40}$/),
  fc.string({ maxLength: 60 })
)

const regex = fc.oneof(
  fc.constantFrom("needle", "(", "a{1000000}", "(a+)+$", ".", "\\", SECRET, "x".repeat(5000)),
  fc.string({ maxLength: 30 })
)

const someNumber = fc.oneof(
  fc.integer({ min: -5, max: 5000 }),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, 1e308, -0, 1.5),
  fc.string({ maxLength: 10 }),
  fc.integer({ min: 1, max: 2_000_000 }).map((n) => "9".repeat(n)),
  fc.constant(null)
)

/** Inputs of any shape: wrong types, extra fields, deep nesting. */
const junk = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  // up to what a structured clone carries to the host process (deeper overflows the sender)
  fc.integer({ min: 60, max: 2000 }).map((depth) => new Deep(depth)),
  fc.record({ path: hostilePath, extra: fc.anything({ maxDepth: 1 }) })
)

const optionalKeys = { requiredKeys: [] as [] }

const inputs = {
  Read: fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ path: hostilePath, offset: someNumber, limit: someNumber }, optionalKeys)
    },
    { weight: 1, arbitrary: junk }
  ),
  Glob: fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        { pattern: hostilePattern, path: hostilePath, limit: someNumber },
        { requiredKeys: ["pattern"] }
      )
    },
    { weight: 1, arbitrary: junk }
  ),
  Grep: fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        {
          pattern: regex,
          path: hostilePath,
          glob: hostilePattern,
          type: fc.constantFrom("ts", "py", "nope", "a b", ""),
          outputMode: fc.constantFrom("content", "filesWithMatches", "count", "files_with_matches", "bogus"),
          caseInsensitive: fc.boolean(),
          contextBefore: someNumber,
          contextAfter: someNumber,
          multiline: fc.boolean(),
          headLimit: someNumber
        },
        { requiredKeys: ["pattern"] }
      )
    },
    { weight: 1, arbitrary: junk }
  ),
  // never a random command: only echo / printf of random text, quoted, and one large output; most
  // inputs are refused before a spawn, which keeps 1,000 runs within seconds
  Bash: fc.oneof(
    {
      weight: 1,
      arbitrary: fc.record(
        {
          command: fc.oneof(
            fc.string({ maxLength: 200 }).map((text) => `printf '%s' '${text.replaceAll("'", "'\\''")}'`),
            fc.constant("head -c 300000 /dev/zero | tr '\\0' a"),
            fc.constant("echo $((1+1)) >&2")
          ),
          timeout: fc.oneof(fc.constant(undefined), someNumber)
        },
        { requiredKeys: ["command"] }
      )
    },
    {
      weight: 9,
      arbitrary: fc.oneof(
        junk,
        fc.record({ command: fc.oneof(fc.integer(), fc.constant(""), fc.constant("\0"), fc.constant(null)) }),
        fc.record({ command: fc.constant("true"), timeout: someNumber })
      )
    }
  )
}

describe("fuzzed tool inputs through the Promise API", () => {
  for (const tool of ["Read", "Glob", "Grep", "Bash"] as const) {
    it.live.prop(
      `${tool}: a typed error or a bounded result, short messages, bounded memory`,
      [inputs[tool]],
      ([input]) => Effect.promise(() => judge(tool, input)),
      { timeout: isLong() ? 1_500_000 : 300_000, fastCheck: { numRuns: RUNS } }
    )
  }
})
