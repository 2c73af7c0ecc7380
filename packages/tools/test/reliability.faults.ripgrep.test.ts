// Reliability under faults: the ripgrep binary missing. The package that ships it is mocked for
// this whole file so that its path names no file; Grep must answer a typed error (the spawn
// failure; an empty "no match" would be a silent lie), never crash nor hang, Glob answers from its
// own walk and says so (`unconfined`), and Read (which needs no ripgrep) keeps working. Counts
// are printed and, when TOOLCAP_RELIABILITY_OUT names a directory, written there.
import { assert, describe, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { Glob, Grep, Read } from "@toolcap/tools"
import { reportReliability } from "@toolcap/bench-report"
import { searchEnv, writeTree } from "./readFixtures.js"

vi.mock("@vscode/ripgrep", () => ({ rgPath: "/nonexistent/toolcap-test/rg" }))

describe("reliability: faults (ripgrep missing)", () => {
  it.scopedLive("Grep answers a typed error; Glob falls back to its own walk; Read works", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv()
      writeTree(env.workspace, { "a.txt": "alpha\n", "src/b.ts": "export const b = 1\n" })
      /** A call's outcome: its error code, `a result ...`, or undefined when it crashed or hung. */
      const outcome = <A, E extends { readonly code: string }, R>(call: Effect.Effect<A, E, R>) =>
        Effect.either(call).pipe(
          Effect.map((either) =>
            Either.isLeft(either)
              ? either.left.code
              : `a result ${JSON.stringify(either.right).slice(0, 200)}`
          ),
          Effect.timeoutOption("60 seconds"),
          Effect.map(Option.getOrElse(() => void hangs++)),
          Effect.catchAllDefect(() => Effect.sync(() => void crashes++))
        )
      let crashes = 0
      let hangs = 0
      const calls = [
        outcome(Grep.grep({ pattern: "alpha", outputMode: "content" })),
        outcome(Grep.grep({ pattern: "alpha", outputMode: "count" })),
        outcome(Grep.grep({ pattern: "alpha" })),
        outcome(Glob.glob({ pattern: "**/*.ts" }))
      ]
      const codes: Array<string> = []
      for (const call of calls) {
        const code = yield* Effect.provide(call, env.context)
        if (code !== undefined) codes.push(code)
      }
      const read = yield* Read.read({ path: "a.txt" }).pipe(Effect.provide(env.context))
      // the walk's answer, which says why ripgrep did not list
      const globExpected = `a result ${JSON.stringify({
        matches: ["src/b.ts"],
        count: 1,
        truncated: false,
        unconfined: "ripgrep could not list the directory"
      }).slice(0, -2)}`
      const grepCodes = codes.slice(0, 3)
      const wrong =
        grepCodes.filter((c) => c !== "TOOL_SPAWN_FAILED").length +
        (codes[3]?.startsWith(globExpected) === true ? 0 : 1) +
        (read.content === "alpha\n" ? 0 : 1)
      reportReliability(
        "faults ripgrep missing",
        {
          inputs: calls.length + 1,
          "typed errors": codes.filter((c) => !c.startsWith("a result")).length,
          "wrong results": wrong,
          crashes,
          hangs
        },
        `Grep (content, count, files) with the ripgrep binary missing: ${grepCodes.join(", ")}; Glob (its own walk, reported as unconfined) and Read beside them: ${wrong === 0 ? "correct" : codes.slice(3).join(", ")}`
      )
      assert.deepStrictEqual(grepCodes, ["TOOL_SPAWN_FAILED", "TOOL_SPAWN_FAILED", "TOOL_SPAWN_FAILED"])
      // Glob lists without ripgrep: its answer is the real one, from its own walk, reported
      assert.isTrue(codes[3]?.startsWith(globExpected), codes[3])
      assert.strictEqual(read.content, "alpha\n")
    })
  )
})
