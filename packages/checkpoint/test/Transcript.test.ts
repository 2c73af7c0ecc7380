// The neutral transcript model and its provider codecs: ids assigned by position, shapes
// converted both ways, bad input refused with a typed error.
import { assert, describe, it } from "@effect/vitest"
import { Transcript } from "@toolcap/checkpoint"
import { Effect, Either } from "effect"
import { arbTranscript } from "./fixtures/generate.js"

const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runSync(Effect.either(effect))
const right = <A>(effect: Effect.Effect<A, unknown>): A => {
  const result = run(effect)
  if (Either.isLeft(result)) throw new Error(String(result.left))
  return result.right
}
const reasonOf = (effect: Effect.Effect<unknown, { readonly reason: string }>) => {
  const result = Effect.runSync(Effect.either(effect))
  assert.isTrue(Either.isLeft(result))
  return (result as Either.Left<{ readonly reason: string }, unknown>).left.reason
}

const calls = (t: Transcript.Transcript) =>
  t.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls.map((c) => c.id) : []))
const results = (t: Transcript.Transcript) =>
  t.messages.flatMap((m) => (m.role === "tool" ? [`${m.callId}:${m.text}`] : []))

const anthropic = [
  { role: "user", content: "Find the failing test." },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "...", signature: "s" },
      { type: "text", text: "Running two searches." },
      { type: "tool_use", id: "toolu_1", name: "Grep", input: { pattern: "fail" } },
      { type: "tool_use", id: "toolu_2", name: "Glob", input: { pattern: "**/*.test.ts" } }
    ]
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_1", content: "a.test.ts:3: fail" },
      {
        type: "tool_result",
        tool_use_id: "toolu_2",
        content: [{ type: "text", text: "a.test.ts" }],
        is_error: true
      },
      { type: "text", text: "Also check b." },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } }
    ]
  }
]

