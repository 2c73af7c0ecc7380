/**
 * A JSON-RPC message as the bytes of one newline-terminated JSON line, the same bytes as
 * `Buffer.from(JSON.stringify(message) + "\n")` — without building that string. A chunk
 * notification is mostly one long string (up to a pipe read of Bash output): `JSON.stringify`
 * copies it into the message text, writing the text copies it again, and the copies live in the
 * JS heap until the garbage collector finds them — the bulk of what a streaming MCP server
 * allocates. Here long strings are escaped straight into the line's buffer, which lives outside
 * the JS heap and goes as soon as the pipe took it.
 */
import { isUtf8 } from "node:buffer"
import { randomBytes } from "node:crypto"

/**
 * Text held as UTF-8 bytes, in pieces (Bash chunks that were never decoded): `encode` escapes it
 * into the line straight from the pieces, so it becomes neither a JS string nor one more copy of
 * the bytes; anywhere else it is the decoded text (`toJSON`, `toString`). Each piece is decoded
 * on its own: bytes that are not valid UTF-8 are the text `Buffer#toString("utf8")` gives for
 * them, replacement characters included.
 *
 * @internal
 */
export class Utf8Text {
  readonly pieces: ReadonlyArray<Uint8Array>
  constructor(...pieces: ReadonlyArray<Uint8Array>) {
    this.pieces = pieces
  }
  /** The text the bytes hold. */
  toString(): string {
    return this.pieces.map((piece) => decode(piece)).join("")
  }
  toJSON(): string {
    return this.toString()
  }
}

/**
 * Strings at least this long are escaped straight into the buffer; shorter ones go through
 * `JSON.stringify`, where the copy costs less than a pass of their own.
 */
const LONG_STRING = 1024

/**
 * What a long string stands for in the message text while the rest is stringified: a value no
 * message holds by chance (a NUL and a per-process nonce). Its JSON form (with quotes) is what
 * the text is split at.
 */
const placeholder = `\u0000toolcap-${randomBytes(8).toString("hex")}`
const placeholderJson = JSON.stringify(placeholder)

const decode = (piece: Uint8Array): string =>
  Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString("utf8")

/** `JSON.stringify`'s short escapes; every other control character is `\u00XX`. */
const shortEscapes: Record<number, string> = {
  8: "\\b",
  9: "\\t",
  10: "\\n",
  12: "\\f",
  13: "\\r",
  34: '\\"',
  92: "\\\\"
}

const escapeOf = (code: number): string => shortEscapes[code] ?? `\\u${code.toString(16).padStart(4, "0")}`

/**
 * The UTF-8 length of `text` as `JSON.stringify` escapes it, quotes included; -1 when it holds a
 * lone surrogate (which `JSON.stringify` escapes as `\uXXXX`: such a message goes the plain way).
 */
const escapedLength = (text: string): number => {
  let bytes = 2
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += code < 0x20 || code === 34 || code === 92 ? escapeOf(code).length : 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1)
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -1
      // a surrogate pair: one 4-byte sequence
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** Writes `text` (no lone surrogate) escaped and quoted at `offset`; answers the offset after it. */
const writeEscaped = (buffer: Buffer, offset: number, text: string): number => {
  let at = offset
  buffer[at++] = 34
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) {
      if (code < 0x20 || code === 34 || code === 92) at += buffer.write(escapeOf(code), at, "latin1")
      else buffer[at++] = code
    } else if (code < 0x800) {
      buffer[at++] = 0xc0 | (code >> 6)
      buffer[at++] = 0x80 | (code & 0x3f)
    } else if (code >= 0xd800 && code <= 0xdbff) {
      const point = ((code - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00) + 0x10000
      buffer[at++] = 0xf0 | (point >> 18)
      buffer[at++] = 0x80 | ((point >> 12) & 0x3f)
      buffer[at++] = 0x80 | ((point >> 6) & 0x3f)
      buffer[at++] = 0x80 | (point & 0x3f)
    } else {
      buffer[at++] = 0xe0 | (code >> 12)
      buffer[at++] = 0x80 | ((code >> 6) & 0x3f)
      buffer[at++] = 0x80 | (code & 0x3f)
    }
  }
  buffer[at++] = 34
  return at
}

