// The limit table (rules L1, L8–L10): one schema, the table as defaults, overrides per field from
// a Layer or from effect Config (TOOLCAP_*), invalid overrides fail at startup naming the field.
import { assert, describe, it } from "@effect/vitest"
import { Budgets, Marker, Truncate } from "@toolcap/limits"
import { ConfigProvider, Effect, Either, FastCheck as fc, Layer, Schema } from "effect"

const KB = 1024

/** The default limit table, every field of the schema, written out by hand. */
const table = {
  searchMaxBytes: 48 * KB,
  searchMaxLines: 2000,
  shellStdoutMaxBytes: 96 * KB,
  shellStdoutMaxLines: 4000,
  shellStderrMaxBytes: 96 * KB,
  shellStderrMaxLines: 4000,
  shellStdoutHeadShare: 1,
  shellStderrHeadShare: 0,
  maxLineChars: 2000,
  readWindowLines: 2000,
  grepHeadLimit: 200,
  grepMaxPatternBytes: 4 * KB,
  engineMemoryMaxBytes: 1024 * KB * KB,
  inputMaxPathBytes: 4 * KB,
  globMaxPatternBytes: 4 * KB,
  globMaxBraceExpansions: 1024,
  inputMaxDepth: 64,
  bashCommandMaxBytes: 8388608,
  globLimit: 100,
  globMaxLimit: 1000,
  captureMaxBytes: 512 * KB,
  captureMaxLines: 200_000,
  spillMaxBytes: 512 * KB,
  bashTimeoutDefaultSeconds: 60,
  bashTimeoutMinSeconds: 1,
  bashTimeoutMaxSeconds: 300,
  bashKillGraceMs: 2000,
  bashDrainGraceMs: 1000,
  bashMemoryMaxBytes: 0,
  bashTasksMax: 4096,
  digest: 0,
  binarySniffBytes: 4 * KB,
  binaryNonPrintableRatio: 0.3,
  checkpointRetentionTokens: 20_000,
  checkpointBatchTokens: 20_000,
  checkpointHeadShare: 0.75
}

