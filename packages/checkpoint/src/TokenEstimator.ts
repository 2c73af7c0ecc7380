/**
 * How many model tokens a text costs. The checkpoint budgets are in tokens, so every figure a
 * checkpoint reports goes through this one service; hosts that have their model's tokenizer plug
 * it in with `layerWith`.
 *
 * The default (`estimate`, `layer`) is a single pass over the text with a fixed weight per
 * character class, tuned against the o200k and cl100k tokenizers (see the package README for the
 * measured error). It is built so that cutting by it is exact:
 * - monotone: a longer prefix or suffix never costs fewer tokens;
 * - one code point adds at most one token, at either end;
 * - a text cut at a newline costs no more than its two sides together.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * @since 0.1.0
 * @category models
 */
export interface TokenEstimatorValue {
  /** Tokens the text costs; a non-negative integer, 0 for the empty text. */
  readonly estimate: (text: string) => number
}

/**
 * @since 0.1.0
 * @category services
 */
export class TokenEstimator extends Context.Tag("@toolcap/checkpoint/TokenEstimator")<
  TokenEstimator,
  TokenEstimatorValue
>() {}

// Character classes of the default estimate. A class's weight is in eighths of a token and may
// depend on whether the previous character had the same class (BPE merges runs of letters,
// digits, spaces and punctuation into few tokens, but each run starts a new token).
const LETTER = 0
const DIGIT = 1
const SPACE = 2
const BREAK = 3 // \n \r \t and the start of the text
const PUNCT = 4
const LATIN = 5 // accented Latin (U+0080..U+024F, U+1E00..U+1EFF)
const OTHER = 6 // other scripts below U+3000: Greek, Cyrillic, Hebrew, Arabic, Indic...
const WIDE = 7 // U+3000 and above in the BMP: CJK, kana, Hangul, fullwidth forms
const ASTRAL = 8 // a surrogate pair (emoji, rare CJK); a lone surrogate counts the same

/** Weight in eighths when a run of the class starts. */
const START = [4, 8, 2, 4, 7, 8, 4, 8, 8]
/** Weight in eighths when the class continues a run of itself; never above START (monotone suffixes). */
const CONTINUE = [1, 4, 1, 4, 1, 8, 4, 8, 8]

const asciiClass = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  asciiClass[c] =
    (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
      ? LETTER
      : c >= 48 && c <= 57
        ? DIGIT
        : c === 32
          ? SPACE
          : c === 10 || c === 13 || c === 9
            ? BREAK
            : PUNCT
}

/**
 * The default estimate: one pass, no allocation, about 1 ns per character.
 *
 * @since 0.1.0
 * @category constructors
 */
export const estimate = (text: string): number => {
  let eighths = 0
  let previous = BREAK
  const length = text.length
  for (let at = 0; at < length; at++) {
    const unit = text.charCodeAt(at)
    let cls: number
    if (unit < 128) cls = asciiClass[unit]!
    else if (unit >= 0xdc00 && unit <= 0xdfff) {
      // the low half of a pair was counted with its high half
      if (at > 0 && (text.charCodeAt(at - 1) & 0xfc00) === 0xd800) continue
      cls = ASTRAL
    } else if (unit >= 0xd800 && unit <= 0xdbff) cls = ASTRAL
    else if (unit >= 0x3000) cls = WIDE
    else if (unit < 0x250 || (unit >= 0x1e00 && unit < 0x1f00)) cls = LATIN
    else cls = OTHER
    eighths += cls === previous ? CONTINUE[cls]! : START[cls]!
    previous = cls
  }
  return Math.ceil(eighths / 8)
}

/**
 * The default estimator.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TokenEstimator> = Layer.succeed(TokenEstimator, { estimate })

/**
 * A host's own estimator (e.g. its model's tokenizer). The checkpoint re-estimates everything it
 * cuts and cuts again until the figure fits, so any estimator keeps the budgets; cuts are exact
 * only for estimators with the properties of the default.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (fn: (text: string) => number): Layer.Layer<TokenEstimator> =>
  Layer.succeed(TokenEstimator, { estimate: fn })
