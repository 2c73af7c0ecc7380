// The checkpoint builder: the worked example of rules C2, the summary placement, the mid-turn
// parallel batch (rules C4, C5) and the laws of rules C1–C6 as properties.
import { assert, describe, it } from "@effect/vitest"
import { Checkpoint, CheckpointError, TokenEstimator, Transcript } from "@toolcap/checkpoint"
import { Budgets, Marker } from "@toolcap/limits"
import { Effect, Either, FastCheck as fc, Layer } from "effect"
import { arbBudgets, arbTranscript, batchTranscript, wordEstimate } from "./fixtures/generate.js"

const word = (w: string, n: number) => Array.from({ length: n }, (_, k) => `${w}${k}`).join(" ")

const defaults = Layer.merge(Budgets.layer, TokenEstimator.layer)
const byWords = Layer.merge(Budgets.layer, TokenEstimator.layerWith(wordEstimate))

const build = (
  transcript: unknown,
  budgets: Budgets.BudgetsValue,
  estimate: (text: string) => number = TokenEstimator.estimate,
  options: Checkpoint.BuildOptions = {}
) =>
  Effect.runSync(
    Effect.either(
      Checkpoint.build(transcript, options).pipe(
        Effect.provideService(Budgets.Budgets, budgets),
        Effect.provideService(TokenEstimator.TokenEstimator, { estimate })
      )
    )
  )

const textOf = (entry: Checkpoint.ContextEntry): string => entry.message.text

const marker = Marker.checkpointMarker

/** Builds and expects a CheckpointInvalid with this reason. */
const expectInvalid = (input: unknown, reason: CheckpointError.InvalidReason, budgets = Budgets.defaults) => {
  const result = build(input, budgets)
  assert.isTrue(Either.isLeft(result), `expected ${reason}`)
  const error = (result as Either.Left<CheckpointError.CheckpointInvalid, unknown>).left
  assert.instanceOf(error, CheckpointError.CheckpointInvalid)
  assert.strictEqual(error.code, "CHECKPOINT_INVALID")
  assert.strictEqual(error.reason, reason)
  assert.isAbove(error.message.length, 20)
  return error
}
const userMessage = (id: string, text = "x") => ({ role: "user", id, text })
const readCall = (id: string) => ({ id, name: "Read", arguments: "{}" })

/** Builds a transcript that must succeed. */
const ok = (transcript: Transcript.Transcript, budgets: Budgets.BudgetsValue) => {
  const result = build(transcript, budgets)
  if (Either.isLeft(result)) throw new Error(`unexpected ${result.left.message}`)
  return result.right
}

/** Charges a marked text 3 tokens more than its parts: every first cut misses and is cut again. */
const lumpy = (text: string) =>
  text.length === 0 ? 0 : Math.ceil(text.length / 3) + (text.includes(marker) ? 3 : 0)

