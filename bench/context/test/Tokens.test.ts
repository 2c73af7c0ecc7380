// The tokenizer is the real o200k BPE: the counts the encoding gives known texts (not chars/4),
// and zero for the empty text.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Tokens from "../src/Tokens.js"

describe("tokens", () => {
  it.effect("o200k counts known texts as the encoding does", () =>
    Effect.promise(async () => {
      const count = await Tokens.o200k()
      assert.strictEqual(count(""), 0)
      // o200k_base: "hello" + " world"
      assert.strictEqual(count("hello world"), 2)
      // a long run of one digit is split in groups of three digits by o200k's pre-tokenizer
      assert.strictEqual(count("111111111"), 3)
      assert.notStrictEqual(count("hello world"), Tokens.charsOver4("hello world"))
      assert.include(Tokens.TOKENIZER, "o200k_base")
    })
  )
})
