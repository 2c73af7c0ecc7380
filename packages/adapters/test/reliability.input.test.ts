// Hostile input, round three, as reliability suites (counted by `pnpm bench` in long mode,
// TOOLCAP_LONG_TESTS=1), on real files and processes through the Promise API:
// - env: a secret-looking variable (random name holding KEY, SECRET, TOKEN, PASSWORD or
//   CREDENTIAL in any case, random value) in the host's environment never shows in a call's
//   `env` by default (an escape), and does with an explicit include (a miss otherwise);
// - names: files named with random control characters (`<noise>\n/etc/shadow`) forge no line in
//   Grep's (three modes) and Glob's model text: every line is a quoted or plain name of a real
//   file, `--`, or the bracketed notice;
// - commands: commands of random sizes around the kernel's 128 KiB argument limit and up to
//   1 MB run and see themselves whole.
import { afterAll, assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { PathQuote } from "@toolcap/limits"
import { PromiseHost } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"

const LONG = isLong()
const ENV_CALLS = LONG ? 200 : 12
const NAME_FILES = LONG ? 400 : 24
const COMMANDS = LONG ? 60 : 6

const dirs = makeDirs("toolcap-rel-input-")
afterAll(() => dirs.remove())

const host = (sessionId: string, environment?: PromiseHost.ToolHostOptions["environment"]) =>
  PromiseHost.createToolHost({ workspace: dirs.workspace, dataDir: dirs.dataDir, sessionId, environment })

const secretName = fc
  .tuple(
    fc.stringMatching(/^[A-Z][A-Z0-9_]{0,6}$/),
    fc.constantFrom("KEY", "key", "Secret", "TOKEN", "tOkEn", "PASSWORD", "credential", "API_KEY"),
    fc.stringMatching(/^[A-Z0-9_]{0,6}$/)
  )
  .map(([head, word, tail]) => `${head}_${word}${tail}`)

describe("reliability: hostile input, round three", () => {
  it(`env: ${ENV_CALLS} secret-looking host variables, none in a call's environment unless included`, async () => {
    const samples = fc.sample(fc.tuple(secretName, fc.stringMatching(/^[a-z0-9]{12}$/)), {
      numRuns: ENV_CALLS,
      seed: 33
    })
    const plain = await host("rel-env")
    let escapes = 0
    let misses = 0
    const evidence: Array<string> = []
    try {
      for (const [index, [name, value]] of samples.entries()) {
        process.env[name] = value
        try {
          const included = index % 4 === 0
          const target = included ? await host(`rel-env-${index}`, { include: [name] }) : plain
          try {
            const outcome = await target.call("Bash", { command: "env" })
            assert.isTrue(outcome.ok)
            const seen = outcome.ok && outcome.result.stdout.includes(`=${value}`)
            if (!included && seen) {
              escapes++
              evidence.push(`${name} reached the call`)
            }
            if (included && !seen) {
              misses++
              evidence.push(`${name} was included but missing`)
            }
          } finally {
            if (target !== plain) await target.close()
          }
        } finally {
          delete process.env[name]
        }
      }
    } finally {
      await plain.close()
    }
    reportReliability(
      "input env",
      { inputs: samples.length, escapes, misses },
      `Bash env of calls with a secret-looking host variable (every 4th with include) ${evidence.slice(0, 3).join("; ")}`
    )
    assert.strictEqual(escapes + misses, 0, evidence.join("\n"))
  }, 600_000)

  it(`names: ${NAME_FILES} files with control characters forge no line in Grep's and Glob's text`, async () => {
    const noise = fc
      .array(
        fc.oneof(
          fc.constantFrom(
            "\n",
            "\r",
            "\r\n",
            "\u001b[2K",
            "\u0085",
            "\u2028",
            "\t",
            "\u007f",
            "\u009b",
            '"',
            "\\"
          ),
          fc.integer({ min: 1, max: 31 }).map((code) => String.fromCharCode(code)),
          fc.stringMatching(/^[a-z]{1,4}$/)
        ),
        { minLength: 1, maxLength: 5 }
      )
      .map((parts) => `n${parts.join("")}`.replace(/[/\0]/g, "_"))
    const names = [...new Set(fc.sample(noise, { numRuns: NAME_FILES, seed: 33 }))]
    const root = path.join(dirs.workspace, "names")
    const files = names.map((name) => path.join("names", name, "etc", "shadow"))
    for (const file of files) {
      fs.mkdirSync(path.join(dirs.workspace, path.dirname(file)), { recursive: true })
      fs.writeFileSync(path.join(dirs.workspace, file), "NEEDLE\n")
    }
    const shown = new Set(files.map(PathQuote.quote))
    const target = await host("rel-names")
    let inputs = 0
    let escapes = 0
    const evidence: Array<string> = []
    try {
      const calls: ReadonlyArray<readonly [string, Record<string, unknown>, (line: string) => string]> = [
        [
          "Grep",
          { pattern: "NEEDLE", path: "names", outputMode: "content", headLimit: 1000 },
          (line) => line.slice(0, line.lastIndexOf(":1:"))
        ],
        [
          "Grep",
          { pattern: "NEEDLE", path: "names", outputMode: "filesWithMatches", headLimit: 1000 },
          (line) => line
        ],
        [
          "Grep",
          { pattern: "NEEDLE", path: "names", outputMode: "count", headLimit: 1000 },
          (line) => line.slice(0, line.lastIndexOf(":"))
        ],
        ["Glob", { pattern: "**/shadow", path: "names", limit: 1000 }, (line) => line]
      ]
      for (const [tool, input, nameOf] of calls) {
        const outcome = await target.call(tool, input)
        assert.isTrue(outcome.ok, JSON.stringify(outcome).slice(0, 300))
        for (const line of target.modelText(tool, outcome).split("\n")) {
          if (line.startsWith("[") || line === "--") continue
          inputs++
          if (!shown.has(nameOf(line))) {
            escapes++
            if (evidence.length < 3)
              evidence.push(
                `${tool} ${JSON.stringify(input)}: ${JSON.stringify(line)} -> ${JSON.stringify(nameOf(line))}`
              )
          }
        }
      }
    } finally {
      await target.close()
      fs.rmSync(root, { recursive: true, force: true })
    }
    reportReliability(
      "input names",
      { inputs, escapes },
      `model-text lines of Grep (content, files, count) and Glob over ${names.length} control-character names ${evidence.join("; ")}`
    )
    assert.strictEqual(escapes, 0, evidence.join("\n"))
    assert.isAtLeast(inputs, names.length * 4)
  }, 600_000)

  it(`commands: ${COMMANDS} commands around the 128 KiB argument limit and up to 1 MB run whole`, async () => {
    const limit = 128 * 1024 - 1
    const sizes = fc.sample(
      fc.oneof(fc.integer({ min: limit - 64, max: limit + 64 }), fc.integer({ min: 1024, max: 1024 * 1024 })),
      { numRuns: COMMANDS, seed: 33 }
    )
    const target = await host("rel-commands")
    let failures = 0
    const evidence: Array<string> = []
    try {
      for (const size of [1024 * 1024, ...sizes]) {
        // prints its own last word: the pad's length, so a cut command shows
        const head = `printf '%s' "\${#p}"; exit 0\n`
        const assign = "p="
        const pad = "a".repeat(Math.max(1, size - head.length - assign.length - 1))
        const command = `${assign}${pad}\n${head}`
        const outcome = await target.call("Bash", { command })
        const ok = outcome.ok && outcome.result.exitCode === 0 && outcome.result.stdout === String(pad.length)
        if (!ok) {
          failures++
          if (evidence.length < 3)
            evidence.push(`${command.length} bytes: ${JSON.stringify(outcome).slice(0, 200)}`)
        }
      }
    } finally {
      await target.close()
    }
    reportReliability(
      "input commands",
      { inputs: sizes.length + 1, failures },
      `Bash commands of 1 KiB to 1 MiB, ${sizes.filter((s) => s > limit).length + 1} over the argument limit ${evidence.join("; ")}`
    )
    assert.strictEqual(failures, 0, evidence.join("\n"))
  }, 600_000)
})
