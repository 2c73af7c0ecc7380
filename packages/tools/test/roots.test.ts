import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as fs from "node:fs"
import * as path from "node:path"
import { Roots } from "@toolcap/tools"
import { leftOf, rightOf, searchEnv, writeTree } from "./readFixtures.js"

describe("Roots", () => {
  it("containment compares whole path segments", () => {
    assert.isTrue(Roots.isWithin("/tmp/ws", "/tmp/ws"))
    assert.isTrue(Roots.isWithin("/tmp/ws", "/tmp/ws/a/b"))
    assert.isFalse(Roots.isWithin("/tmp/ws", "/tmp/ws2/a"))
    assert.isFalse(Roots.isWithin("/tmp/ws", "/tmp"))
    assert.isTrue(Roots.isWithin("/", "/anything"))
  })

  it("the innermost root wins when roots nest", () => {
    const all: ReadonlyArray<Roots.Root> = [
      { kind: "workspace", path: "/w" },
      { kind: "scratch", path: "/w/.data/scratch/s" },
      { kind: "external", path: "/x" }
    ]
    assert.strictEqual(Roots.containing(all, "/w/src/a.ts")?.kind, "workspace")
    assert.strictEqual(Roots.containing(all, "/w/.data/scratch/s/tool-output/x.log")?.kind, "scratch")
    assert.strictEqual(Roots.containing(all, "/x/y")?.kind, "external")
    assert.isUndefined(Roots.containing(all, "/etc/passwd"))
  })

  it("results name workspace paths relative with '/', others absolutely", () => {
    assert.strictEqual(Roots.display({ kind: "workspace", path: "/w" }, "/w/src/a.ts"), "src/a.ts")
    assert.strictEqual(Roots.display({ kind: "workspace", path: "/w" }, "/w"), ".")
    assert.strictEqual(Roots.display({ kind: "external", path: "/x" }, "/x/y"), "/x/y")
  })

  it.scopedLive("the scratch root exists before its directory does, and resolves once a spill made it", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      const roots = yield* Roots.roots.pipe(Effect.provide(env.context))
      assert.deepStrictEqual(
        roots.map((root) => root.kind),
        ["workspace", "scratch", "external"]
      )
      assert.strictEqual(roots[1]!.path, env.sessionDir)
      const missing = leftOf(
        yield* Effect.either(Roots.resolve("Read", "path", path.join(env.sessionDir, "x.log"))).pipe(
          Effect.provide(env.context)
        )
      )
      assert.strictEqual(missing.code, "TOOL_NOT_FOUND")
      writeTree(env.sessionDir, { "tool-output/x.log": "spilled\n" })
      const found = rightOf(
        yield* Effect.either(Roots.resolve("Grep", "path", path.join(env.sessionDir, "tool-output"))).pipe(
          Effect.provide(env.context)
        )
      )
      assert.strictEqual(found.root.kind, "scratch")
      assert.isTrue(found.stats.isDirectory())
    })
  )

  it.scopedLive("a symlinked alias of the workspace resolves to the workspace itself", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "src/a.ts": "a\n" })
      const alias = path.join(env.outside, "alias")
      fs.symlinkSync(env.workspace, alias)
      const found = rightOf(
        yield* Effect.either(Roots.resolve("Read", "path", path.join(alias, "src/a.ts"))).pipe(
          Effect.provide(env.context)
        )
      )
      assert.deepStrictEqual([found.root.kind, found.display], ["workspace", "src/a.ts"])
    })
  )

  it.scopedLive.prop(
    "whatever the path, a resolved path lies inside a root; everything else is denied or missing",
    [
      FastCheck.array(
        FastCheck.constantFrom("..", ".", "in", "link-out", "link-in", "sub", "x.txt", "", "/"),
        {
          minLength: 1,
          maxLength: 6
        }
      ),
      FastCheck.boolean()
    ],
    ([segments, absolute]) =>
      Effect.gen(function* () {
        const env = yield* searchEnv()
        writeTree(env.workspace, { "in/sub/x.txt": "x\n", "x.txt": "x\n" })
        writeTree(env.outside, { "sub/x.txt": "secret\n", "x.txt": "secret\n" })
        fs.symlinkSync(env.outside, path.join(env.workspace, "link-out"))
        fs.symlinkSync(path.join(env.workspace, "in"), path.join(env.workspace, "in", "link-in"))
        const joined = segments.join("/")
        const requested = absolute ? path.join(env.workspace, joined) : joined
        if (requested.length === 0) return
        const outcome = yield* Effect.either(Roots.resolve("Read", "path", requested)).pipe(
          Effect.provide(env.context)
        )
        Either.match(outcome, {
          onRight: (resolved) => {
            const roots = [env.workspace, env.external, env.sessionDir]
            assert.isTrue(
              roots.some((root) => Roots.isWithin(root, resolved.realPath)),
              resolved.realPath
            )
            assert.strictEqual(fs.realpathSync(resolved.realPath), resolved.realPath)
            if (resolved.stats.isFile())
              assert.notInclude(fs.readFileSync(resolved.realPath, "utf8"), "secret")
          },
          onLeft: (error) => assert.include(["TOOL_PATH_DENIED", "TOOL_NOT_FOUND"], error.code)
        })
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
