/**
 * Every choice belongs to the layer: its options and the `TOOLCAP_*` variables read through the
 * host's `ConfigProvider` decide the launcher and the guards, and Grep, Glob and Bash report what
 * the layer decided (no module constant, no environment read behind its back).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import { Bash, Glob, Grep, Supervisor } from "@toolcap/tools"
import * as Settings from "../src/internal/supervisor/settings.js"
import { searchEnv, writeTree } from "./readFixtures.js"

const OFF = "the launcher was turned off (Supervisor option launcher: false)"
const choices = Object.values(Settings.variables).filter((variable) => variable.values.length > 0)

/** The settings `entries` give, as an Either (Left: the message of the refusal). */
const settingsFrom = (entries: ReadonlyArray<readonly [string, string]>) =>
  Effect.runSync(
    Effect.either(Effect.withConfigProvider(Settings.read, ConfigProvider.fromMap(new Map(entries)))).pipe(
      Effect.map(Either.mapLeft((error) => error.message))
    )
  )

describe("the layer's settings", () => {
  it.effect("TOOLCAP_CONTAINMENT=groupp fails the layer with the variable and the values it takes", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.scoped(Supervisor.make()).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TOOLCAP_CONTAINMENT", "groupp"]])))
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      const pretty = Cause.pretty((exit as Exit.Failure<unknown, never>).cause)
      assert.include(pretty, 'TOOLCAP_CONTAINMENT must be one of cgroup, group, got "groupp"')
      assert.strictEqual(
        (Cause.squash((exit as Exit.Failure<unknown, never>).cause) as { code?: string }).code,
        "TOOL_INVALID_INPUT"
      )
    })
  )

  it.prop(
    "every choice takes exactly its allowed values (blanks around ignored; unset or empty: the default)",
    {
      at: fc.nat({ max: choices.length - 1 }),
      raw: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom("on", "off", "group", "prologue", "writable")
      )
    },
    ({ at, raw }) => {
      const variable = choices[at]!
      const read = settingsFrom([[variable.name, raw]])
      const value = raw.trim()
      if (value === "") assert.isTrue(Either.isRight(read))
      else if ((variable.values as ReadonlyArray<string>).includes(value)) assert.isTrue(Either.isRight(read))
      else {
        assert.isTrue(Either.isLeft(read))
        assert.include(
          Either.getLeft(read).pipe(Option.getOrElse(() => "")),
          Settings.refusal(variable.name, variable.values, raw)
        )
      }
    }
  )

  it.effect("a variable is read from the host's ConfigProvider, not the process environment", () =>
    Effect.gen(function* () {
      const read = settingsFrom([
        ["TOOLCAP_SCOPES", "off"],
        ["TOOLCAP_CGROUP_ENTRY", " prologue "],
        ["TOOLCAP_LAUNCHER", "/nowhere/toolcap-confine"]
      ])
      assert.deepInclude(Either.getOrThrow(read), {
        scopes: "off",
        cgroupEntry: "prologue",
        launcher: "/nowhere/toolcap-confine",
        containment: undefined
      })
      // the launcher the layer resolves is the one its provider names
      const support = yield* Effect.scoped(
        Effect.flatMap(Supervisor.make(), (supervisor) => supervisor.landlock)
      ).pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["TOOLCAP_LAUNCHER", "/nowhere/toolcap-confine"]]))
        )
      )
      assert.deepInclude(support, { kind: "none", cause: "no-launcher" })
      assert.include(support.kind === "none" ? support.reason : "", "/nowhere/toolcap-confine")
    })
  )
})

describe("Supervisor.layer({ launcher: false })", () => {
  it.scopedLive("Grep, Glob and Bash run without the launcher and say so", () =>
    Effect.gen(function* () {
      const env = yield* searchEnv({}, { supervisor: { launcher: false } })
      writeTree(env.workspace, { "a.ts": "needle\n", "b/c.ts": "needle\n" })
      const grepped = yield* Grep.grep({ pattern: "needle" }).pipe(Effect.provide(env.context))
      const globbed = yield* Glob.glob({ pattern: "**/*.ts" }).pipe(Effect.provide(env.context))
      assert.strictEqual(grepped.count, 2)
      assert.strictEqual(globbed.matches.length, 2)
      for (const guard of [grepped.guard, globbed.guard]) {
        assert.deepInclude(guard, { launcher: false, landlockRead: false })
        assert.include(guard.landlockReadReason ?? "", OFF)
      }
      // Grep's memory ceiling (on by default) falls back to the shell's ulimit, naming why
      assert.include(grepped.guard.memoryCeiling?.reason ?? "", "ulimit -d")
      assert.include(grepped.guard.memoryCeiling?.reason ?? "", OFF)
      const ran = yield* Bash.run({ command: "echo ran" }).pipe(Effect.provide(env.context))
      assert.strictEqual(ran.stdout, "ran\n")
      assert.isFalse(ran.termination.launcher)
      assert.isFalse(ran.termination.landlockScopes)
      assert.strictEqual(ran.termination.landlockScopesReason, OFF)
    })
  )
})
