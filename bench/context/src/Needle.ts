/**
 * The needle of a corpus case: the line an agent must see to act, located in the real output by a
 * rule (a pattern and which stream to look in), never by a line number typed by hand.
 *
 * @since 0.1.0
 */
import { Terminal } from "@toolcap/limits"
import type { RawOutput } from "./Text.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface NeedleRule {
  /** What the needle is, for the report ("the line with `error TS2322`"). */
  readonly describe: string
  readonly pattern: RegExp
  /** The stream to search; a file's text is in `stdout`. */
  readonly stream: "stdout" | "stderr"
  /** Which match is the needle when several lines match: the first or the last. */
  readonly pick?: "first" | "last"
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Needle {
  /** The text that must reach the model: the whole line, or for a line longer than `LONG_LINE_CHARS` the match with some context. */
  readonly text: string
  /** True when `text` is the whole line; false for a fragment of a long line. */
  readonly whole: boolean
  readonly stream: "stdout" | "stderr"
  /** 1-based line number of the picked match within its stream. */
  readonly line: number
  /** Lines of the stream. */
  readonly totalLines: number
  /** UTF-8 byte offset of the needle's line start within its stream. */
  readonly byteOffset: number
}

/** A line up to this many characters is the needle whole; a longer one (minified code) only around the match. */
export const LONG_LINE_CHARS = 500
/** Characters of context kept on each side of the match in a long line. */
export const LONG_LINE_CONTEXT = 40

/**
 * Finds the needle, or throws: a case whose output no longer holds its needle is a broken case,
 * not a result.
 *
 * @since 0.1.0
 * @category constructors
 */
export const locate = (rule: NeedleRule, raw: RawOutput): Needle => {
  const text = raw[rule.stream]
  const lines = text.split("\n")
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  let found: { readonly index: number; readonly match: RegExpExecArray } | undefined
  const pattern = new RegExp(rule.pattern.source, rule.pattern.flags.replace("g", ""))
  for (let index = 0; index < lines.length; index++) {
    const match = pattern.exec(lines[index]!)
    if (match === null) continue
    found = { index, match }
    if (rule.pick !== "last") break
  }
  if (found === undefined)
    throw new Error(`no line of ${rule.stream} matches ${rule.pattern} (${rule.describe})`)
  const line = lines[found.index]!.replace(/\r$/, "")
  const needleText =
    line.length <= LONG_LINE_CHARS
      ? line
      : line.slice(
          Math.max(found.match.index - LONG_LINE_CONTEXT, 0),
          found.match.index + found.match[0].length + LONG_LINE_CONTEXT
        )
  let byteOffset = 0
  for (let i = 0; i < found.index; i++) byteOffset += Buffer.byteLength(lines[i]!, "utf8") + 1
  return {
    text: needleText,
    whole: line.length <= LONG_LINE_CHARS,
    stream: rule.stream,
    line: found.index + 1,
    totalLines: lines.length,
    byteOffset
  }
}

/**
 * Whether a text shows the needle: as one of its lines when the needle is a whole line (so a
 * short needle inside a longer line does not count), else as a substring.
 *
 * @since 0.1.0
 * @category predicates
 */
export const visibleIn = (text: string, needle: Needle): boolean => {
  if (showsForm(text, needle.text, needle.whole)) return true
  // a coloured or redrawn line counts as seen when the text shows it as a terminal does (a
  // policy that renders its output shows the line without its escapes)
  const shown = shownAsTerminal(needle.text)
  return shown !== needle.text && shown.length > 0 && showsForm(text, shown, needle.whole)
}

/**
 * The needle line as a terminal shows it: toolcap's renderer, which a differential property test
 * holds to xterm's buffer (rules T1).
 */
const shownAsTerminal = (line: string): string => Terminal.render(line).text.replace(/\n$/, "")

const showsForm = (text: string, form: string, whole: boolean): boolean => {
  if (!whole) return text.includes(form)
  let from = 0
  for (;;) {
    const at = text.indexOf(form, from)
    if (at < 0) return false
    const end = at + form.length
    const startsLine = at === 0 || text[at - 1] === "\n"
    const endsLine =
      end === text.length || text[end] === "\n" || (text[end] === "\r" && text[end + 1] === "\n")
    if (startsLine && endsLine) return true
    from = at + 1
  }
}
