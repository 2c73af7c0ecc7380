/**
 * Loading an optional peer, on real packages in a temp dir's node_modules: a package that is not
 * installed becomes `OptionalPeerMissing` naming what to install; one that is installed but does
 * not load natively (a `.node` file built for nothing) names what to rebuild; a package whose own
 * dependency is missing keeps its error (the peer is there, the fault is elsewhere). The `import()`
 * path is the same function over Node's ESM errors, run for real in `toolcap`'s install test.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { OptionalPeer } from "@toolcap/adapters"
import { makeDirs } from "./fixtures/dirs.js"

const dirs = makeDirs("toolcap-optional-peer-")
afterAll(() => dirs.remove())

const packageDir = (name: string, files: Record<string, string>) => {
  const dir = path.join(dirs.root, "node_modules", name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name, version: "1.0.0", main: "index.js" })
  )
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text)
}
packageDir("peer-with-missing-dependency", {
  "index.js": 'module.exports = require("toolcap-absent-dependency")\n'
})
packageDir("peer-built-for-nothing", {
  "index.js": 'module.exports = require("./binding.node")\n',
  "binding.node": "not a shared object\n"
})

/** `require` as from a file of the temp dir, so its node_modules is searched. */
const requireHere = createRequire(path.join(dirs.root, "host.js"))

/** What loading the package `name` as the peer of "the test feature" throws. */
const loadFailure = (name: string): unknown => {
  try {
    OptionalPeer.loadSync(name, "the test feature", () => requireHere(name))
  } catch (error) {
    return error
  }
  throw new Error(`${name} loaded`)
}

describe("OptionalPeer", () => {
  it("a package that is not installed: OptionalPeerMissing, one line naming what to install", () => {
    const error = loadFailure("toolcap-absent-peer")
    assert.isTrue(OptionalPeer.isOptionalPeerMissing(error))
    const message = (error as Error).message
    assert.strictEqual(
      message,
      "toolcap: the test feature needs the optional package toolcap-absent-peer, which is not installed. Install it beside toolcap: npm install toolcap-absent-peer"
    )
    assert.notInclude(message, "\n")
  })

  it("installed but not loading (a native module built for nothing): names what to rebuild", () => {
    const error = loadFailure("peer-built-for-nothing")
    assert.isTrue(OptionalPeer.isOptionalPeerMissing(error))
    assert.include((error as Error).message, "is installed but could not be loaded")
    assert.include((error as Error).message, "npm rebuild peer-built-for-nothing")
  })

  it("installed with a dependency of its own missing: the original error, not a wrong install hint", () => {
    const error = loadFailure("peer-with-missing-dependency")
    assert.isFalse(OptionalPeer.isOptionalPeerMissing(error))
    assert.include((error as Error).message, "toolcap-absent-dependency")
  })

  it("recognises only errors carrying its code", () => {
    assert.isFalse(OptionalPeer.isOptionalPeerMissing(new Error("x")))
    assert.isFalse(OptionalPeer.isOptionalPeerMissing({ code: "TOOLCAP_PEER_MISSING", message: "x" }))
    assert.isTrue(
      OptionalPeer.isOptionalPeerMissing(
        new OptionalPeer.OptionalPeerMissing({ packageName: "ai", feature: "x" })
      )
    )
  })
})