/** Whether a byte of valid UTF-8 is escaped by `JSON.stringify` (every other byte is copied). */
const escapedByte = (byte: number): boolean => byte < 0x20 || byte === 34 || byte === 92

/** The length of valid UTF-8 pieces as `JSON.stringify` escapes their text, quotes included. */
const escapedBytesLength = (pieces: ReadonlyArray<Uint8Array>): number => {
  let length = 2
  for (const bytes of pieces) {
    length += bytes.length
    for (const byte of bytes) if (escapedByte(byte)) length += escapeOf(byte).length - 1
  }
  return length
}

/**
 * Writes valid UTF-8 pieces escaped and quoted at `offset`, as `JSON.stringify` writes their
 * text (it escapes only control characters, `"` and `\` in well-formed text: every byte of a
 * multi-byte sequence is copied); answers the offset after it.
 */
const writeEscapedBytes = (buffer: Buffer, offset: number, pieces: ReadonlyArray<Uint8Array>): number => {
  let at = offset
  buffer[at++] = 34
  for (const bytes of pieces) {
    let from = 0
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]!
      if (!escapedByte(byte)) continue
      buffer.set(bytes.subarray(from, i), at)
      at += i - from
      at += buffer.write(escapeOf(byte), at, "latin1")
      from = i + 1
    }
    buffer.set(bytes.subarray(from), at)
    at += bytes.length - from
  }
  buffer[at++] = 34
  return at
}

/** What a `Utf8Text` property is swapped for: its pieces (or, one not valid UTF-8, its text). */
class Swapped {
  constructor(readonly value: string | ReadonlyArray<Uint8Array>) {}
}

/** A value with its `Utf8Text` properties swapped (a copy when it has any). */
const swapUtf8 = (value: object): object => {
  let copy: Record<string, unknown> | undefined
  for (const [key, field] of Object.entries(value)) {
    if (!(field instanceof Utf8Text)) continue
    copy ??= { ...value }
    // not valid UTF-8: the decoded text (replacement characters and all) goes the string way
    copy[key] = new Swapped(field.pieces.every((piece) => isUtf8(piece)) ? field.pieces : field.toString())
  }
  return copy ?? value
}

/**
 * `message` as one JSON line: the bytes of `JSON.stringify(message) + "\n"`. `Utf8Text` values
 * (as properties of plain objects) are escaped from their bytes.
 *
 * @internal
 */
export const encode = (message: unknown): Buffer => {
  const long: Array<string | ReadonlyArray<Uint8Array>> = []
  const text = JSON.stringify(message, (_key, value: unknown) => {
    if (typeof value === "string" && value.length >= LONG_STRING) {
      long.push(value)
      return placeholder
    }
    if (value instanceof Swapped) {
      long.push(value.value)
      return placeholder
    }
    // the replacer sees a property after its `toJSON` ran: a Utf8Text is swapped on its holder,
    // and the swap taken out when its turn comes (so `long` stays in the order of the text)
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return swapUtf8(value)
    return value
  })
  const parts = text.split(placeholderJson)
  if (long.length === 0) return Buffer.from(`${text}\n`)
  // a short string equal to the placeholder (never by chance): the plain way
  if (parts.length !== long.length + 1) return Buffer.from(`${JSON.stringify(message)}\n`)
  let size = 1
  for (const part of parts) size += Buffer.byteLength(part)
  for (const value of long) {
    const length = typeof value === "string" ? escapedLength(value) : escapedBytesLength(value)
    if (length < 0) return Buffer.from(`${JSON.stringify(message)}\n`)
    size += length
  }
  const buffer = Buffer.allocUnsafe(size)
  let at = buffer.write(parts[0]!, 0)
  for (let i = 0; i < long.length; i++) {
    const value = long[i]!
    at = typeof value === "string" ? writeEscaped(buffer, at, value) : writeEscapedBytes(buffer, at, value)
    at += buffer.write(parts[i + 1]!, at)
  }
  buffer[at] = 10
  return buffer
}
