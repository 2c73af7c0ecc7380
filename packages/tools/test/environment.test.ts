/**
 * Bash's environment policy on real processes (rules B14): a secret in the host's environment
 * (`ANTHROPIC_API_KEY`, `GITHUB_TOKEN`) is not in a call's `env` by default, and is with an
 * explicit include; `inherit`, `set` and the cookie reach the shell. Run through the launcher and
 * without it, in each containment tier this host has: the launcher's server hands the environment
 * over its own channel, the fallback through the spawn.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { Bash, Supervisor } from "@toolcap/tools"
import { cgroupParent, cgroupsOfThisWorker, testEnv } from "./bashFixtures.js"

const SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-test-0001",
  GITHUB_TOKEN: "ghp_test_0002",
  AWS_SECRET_ACCESS_KEY: "aws-test-0003",
  TOOLCAP_TEST_PLAIN: "plain-0004"
}

beforeAll(() => {
  for (const [name, value] of Object.entries(SECRETS)) process.env[name] = value
})
afterAll(() => {
  for (const name of Object.keys(SECRETS)) delete process.env[name]
  assert.deepStrictEqual(cgroupsOfThisWorker(), [])
})

const tiers: ReadonlyArray<Supervisor.Tier> = cgroupParent() !== undefined ? ["cgroup", "group"] : ["group"]
const variants: ReadonlyArray<{ readonly label: string; readonly supervisor: Supervisor.Options }> =
  tiers.flatMap((containment) => [
    { label: `${containment} tier, launcher`, supervisor: { containment } },
    { label: `${containment} tier, no launcher`, supervisor: { containment, launcher: false } }
  ])

/** The call's environment as the shell sees it (`env -0`, so values with newlines stay whole). */
const callEnv = (supervisor: Supervisor.Options, policy?: unknown) =>
  Effect.gen(function* () {
    const env = yield* testEnv({}, undefined, supervisor)
    const layer =
      policy === undefined
        ? env.layer
        : Layer.merge(env.layer, Bash.layerEnvironment(policy).pipe(Layer.orDie))
    const result = yield* Bash.run({ command: "env -0" }).pipe(Effect.provide(layer))
    assert.strictEqual(result.exitCode, 0, result.output)
    const vars: Record<string, string> = {}
    for (const entry of result.stdout.split("\0")) {
      const at = entry.indexOf("=")
      if (at > 0) vars[entry.slice(0, at)] = entry.slice(at + 1)
    }
    return { vars, runId: result.runId }
  })

describe("Bash's environment policy", () => {
  for (const { label, supervisor } of variants) {
    it.live(`${label}: ANTHROPIC_API_KEY in the host's environment is not in a call's by default`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { vars, runId } = yield* callEnv(supervisor)
          assert.notProperty(vars, "ANTHROPIC_API_KEY")
          assert.notProperty(vars, "GITHUB_TOKEN")
          assert.notProperty(vars, "AWS_SECRET_ACCESS_KEY")
          assert.strictEqual(vars["TOOLCAP_TEST_PLAIN"], "plain-0004")
          assert.strictEqual(vars["PATH"], process.env["PATH"])
          assert.strictEqual(vars["TOOLCAP_RUN_ID"], runId)
        })
      )
    )

    it.live(`${label}: ANTHROPIC_API_KEY is in a call's environment with an explicit include`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { vars } = yield* callEnv(supervisor, { include: ["ANTHROPIC_API_KEY"] })
          assert.strictEqual(vars["ANTHROPIC_API_KEY"], "sk-ant-test-0001")
          assert.notProperty(vars, "GITHUB_TOKEN")
        })
      )
    )
  }

  it.live("inherit none with set: only the set variables and the cookie reach the shell", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { vars, runId } = yield* callEnv(
          {},
          { inherit: "none", set: { CI: "1", TOOLCAP_TEST_PLAIN: "set" } }
        )
        // bash adds its own PWD, SHLVL and _ to what it was given
        const own = new Set(["PWD", "SHLVL", "_", "OLDPWD"])
        assert.deepStrictEqual(
          Object.keys(vars)
            .filter((name) => !own.has(name))
            .toSorted(),
          ["CI", "TOOLCAP_RUN_ID", "TOOLCAP_TEST_PLAIN"]
        )
        assert.strictEqual(vars["TOOLCAP_TEST_PLAIN"], "set")
        assert.strictEqual(vars["TOOLCAP_RUN_ID"], runId)
      })
    )
  )

  it.live("inherit core keeps PATH and HOME and leaves the rest out", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { vars } = yield* callEnv({}, { inherit: "core" })
        assert.strictEqual(vars["PATH"], process.env["PATH"])
        assert.notProperty(vars, "TOOLCAP_TEST_PLAIN")
      })
    )
  )

  it("a bad policy is refused with a typed error naming the field", () => {
    const refused = Bash.environment({ inherit: "everything" }, "test")
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) {
      assert.strictEqual(refused.left.code, "ENV_POLICY_INVALID")
      assert.strictEqual(refused.left.field, "inherit")
    }
  })
})
