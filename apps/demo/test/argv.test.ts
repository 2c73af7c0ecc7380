/**
 * The command-line scan of the executable's fast paths, and the `mcp` fast path's decision: a
 * plain command line runs without the framework, anything the framework would word goes to it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Options from "@effect/cli/Options"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Budgets } from "@toolcap/limits"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Argv from "../src/internal/argv.js"
import { optionsOf } from "../src/internal/cliOptions.js"
import * as McpCommand from "../src/internal/mcp.js"
import * as Declared from "../src/internal/options.js"

const fc = FastCheck
const declarations = {
  a: Argv.repeated(Argv.text("a", "A value option.")),
  b: Argv.repeated(Argv.text("b", "Another value option.")),
  f: Argv.flag("f", "A flag.")
}

/** A word that is not an option. */
const word = fc.string({ minLength: 0, maxLength: 8 }).filter((s) => !s.startsWith("--"))

type Item =
  | { readonly kind: "positional"; readonly word: string }
  | { readonly kind: "value"; readonly name: "--a" | "--b"; readonly value: string; readonly joined: boolean }
  | { readonly kind: "flag" }

const item: FastCheck.Arbitrary<Item> = fc.oneof(
  word.map((w) => ({ kind: "positional" as const, word: w })),
  fc.record({
    kind: fc.constant("value" as const),
    name: fc.constantFrom("--a" as const, "--b" as const),
    // a value may look like anything, an option included, when it follows its name
    value: fc.string({ maxLength: 8 }),
    joined: fc.boolean()
  }),
  fc.constant({ kind: "flag" as const })
)

const render = (items: ReadonlyArray<Item>): Array<string> =>
  items.flatMap((i) =>
    i.kind === "positional"
      ? [i.word]
      : i.kind === "flag"
        ? ["--f"]
        : i.joined
          ? [`${i.name}=${i.value}`]
          : [i.name, i.value]
  )

describe("Argv.scan", () => {
  it.prop(
    "finds every positional, every value of each option in order, and the flags, wherever they stand",
    { items: fc.array(item, { maxLength: 12 }) },
    ({ items }) => {
      const scanned = Argv.scan(render(items), declarations)
      assert.strictEqual(scanned.kind, "Scanned")
      if (scanned.kind !== "Scanned") return
      assert.deepStrictEqual(
        scanned.positional,
        items.flatMap((i) => (i.kind === "positional" ? [i.word] : []))
      )
      for (const name of ["--a", "--b"] as const) {
        const values = items.flatMap((i) => (i.kind === "value" && i.name === name ? [i.value] : []))
        assert.deepStrictEqual(scanned.values.get(name) ?? [], values)
      }
      assert.strictEqual(
        scanned.flags.has("--f"),
        items.some((i) => i.kind === "flag")
      )
    }
  )

  it("names an option the command does not take, and an option left without its value", () => {
    assert.deepStrictEqual(Argv.scan(["x", "--c", "1"], declarations), { kind: "Unknown", name: "--c" })
    assert.deepStrictEqual(Argv.scan(["--f=1"], declarations), { kind: "Unknown", name: "--f" })
    assert.deepStrictEqual(Argv.scan(["x", "--a"], declarations), { kind: "MissingValue", name: "--a" })
  })
})

describe("Argv.parse", () => {
  const command = {
    name: Argv.text("name", "Required."),
    count: Argv.withDefault(Argv.integer("count", "A number."), 3),
    mode: Argv.optional(Argv.choice("mode", ["fast", "slow"], "A choice.")),
    verbose: Argv.flag("verbose", "A flag.")
  }

  it("reads each option as declared: required, defaulted, optional, flag; the last of a repeated single", () => {
    assert.deepStrictEqual(
      Argv.parse(["--name", "a", "--name=b", "--count", "7", "--verbose", "x"], command),
      {
        kind: "Parsed",
        positional: ["x"],
        values: { name: "b", count: 7, mode: Option.none(), verbose: true },
        repeated: ["--name"],
        directories: []
      }
    )
    const parsed = Argv.parse(["--name", "a", "--mode", "slow"], command)
    assert.strictEqual(parsed.kind, "Parsed")
    if (parsed.kind === "Parsed")
      assert.deepStrictEqual(parsed.values, {
        name: "a",
        count: 3,
        mode: Option.some("slow"),
        verbose: false
      })
  })

  it("names a missing required option and a value its kind refuses", () => {
    assert.deepStrictEqual(Argv.parse([], command), { kind: "Missing", name: "--name" })
    assert.deepStrictEqual(Argv.parse(["--name", "a", "--count", "-1"], command), {
      kind: "Invalid",
      name: "--count",
      value: "-1",
      expected: "a whole number of 0 or more"
    })
    assert.deepStrictEqual(Argv.parse(["--name", "a", "--mode", "medium"], command), {
      kind: "Invalid",
      name: "--mode",
      value: "medium",
      expected: "one of fast, slow"
    })
  })
})

