// Writes the published declarations with TypeScript's own declaration emit: one .d.ts per entry
// (index, ai, mcp) and per module of plain types they export (src/Results.ts, ...). First it
// type-checks src/internal/conformance.ts, which proves those types equal to what the code
// produces; then it checks that nothing emitted reaches outside the package.
import fs from "node:fs"
import path from "node:path"
import ts from "typescript"

/** The package's entries, as in `exports`. */
export const entries = ["index", "ai", "mcp"]

/** Module specifiers a published declaration may name: its siblings, Node's types, and the peer `ai` (toolcap/ai only). */
const allowedSpecifier = (file, specifier) =>
  /^\.\/[A-Za-z]+\.js$/.test(specifier) ||
  specifier.startsWith("node:") ||
  (specifier === "ai" && path.basename(file) === "ai.d.ts")

const failOn = (diagnostics, what) => {
  if (diagnostics.length === 0) return
  const host = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => "\n"
  }
  throw new Error(`${what}:\n${ts.formatDiagnosticsWithColorAndContext(diagnostics, host)}`)
}

const configOf = (root) => {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
      }
    }
  )
  return parsed.options
}

/** Every module specifier of a declaration file (imports, exports, `import("...")` types). */
const specifiersOf = (file) => {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
  const found = []
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      found.push(node.moduleSpecifier.text)
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      found.push(node.argument.literal.text)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

export const writeDeclarations = (root) => {
  const options = configOf(root)
  const check = ts.createProgram({
    rootNames: [path.join(root, "src", "internal", "conformance.ts")],
    options: { ...options, noEmit: true }
  })
  failOn(
    ts.getPreEmitDiagnostics(check),
    "the published types do not match the code (src/internal/conformance.ts)"
  )

  const out = path.join(root, "dist")
  const emit = ts.createProgram({
    rootNames: entries.map((entry) => path.join(root, "src", `${entry}.ts`)),
    options: {
      ...options,
      // workspace packages as a consumer sees them (their built declarations), never their sources
      customConditions: [],
      noEmit: false,
      declaration: true,
      emitDeclarationOnly: true,
      declarationMap: false,
      sourceMap: false,
      rootDir: path.join(root, "src"),
      outDir: out
    }
  })
  failOn(ts.getPreEmitDiagnostics(emit), "the published entries do not type-check")
  const emitted = []
  const result = emit.emit(undefined, (file, text) => {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
    emitted.push(file)
  })
  failOn(result.diagnostics, "declaration emit failed")

  const escapes = emitted.flatMap((file) =>
    specifiersOf(file)
      .filter((specifier) => !allowedSpecifier(file, specifier))
      .map((specifier) => `${path.relative(root, file)}: ${specifier}`)
  )
  const absolute = emitted.filter((file) => fs.readFileSync(file, "utf8").includes(path.resolve(root, "..")))
  if (escapes.length > 0 || absolute.length > 0) {
    throw new Error(
      `the published declarations reach outside the package:\n${[...escapes, ...absolute].join("\n")}`
    )
  }
  return emitted
}
