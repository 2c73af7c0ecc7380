/**
 * The per-line clip (MAX_LINE_CHARS): a line longer than the limit keeps its first `maxChars` code
 * points and its line ending; clipped lines are counted so the notice can say how many.
 *
 * @since 0.1.0
 */

/**
 * A clipped line or text.
 *
 * @since 0.1.0
 * @category models
 */
export interface Clipped {
  readonly text: string
  /** How many lines were clipped. */
  readonly clippedLines: number
}

/**
 * The index in `text` after its first `maxChars` code points, or -1 when it has no more than that.
 */
const codePointEnd = (text: string, from: number, to: number, maxChars: number): number => {
  // each code point takes one or two UTF-16 units, so a short enough span cannot exceed the limit
  if (to - from <= maxChars) return -1
  let at = from
  let chars = 0
  while (at < to) {
    if (chars === maxChars) return at
    const unit = text.charCodeAt(at)
    const isPair =
      unit >= 0xd800 && unit <= 0xdbff && at + 1 < to && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00
    at += isPair ? 2 : 1
    chars++
  }
  return -1
}

/**
 * Clips one line (with or without its `\r\n` / `\n` ending) to `maxChars` code points.
 *
 * @since 0.1.0
 * @category constructors
 */
export const clipLine = (line: string, maxChars: number): Clipped => {
  const ending = line.endsWith("\r\n") ? 2 : line.endsWith("\n") ? 1 : 0
  const bodyEnd = line.length - ending
  const cut = codePointEnd(line, 0, bodyEnd, maxChars)
  if (cut === -1) return { text: line, clippedLines: 0 }
  return { text: line.slice(0, cut) + line.slice(bodyEnd), clippedLines: 1 }
}

/**
 * Clips every line of a text to `maxChars` code points, keeping line endings byte-faithful.
 *
 * @since 0.1.0
 * @category constructors
 */
export const clipLines = (text: string, maxChars: number): Clipped => {
  if (text.length <= maxChars) return { text, clippedLines: 0 }
  let out = ""
  let clippedLines = 0
  let start = 0
  while (start < text.length) {
    const newline = text.indexOf("\n", start)
    const end = newline === -1 ? text.length : newline + 1
    const clipped = clipLine(text.slice(start, end), maxChars)
    out += clipped.text
    clippedLines += clipped.clippedLines
    start = end
  }
  return { text: out, clippedLines }
}
