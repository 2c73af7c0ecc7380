/**
 * A workspace laid out as an attacker would: links out of it (to `/`, to its parent, to a folder
 * holding a secret, dangling), loops, a FIFO and a socket, beside an outside folder whose files
 * carry a marker no result may ever contain. `escapes` judges a tool's answer: outside bytes (the
 * marker) anywhere, or a listed name whose real path lies outside every root.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { type SearchEnv, searchEnv, writeTree } from "./readFixtures.js"

/** The text of every outside file; found in a result, it is an escape. */
export const SECRET = "OUTSIDE-SECRET-3f9a1c"

export const hostileEnv: Effect.Effect<SearchEnv, never, Scope.Scope> = Effect.gen(function* () {
  const env = yield* searchEnv()
  writeTree(env.workspace, { "inside.txt": "INSIDE line\n", "src/a.ts": "export const a = 1\n" })
  writeTree(env.outside, { "secret.txt": `${SECRET}\n`, "deep/secret2.txt": `${SECRET}\n` })
  const link = (target: string, name: string) => fs.symlinkSync(target, path.join(env.workspace, name))
  link("/", "rootlink")
  link("..", "up")
  link(env.outside, "outlink")
  link(path.join(env.outside, "secret.txt"), "filelink")
  link(path.join(env.outside, "missing.txt"), "dangling")
  link("loop", "loop")
  link("loop-b", "loop-a")
  link("loop-a", "loop-b")
  link("inside.txt", "inlink")
  spawnSync("mkfifo", [path.join(env.workspace, "fifo")])
  const server = net.createServer()
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => {
      server.listen(path.join(env.workspace, "sock"), () => resume(Effect.void))
    }),
    () => Effect.sync(() => server.close())
  )
  return env
})

/** Real path of a name a tool listed, relative to the workspace or absolute. */
const realOf = (workspace: string, name: string): string | undefined => {
  try {
    return fs.realpathSync(path.resolve(workspace, name))
  } catch {
    return undefined
  }
}

const inside = (roots: ReadonlyArray<string>, real: string) =>
  roots.some((root) => real === root || real.startsWith(root + path.sep))

/** Names a result lists: Glob matches, Grep matches / files / counts, Read's path. */
const namesOf = (result: unknown): Array<string> => {
  if (typeof result !== "object" || result === null) return []
  const record = result as Record<string, unknown>
  const names: Array<string> = []
  for (const field of ["matches", "files", "counts"]) {
    const list = record[field]
    if (!Array.isArray(list)) continue
    for (const item of list as Array<unknown>) {
      if (typeof item === "string") names.push(item)
      else if (
        typeof item === "object" &&
        item !== null &&
        typeof (item as { path?: unknown }).path === "string"
      )
        names.push((item as { path: string }).path)
    }
  }
  if (typeof record["path"] === "string") names.push(record["path"])
  return names
}

/**
 * The escapes in one answer: the marker anywhere in it, or a listed name (Read's path, Glob's
 * matches, Grep's files) whose real path is outside `roots` (a name that is gone by now counts as
 * inside only when it was listed under a path without links).
 */
export const escapes = (workspace: string, roots: ReadonlyArray<string>, answer: unknown): Array<string> => {
  const found: Array<string> = []
  const text = JSON.stringify(answer) ?? ""
  if (text.includes(SECRET)) found.push(`outside bytes in ${text.slice(0, 300)}`)
  for (const name of namesOf(answer)) {
    const real = realOf(workspace, name)
    if (real !== undefined && !inside(roots, real)) found.push(`outside name ${name} -> ${real}`)
  }
  return found
}
