/** The one way error text quotes a caller's value: a short prefix of it. */
/**
 * The most UTF-8 bytes of a caller's value an error message quotes. Enough to recognise a path or
 * a pattern; with the rest of a message it stays well under 2KB whatever the input.
 */
export const quoteMaxBytes = 200

/**
 * A prefix of `value` of at most `maxBytes` UTF-8 bytes (never splitting a code point), with `…`
 * and the number of characters left out when it was cut. Linear in the kept prefix only.
 */
export const quote = (value: string, maxBytes: number = quoteMaxBytes): string => {
  if (value.length * 3 <= maxBytes) return value
  let bytes = 0
  let end = 0
  while (end < value.length) {
    const unit = value.charCodeAt(end)
    const isPair =
      unit >= 0xd800 &&
      unit <= 0xdbff &&
      end + 1 < value.length &&
      (value.charCodeAt(end + 1) & 0xfc00) === 0xdc00
    const size = isPair ? 4 : unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3
    if (bytes + size > maxBytes) break
    bytes += size
    end += isPair ? 2 : 1
  }
  return end === value.length ? value : `${value.slice(0, end)}…(${value.length - end} more characters)`
}