const fromEnv = (env: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** Builds `layerConfig` under the given environment and returns the budgets or the error text. */
const loadFromEnv = (env: Record<string, string>) =>
  Budgets.Budgets.pipe(
    Effect.provide(Budgets.layerConfig.pipe(Layer.provide(fromEnv(env)))),
    Effect.mapError((error) => String(error)),
    Effect.either
  )

describe("Budgets.defaults", () => {
  it("equal the default limit table, field by field", () => {
    assert.deepStrictEqual([...Budgets.fieldNames], Object.keys(table))
    for (const field of Budgets.fieldNames) {
      assert.strictEqual(Budgets.defaults[field], table[field], field)
    }
  })

  it("pass the schema's own rules (they are built without validating)", () => {
    const decoded = Schema.decodeUnknownEither(Budgets.BudgetsSchema)({ ...Budgets.defaults })
    assert.isTrue(Either.isRight(decoded), Either.isLeft(decoded) ? String(decoded.left) : "")
  })

  it.effect("are what Budgets.layer provides", () =>
    Effect.gen(function* () {
      const budgets = yield* Budgets.Budgets
      assert.strictEqual(budgets, Budgets.defaults)
    }).pipe(Effect.provide(Budgets.layer))
  )

  it("keep capture and spill above the Bash result budget", () => {
    const { captureMaxBytes, captureMaxLines, shellStdoutMaxBytes, shellStdoutMaxLines, spillMaxBytes } =
      Budgets.defaults
    assert.isAbove(captureMaxBytes, shellStdoutMaxBytes)
    assert.isAbove(captureMaxLines, shellStdoutMaxLines)
    assert.isAbove(spillMaxBytes, shellStdoutMaxBytes)
  })
})

describe("Budgets.layerWith", () => {
  it.effect("overrides one field and keeps the others", () =>
    Effect.gen(function* () {
      const budgets = yield* Budgets.Budgets
      assert.strictEqual(budgets.searchMaxBytes, 32 * KB)
      assert.strictEqual(budgets.searchMaxLines, 2000)
      assert.strictEqual(budgets.shellStdoutMaxBytes, 96 * KB)
    }).pipe(Effect.provide(Budgets.layerWith({ searchMaxBytes: 32 * KB })))
  )

  const rejected: ReadonlyArray<[string, Partial<Record<Budgets.BudgetField, number>>, string, string]> = [
    ["zero", { grepHeadLimit: 0 }, "grepHeadLimit", ">= 1, got 0"],
    ["a fraction", { searchMaxLines: 1.5 }, "searchMaxLines", "whole number"],
    ["NaN", { maxLineChars: Number.NaN }, "maxLineChars", "got NaN"],
    ["a byte budget below 4", { searchMaxBytes: 3 }, "searchMaxBytes", ">= 4"],
    ["capture below the result budget", { captureMaxBytes: 64 * KB }, "captureMaxBytes", "greater than"],
    ["capture equal to the result budget", { captureMaxLines: 4000 }, "captureMaxLines", "greater than"],
    ["spill below the result budget", { spillMaxBytes: 90 * KB }, "spillMaxBytes", "at least"],
    [
      "a spill whose halves hold less than the excerpts",
      { spillMaxBytes: 150 * KB },
      "spillMaxBytes",
      "largest head excerpt, 98304 bytes"
    ],
    [
      "a head share leaving the tail less than a code point",
      { shellStdoutHeadShare: 0.99999 },
      "shellStdoutHeadShare",
      "each end needs at least"
    ],
    ["a share above 1", { shellStderrHeadShare: 1.5 }, "shellStderrHeadShare", "from 0 to 1"],
    [
      "timeout default above the range",
      { bashTimeoutDefaultSeconds: 301 },
      "bashTimeoutDefaultSeconds",
      "1..300"
    ],
    [
      "timeout default below the range",
      { bashTimeoutMinSeconds: 10, bashTimeoutDefaultSeconds: 5 },
      "bashTimeoutDefaultSeconds",
      "10..300"
    ],
    ["an inverted timeout range", { bashTimeoutMinSeconds: 301 }, "bashTimeoutMinSeconds", "must not exceed"],
    ["glob limit above its maximum", { globLimit: 1001 }, "globLimit", "globMaxLimit"],
    ["a share outside (0, 1)", { checkpointHeadShare: 1 }, "checkpointHeadShare", "between 0 and 1"],
    ["an unknown field", { searchMaxByte: 1 } as never, "searchMaxByte", "not a budget field"],
    [
      "an engine ceiling ripgrep cannot start under",
      { engineMemoryMaxBytes: 64 * KB * KB },
      "engineMemoryMaxBytes",
      "0 (no ceiling) or"
    ]
  ]

  for (const [label, overrides, field, rule] of rejected) {
    it.effect(`rejects ${label}, naming ${field}`, () =>
      Effect.gen(function* () {
        const error = yield* Budgets.Budgets.pipe(Effect.provide(Budgets.layerWith(overrides)), Effect.flip)
        assert.instanceOf(error, Budgets.BudgetsInvalid)
        assert.include(error.fields, field)
        assert.include(error.message, field)
        assert.include(error.message, rule)
      })
    )
  }

  it("reports every rejected field at once", () => {
    const result = Budgets.make({ searchMaxBytes: 0, grepHeadLimit: -1 })
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result))
      assert.sameMembers([...result.left.fields], ["grepHeadLimit", "searchMaxBytes"])
  })

  it.prop(
    "accepts any byte budget >= 4 and rejects any below, for every byte field",
    {
      field: fc.constantFrom(
        "searchMaxBytes" as const,
        "shellStdoutMaxBytes" as const,
        "shellStderrMaxBytes" as const
      ),
      value: fc.integer({ min: -10, max: 64 * KB })
    },
    ({ field, value }) => {
      assert.strictEqual(Either.isRight(Budgets.make({ [field]: value })), value >= 4)
    },
    { fastCheck: { numRuns: 1000 } }
  )
})

describe("Budgets.make: the engine's memory ceiling", () => {
  it.prop(
    "accepts 0 (none) or a whole number of bytes of at least 128 MiB, and nothing else",
    {
      value: fc.oneof(
        fc.constant(0),
        fc.integer({ min: -10, max: 8 * KB * KB * KB }),
        fc.double({ min: 0, max: 1024 * KB * KB, noNaN: true })
      )
    },
    ({ value }) => {
      const accepted = value === 0 || (Number.isSafeInteger(value) && value >= 128 * KB * KB)
      assert.strictEqual(Either.isRight(Budgets.make({ engineMemoryMaxBytes: value })), accepted)
    },
    { fastCheck: { numRuns: 1000 } }
  )
})

