// Bash's environment policy as a pure function: the default leaves secret-looking names out,
// `include` brings one back, `inherit`, `exclude`, `includeOnly` and `set` do what they say, and
// every bad policy is refused naming its field.
import { assert, describe, it } from "@effect/vitest"
import { EnvPolicy } from "@toolcap/limits"
import { Either, FastCheck as fc, Option } from "effect"

const host = {
  HOME: "/home/u",
  PATH: "/usr/bin:/bin",
  LANG: "C.UTF-8",
  LC_ALL: "C",
  EDITOR: "vi",
  ANTHROPIC_API_KEY: "sk-ant-1",
  OPENAI_API_KEY: "sk-2",
  GITHUB_TOKEN: "ghp_3",
  AWS_SECRET_ACCESS_KEY: "aws-4",
  PGPASSWORD: "pw",
  GOOGLE_APPLICATION_CREDENTIALS: "/c.json",
  github_token_lower: "x",
  EMPTY: ""
}

const apply = (policy: unknown, env: Record<string, string | undefined> = host) =>
  EnvPolicy.compile(Either.getOrThrow(EnvPolicy.decode(policy)))(env)

const secretWords = ["KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"]

/** A variable name, sometimes holding one of the secret words in any case. */
const nameArb = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/),
    fc.option(fc.constantFrom(...secretWords, "key", "Secret", "tOkEn"), { nil: undefined }),
    fc.stringMatching(/^[A-Za-z0-9_]{0,6}$/)
  )
  .map(([head, word, tail]) => `${head}${word ?? ""}${tail}`)
  .filter((name) => name !== "TOOLCAP_RUN_ID")

const envArb = fc.dictionary(nameArb, fc.string({ maxLength: 8 }), { maxKeys: 12 })

const isSecret = (name: string) => secretWords.some((word) => name.toUpperCase().includes(word))

/** The error a bad policy is refused with (the test fails when it is accepted). */
const refused = (policy: unknown) => {
  const decoded = EnvPolicy.decode(policy, "test")
  assert.isTrue(Either.isLeft(decoded), JSON.stringify(policy))
  return Option.getOrThrow(Either.getLeft(decoded))
}

