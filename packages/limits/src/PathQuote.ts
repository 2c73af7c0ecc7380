/**
 * Names that cannot forge lines (rules H7): a path shown to the model that holds a control
 * character — any C0 (U+0000–U+001F: newline, CR, ESC, ...), DEL (U+007F), any C1
 * (U+0080–U+009F) — or a Unicode line or paragraph separator (U+2028, U+2029) is written in
 * double quotes with C-style escapes, as `git` writes such names with `core.quotePath`:
 * `"dir\n/etc/shadow"`. `\a \b \t \n \v \f \r`, `\"` and `\\` are named; every other such
 * character is its UTF-8 bytes in three-digit octal (`\033`, `\302\205`). A name that begins with
 * `"` is quoted too, so a quoted name is never confused with a raw one. Every other name is shown
 * as it is (non-ASCII letters included). Structured results keep the raw name; only the text for
 * the model is quoted.
 *
 * @since 0.1.0
 */

/** A character a name is quoted for (see above). */
// oxlint-disable-next-line no-control-regex -- the control characters are what is matched
const NEEDS_QUOTING = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|^"/

/** The characters themselves, without the leading `"` rule. */
// oxlint-disable-next-line no-control-regex -- the control characters are what is matched
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** Every character escaped inside `$'...'`. */
// oxlint-disable-next-line no-control-regex -- the control characters are what is escaped
const SHELL_ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029'\\]/g

/** Every character escaped inside the quotes. */
// oxlint-disable-next-line no-control-regex -- the control characters are what is escaped
const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029"\\]/g

const NAMED: Readonly<Record<string, string>> = {
  "\u0007": "\\a",
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\v": "\\v",
  "\f": "\\f",
  "\r": "\\r",
  '"': '\\"',
  "\\": "\\\\"
}

const octal = (char: string): string =>
  Array.from(Buffer.from(char, "utf8"), (byte) => `\\${byte.toString(8).padStart(3, "0")}`).join("")

/**
 * Whether `name` is shown quoted.
 *
 * @since 0.1.0
 * @category predicates
 */
export const needsQuoting = (name: string): boolean => NEEDS_QUOTING.test(name)

/**
 * `name` as the model reads it: itself, or C-quoted when it holds a control character (above).
 *
 * @since 0.1.0
 * @category constructors
 */
export const quote = (name: string): string =>
  needsQuoting(name) ? `"${name.replace(ESCAPED, (char) => NAMED[char] ?? octal(char))}"` : name

/**
 * The inverse of `quote` (for tests and for hosts that map a quoted name back): the raw name of
 * a shown one. A name that is not quoted is returned as it is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unquote = (shown: string): string => {
  if (shown.length < 2 || !shown.startsWith('"') || !shown.endsWith('"')) return shown
  const body = shown.slice(1, -1)
  const bytes: Array<number> = []
  const reverse: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 }
  for (let at = 0; at < body.length; at++) {
    const char = body[at]!
    if (char === "\\") {
      const next = body[at + 1]!
      if (/[0-7]/.test(next)) {
        bytes.push(parseInt(body.slice(at + 1, at + 4), 8))
        at += 3
      } else {
        bytes.push(reverse[next]!)
        at += 1
      }
    } else {
      bytes.push(...Buffer.from(char, "utf8"))
    }
  }
  return Buffer.from(bytes).toString("utf8")
}

/**
 * `name` as one POSIX shell word for a command the model may run: bare when it is only safe
 * characters, else single-quoted, and ANSI-C quoted (`$'dir\n/etc/shadow'`, which bash, zsh and
 * ksh read back as the raw name) when it holds a character `quote` escapes, so the command shows
 * on one line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const shellWord = (name: string): string => {
  if (/^[A-Za-z0-9_./@%+=:,-]+$/.test(name)) return name
  if (!CONTROL.test(name)) return `'${name.replace(/'/g, `'\\''`)}'`
  return `$'${name.replace(SHELL_ESCAPED, (char) => (char === "'" ? "\\'" : (NAMED[char] ?? octal(char))))}'`
}
