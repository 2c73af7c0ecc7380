/**
 * Token counts of the text a model reads: OpenAI's `o200k_base` BPE (the GPT-4o / o-series
 * encoding) as `gpt-tokenizer` implements it, the same counter for every policy.
 *
 * The encoding's rank table is large, so it is loaded when the run asks for it, not at import.
 *
 * @since 0.1.0
 */

/**
 * The tokenizer, named as the method states it.
 *
 * @since 0.1.0
 * @category models
 */
export const TOKENIZER = "`o200k_base` (the GPT-4o encoding) as `gpt-tokenizer` 4.0.0 counts it"

/**
 * @since 0.1.0
 * @category models
 */
export type Count = (text: string) => number

/**
 * Loads the `o200k_base` counter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const o200k = async (): Promise<Count> => {
  const encoding = await import("gpt-tokenizer/encoding/o200k_base")
  return (text) => (text === "" ? 0 : encoding.countTokens(text))
}

/**
 * A character count over four: the rough estimate the earlier reports used, kept as a second
 * column for comparison only.
 *
 * @since 0.1.0
 * @category constructors
 */
export const charsOver4: Count = (text) => Math.ceil(text.length / 4)