describe("EnvPolicy", () => {
  it("by default passes everything but the secret-looking names, empty values included", () => {
    assert.deepStrictEqual(apply({}), {
      HOME: "/home/u",
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C",
      EDITOR: "vi",
      EMPTY: ""
    })
  })

  it("include brings a secret back, whatever inherit and the excludes say", () => {
    assert.strictEqual(apply({ include: ["ANTHROPIC_API_KEY"] })["ANTHROPIC_API_KEY"], "sk-ant-1")
    assert.isUndefined(apply({ include: ["ANTHROPIC_API_KEY"] })["OPENAI_API_KEY"])
    assert.deepStrictEqual(apply({ inherit: "none", include: ["anthropic_*"] }), {
      ANTHROPIC_API_KEY: "sk-ant-1"
    })
    assert.strictEqual(
      apply({ exclude: ["ANTHROPIC*"], include: ["ANTHROPIC_API_KEY"] })["ANTHROPIC_API_KEY"],
      "sk-ant-1"
    )
  })

  it("inherit core keeps the documented short list and LC_*; none keeps nothing", () => {
    assert.deepStrictEqual(apply({ inherit: "core" }), {
      HOME: "/home/u",
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C"
    })
    assert.deepStrictEqual(apply({ inherit: "none" }), {})
    assert.deepStrictEqual(apply({ inherit: "none", set: { CI: "1" } }), { CI: "1" })
  })

  it("exclude and includeOnly are case-insensitive whole-name globs; set wins", () => {
    assert.deepStrictEqual(Object.keys(apply({ exclude: ["l?_*", "path"] })), [
      "HOME",
      "LANG",
      "EDITOR",
      "EMPTY"
    ])
    assert.deepStrictEqual(apply({ includeOnly: ["h*", "PAT?"] }), { HOME: "/home/u", PATH: "/usr/bin:/bin" })
    // a glob matches the whole name: EDIT does not match EDITOR
    assert.deepStrictEqual(apply({ includeOnly: ["EDIT"] }), {})
    assert.deepStrictEqual(apply({ includeOnly: [] }), {})
    assert.strictEqual(apply({ set: { HOME: "/elsewhere" } })["HOME"], "/elsewhere")
    // regular-expression characters in a glob are literal
    assert.deepStrictEqual(apply({ includeOnly: ["A.B"] }, { "A.B": "1", AxB: "2" }), { "A.B": "1" })
  })

  it("ignoreDefaultExcludes passes the secrets; an explicit exclude still applies", () => {
    const all = apply({ ignoreDefaultExcludes: true, exclude: ["GITHUB_*"] })
    assert.strictEqual(all["ANTHROPIC_API_KEY"], "sk-ant-1")
    assert.isUndefined(all["GITHUB_TOKEN"])
    // case-insensitive: GITHUB_* matches github_token_lower too
    assert.isUndefined(all["github_token_lower"])
    assert.strictEqual(all["PGPASSWORD"], "pw")
  })

  it("refuses a bad policy naming the field and what to pass", () => {
    const inherit = refused({ inherit: "some" })
    assert.strictEqual(inherit.code, "ENV_POLICY_INVALID")
    assert.strictEqual(inherit.field, "inherit")
    assert.match(inherit.message, /Invalid environment policy \(test\), inherit: .*Pass \{ inherit\?: "all"/)
    assert.strictEqual(refused({ exclude: "KEY" }).field, "exclude")
    assert.strictEqual(refused({ exclude: [""] }).field, "exclude.0")
    assert.strictEqual(refused({ include: ["A=B"] }).field, "include.0")
    assert.match(refused({ set: { TOOLCAP_RUN_ID: "x" } }).message, /cookie/)
    assert.match(refused({ set: { "A=B": "x" } }).message, /not a variable name/)
    assert.match(refused({ set: { A: "x\0y" } }).message, /NUL/)
    assert.strictEqual(refused({ inherits: "all" }).field, "inherits")
    assert.strictEqual(refused({ exclude: Array.from({ length: 257 }, () => "X") }).field, "exclude")
    refused("core")
    refused(null)
  })

  it("reads TOOLCAP_ENV_POLICY as JSON; unset or empty is no policy", () => {
    assert.deepStrictEqual(
      EnvPolicy.fromVariable({ TOOLCAP_ENV_POLICY: '{"inherit":"core","include":["X"]}' }),
      Either.right({ inherit: "core" as const, include: ["X"] })
    )
    assert.deepStrictEqual(EnvPolicy.fromVariable({}), Either.right(undefined))
    assert.deepStrictEqual(EnvPolicy.fromVariable({ TOOLCAP_ENV_POLICY: " " }), Either.right(undefined))
    const notJson = EnvPolicy.fromVariable({ TOOLCAP_ENV_POLICY: "inherit=core" })
    assert.isTrue(Either.isLeft(notJson))
    assert.match(Either.isLeft(notJson) ? notJson.left.message : "", /TOOLCAP_ENV_POLICY.*not JSON/)
    const bad = EnvPolicy.fromVariable({ TOOLCAP_ENV_POLICY: '{"inherit":1}' })
    assert.isTrue(Either.isLeft(bad) && bad.left.source === "TOOLCAP_ENV_POLICY")
  })

  it.prop(
    "the default never passes a secret-looking name and passes every other one unchanged",
    [envArb],
    ([env]) => {
      const out = EnvPolicy.compiledDefault(env)
      for (const [name, value] of Object.entries(env)) {
        if (isSecret(name)) assert.notProperty(out, name, name)
        else assert.strictEqual(out[name], value, name)
      }
      assert.isTrue(Object.keys(out).every((name) => name in env))
    }
  )

  it.prop(
    "whatever the policy, the call gets host values or set values, and every included name",
    [
      envArb,
      fc.record(
        {
          inherit: fc.constantFrom("all", "core", "none"),
          ignoreDefaultExcludes: fc.boolean(),
          exclude: fc.array(fc.stringMatching(/^[A-Za-z_*?]{1,4}$/), { maxLength: 3 }),
          includeOnly: fc.array(fc.stringMatching(/^[A-Za-z_*?]{1,4}$/), { maxLength: 3 }),
          include: fc.array(fc.stringMatching(/^[A-Za-z_*?]{1,4}$/), { maxLength: 3 }),
          set: fc.dictionary(nameArb, fc.string({ maxLength: 4 }), { maxKeys: 3 })
        },
        { requiredKeys: [] }
      )
    ],
    ([env, policy]) => {
      const out = apply(policy, env)
      for (const [name, value] of Object.entries(out)) {
        if (policy.set !== undefined && name in policy.set) assert.strictEqual(value, policy.set[name])
        else assert.strictEqual(value, env[name], name)
      }
      for (const name of Object.keys(env)) {
        const included = (policy.include ?? []).some((glob) => EnvPolicy.matches(glob, name))
        if (included) assert.property(out, name, name)
        if (policy.inherit === "none" && !included && !(policy.set !== undefined && name in policy.set))
          assert.notProperty(out, name, name)
      }
    }
  )
})
