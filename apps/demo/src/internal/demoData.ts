/**
 * The demo's generated workspace: a multi-megabyte log, a file with one very long line, two
 * binary files, many small modules with staggered modification times, and an ignored
 * node_modules tree; plus a transcript shaped like the checkpoint's worked example (rules C2).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Progress } from "./terminal.js"

/** @internal */
export const bigLog = "logs/requests.log"
/** @internal */
export const bigLogLines = 120_000
/** Line `n` (1-based) of the big log; every line differs, so a page boundary is checkable. @internal */
export const bigLogLine = (n: number): string =>
  `2024-05-01T12:${String(Math.floor(n / 3600) % 60).padStart(2, "0")}:${String(Math.floor(n / 60) % 60).padStart(2, "0")} INFO request id=${String(n).padStart(6, "0")} path=/api/items/${n % 977} status=200\n`

/** @internal */
export const longLineFile = "data/minified.js"
/** @internal */
export const longLineChars = 10_000

/** @internal */
export const pngFile = "assets/logo.png"
/** @internal */
export const blobFile = "data/cache.dat"

/** @internal */
export const moduleCount = 300
/** @internal */
export const modulePath = (index: number): string => `src/module-${String(index).padStart(3, "0")}.ts`

/** @internal */
export const ignoredDir = "node_modules/left-pad"

const write = (root: string, file: string, content: string | Uint8Array) => {
  const target = path.join(root, file)
  fs.mkdirSync(path.dirname(target), { recursive: true })
  fs.writeFileSync(target, content)
}

/** Writes the demo workspace. @internal */
export const generate = (root: string, progress: Progress): void => {
  progress.status = `writing ${bigLog}`
  const parts: Array<string> = []
  for (let n = 1; n <= bigLogLines; n++) parts.push(bigLogLine(n))
  write(root, bigLog, parts.join(""))

  write(root, longLineFile, `const table = ${JSON.stringify("x".repeat(longLineChars - 20))};\n`)

  // A PNG signature (blocked by extension anyway) and an extension-less-looking blob with NULs.
  write(
    root,
    pngFile,
    Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48])
  )
  const blob = new Uint8Array(4096)
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 7919) % 256
  write(root, blobFile, blob)

  progress.status = `writing ${moduleCount} modules`
  // Fresh checkouts share one mtime; here each module is a second newer than the previous one.
  const base = Math.floor(fs.statSync(root).mtimeMs / 1000) - moduleCount - 10
  for (let i = 0; i < moduleCount; i++) {
    const file = modulePath(i)
    write(root, file, `// TODO: item ${i}\nexport const value${i} = ${i}\n`)
    fs.utimesSync(path.join(root, file), base + i, base + i)
  }

  write(root, ".gitignore", "node_modules/\n")
  write(
    root,
    `${ignoredDir}/index.js`,
    "module.exports = function leftPad(s, n) { return String(s).padStart(n) }\n"
  )
}

/** Text of about `tokens` tokens under `estimate`. */
const textOf = (label: string, tokens: number, estimate: (text: string) => number): string => {
  const sentence = `${label}: please keep the parser strict and the errors readable. `
  const per = estimate(sentence.repeat(100)) / 100
  return sentence.repeat(Math.max(1, Math.round(tokens / per)))
}

/**
 * The checkpoint's worked example (rules C2) as a transcript: user messages of about 5,000,
 * 12,000 and 6,000 tokens (oldest first) with tool calls and large tool results between them.
 *
 * @internal
 */
export const transcript = (estimate: (text: string) => number) => ({
  messages: [
    { role: "user" as const, id: "u1", text: textOf("U1", 5_000, estimate) },
    {
      role: "assistant" as const,
      id: "a1",
      text: "Reading the log.",
      toolCalls: [{ id: "call-1", name: "Read", arguments: JSON.stringify({ path: bigLog }) }]
    },
    { role: "tool" as const, id: "t1", callId: "call-1", text: bigLogLine(1).repeat(600) },
    { role: "user" as const, id: "u2", text: textOf("U2", 12_000, estimate) },
    { role: "assistant" as const, id: "a2", text: "Done.", toolCalls: [] },
    { role: "user" as const, id: "u3", text: textOf("U3", 6_000, estimate) }
  ]
})