describe("Transcript", () => {
  it("fromAnthropic: ids by position, one message per user block, thinking dropped, images as placeholders", () => {
    const transcript = right(Transcript.fromAnthropic({ model: "claude", messages: anthropic }))
    assert.deepStrictEqual(transcript.messages, [
      { role: "user", id: "m0", text: "Find the failing test." },
      {
        role: "assistant",
        id: "m1",
        text: "Running two searches.",
        toolCalls: [
          { id: "toolu_1", name: "Grep", arguments: '{"pattern":"fail"}' },
          { id: "toolu_2", name: "Glob", arguments: '{"pattern":"**/*.test.ts"}' }
        ]
      },
      { role: "tool", id: "m2.0", callId: "toolu_1", text: "a.test.ts:3: fail" },
      { role: "tool", id: "m2.1", callId: "toolu_2", text: "a.test.ts", isError: true },
      { role: "user", id: "m2.2", text: "Also check b." },
      { role: "user", id: "m2.3", text: "[image omitted]" }
    ])
    // and back: tool results and text share one user message again, inputs are objects again
    const back = Transcript.toAnthropic(transcript)
    assert.deepStrictEqual(back[2], {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "a.test.ts:3: fail" },
        { type: "tool_result", tool_use_id: "toolu_2", content: "a.test.ts", is_error: true },
        { type: "text", text: "Also check b." },
        { type: "text", text: "[image omitted]" }
      ]
    })
    assert.deepStrictEqual((back[1]!.content as Array<{ input?: unknown }>)[1]!.input, { pattern: "fail" })
  })

  it("fromOpenAIChat: system skipped (positions still count), tool_calls and tool messages", () => {
    const chat = [
      { role: "system", content: "You are helpful." },
      {
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "image_url", image_url: { url: "x" } }
        ]
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"' } }
        ]
      },
      { role: "tool", tool_call_id: "call_1", content: "README.md" }
    ]
    const transcript = right(Transcript.fromOpenAIChat({ messages: chat }))
    assert.deepStrictEqual(transcript.messages, [
      { role: "user", id: "m1", text: "hi\n\n[image_url omitted]" },
      // arguments kept as the provider gave them, even when not valid JSON
      {
        role: "assistant",
        id: "m2",
        text: "",
        toolCalls: [{ id: "call_1", name: "Bash", arguments: '{"command":"ls"' }]
      },
      { role: "tool", id: "m3", callId: "call_1", text: "README.md" }
    ])
    assert.deepStrictEqual(Transcript.toOpenAIChat(transcript).slice(1), chat.slice(2))
  })

  it("fromOpenAIResponses: an assistant message and the function calls after it form one turn", () => {
    const items = [
      { role: "developer", content: "rules" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "run both" }] },
      { type: "reasoning", id: "rs_1", summary: [] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Starting." }] },
      { type: "function_call", call_id: "fc_1", name: "Bash", arguments: "{}" },
      { type: "function_call", call_id: "fc_2", name: "Bash", arguments: "{}" },
      { type: "function_call_output", call_id: "fc_2", output: "two" },
      { type: "function_call_output", call_id: "fc_1", output: "one" }
    ]
    const transcript = right(Transcript.fromOpenAIResponses({ input: items }))
    assert.deepStrictEqual(transcript.messages, [
      { role: "user", id: "m1", text: "run both" },
      {
        role: "assistant",
        id: "m3",
        text: "Starting.",
        toolCalls: [
          { id: "fc_1", name: "Bash", arguments: "{}" },
          { id: "fc_2", name: "Bash", arguments: "{}" }
        ]
      },
      { role: "tool", id: "m6", callId: "fc_2", text: "two" },
      { role: "tool", id: "m7", callId: "fc_1", text: "one" }
    ])
    assert.deepStrictEqual(Transcript.toOpenAIResponses(transcript).slice(1), [
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Starting." }] },
      ...items.slice(4)
    ])
  })

  it.prop(
    "every codec: a provider shape converted in and out again is a fixed point, calls and results intact",
    { transcript: arbTranscript },
    ({ transcript }) => {
      const codecs = [
        [Transcript.toAnthropic, Transcript.fromAnthropic],
        [Transcript.toOpenAIChat, Transcript.fromOpenAIChat],
        [Transcript.toOpenAIResponses, Transcript.fromOpenAIResponses]
      ] as const
      for (const [to, from] of codecs) {
        const shape = to(transcript)
        const again = right(from(shape))
        assert.deepStrictEqual(to(again), shape)
        assert.deepStrictEqual(calls(again), calls(transcript))
        assert.deepStrictEqual(results(again), results(transcript))
        assert.strictEqual(
          Transcript.detect(to === Transcript.toOpenAIResponses ? { input: shape } : shape) === "toolcap",
          false
        )
      }
      assert.strictEqual(
        Transcript.detect(transcript),
        transcript.messages.length === 0 ? "anthropic" : "toolcap"
      )
    },
    { fastCheck: { numRuns: 200 } }
  )

  it("detect and fromAny pick the codec", () => {
    assert.strictEqual(Transcript.detect({ messages: anthropic }), "anthropic")
    assert.strictEqual(Transcript.detect([{ role: "tool", tool_call_id: "x", content: "" }]), "openai-chat")
    assert.strictEqual(
      Transcript.detect([{ type: "function_call_output", call_id: "x", output: "" }]),
      "openai-responses"
    )
    assert.strictEqual(Transcript.detect({ messages: [{ role: "user", id: "u", text: "x" }] }), "toolcap")
    const transcript = right(Transcript.fromAny({ messages: anthropic }))
    assert.strictEqual(transcript.messages.length, 6)
  })

  it("bad input gets a typed error naming the reason", () => {
    assert.strictEqual(reasonOf(Transcript.fromAnthropic([{ role: "system", content: "x" }])), "unknown-role")
    assert.strictEqual(
      reasonOf(Transcript.fromOpenAIChat([{ role: "function", content: "x" }])),
      "unknown-role"
    )
    assert.strictEqual(
      reasonOf(Transcript.fromOpenAIResponses([{ type: "web_search_call", id: "w" }])),
      "unknown-role"
    )
    assert.strictEqual(
      reasonOf(Transcript.fromOpenAIResponses([{ role: "critic", content: "x" }])),
      "unknown-role"
    )
    assert.strictEqual(
      reasonOf(
        Transcript.fromAnthropic([
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "x" }] }
        ])
      ),
      "orphan-result"
    )
    assert.strictEqual(
      reasonOf(
        Transcript.fromOpenAIChat([
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c", type: "function", function: { name: "a", arguments: "{}" } }]
          },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c", type: "function", function: { name: "b", arguments: "{}" } }]
          }
        ])
      ),
      "duplicate-call-id"
    )
    assert.strictEqual(reasonOf(Transcript.fromAnthropic("not a transcript")), "schema")
    assert.strictEqual(
      reasonOf(Transcript.fromAnthropic([{ role: "user", content: [{ text: "no type" }] }])),
      "schema"
    )
    assert.strictEqual(reasonOf(Transcript.fromOpenAIChat([{ role: "tool", content: "x" }])), "schema")
  })

  it("parseJson refuses bytes that are not UTF-8 and text that is not JSON", () => {
    const good = new TextEncoder().encode(
      JSON.stringify({ messages: [{ role: "user", id: "u", text: "é" }] })
    )
    assert.deepStrictEqual(right(Transcript.parseJson(good)), {
      messages: [{ role: "user", id: "u", text: "é" }]
    })
    const bad = Uint8Array.from([
      ...new TextEncoder().encode('{"messages":[{"role":"user","id":"u","text":"'),
      0xc3,
      0x28,
      0x22,
      0x7d,
      0x5d,
      0x7d
    ])
    assert.strictEqual(reasonOf(Transcript.parseJson(bad)), "invalid-utf8")
    assert.strictEqual(reasonOf(Transcript.parseJson("{not json")), "schema")
    // a byte order mark is dropped; an encoded lone surrogate (ED A0 80) is not UTF-8
    assert.deepStrictEqual(right(Transcript.parseJson(new Uint8Array([0xef, 0xbb, 0xbf, ...good]))), {
      messages: [{ role: "user", id: "u", text: "é" }]
    })
    assert.strictEqual(
      reasonOf(Transcript.parseJson(new Uint8Array([0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d]))),
      "invalid-utf8"
    )
  })
})