describe("the fast scan and the framework read the same declarations alike", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-argv-same-"))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  const framework = Options.all(optionsOf(Declared.mcp))

  /** One plain `mcp` option as its words: every value one the framework takes. */
  const mcpOption: FastCheck.Arbitrary<ReadonlyArray<string>> = fc.oneof(
    fc.constantFrom("--workspace", "--data-dir", "--approve").map((name) => [name, dir]),
    fc
      .string({ minLength: 1, maxLength: 6 })
      .filter((s) => !s.startsWith("-"))
      .map((s) => ["--session", s]),
    fc.nat({ max: 1_000_000 }).map((n) => [`--stale-after=${n}`]),
    fc.constantFrom(...Budgets.profileNames).map((p) => ["--profile", p]),
    fc.constant(["--ui"])
  )

  it.effect.prop(
    "a plain `mcp` command line: the same values from both",
    { options: fc.uniqueArray(mcpOption, { maxLength: 7, selector: (words) => words[0]!.split("=")[0]! }) },
    ({ options }) =>
      Effect.gen(function* () {
        const argv = options.flat()
        const fast = Argv.parse(argv, Declared.mcp)
        assert.strictEqual(fast.kind, "Parsed", argv.join(" "))
        if (fast.kind !== "Parsed") return
        const [, leftover, slow] = yield* Options.processCommandLine(framework, argv, CliConfig.defaultConfig)
        assert.deepStrictEqual(leftover, [])
        assert.deepStrictEqual(slow, fast.values, argv.join(" "))
      }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("the framework refuses what the fast scan refuses", () => {
  it.effect("a negative whole number: both name the option", () =>
    Effect.gen(function* () {
      const argv = ["--stale-after", "-1"]
      assert.deepStrictEqual(Argv.parse(argv, Declared.sweep), {
        kind: "Invalid",
        name: "--stale-after",
        value: "-1",
        expected: "a whole number of 0 or more"
      })
      const refused = yield* Options.processCommandLine(
        Options.all(optionsOf(Declared.sweep)),
        argv,
        CliConfig.defaultConfig
      ).pipe(Effect.flip)
      assert.include(JSON.stringify(refused), "--stale-after must be a whole number of 0 or more, got -1")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("toolcap mcp without the framework", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-argv-"))
  const file = path.join(dir, "file.txt")
  fs.writeFileSync(file, "x")
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("takes a plain command line, with the framework's defaults", () => {
    const args = McpCommand.parseArgv([
      "--workspace",
      dir,
      `--data-dir=${path.join(dir, "data")}`,
      "--approve",
      dir,
      "--approve",
      os.tmpdir(),
      "--stale-after",
      "60",
      "--ui",
      "--profile",
      "compact",
      "--max-concurrent-calls",
      "4"
    ])
    assert.deepStrictEqual(args, {
      workspace: Option.some(dir),
      dataDir: Option.some(path.join(dir, "data")),
      session: Option.none(),
      approve: [dir, os.tmpdir()],
      staleAfter: 60,
      ui: true,
      profile: Option.some("compact" as const),
      maxConcurrentCalls: Option.some(4),
      envInherit: Option.none(),
      envExclude: [],
      envIncludeOnly: [],
      envInclude: [],
      envSet: [],
      envKeepSecrets: false
    })
    assert.deepStrictEqual(McpCommand.parseArgv([]), {
      workspace: Option.none(),
      dataDir: Option.none(),
      session: Option.none(),
      approve: [],
      staleAfter: Declared.defaultStaleAfterSeconds,
      ui: false,
      profile: Option.none(),
      maxConcurrentCalls: Option.none(),
      envInherit: Option.none(),
      envExclude: [],
      envIncludeOnly: [],
      envInclude: [],
      envSet: [],
      envKeepSecrets: false
    })
  })

  it("leaves to the framework what it words: help, unknown, repeated or malformed options, a file for a directory", () => {
    for (const argv of [
      ["--help"],
      ["-h"],
      ["serve"],
      ["--session", "a", "--session", "b"],
      ["--stale-after", "-1"],
      ["--stale-after", "soon"],
      ["--workspace", file],
      ["--data-dir", file],
      ["--approve", file],
      ["--ui=yes"],
      ["--profile", "tiny"]
    ]) {
      assert.isUndefined(McpCommand.parseArgv(argv), argv.join(" "))
    }
  })
})