describe("Budgets.layerConfig (TOOLCAP_* variables)", () => {
  it("names one variable per field", () => {
    assert.deepStrictEqual(Budgets.fieldNames.map(Budgets.envName), [
      "TOOLCAP_SEARCH_MAX_BYTES",
      "TOOLCAP_SEARCH_MAX_LINES",
      "TOOLCAP_SHELL_STDOUT_MAX_BYTES",
      "TOOLCAP_SHELL_STDOUT_MAX_LINES",
      "TOOLCAP_SHELL_STDERR_MAX_BYTES",
      "TOOLCAP_SHELL_STDERR_MAX_LINES",
      "TOOLCAP_SHELL_STDOUT_HEAD_SHARE",
      "TOOLCAP_SHELL_STDERR_HEAD_SHARE",
      "TOOLCAP_MAX_LINE_CHARS",
      "TOOLCAP_READ_WINDOW_LINES",
      "TOOLCAP_GREP_HEAD_LIMIT",
      "TOOLCAP_GREP_MAX_PATTERN_BYTES",
      "TOOLCAP_ENGINE_MEMORY_MAX_BYTES",
      "TOOLCAP_INPUT_MAX_PATH_BYTES",
      "TOOLCAP_GLOB_MAX_PATTERN_BYTES",
      "TOOLCAP_GLOB_MAX_BRACE_EXPANSIONS",
      "TOOLCAP_INPUT_MAX_DEPTH",
      "TOOLCAP_BASH_COMMAND_MAX_BYTES",
      "TOOLCAP_GLOB_LIMIT",
      "TOOLCAP_GLOB_MAX_LIMIT",
      "TOOLCAP_CAPTURE_MAX_BYTES",
      "TOOLCAP_CAPTURE_MAX_LINES",
      "TOOLCAP_SPILL_MAX_BYTES",
      "TOOLCAP_BASH_TIMEOUT_DEFAULT_SECONDS",
      "TOOLCAP_BASH_TIMEOUT_MIN_SECONDS",
      "TOOLCAP_BASH_TIMEOUT_MAX_SECONDS",
      "TOOLCAP_BASH_KILL_GRACE_MS",
      "TOOLCAP_BASH_DRAIN_GRACE_MS",
      "TOOLCAP_BASH_MEMORY_MAX_BYTES",
      "TOOLCAP_BASH_TASKS_MAX",
      "TOOLCAP_DIGEST",
      "TOOLCAP_BINARY_SNIFF_BYTES",
      "TOOLCAP_BINARY_NON_PRINTABLE_RATIO",
      "TOOLCAP_CHECKPOINT_RETENTION_TOKENS",
      "TOOLCAP_CHECKPOINT_BATCH_TOKENS",
      "TOOLCAP_CHECKPOINT_HEAD_SHARE"
    ])
  })

  it.effect("with no variables set gives the defaults", () =>
    Effect.gen(function* () {
      const budgets = yield* loadFromEnv({ UNRELATED: "1" }).pipe(Effect.flatten)
      for (const field of Budgets.fieldNames) assert.strictEqual(budgets[field], table[field], field)
    })
  )

  it.effect("reads overrides from the variables", () =>
    Effect.gen(function* () {
      const budgets = yield* loadFromEnv({
        TOOLCAP_SEARCH_MAX_BYTES: "65536",
        TOOLCAP_SHELL_STDERR_MAX_LINES: " 500 ",
        TOOLCAP_BINARY_NON_PRINTABLE_RATIO: "0.25",
        TOOLCAP_CAPTURE_MAX_BYTES: "1e6"
      }).pipe(Effect.flatten)
      assert.strictEqual(budgets.searchMaxBytes, 65536)
      assert.strictEqual(budgets.shellStderrMaxLines, 500)
      assert.strictEqual(budgets.binaryNonPrintableRatio, 0.25)
      assert.strictEqual(budgets.captureMaxBytes, 1_000_000)
      assert.strictEqual(budgets.shellStdoutMaxBytes, 96 * KB)
    })
  )

  const bad: ReadonlyArray<[string, Record<string, string>, string]> = [
    ["a non-number", { TOOLCAP_SHELL_STDOUT_MAX_BYTES: "96KB" }, "TOOLCAP_SHELL_STDOUT_MAX_BYTES"],
    ["an empty value", { TOOLCAP_GREP_HEAD_LIMIT: "" }, "TOOLCAP_GREP_HEAD_LIMIT"],
    ["hexadecimal", { TOOLCAP_GLOB_LIMIT: "0x10" }, "TOOLCAP_GLOB_LIMIT"],
    ["Infinity", { TOOLCAP_SEARCH_MAX_LINES: "Infinity" }, "TOOLCAP_SEARCH_MAX_LINES"],
    ["0", { TOOLCAP_MAX_LINE_CHARS: "0" }, "TOOLCAP_MAX_LINE_CHARS"],
    ["a byte budget below 4", { TOOLCAP_SEARCH_MAX_BYTES: "2" }, "TOOLCAP_SEARCH_MAX_BYTES"],
    ["capture below the result budget", { TOOLCAP_CAPTURE_MAX_BYTES: "65536" }, "TOOLCAP_CAPTURE_MAX_BYTES"],
    [
      "a result budget raised above capture",
      { TOOLCAP_SHELL_STDOUT_MAX_LINES: "250000" },
      "TOOLCAP_CAPTURE_MAX_LINES"
    ],
    [
      "a timeout default outside the range",
      { TOOLCAP_BASH_TIMEOUT_DEFAULT_SECONDS: "301" },
      "TOOLCAP_BASH_TIMEOUT_DEFAULT_SECONDS"
    ],
    [
      "a timeout default below a raised minimum",
      { TOOLCAP_BASH_TIMEOUT_MIN_SECONDS: "90" },
      "TOOLCAP_BASH_TIMEOUT_DEFAULT_SECONDS"
    ]
  ]

  for (const [label, env, variable] of bad) {
    it.effect(`fails at startup on ${label}, naming ${variable}`, () =>
      Effect.gen(function* () {
        const result = yield* loadFromEnv(env)
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) assert.include(result.left, variable)
      })
    )
  }

  it.effect("reports every bad variable, not just the first", () =>
    Effect.gen(function* () {
      const result = yield* loadFromEnv({ TOOLCAP_SEARCH_MAX_BYTES: "abc", TOOLCAP_GREP_HEAD_LIMIT: "0" })
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.include(result.left, "TOOLCAP_SEARCH_MAX_BYTES (searchMaxBytes) must be a number")
        assert.include(result.left, "TOOLCAP_GREP_HEAD_LIMIT (grepHeadLimit) must be a whole number")
      }
    })
  )
})

