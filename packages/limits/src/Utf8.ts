/**
 * UTF-8 boundaries for cuts. A cut never lands inside a well-formed multi-byte sequence; bytes that
 * are not part of one (invalid input) are units of their own and decode to U+FFFD.
 *
 * @since 0.1.0
 */

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80

/** Length of the sequence a lead byte announces, or 0 when it is no lead byte. */
const sequenceLength = (byte: number): number => {
  if (byte >= 0xc2 && byte <= 0xdf) return 2
  if (byte >= 0xe0 && byte <= 0xef) return 3
  if (byte >= 0xf0 && byte <= 0xf4) return 4
  return 0
}

/**
 * The start of the well-formed sequence covering `index`, or `index` itself when the byte there
 * starts a unit (ASCII, a lead byte, or a stray byte). Looks back at most three bytes.
 */
const unitStart = (bytes: Uint8Array, index: number): number => {
  if (!isContinuation(bytes[index]!)) return index
  for (let back = 1; back <= 3 && index - back >= 0; back++) {
    const lead = bytes[index - back]!
    if (isContinuation(lead)) continue
    const length = sequenceLength(lead)
    if (length <= back) return index
    for (let k = 1; k < length; k++) {
      const at = index - back + k
      if (at >= bytes.length || !isContinuation(bytes[at]!)) return index
    }
    return index - back
  }
  return index
}

/**
 * The largest `k <= end` at which `bytes` can be cut without splitting a sequence: `bytes[0, k)` is
 * a safe prefix.
 *
 * @since 0.1.0
 * @category boundaries
 */
export const prefixBoundary = (bytes: Uint8Array, end: number): number => {
  if (end >= bytes.length) return bytes.length
  if (end <= 0) return 0
  // a cut at `end` is safe unless the byte at `end` continues a sequence that began before it
  return unitStart(bytes, end)
}

/**
 * The smallest `k >= start` at which `bytes` can be cut without splitting a sequence:
 * `bytes[k, length)` is a safe suffix.
 *
 * @since 0.1.0
 * @category boundaries
 */
export const suffixBoundary = (bytes: Uint8Array, start: number): number => {
  if (start <= 0) return 0
  if (start >= bytes.length) return bytes.length
  const begin = unitStart(bytes, start)
  if (begin === start) return start
  return begin + sequenceLength(bytes[begin]!)
}

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })

/**
 * Decodes bytes to text; invalid sequences become U+FFFD, so the text is always valid Unicode.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (bytes: Uint8Array): string => decoder.decode(bytes)

const encoder = new TextEncoder()

/**
 * Encodes text to UTF-8 (a lone surrogate becomes U+FFFD).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (text: string): Uint8Array => encoder.encode(text)
