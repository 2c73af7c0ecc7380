// The rule table's check, one of `pnpm test`'s checks (`node scripts/rules.mjs`): every file and
// every test that docs/rules.md names exists, every `rules B3` pointer names a row of it, no source
// or document sends its reader to a text outside the repository, and every package README stays
// short and opens with its concept -> file map. Prints each problem and exits 1 when there is one.
import fs from "node:fs"
import path from "node:path"

const root = path.resolve(import.meta.dirname, "..")
const rulesFile = "docs/rules.md"
const readmeMaxLines = 250
const scanned = ["packages", "apps", "bench", "scripts", "docs", "README.md"]
const scannedExtensions = new Set([
  ".ts",
  ".mts",
  ".cts",
  ".mjs",
  ".cjs",
  ".js",
  ".c",
  ".h",
  ".md",
  ".json",
  ".sh"
])
const skippedDirectories = new Set(["node_modules", "dist", ".turbo", "coverage", ".reports"])
// written with escapes so that this file does not match them itself
const outsideCitations = /\b(?:spec|DECISIONS) ?\u00a7|\u00a7 ?\d|\bDECISIONS\.md\b/gi
const ruleId = /^[A-Z]\d+$/
const pointer = /\b[Rr]ules ([A-Z]\d+(?:(?:, | and |–)[A-Z]\d+)*)\b/g

const problems = []
const problem = (where, what) => problems.push(`${where}: ${what}`)
const read = (file) => fs.readFileSync(path.join(root, file), "utf8")
const exists = (file) => fs.existsSync(path.join(root, file))
const lineOf = (text, index) => text.slice(0, index).split("\n").length

/** The cells of a markdown table row; `\|` is a literal bar inside a cell. */
const cells = (row) =>
  row
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replaceAll("\\|", "|"))

/** What a JavaScript string literal's body reads as at run time (the escapes test titles use). */
const unescape = (body) =>
  body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/gs, (_, escape) => {
    if (escape.startsWith("u{")) return String.fromCodePoint(parseInt(escape.slice(2, -1), 16))
    if (escape.length > 1) return String.fromCharCode(parseInt(escape.slice(1), 16))
    return { n: "\n", t: "\t", r: "\r", 0: "\0" }[escape] ?? escape
  })

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The titles of a test file's `describe`/`it`/`test` calls (any modifier chain, `it.skipIf(c)(...)`,
 * `describe.each(t)(...)` and `layer(L)(...)` included), each as a matcher: a literal title must be
 * named exactly; a title built at run time (`${kind}`, vitest's `$name` or `%s`) matches any text
 * in place of what it interpolates.
 */
const titlesOf = (source) => {
  const call =
    /(?:\b(?:describe|it|test)(?:\.\w+)*|\))\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)\s*,/g
  const titles = []
  for (const match of source.matchAll(call)) {
    const literal = match[1]
    const body = literal.slice(1, -1)
    const parts = (literal.startsWith("`") ? body.split(/\$\{[^}]*\}/) : [body])
      .flatMap((part) => unescape(part).split(/\$\w+|%[sdifjo#%]/))
      .map(escapeRegExp)
    titles.push(new RegExp(`^${parts.join(".+")}$`, "s"))
  }
  return titles
}

// 1. the rule table: ids, the files that enforce each rule, the tests that prove it
const rules = new Map()
if (!exists(rulesFile)) problem(rulesFile, "missing")
else {
  const text = read(rulesFile)
  const titleCache = new Map()
  text.split("\n").forEach((line, index) => {
    if (!line.startsWith("|")) return
    const [id, rule, enforced, proved, ...rest] = cells(line)
    if (!ruleId.test(id ?? "")) return
    const where = `${rulesFile}:${index + 1} (${id})`
    if (rules.has(id)) problem(where, `the id ${id} is taken by line ${rules.get(id)}`)
    rules.set(id, index + 1)
    if (rest.length > 0 || proved === undefined)
      return problem(where, "a row has four cells: id, rule, files, tests")
    if (rule.length === 0) problem(where, "the rule is empty")
    const files = [...enforced.matchAll(/`([^`]+)`/g)].map((m) => m[1])
    if (files.length === 0) problem(where, "names no file that enforces the rule")
    for (const file of files) if (!exists(file)) problem(where, `no file ${file}`)
    let testFile
    let tests = 0
    for (const [, file, escaped] of proved.matchAll(/`([^`]+)`|"((?:[^"\\]|\\.)*)"/g)) {
      if (file !== undefined) {
        testFile = file
        if (!exists(file)) problem(where, `no test file ${file}`)
        else if (!titleCache.has(file)) titleCache.set(file, titlesOf(read(file)))
        continue
      }
      // a title is written as markdown shows it: a backslash before punctuation (`\*`) escapes it
      const title = escaped.replace(/\\([!-/:-@[-`{-~])/g, "$1")
      tests += 1
      if (testFile === undefined) problem(where, `the test "${title}" follows no test file`)
      else if (titleCache.has(testFile) && !titleCache.get(testFile).some((t) => t.test(title)))
        problem(where, `${testFile} has no describe/it titled "${title}"`)
    }
    if (tests === 0) problem(where, "names no test that proves the rule")
  })
  if (rules.size === 0) problem(rulesFile, "holds no rule rows")
}

// 2. the sources and documents: pointers into the table, and no citation of a text outside it
const walk = (entry) => {
  const full = path.join(root, entry)
  if (!fs.existsSync(full)) return []
  if (!fs.statSync(full).isDirectory()) return scannedExtensions.has(path.extname(entry)) ? [entry] : []
  return fs
    .readdirSync(full)
    .filter((name) => !skippedDirectories.has(name))
    .flatMap((name) => walk(path.join(entry, name)))
}
const files = scanned.flatMap(walk)
for (const file of files) {
  const text = read(file)
  for (const found of text.matchAll(outsideCitations))
    problem(
      `${file}:${lineOf(text, found.index)}`,
      `"${found[0]}" cites a text outside the repository: point to ${rulesFile}`
    )
  if (file === rulesFile) continue
  for (const match of text.matchAll(pointer))
    for (const id of match[1].split(/, | and |–/))
      if (!rules.has(id))
        problem(`${file}:${lineOf(text, match.index)}`, `"rules ${id}" names no row of ${rulesFile}`)
}

// 3. the READMEs: short, each opening with its concept -> file map; the root one links the table
const readmes = ["packages", "apps", "bench"].flatMap((dir) =>
  fs
    .readdirSync(path.join(root, dir))
    .map((name) => path.join(dir, name, "README.md"))
    .filter(exists)
)
for (const readme of readmes) {
  const lines = read(readme).split("\n")
  const count = lines.at(-1) === "" ? lines.length - 1 : lines.length
  if (count > readmeMaxLines)
    problem(readme, `${count} lines, over ${readmeMaxLines}: move rationale into docs/`)
  const firstTable = lines.find((line) => line.startsWith("|"))
  if (firstTable === undefined || !/^concept$/i.test(cells(firstTable)[0] ?? ""))
    problem(readme, "opens with no concept -> file map (its first table's first column is `concept`)")
}
if (!read("README.md").includes(rulesFile)) problem("README.md", `does not link ${rulesFile}`)

for (const line of problems) console.error(line)
console.log(
  problems.length === 0
    ? `rules: ${rules.size} rules, ${files.length} files and ${readmes.length} READMEs checked`
    : `rules: ${problems.length} problem(s)`
)
process.exit(problems.length === 0 ? 0 : 1)
