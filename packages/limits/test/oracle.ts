// A deliberately naive reference for the cuts: split the input into lines, accumulate whole lines
// from the kept end, and find a UTF-8-safe cut point by asking TextDecoder directly. It shares no
// code with src/ and favours obviousness over speed.
import { FastCheck as fc } from "effect"
import type { Truncate } from "@toolcap/limits"

export interface Budget {
  readonly keep: "head" | "tail"
  readonly maxBytes: number
  readonly maxLines: number
}

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true })
export const decode = (bytes: Uint8Array): string => decoder.decode(bytes)
export const encode = (text: string): Uint8Array => new TextEncoder().encode(text)

/** Lines as rules L3 defines them: up to and including `\n`; a final piece without one is a line too. */
export const splitLines = (input: Uint8Array): Array<Uint8Array> => {
  const lines: Array<Uint8Array> = []
  let start = 0
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x0a) {
      lines.push(input.subarray(start, i + 1))
      start = i + 1
    }
  }
  if (start < input.length) lines.push(input.subarray(start))
  return lines
}

/**
 * `k` is a safe cut point when decoding both sides separately gives exactly the decoding of the
 * whole: cutting inside any unit the decoder reads (a code point, or an ill-formed subpart that
 * becomes one U+FFFD) would add at least one U+FFFD.
 */
export const isSafeCut = (input: Uint8Array, k: number): boolean =>
  decode(input.subarray(0, k)) + decode(input.subarray(k)) === decode(input)

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

/** What a cut must report, computed the slow and obvious way. */
export interface Expected {
  readonly bytes: string
  readonly text: string
  readonly truncated: boolean
  readonly keptLines: number
  readonly totalLines: number
  readonly keptBytes: number
  readonly totalBytes: number
  readonly singleLineBytes: number | undefined
  readonly firstLineBytes: number
  readonly lastLineBytes: number
}

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")

const reversed = <A>(items: ReadonlyArray<A>): Array<A> => items.map((_, i) => items[items.length - 1 - i]!)

export const oracle = (input: Uint8Array, budget: Budget): Expected => {
  const lines = splitLines(input)
  const ordered = budget.keep === "head" ? lines : reversed(lines)
  const kept: Array<Uint8Array> = []
  let keptBytes = 0
  for (const line of ordered) {
    if (kept.length === budget.maxLines || keptBytes + line.length > budget.maxBytes) break
    kept.push(line)
    keptBytes += line.length
  }
  let bytes: Uint8Array
  let singleLineBytes: number | undefined
  if (kept.length === 0 && input.length > 0) {
    if (budget.keep === "head") {
      let k = budget.maxBytes
      while (!isSafeCut(input, k)) k--
      bytes = input.subarray(0, k)
      singleLineBytes = lines[0]!.length
    } else {
      let k = input.length - budget.maxBytes
      while (!isSafeCut(input, k)) k++
      bytes = input.subarray(k)
      singleLineBytes = lines[lines.length - 1]!.length
    }
  } else {
    bytes = concat(budget.keep === "head" ? kept : reversed(kept))
  }
  return {
    bytes: hex(bytes),
    text: decode(bytes),
    truncated: bytes.length < input.length,
    keptLines: singleLineBytes === undefined ? kept.length : 0,
    totalLines: lines.length,
    keptBytes: bytes.length,
    totalBytes: input.length,
    singleLineBytes,
    firstLineBytes: lines[0]?.length ?? 0,
    lastLineBytes: lines[lines.length - 1]?.length ?? 0
  }
}

/** The fields of a cut the oracle predicts, in a comparable form. */
export const observe = (cut: Truncate.Cut): Expected => ({
  bytes: hex(cut.bytes),
  text: cut.text,
  truncated: cut.truncated,
  keptLines: cut.keptLines,
  totalLines: cut.totalLines,
  keptBytes: cut.keptBytes,
  totalBytes: cut.totalBytes,
  singleLineBytes: cut.singleLineBytes,
  firstLineBytes: cut.firstLineBytes,
  lastLineBytes: cut.lastLineBytes
})

/** Every field of a cut, with the bytes made comparable. */
export const full = (cut: Truncate.Cut) => ({ ...cut, bytes: hex(cut.bytes) })

// ---- arbitraries: biased so truncation, single-line cuts and multi-byte boundaries are frequent

const textPiece: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constant("\n") },
  { weight: 2, arbitrary: fc.constant("\r\n") },
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom("a", "b", " ", "1"), maxLength: 12 }) },
  // 2-, 3- and 4-byte sequences, an emoji ZWJ cluster, U+FFFD itself and a BOM
  { weight: 4, arbitrary: fc.constantFrom("é", "ß", "€", "中", "\uFEFF", "\uFFFD", "𝄞", "😀", "👨‍👩‍👧") },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  // a long line now and then, so single-line cuts happen at every budget
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("x", "é", "€", "😀", "a€"), fc.integer({ min: 5, max: 60 }))
      .map(([unit, n]) => unit.repeat(n))
  }
)

/** Valid UTF-8 text. */
export const text: fc.Arbitrary<string> = fc
  .array(textPiece, { maxLength: 40 })
  .map((pieces) => pieces.join(""))

/** Bytes that are often not UTF-8: text pieces mixed with stray continuation bytes, lead bytes without their tail, overlongs, surrogates. */
const rawPiece: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 3, arbitrary: textPiece.map(encode) },
  {
    weight: 2,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 6 })
  },
  {
    weight: 3,
    arbitrary: fc
      .array(
        fc.oneof(
          fc.integer({ min: 0x80, max: 0xbf }),
          fc.constantFrom(0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x0a, 0x41)
        ),
        { minLength: 1, maxLength: 5 }
      )
      .map((values) => Uint8Array.from(values))
  }
)

export const bytes: fc.Arbitrary<Uint8Array> = fc.array(rawPiece, { maxLength: 40 }).map(concat)

/** Small budgets so most inputs are cut; sometimes roomy ones so some are not. */
export const anyBudget: fc.Arbitrary<Budget> = fc.record({
  keep: fc.constantFrom("head" as const, "tail" as const),
  maxBytes: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 4, max: 40 }) },
    { weight: 1, arbitrary: fc.integer({ min: 41, max: 400 }) }
  ),
  maxLines: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 6 }) },
    { weight: 1, arbitrary: fc.integer({ min: 7, max: 100 }) }
  )
})

/** A chunking as chunk sizes (0 gives an empty chunk); whatever is left after them is the last chunk. */
export const chunkSizes: fc.Arbitrary<ReadonlyArray<number>> = fc.array(
  fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 64 })),
  { maxLength: 16 }
)

export const chunksOf = (input: Uint8Array, sizes: ReadonlyArray<number>): Array<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  let start = 0
  for (const size of sizes) {
    const end = Math.min(input.length, start + size)
    chunks.push(input.slice(start, end))
    start = end
  }
  chunks.push(input.slice(start))
  return chunks
}

export const byteChunks = (input: Uint8Array): Array<Uint8Array> =>
  Array.from(input, (byte) => Uint8Array.of(byte))