/** The laws every accepted budgets value keeps, whatever preset it started from. */
const assertLaws = (b: Budgets.BudgetsValue) => {
  for (const stream of ["stdout", "stderr"] as const) {
    const budget =
      stream === "stdout"
        ? { maxBytes: b.shellStdoutMaxBytes, maxLines: b.shellStdoutMaxLines, share: b.shellStdoutHeadShare }
        : { maxBytes: b.shellStderrMaxBytes, maxLines: b.shellStderrMaxLines, share: b.shellStderrHeadShare }
    // the capture is looser than the excerpt it is cut to
    assert.isAbove(b.captureMaxBytes, budget.maxBytes)
    assert.isAbove(b.captureMaxLines, budget.maxLines)
    const split = Truncate.splitBudget(budget, budget.share)
    for (const part of [split.head, split.tail]) {
      if (part === undefined) continue
      assert.isAtLeast(part.maxBytes, 4)
      assert.isAtLeast(part.maxLines, 1)
    }
    // a head-and-tail spill holds at least the excerpt at each end it backs, and never more than its cap
    const spill = Budgets.spillParts(b)
    assert.isAtLeast(spill.headBytes, split.head?.maxBytes ?? 0)
    assert.isAtLeast(spill.tailBytes, split.tail?.maxBytes ?? 0)
    assert.isAtMost(spill.headBytes + spill.tailBytes + Marker.spillGapMaxBytes, b.spillMaxBytes)
  }
  assert.isAtMost(b.globLimit, b.globMaxLimit)
  assert.isAtMost(b.bashTimeoutMinSeconds, b.bashTimeoutDefaultSeconds)
  assert.isAtMost(b.bashTimeoutDefaultSeconds, b.bashTimeoutMaxSeconds)
}

