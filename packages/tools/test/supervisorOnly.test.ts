/**
 * The Supervisor is the only code that starts a process, and supervision keeps no state in
 * modules: checked on the sources themselves, so a change that spawns elsewhere, or parks a
 * process, a timer or an id in a module-level variable, fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const repo = fileURLToPath(new URL("../../..", import.meta.url))
const supervisorDir = path.join("packages", "tools", "src", "internal", "supervisor")

const sourcesUnder = (dir: string): Array<string> =>
  fs.existsSync(path.join(repo, dir))
    ? fs
        .readdirSync(path.join(repo, dir), { recursive: true, encoding: "utf8" })
        .filter((file) => /\.tsx?$/.test(file))
        .map((file) => path.join(dir, file))
    : []

const inSupervisor = (line: string) => line.startsWith(supervisorDir + path.sep)

/** Every library and app source: `packages/<name>/src/**` and `apps/<name>/src/**`. */
const allSources = (): Array<string> =>
  ["packages", "apps"].flatMap((group) =>
    fs.readdirSync(path.join(repo, group)).flatMap((name) => sourcesUnder(path.join(group, name, "src")))
  )

/** The calls that start a process (and, as the issue's check reads them, any method of those names). */
const STARTS_A_PROCESS =
  /\b(?:spawn|execFile|fork)\(|\b(?:spawnSync|execSync|execFileSync)\(|from "(?:node:)?child_process"/

/** The lines of `files` matching `pattern`, as `file:line: text`. */
const matching = (files: ReadonlyArray<string>, pattern: RegExp): Array<string> =>
  files.flatMap((file) =>
    fs
      .readFileSync(path.join(repo, file), "utf8")
      .split("\n")
      .flatMap((text, index) => (pattern.test(text) ? [`${file}:${index + 1}: ${text.trim()}`] : []))
  )

const COLLECTIONS = new Set(["Map", "Set", "WeakMap", "WeakSet", "Array"])

/**
 * `file:name` of every `let` or `var` declared at a module's top level, and with `collections`,
 * of every module-level collection not typed read-only (a `new Map()` is state, a `ReadonlyMap` a table).
 */
const moduleLevelMutables = (file: string, collections = false): Array<string> => {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  return source.statements.flatMap((statement) => {
    if (!ts.isVariableStatement(statement)) return []
    const list = statement.declarationList
    const constant = (list.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) === ts.NodeFlags.Const
    return list.declarations
      .filter((declaration) => {
        if (!constant) return true
        if (!collections || declaration.initializer === undefined) return false
        const created =
          (ts.isNewExpression(declaration.initializer) &&
            COLLECTIONS.has(declaration.initializer.expression.getText(source))) ||
          ts.isArrayLiteralExpression(declaration.initializer)
        return created && !(declaration.type?.getText(source) ?? "").startsWith("Readonly")
      })
      .map((declaration) => declaration.name.getText(source))
  })
}

describe("the Supervisor is the only code that starts a process", () => {
  it("no spawn(, execFile(, fork( or child_process import in packages/*/src or apps/*/src outside internal/supervisor", () => {
    const sources = allSources()
    assert.isAbove(sources.length, 100, "the scan found the sources")
    const found = matching(sources, STARTS_A_PROCESS)
    // the check sees the supervisor's own spawn call, so it would see one anywhere else
    assert.isTrue(found.some(inSupervisor), "the supervisor's spawn call is found")
    assert.deepStrictEqual(
      found.filter((line) => !inSupervisor(line)),
      [],
      "start processes through Supervisor.start (packages/tools/src/Supervisor.ts)"
    )
  })

  it("no module-level let or var in packages/tools/src", () => {
    const root = path.join(repo, "packages", "tools", "src")
    const found = sourcesUnder(path.join("packages", "tools", "src")).flatMap((file) =>
      moduleLevelMutables(path.join(repo, file)).map(
        (name) => `${path.relative(root, path.join(repo, file)).split(path.sep).join("/")}:${name}`
      )
    )
    // the parser does see module-level lets, and only those
    const sample = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "toolcap-lets-")), "sample.ts")
    try {
      fs.writeFileSync(
        sample,
        "let cached: boolean | undefined\nexport const f = () => { let local = 1; return local }\n"
      )
      assert.deepStrictEqual(moduleLevelMutables(sample), ["cached"])
    } finally {
      fs.rmSync(path.dirname(sample), { recursive: true, force: true })
    }
    assert.deepStrictEqual(found, [], "keep per-host state in the Supervisor layer's scope, not in a module")
  })

  it("no module-level state in the supervisor: no let, var or mutable collection", () => {
    const files = [
      ...sourcesUnder(supervisorDir),
      path.join("packages", "tools", "src", "Supervisor.ts"),
      path.join("packages", "tools", "src", "Bash.ts")
    ].map((file) => path.join(repo, file))
    assert.isAbove(files.length, 10)
    assert.deepStrictEqual(
      files.flatMap((file) =>
        moduleLevelMutables(file, true).map((name) => `${path.basename(file)}:${name}`)
      ),
      []
    )
  })
})
