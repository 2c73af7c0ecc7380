// What a module does when it is imported: module-level mutable bindings (`let`, `var`) and
// top-level work that reads files, starts processes or allocates buffers. Static, by the
// TypeScript parser: a function body is not run at import, so only what is outside every function
// (and every class member) counts. Used by the module-state test against the list in
// docs/rules.md ("Module-level state").
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

// calls that do I/O or allocate when evaluated: `fs.x(...)`, `child_process`, `Buffer.alloc*`
const IO_OBJECTS = new Set(["fs", "child_process", "ChildProcess", "fsp", "os"])
const ALLOCATING =
  /^(Buffer\.(alloc|allocUnsafe|allocUnsafeSlow)|spawnSync|execSync|execFileSync|readFileSync|existsSync|statSync)$/
const TYPED_ARRAYS = new Set([
  "ArrayBuffer",
  "SharedArrayBuffer",
  "Uint8Array",
  "Int32Array",
  "Uint32Array",
  "Float64Array",
  "BigInt64Array"
])

const CONTAINERS = new Set(["Map", "Set", "WeakMap", "WeakSet"])

/** The offenders of one module's text: `{ name, line, kind }`, `kind` "mutable" or "import-work". */
export const offenders = (file, text) => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found = []
  const lineOf = (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  // work evaluated now: not inside a function, arrow or class member
  const visitEager = (node, owner) => {
    if (ts.isFunctionLike(node) || ts.isClassElement(node)) return
    if (ts.isCallExpression(node)) {
      const callee = node.expression.getText(source)
      const object = ts.isPropertyAccessExpression(node.expression)
        ? node.expression.expression.getText(source)
        : ""
      if (IO_OBJECTS.has(object) || ALLOCATING.test(callee))
        found.push({ name: owner, line: lineOf(node), kind: "import-work", what: callee })
    }
    // a Map, Set or WeakMap made at import is mutable state, whatever binds it
    if (ts.isNewExpression(node) && CONTAINERS.has(node.expression.getText(source)))
      found.push({
        name: owner,
        line: lineOf(node),
        kind: "mutable",
        what: `new ${node.expression.getText(source)}`
      })
    if (ts.isNewExpression(node) && TYPED_ARRAYS.has(node.expression.getText(source))) {
      const size = node.arguments?.[0]
      // a literal small view (e.g. `new Uint8Array([1, 2])`) is data, not an allocation to watch
      if (size !== undefined && !ts.isArrayLiteralExpression(size))
        found.push({
          name: owner,
          line: lineOf(node),
          kind: "import-work",
          what: `new ${node.expression.getText(source)}`
        })
    }
    ts.forEachChild(node, (child) => visitEager(child, owner))
  }
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      const mutable =
        (statement.declarationList.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const)) !== ts.NodeFlags.Const
      for (const declaration of statement.declarationList.declarations) {
        const name = declaration.name.getText(source)
        if (mutable) found.push({ name, line: lineOf(declaration), kind: "mutable", what: "let" })
        if (declaration.initializer !== undefined) visitEager(declaration.initializer, name)
      }
    } else if (
      ts.isExpressionStatement(statement) ||
      ts.isIfStatement(statement) ||
      ts.isForStatement(statement) ||
      ts.isForOfStatement(statement)
    ) {
      visitEager(statement, "(top level)")
    } else if (ts.isExportAssignment(statement)) {
      visitEager(statement.expression, "default")
    }
  }
  return found
}

/** Every source module of every package and app (`packages/*\/src`, `apps/*\/src`), relative to `root`. */
export const modules = (root) => {
  const out = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (/\.(ts|mts|tsx)$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
        out.push(path.relative(root, full))
    }
  }
  for (const group of ["packages", "apps"])
    for (const name of fs.readdirSync(path.join(root, group))) {
      const src = path.join(root, group, name, "src")
      if (fs.existsSync(src)) walk(src)
    }
  return out.toSorted()
}

/** The allowed module-level state listed in docs/rules.md: lines "- `file`: `name` — why". */
export const allowed = (rulesText) => {
  const start = rulesText.indexOf("## Module-level state")
  if (start < 0) return new Set()
  const section = rulesText.slice(start).split(/\n## /)[0]
  const out = new Set()
  for (const match of section.matchAll(/^- `([^`]+)`: `([^`]+)`/gm)) out.add(`${match[1]}:${match[2]}`)
  return out
}