describe("Checkpoint.build", () => {
  it.effect("worked example (rules C2): U1 5,000 / U2 12,000 / U3 6,000 tokens, budget 20,000", () =>
    Effect.gen(function* () {
      const u1 = word("one", 5000)
      const transcript = {
        messages: [
          { role: "user", id: "U1", text: u1 },
          {
            role: "assistant",
            id: "A1",
            text: "reading",
            toolCalls: [{ id: "c1", name: "Read", arguments: "{}" }]
          },
          { role: "tool", id: "R1", callId: "c1", text: word("result", 900) },
          { role: "user", id: "U2", text: word("two", 12000) },
          { role: "assistant", id: "A2", text: "done", toolCalls: [] },
          { role: "user", id: "U3", text: word("three", 6000) }
        ]
      }
      const checkpoint = yield* Checkpoint.build(transcript)
      const markerTokens = wordEstimate(`\n${marker}\n`)
      // U3 (6,000) and U2 (18,000 total) whole; U1 crosses with 2,000 left
      assert.deepStrictEqual(
        checkpoint.context.map((entry) => [entry.origin, entry.message.id]),
        [
          ["cut", "U1"],
          ["retained", "U2"],
          ["retained", "U3"]
        ]
      )
      const cut = checkpoint.cut!
      assert.strictEqual(cut.messageId, "U1")
      assert.strictEqual(cut.budgetTokens, 2000)
      assert.strictEqual(cut.markerTokens, markerTokens)
      // 75% / 25% of (2,000 - marker tokens), as head / tail
      assert.strictEqual(cut.headTokens, Math.floor((2000 - markerTokens) * 0.75))
      assert.strictEqual(cut.tailTokens, 2000 - markerTokens - cut.headTokens)
      const text = textOf(checkpoint.context[0]!)
      const [head, tail] = text.split(`\n${marker}\n`)
      assert.isTrue(u1.startsWith(head!) && u1.endsWith(tail!))
      // the longest head within its share: the first 1,493 words (and the space after them)
      assert.strictEqual(head, `${word("one", cut.headTokens)} `)
      assert.strictEqual(wordEstimate(tail!), cut.tailTokens)
      assert.strictEqual(checkpoint.retainedTokens, 20000)
      assert.deepStrictEqual(checkpoint.dropped, { userMessageIds: [], otherMessages: 3 })
      assert.isNull(checkpoint.batch)
      // no tool result crosses the boundary
      assert.isFalse(checkpoint.context.some((entry) => entry.message.role !== "user"))
    }).pipe(Effect.provide(byWords))
  )

  it.effect("older user messages than the crossing one are dropped, kept ones stay in order", () =>
    Effect.gen(function* () {
      const transcript = {
        messages: [
          { role: "user", id: "old", text: word("old", 10) },
          { role: "user", id: "cross", text: word("cross", 5000) },
          { role: "user", id: "mid", text: word("mid", 9000) },
          { role: "user", id: "new", text: word("new", 9000) }
        ]
      }
      const checkpoint = yield* Checkpoint.build(transcript)
      assert.deepStrictEqual(
        checkpoint.context.map((entry) => entry.message.id),
        ["cross", "mid", "new"]
      )
      assert.deepStrictEqual(checkpoint.dropped.userMessageIds, ["old"])
    }).pipe(Effect.provide(byWords))
  )

  it.effect("a crossing message with no room beside the marker is dropped, not marked", () =>
    Effect.gen(function* () {
      const transcript = {
        messages: [
          { role: "user", id: "a", text: word("a", 30) },
          { role: "user", id: "b", text: word("b", 19995) }
        ]
      }
      const checkpoint = yield* Checkpoint.build(transcript)
      assert.deepStrictEqual(
        checkpoint.context.map((entry) => entry.origin),
        ["retained"]
      )
      assert.isNull(checkpoint.cut)
      assert.deepStrictEqual(checkpoint.dropped.userMessageIds, ["a"])
      assert.isFalse(checkpoint.context.some((entry) => textOf(entry).includes(marker)))
    }).pipe(Effect.provide(byWords))
  )

  it.effect("the summary follows the retained user messages and is not charged to their budget", () =>
    Effect.gen(function* () {
      const transcript = {
        messages: [
          { role: "user", id: "u1", text: word("u", 15000) },
          { role: "user", id: "u2", text: word("v", 5000) }
        ]
      }
      const summary = word("summary", 3000)
      const checkpoint = yield* Checkpoint.build(transcript, { summary })
      assert.deepStrictEqual(
        checkpoint.context.map((entry) => [entry.origin, entry.message.id]),
        [
          ["retained", "u1"],
          ["retained", "u2"],
          ["summary", Checkpoint.summaryId]
        ]
      )
      assert.strictEqual(checkpoint.retainedTokens, 20000)
      assert.strictEqual(checkpoint.summaryTokens, 3000)
      assert.strictEqual(textOf(checkpoint.context[2]!), summary)
      assert.isNull(checkpoint.cut)
    }).pipe(Effect.provide(byWords))
  )

  it.effect(
    "an oversized parallel batch compacts to a bounded, marked tail; the original transcript is unchanged",
    () =>
      Effect.gen(function* () {
        const transcript = batchTranscript({
          seed: 7,
          exchanges: 4,
          userWords: 3000,
          historyResultWords: 2000,
          batchResultWords: [30000, 200, 12000, 45000, 900]
        })
        const snapshot = JSON.stringify(transcript)
        const copy = structuredClone(transcript)
        const checkpoint = yield* Checkpoint.build(transcript)
        const { estimate } = yield* TokenEstimator.TokenEstimator
        const budgets = yield* Budgets.Budgets
        const batch = checkpoint.batch!
        // the open turn follows the retained user messages, every call with exactly one result
        const tail = checkpoint.context.slice(
          checkpoint.context.findIndex((entry) => entry.origin === "turn")
        )
        assert.strictEqual(tail[0]!.message.id, "a-open")
        assert.deepStrictEqual(
          tail.slice(1).map((entry) => (entry.message as Transcript.ToolResultMessage).callId),
          ["batch-c0", "batch-c1", "batch-c2", "batch-c3", "batch-c4"]
        )
        assert.isTrue(
          checkpoint.context.slice(0, -tail.length).every((entry) => entry.message.role === "user")
        )
        // bounded after re-estimation
        const resultTokens = tail.slice(1).reduce((sum, entry) => sum + estimate(textOf(entry)), 0)
        assert.isAtMost(resultTokens, budgets.checkpointBatchTokens)
        assert.strictEqual(batch.tokens, resultTokens)
        assert.isAbove(batch.originalTokens, budgets.checkpointBatchTokens)
        // water-filling: small results whole, large ones cut to the common cap with the marker inside
        const cap = batch.cap!
        for (const [k, result] of batch.results.entries()) {
          const entry = tail[k + 1]!
          const original = transcript.messages.find(
            (m) => m.id === result.messageId
          ) as Transcript.ToolResultMessage
          if (result.originalTokens <= cap) {
            assert.isNull(result.cut)
            assert.strictEqual(entry.origin, "result")
            assert.strictEqual(textOf(entry), original.text)
          } else {
            assert.strictEqual(entry.origin, "result-cut")
            assert.isAtMost(estimate(textOf(entry)), cap)
            const [head, rest] = textOf(entry).split(`\n${marker}\n`)
            assert.isTrue(original.text.startsWith(head!) && original.text.endsWith(rest!))
            assert.isAtMost(
              Math.abs(result.cut!.headTokens - 0.75 * (result.cut!.headTokens + result.cut!.tailTokens)),
              1
            )
          }
        }
        // the cap is the largest that fits: one more token per cut result would overflow
        const cutCount = batch.results.filter((result) => result.cut !== null).length
        assert.isAbove(batch.tokens + cutCount, budgets.checkpointBatchTokens - cutCount)
        assert.deepStrictEqual(batch.pending, [])
        // checkpoint-only truncation never rewrites the original transcript
        assert.strictEqual(JSON.stringify(transcript), snapshot)
        assert.deepStrictEqual(transcript, copy)
      }).pipe(Effect.provide(defaults))
  )

  it.effect(
    "mid-turn with calls still unanswered: they are reported pending, never given a made-up result",
    () =>
      Effect.gen(function* () {
        const transcript = {
          messages: [
            { role: "user", id: "u", text: "run both" },
            {
              role: "assistant",
              id: "a",
              text: "",
              toolCalls: [
                { id: "c1", name: "Bash", arguments: "{}" },
                { id: "c2", name: "Bash", arguments: "{}" }
              ]
            },
            { role: "tool", id: "r2", callId: "c2", text: "ok" }
          ]
        }
        const checkpoint = yield* Checkpoint.build(transcript)
        assert.deepStrictEqual(checkpoint.batch!.pending, ["c1"])
        assert.deepStrictEqual(
          checkpoint.context.map((entry) => entry.message.id),
          ["u", "a", "r2"]
        )
      }).pipe(Effect.provide(defaults))
  )

  it.effect("a transcript ending in a finished turn keeps no assistant message or result", () =>
    Effect.gen(function* () {
      const transcript = {
        messages: [
          { role: "user", id: "u", text: "hi" },
          { role: "assistant", id: "a", text: "", toolCalls: [{ id: "c", name: "Read", arguments: "{}" }] },
          { role: "tool", id: "r", callId: "c", text: "body" },
          { role: "assistant", id: "a2", text: "done", toolCalls: [] }
        ]
      }
      const checkpoint = yield* Checkpoint.build(transcript)
      assert.deepStrictEqual(
        checkpoint.context.map((entry) => entry.message.id),
        ["u"]
      )
      assert.isNull(checkpoint.batch)
    }).pipe(Effect.provide(defaults))
  )

  describe("bad input: a typed error or a documented repair, never a crash", () => {
    it("unknown role", () => {
      const error = expectInvalid(
        { messages: [userMessage("u"), { role: "system", id: "s", text: "x" }] },
        "unknown-role"
      )
      assert.strictEqual(error.messageId, "s")
      assert.strictEqual(
        expectInvalid({ messages: [{ id: "n", text: "no role" }] }, "unknown-role").messageId,
        "n"
      )
      // a message without an id is named by its position
      assert.strictEqual(
        expectInvalid({ messages: [userMessage("u"), { role: 7 }] }, "unknown-role").messageId,
        "#1"
      )
    })
    it("not a transcript, or a malformed message", () => {
      const inputs = [
        null,
        [userMessage("u")],
        { messages: [{ role: "user", id: "u", text: 42 }] },
        { messages: [{ role: "assistant", id: "a", text: "" }] }
      ]
      for (const input of inputs) assert.strictEqual(expectInvalid(input, "schema").reason, "schema")
    })
    it("a tool result without its call", () => {
      const error = expectInvalid(
        { messages: [userMessage("u"), { role: "tool", id: "r", callId: "nobody", text: "x" }] },
        "orphan-result"
      )
      assert.strictEqual(error.messageId, "r")
      // a result before its call is an orphan too
      expectInvalid(
        {
          messages: [
            { role: "tool", id: "r", callId: "c", text: "x" },
            { role: "assistant", id: "a", text: "", toolCalls: [readCall("c")] }
          ]
        },
        "orphan-result"
      )
    })
    it("a call id used twice, a call answered twice, a message id used twice, a reserved id", () => {
      expectInvalid(
        {
          messages: [
            { role: "assistant", id: "a1", text: "", toolCalls: [readCall("c")] },
            { role: "assistant", id: "a2", text: "", toolCalls: [readCall("c")] }
          ]
        },
        "duplicate-call-id"
      )
      expectInvalid(
        {
          messages: [
            { role: "assistant", id: "a", text: "", toolCalls: [readCall("c")] },
            { role: "tool", id: "r1", callId: "c", text: "1" },
            { role: "tool", id: "r2", callId: "c", text: "2" }
          ]
        },
        "duplicate-result"
      )
      const duplicate = expectInvalid(
        { messages: [userMessage("u"), userMessage("u")] },
        "duplicate-message-id"
      )
      assert.strictEqual(duplicate.messageId, "u")
      const reserved = expectInvalid({ messages: [userMessage(Checkpoint.summaryId)] }, "reserved-id")
      assert.strictEqual(reserved.messageId, Checkpoint.summaryId)
    })
    it("a budget of 0 (or a share outside (0, 1)) is refused when the budgets are made, before any build", () => {
      for (const [field, value] of [
        ["checkpointRetentionTokens", 0],
        ["checkpointBatchTokens", 0],
        ["checkpointRetentionTokens", 1.5],
        ["checkpointHeadShare", 1],
        ["checkpointHeadShare", 0]
      ] as const) {
        const made = Budgets.make({ [field]: value })
        assert.isTrue(Either.isLeft(made), `${field} ${value}`)
        if (Either.isLeft(made)) assert.deepStrictEqual(made.left.fields, [field])
      }
    })
    it("a batch budget too small for the batch's markers names the minimum", () => {
      const budgets = Budgets.make({ checkpointBatchTokens: 20 })
      assert.isTrue(Either.isRight(budgets))
      const transcript = batchTranscript({
        seed: 1,
        exchanges: 0,
        userWords: 5,
        historyResultWords: 0,
        batchResultWords: [500, 500, 500]
      })
      const error = expectInvalid(
        transcript,
        "budget",
        (budgets as Either.Right<never, Budgets.BudgetsValue>).right
      )
      assert.include(error.detail, "TOOLCAP_CHECKPOINT_BATCH_TOKENS")
    })
    it("lone surrogates are repaired to U+FFFD in the context (recorded), the transcript keeps them", () => {
      const transcript = {
        messages: [
          userMessage("u1", "ok \ud83d tail"),
          userMessage("u2", "fine"),
          userMessage("u3", "\udc00 lead")
        ]
      }
      const snapshot = JSON.stringify(transcript)
      const result = build(transcript, Budgets.defaults)
      assert.isTrue(Either.isRight(result))
      const checkpoint = (result as Either.Right<never, Checkpoint.Checkpoint>).right
      assert.deepStrictEqual(checkpoint.context.map(textOf), ["ok \ufffd tail", "fine", "\ufffd lead"])
      assert.deepStrictEqual(checkpoint.repairs, [
        { messageId: "u3", kind: "lone-surrogate" },
        { messageId: "u1", kind: "lone-surrogate" }
      ])
      assert.strictEqual(JSON.stringify(transcript), snapshot)
    })
  })

  describe("laws", () => {
    const runs = { fastCheck: { numRuns: 300 } }
    const budgetsAndTranscript = { transcript: arbTranscript, budgets: arbBudgets }
    const estimate = TokenEstimator.estimate

    it.prop(
      "retained tokens <= the retention budget, and results <= the batch budget, after re-estimation",
      budgetsAndTranscript,
      ({ budgets, transcript }) => {
        const checkpoint = ok(transcript, budgets)
        const users = checkpoint.context.filter(
          (entry) => entry.origin === "retained" || entry.origin === "cut"
        )
        const retained = users.reduce((sum, entry) => sum + estimate(textOf(entry)), 0)
        assert.isAtMost(retained, budgets.checkpointRetentionTokens)
        assert.strictEqual(checkpoint.retainedTokens, retained)
        for (const entry of checkpoint.context) {
          const calls = entry.message.role === "assistant" ? entry.message.toolCalls : []
          const expected = calls.reduce(
            (sum, call) => sum + estimate(call.name) + estimate(call.arguments),
            estimate(textOf(entry))
          )
          assert.strictEqual(entry.tokens, expected)
        }
        if (checkpoint.batch !== null) {
          const results = checkpoint.context.filter((entry) => entry.message.role === "tool")
          const total = results.reduce((sum, entry) => sum + estimate(textOf(entry)), 0)
          assert.isAtMost(total, budgets.checkpointBatchTokens)
          assert.strictEqual(checkpoint.batch.tokens, total)
        }
      },
      runs
    )

    it.prop(
      "every tool call in the tail has exactly one result (or is pending), and no result lacks its call",
      budgetsAndTranscript,
      ({ budgets, transcript }) => {
        const checkpoint = ok(transcript, budgets)
        const calls = checkpoint.context.flatMap((entry) =>
          entry.message.role === "assistant" ? entry.message.toolCalls.map((call) => call.id) : []
        )
        const results = checkpoint.context.flatMap((entry) =>
          entry.message.role === "tool" ? [entry.message.callId] : []
        )
        const pending = checkpoint.batch?.pending ?? []
        for (const id of calls) {
          const answers = results.filter((callId) => callId === id).length
          assert.strictEqual(answers, pending.includes(id) ? 0 : 1, `call ${id}`)
        }
        for (const callId of results) assert.include(calls, callId)
        // the assistant turn, if any, comes after every user message and before its results
        const firstNonUser = checkpoint.context.findIndex((entry) => entry.message.role !== "user")
        if (firstNonUser !== -1) {
          assert.strictEqual(checkpoint.context[firstNonUser]!.origin, "turn")
          assert.isTrue(
            checkpoint.context.slice(firstNonUser + 1).every((entry) => entry.message.role === "tool")
          )
        }
      },
      runs
    )

    it.prop(
      "the original transcript is byte-identical after building",
      budgetsAndTranscript,
      ({ budgets, transcript }) => {
        const snapshot = JSON.stringify(transcript)
        const copy = structuredClone(transcript)
        const checkpoint = ok(transcript, budgets)
        assert.strictEqual(JSON.stringify(transcript), snapshot)
        assert.deepStrictEqual(transcript, copy)
        // and context messages left whole are the transcript's own, text for text
        for (const entry of checkpoint.context) {
          if (entry.origin === "retained" || entry.origin === "result" || entry.origin === "turn") {
            const original = transcript.messages.find((message) => message.id === entry.message.id)
            assert.deepStrictEqual(entry.message, original)
          }
        }
      },
      runs
    )

    it.prop(
      "a cut message keeps a head/tail share of 75/25 (the configured share) within one token, around the marker",
      budgetsAndTranscript,
      ({ budgets, transcript }) => {
        const checkpoint = ok(transcript, budgets)
        const cuts = [
          ...(checkpoint.cut === null ? [] : [checkpoint.cut]),
          ...(checkpoint.batch?.results.flatMap((result) => (result.cut === null ? [] : [result.cut])) ?? [])
        ]
        for (const cut of cuts) {
          const original = transcript.messages.find((message) => message.id === cut.messageId)!.text
          const entry = checkpoint.context.find((e) => e.message.id === cut.messageId)!
          const [head, tail, ...rest] = textOf(entry).split(`\n${marker}\n`)
          assert.strictEqual(rest.length, 0)
          assert.isTrue(original.startsWith(head!) && original.endsWith(tail!))
          assert.strictEqual(estimate(head!), cut.headTokens)
          assert.strictEqual(estimate(tail!), cut.tailTokens)
          const content = cut.budgetTokens - cut.markerTokens
          // the default estimator cuts exactly: head = floor(share x content), tail = the rest
          assert.isAtMost(Math.abs(cut.headTokens - budgets.checkpointHeadShare * content), 1)
          assert.isAtMost(Math.abs(cut.tailTokens - (1 - budgets.checkpointHeadShare) * content), 1)
          assert.isAtMost(cut.tokens, cut.budgetTokens)
        }
      },
      runs
    )

    it.prop(
      "the marker is present iff the message was cut",
      budgetsAndTranscript,
      ({ budgets, transcript }) => {
        const checkpoint = ok(transcript, budgets)
        for (const entry of checkpoint.context) {
          const cut = entry.origin === "cut" || entry.origin === "result-cut"
          assert.strictEqual(textOf(entry).includes(marker), cut)
        }
        assert.strictEqual(
          checkpoint.cut !== null,
          checkpoint.context.some((entry) => entry.origin === "cut")
        )
      },
      runs
    )

    it.prop(
      "user messages are kept newest first until the budget, in their original order; only older ones are dropped",
      budgetsAndTranscript,
      ({ budgets, transcript }) => {
        const checkpoint = ok(transcript, budgets)
        const kept = checkpoint.context.filter(
          (entry) => entry.origin === "retained" || entry.origin === "cut"
        )
        const users = transcript.messages.filter((message) => message.role === "user")
        const positions = kept.map((entry) => users.findIndex((user) => user.id === entry.message.id))
        // a contiguous run of the newest user messages (before the open turn)
        positions.forEach((position, k) => assert.strictEqual(position, users.length - kept.length + k))
        assert.deepStrictEqual(
          checkpoint.dropped.userMessageIds,
          users.slice(0, users.length - kept.length).map((user) => user.id)
        )
        // only the oldest kept one may be cut
        kept.slice(1).forEach((entry) => assert.strictEqual(entry.origin, "retained"))
      },
      runs
    )

    it.prop(
      "any estimator keeps the budgets (re-estimate and cut again), here a non-additive one",
      { transcript: arbTranscript, budgets: arbBudgets },
      ({ budgets, transcript }) => {
        const result = build(transcript, budgets, lumpy)
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left.reason, "budget")
          return
        }
        const checkpoint = result.right
        const users = checkpoint.context.filter(
          (entry) => entry.origin === "retained" || entry.origin === "cut"
        )
        assert.isAtMost(
          users.reduce((sum, entry) => sum + lumpy(textOf(entry)), 0),
          budgets.checkpointRetentionTokens
        )
        const results = checkpoint.context.filter((entry) => entry.message.role === "tool")
        if (checkpoint.batch !== null) {
          assert.isAtMost(
            results.reduce((sum, entry) => sum + lumpy(textOf(entry)), 0),
            budgets.checkpointBatchTokens
          )
        }
      },
      { fastCheck: { numRuns: 150 } }
    )
  })

  it.prop(
    "an arbitrary JSON value never crashes the builder",
    { value: fc.jsonValue() },
    ({ value }) => {
      const result = build({ messages: Array.isArray(value) ? value : [value] }, Budgets.defaults)
      if (Either.isLeft(result)) assert.instanceOf(result.left, CheckpointError.CheckpointInvalid)
      else assert.isArray(result.right.context)
    },
    { fastCheck: { numRuns: 300 } }
  )
})
