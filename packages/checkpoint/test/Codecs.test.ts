// The laws of the provider codecs, each an effect Schema from the provider shape to the neutral
// transcript: decoding what was encoded gives the transcript back (ids aside: providers carry
// none, so they are assigned by position), and every malformed input is refused with
// CHECKPOINT_INVALID — never a crash, never a partial transcript.
import { assert, describe, it } from "@effect/vitest"
import { Anthropic, CheckpointError, OpenAIChat, OpenAIResponses, Transcript } from "@toolcap/checkpoint"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import { arbTranscript } from "./fixtures/generate.js"

const codecs = [
  { name: "anthropic", module: Anthropic, carriesIsError: true, key: "messages" },
  { name: "openai-chat", module: OpenAIChat, carriesIsError: false, key: "messages" },
  { name: "openai-responses", module: OpenAIResponses, carriesIsError: false, key: "input" }
] as const

/** A transcript without its ids, which a provider shape does not carry. */
const withoutIds = (transcript: Transcript.Transcript) =>
  transcript.messages.map(({ id: _id, ...rest }) => rest)

const arbText = fc.string({ unit: "grapheme", maxLength: 40 })

/**
 * Transcripts every provider shape carries whole: turns of a user message, an assistant message
 * with text, calls whose arguments are JSON objects, and a result for each call (an error flag where
 * the shape has one).
 */
const arbTurns = (carriesIsError: boolean): fc.Arbitrary<Transcript.Transcript> =>
  fc
    .array(
      fc.record({
        user: arbText,
        assistant: arbText.filter((text) => text.length > 0),
        calls: fc.array(
          fc.record({
            name: fc.constantFrom("Read", "Grep", "Bash"),
            input: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
            result: arbText,
            isError: carriesIsError ? fc.boolean() : fc.constant(false)
          }),
          { maxLength: 3 }
        )
      }),
      { minLength: 1, maxLength: 8 }
    )
    .map((turns) => {
      const messages: Array<Transcript.Message> = []
      let call = 0
      turns.forEach((turn, k) => {
        messages.push({ role: "user", id: `u${k}`, text: turn.user })
        const ids = turn.calls.map(() => `call-${call++}`)
        messages.push({
          role: "assistant",
          id: `a${k}`,
          text: turn.assistant,
          toolCalls: turn.calls.map((c, j) => ({
            id: ids[j]!,
            name: c.name,
            arguments: JSON.stringify(c.input)
          }))
        })
        turn.calls.forEach((c, j) =>
          messages.push(
            c.isError
              ? { role: "tool", id: `r${k}.${j}`, callId: ids[j]!, text: c.result, isError: true }
              : { role: "tool", id: `r${k}.${j}`, callId: ids[j]!, text: c.result }
          )
        )
      })
      return { messages }
    })

const invalidOf = (either: Either.Either<unknown, unknown>): CheckpointError.CheckpointInvalid => {
  assert.isTrue(Either.isLeft(either), "refused")
  const error = (either as Either.Left<unknown, unknown>).left
  assert.instanceOf(error, CheckpointError.CheckpointInvalid)
  assert.strictEqual((error as CheckpointError.CheckpointInvalid).code, "CHECKPOINT_INVALID")
  return error as CheckpointError.CheckpointInvalid
}

const decodeEither = (
  decode: (input: unknown) => Effect.Effect<Transcript.Transcript, unknown>,
  input: unknown
) => Effect.runSync(Effect.either(decode(input)))

describe("provider codecs", () => {
  for (const { name, module, carriesIsError } of codecs) {
    describe(`${name} codec`, () => {
      it.prop(
        "decode ∘ encode through the Schema gives the transcript back, ids by position",
        { transcript: arbTurns(carriesIsError) },
        ({ transcript }) => {
          const codec = module.Codec as unknown as Schema.Schema<Transcript.Transcript, unknown>
          const encoded = Schema.encodeSync(codec)(transcript)
          const decoded = Schema.decodeUnknownSync(codec)(encoded)
          assert.deepStrictEqual(withoutIds(decoded), withoutIds(transcript))
          assert.isTrue(Transcript.isValidated(decoded), "a decoded transcript is sealed")
          // the codec's wrapper answers the same
          assert.deepStrictEqual(Effect.runSync(module.decode(encoded)), decoded)
        },
        { fastCheck: { numRuns: 100 } }
      )

      it.prop(
        "any transcript: decoding its encoding is a fixed point of decode ∘ encode",
        { transcript: arbTranscript },
        ({ transcript }) => {
          const once = Effect.runSync(module.decode(module.encode(transcript)))
          const twice = Effect.runSync(module.decode(module.encode(once)))
          assert.deepStrictEqual(twice, once)
        },
        { fastCheck: { numRuns: 100 } }
      )

      it.prop(
        "any value is decoded or refused with CHECKPOINT_INVALID, never a crash",
        { value: fc.anything({ maxDepth: 3 }) },
        ({ value }) => {
          const result = decodeEither(module.decode, value)
          if (Either.isLeft(result)) invalidOf(result)
        },
        { fastCheck: { numRuns: 200 } }
      )

      it.prop(
        "an unknown role at any position is refused as unknown-role, naming the position",
        {
          transcript: arbTurns(carriesIsError),
          at: fc.nat(),
          role: fc.constantFrom("critic", "function", 7, null)
        },
        ({ transcript, at, role }) => {
          const shape = module.encode(transcript) as Array<unknown>
          const position = at % (shape.length + 1)
          const bad = [...shape.slice(0, position), { role, content: "x" }, ...shape.slice(position)]
          const error = invalidOf(decodeEither(module.decode, bad))
          assert.strictEqual(error.reason, "unknown-role")
          assert.strictEqual(error.messageId, `#${position}`)
        },
        { fastCheck: { numRuns: 100 } }
      )

      it.prop(
        "a result answering no call is refused as orphan-result; a field of the wrong type as schema",
        { transcript: arbTurns(carriesIsError) },
        ({ transcript }) => {
          const orphan: Transcript.Transcript = {
            messages: [...transcript.messages, { role: "tool", id: "late", callId: "never-made", text: "?" }]
          }
          assert.strictEqual(
            invalidOf(decodeEither(module.decode, module.encode(orphan))).reason,
            "orphan-result"
          )
          const shape = module.encode(transcript) as Array<Record<string, unknown>>
          const broken = [...shape, { ...shape[0]!, content: 42 }]
          const error = invalidOf(decodeEither(module.decode, broken))
          assert.strictEqual(error.reason, "schema")
          assert.strictEqual(error.messageId, `#${shape.length}`)
        },
        { fastCheck: { numRuns: 50 } }
      )
    })
  }
})
