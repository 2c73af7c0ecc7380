/**
 * No module of any package or app does I/O or allocates at import, and module-level mutable state
 * is only what docs/rules.md lists ("Module-level state"), each with why.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
// @ts-expect-error: a plain script of the repository, without types
import * as ModuleState from "../../../scripts/moduleState.mjs"

type Offender = { readonly name: string; readonly line: number; readonly kind: string; readonly what: string }
const { allowed, modules, offenders } = ModuleState as {
  readonly offenders: (file: string, text: string) => ReadonlyArray<Offender>
  readonly modules: (root: string) => ReadonlyArray<string>
  readonly allowed: (rules: string) => ReadonlySet<string>
}

const root = path.join(import.meta.dirname, "..", "..", "..")

describe("module-level state", () => {
  it("no module does I/O, allocates or keeps mutable state at import beyond the listed ones", () => {
    const listed = allowed(fs.readFileSync(path.join(root, "docs", "rules.md"), "utf8"))
    const files = modules(root)
    assert.isAbove(files.length, 100)
    const unlisted = files.flatMap((file) =>
      offenders(file, fs.readFileSync(path.join(root, file), "utf8"))
        .filter((found) => !listed.has(`${file}:${found.name}`))
        .map((found) => `${file}:${found.line} ${found.name} (${found.kind}: ${found.what})`)
    )
    assert.deepStrictEqual(unlisted, [])
  })

  it("a planted offender (a top-level let, a slab, a file read, a cache) is found", () => {
    const planted = [
      'import * as fs from "node:fs"',
      "let counter = 0",
      "const slab = Buffer.allocUnsafe(4 * 1024 * 1024)",
      'const launcher = fs.existsSync("/usr/bin/x") ? "x" : "y"',
      "const cache = new Map<string, string>()",
      'fs.mkdirSync("/tmp/x")',
      // work inside functions runs when called, not at import
      "export const later = () => { let n = 0; fs.readFileSync('/etc/hostname'); return Buffer.alloc(++n) }",
      "const table = new Uint8Array([1, 2])"
    ].join("\n")
    const found = offenders("planted.ts", planted).map((offender) => `${offender.name}:${offender.kind}`)
    assert.deepStrictEqual(found, [
      "counter:mutable",
      "slab:import-work",
      "launcher:import-work",
      "cache:mutable",
      "(top level):import-work"
    ])
  })
})