describe("Budgets.profiles", () => {
  it("are spec (the defaults) and compact, each passing the schema's rules", () => {
    assert.deepStrictEqual([...Budgets.profileNames], ["spec", "compact"])
    assert.strictEqual(Budgets.profiles.spec, Budgets.defaults)
    for (const name of Budgets.profileNames) {
      const decoded = Schema.decodeUnknownEither(Budgets.BudgetsSchema)({ ...Budgets.profiles[name] })
      assert.isTrue(Either.isRight(decoded), `${name}: ${Either.isLeft(decoded) ? String(decoded.left) : ""}`)
      assertLaws(Budgets.profiles[name])
    }
  })

  it("compact keeps head and tail excerpts below spec's, stderr's of a few KB, and smaller Read windows", () => {
    const compact = Budgets.profiles.compact
    assert.isBelow(compact.shellStdoutMaxBytes, Budgets.defaults.shellStdoutMaxBytes)
    assert.isBelow(compact.shellStderrMaxBytes, 16 * KB)
    assert.isAbove(compact.shellStdoutHeadShare, 0)
    assert.isBelow(compact.shellStdoutHeadShare, 1)
    assert.isAbove(compact.shellStderrHeadShare, 0)
    assert.isBelow(compact.shellStderrHeadShare, 1)
    assert.isBelow(compact.readWindowLines, Budgets.defaults.readWindowLines)
    assert.isBelow(compact.searchMaxBytes, Budgets.defaults.searchMaxBytes)
  })

  it.prop(
    "every override a preset accepts keeps the cross-field laws",
    {
      profile: fc.constantFrom(...Budgets.profileNames),
      overrides: fc.record(
        {
          shellStdoutMaxBytes: fc.integer({ min: 1, max: 600 * KB }),
          shellStderrMaxBytes: fc.integer({ min: 1, max: 600 * KB }),
          shellStdoutMaxLines: fc.integer({ min: 1, max: 300_000 }),
          shellStdoutHeadShare: fc.double({ min: 0, max: 1, noNaN: true }),
          shellStderrHeadShare: fc.double({ min: 0, max: 1, noNaN: true }),
          captureMaxBytes: fc.integer({ min: 4, max: 2048 * KB }),
          spillMaxBytes: fc.integer({ min: 4, max: 2048 * KB })
        },
        { requiredKeys: [] }
      )
    },
    ({ profile, overrides }) => {
      const made = Budgets.make(overrides, profile)
      if (Either.isRight(made)) assertLaws(made.right)
      else assert.isAbove(made.left.fields.length, 0)
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it.effect("TOOLCAP_PROFILE selects a preset, and a field's variable still overrides it", () =>
    Effect.gen(function* () {
      const compact = yield* loadFromEnv({ TOOLCAP_PROFILE: "compact" }).pipe(Effect.flatten)
      assert.deepStrictEqual({ ...compact }, { ...Budgets.profiles.compact })
      const tuned = yield* loadFromEnv({
        TOOLCAP_PROFILE: " compact ",
        TOOLCAP_SHELL_STDOUT_MAX_BYTES: "12288"
      }).pipe(Effect.flatten)
      assert.strictEqual(tuned.shellStdoutMaxBytes, 12 * KB)
      assert.strictEqual(tuned.readWindowLines, Budgets.profiles.compact.readWindowLines)
      const spec = yield* loadFromEnv({ TOOLCAP_PROFILE: "spec" }).pipe(Effect.flatten)
      assert.deepStrictEqual({ ...spec }, { ...Budgets.defaults })
    })
  )

  it.effect("an unknown TOOLCAP_PROFILE fails at startup naming the variable and the presets", () =>
    Effect.gen(function* () {
      const result = yield* loadFromEnv({ TOOLCAP_PROFILE: "tiny" })
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result))
        assert.include(result.left, "TOOLCAP_PROFILE must name a preset (spec, compact)")
    })
  )

  it.effect("layerWith and layerProfile start from a preset", () =>
    Effect.gen(function* () {
      const compact = yield* Budgets.Budgets.pipe(Effect.provide(Budgets.layerProfile("compact")))
      assert.strictEqual(compact, Budgets.profiles.compact)
      const tuned = yield* Budgets.Budgets.pipe(
        Effect.provide(Budgets.layerWith({ grepHeadLimit: 7 }, "compact"))
      )
      assert.strictEqual(tuned.grepHeadLimit, 7)
      assert.strictEqual(tuned.readWindowLines, Budgets.profiles.compact.readWindowLines)
    })
  )
})
