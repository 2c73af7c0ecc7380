/**
 * The near-repeat mask (rules G2): two lines are alike when they are equal once every number,
 * hex id, timestamp and duration in them is masked, so `fetched 12 of 300 (41 ms)` and `fetched
 * 13 of 300 (38 ms)` fold while `fetched 12 of 300` and `failed 12 of 300` do not.
 *
 * @since 0.1.0
 */

/**
 * A run of digits with what may continue it as one token (`1.5`, `12:30:01.123`, `2026-12-07`,
 * `0x1f`, `a1b2c3d`): a token holding a digit, with hex letters, `.`, `:` and `-` inside it.
 */
const MASKED = /(?:0x)?[0-9a-f]*\d[0-9a-f.:-]*/gi

/**
 * The line with its variable parts masked: each number, hex id, timestamp or duration becomes `#`
 * (a duration's unit stays, so `12ms` and `3s` still differ in kind, not in value).
 *
 * @since 0.1.0
 * @category constructors
 */
export const mask = (line: string): string => line.replace(MASKED, "#")
