/**
 * UTF-8 boundaries for cuts. Bytes are grouped into the units a WHATWG UTF-8 decoder (`TextDecoder`)
 * reads: a well-formed sequence, a maximal ill-formed subpart (which decodes to one U+FFFD), or a
 * single stray byte (one U+FFFD). A cut only ever falls between two units, so it never splits a
 * code point, and the decoded kept part is exactly a prefix (or suffix) of the decoded whole input,
 * even when the input is not valid UTF-8.
 *
 * @since 0.1.0
 */

const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80

/** Length of the sequence a lead byte announces, or 0 when it is no lead byte (Unicode Table 3-7). */
const sequenceLength = (byte: number): number => {
  if (byte >= 0xc2 && byte <= 0xdf) return 2
  if (byte >= 0xe0 && byte <= 0xef) return 3
  if (byte >= 0xf0 && byte <= 0xf4) return 4
  return 0
}

/**
 * Whether `byte` may stand at `offset` (1..3) of a sequence led by `lead`. The second byte of
 * E0, ED, F0 and F4 sequences has a narrower range: that excludes overlong forms, surrogates
 * and code points above U+10FFFF (Unicode Table 3-7).
 */
const continues = (lead: number, offset: number, byte: number): boolean => {
  if (offset === 1) {
    switch (lead) {
      case 0xe0:
        return byte >= 0xa0 && byte <= 0xbf
      case 0xed:
        return byte >= 0x80 && byte <= 0x9f
      case 0xf0:
        return byte >= 0x90 && byte <= 0xbf
      case 0xf4:
        return byte >= 0x80 && byte <= 0x8f
    }
  }
  return isContinuation(byte)
}

/**
 * The start of the unit covering `index`. A lead byte or an ASCII byte always starts a unit; a
 * continuation byte belongs to the lead at most three bytes before it when every byte from that
 * lead up to it is valid at its position, else it stands alone.
 */
const unitStart = (bytes: Uint8Array, index: number): number => {
  if (!isContinuation(bytes[index]!)) return index
  for (let back = 1; back <= 3 && index - back >= 0; back++) {
    const lead = bytes[index - back]!
    if (isContinuation(lead)) continue
    if (sequenceLength(lead) <= back) return index
    for (let offset = 1; offset <= back; offset++) {
      if (!continues(lead, offset, bytes[index - back + offset]!)) return index
    }
    return index - back
  }
  return index
}

/** The end (exclusive) of the unit starting at `start`. */
const unitEnd = (bytes: Uint8Array, start: number): number => {
  const lead = bytes[start]!
  const length = sequenceLength(lead)
  let offset = 1
  while (
    offset < length &&
    start + offset < bytes.length &&
    continues(lead, offset, bytes[start + offset]!)
  ) {
    offset++
  }
  return start + offset
}

/**
 * Whether `bytes` can be cut before `index` without splitting a unit (true at both ends).
 *
 * @since 0.1.0
 * @category boundaries
 */
export const isBoundary = (bytes: Uint8Array, index: number): boolean =>
  index <= 0 || index >= bytes.length || unitStart(bytes, index) === index

/**
 * The largest `k <= end` at which `bytes` can be cut without splitting a unit: `bytes[0, k)` is a
 * safe prefix. Looks at no byte after `end` and at most three before it, so for `end >= 4` the
 * answer is at least `end - 3`.
 *
 * @since 0.1.0
 * @category boundaries
 */
export const prefixBoundary = (bytes: Uint8Array, end: number): number => {
  if (end >= bytes.length) return bytes.length
  if (end <= 0) return 0
  return unitStart(bytes, end)
}

/**
 * The smallest `k >= start` at which `bytes` can be cut without splitting a unit:
 * `bytes[k, length)` is a safe suffix. Looks at most three bytes before `start` and three after,
 * so the answer is at most `start + 3`.
 *
 * @since 0.1.0
 * @category boundaries
 */
export const suffixBoundary = (bytes: Uint8Array, start: number): number => {
  if (start <= 0) return 0
  if (start >= bytes.length) return bytes.length
  const begin = unitStart(bytes, start)
  return begin === start ? start : unitEnd(bytes, begin)
}

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })

/**
 * Decodes bytes to text; each ill-formed unit becomes one U+FFFD, so the text is always valid
 * Unicode. A byte order mark is kept, not stripped, so the text stays faithful to the bytes.
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
