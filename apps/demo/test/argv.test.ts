/**
 * The command-line scan of the executable's fast paths, and the `mcp` fast path's decision: a
 * plain command line runs without the framework, anything the framework would word goes to it.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Argv from "../src/internal/argv.js"
import * as McpCommand from "../src/internal/mcp.js"

const fc = FastCheck
const spec: Argv.Spec = { values: new Set(["--a", "--b"]), flags: new Set(["--f"]) }

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
      const scanned = Argv.scan(render(items), spec)
      assert.strictEqual(scanned.kind, "Scanned")
      if (scanned.kind !== "Scanned") return
      assert.deepStrictEqual(
        scanned.positional,
        items.flatMap((i) => (i.kind === "positional" ? [i.word] : []))
      )
      for (const name of ["--a", "--b"] as const) {
        const values = items.flatMap((i) => (i.kind === "value" && i.name === name ? [i.value] : []))
        assert.deepStrictEqual(scanned.values.get(name) ?? [], values)
        assert.strictEqual(Argv.last(scanned, name), values.at(-1))
      }
      assert.strictEqual(
        scanned.flags.has("--f"),
        items.some((i) => i.kind === "flag")
      )
    }
  )

  it("names an option the command does not take, and an option left without its value", () => {
    assert.deepStrictEqual(Argv.scan(["x", "--c", "1"], spec), { kind: "Unknown", name: "--c" })
    assert.deepStrictEqual(Argv.scan(["--f=1"], spec), { kind: "Unknown", name: "--f" })
    assert.deepStrictEqual(Argv.scan(["x", "--a"], spec), { kind: "MissingValue", name: "--a" })
  })
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
      "compact"
    ])
    assert.deepStrictEqual(args, {
      workspace: Option.some(dir),
      dataDir: Option.some(path.join(dir, "data")),
      session: Option.none(),
      approve: [dir, os.tmpdir()],
      staleAfter: 60,
      ui: true,
      profile: Option.some("compact" as const)
    })
    assert.deepStrictEqual(McpCommand.parseArgv([]), {
      workspace: Option.none(),
      dataDir: Option.none(),
      session: Option.none(),
      approve: [],
      staleAfter: McpCommand.defaultStaleAfterSeconds,
      ui: false,
      profile: Option.none()
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
