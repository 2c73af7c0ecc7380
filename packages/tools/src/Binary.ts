/**
 * Binary detection for Read and Grep (rules R7, S8): a file is binary when its extension
 * is on a blocklist of formats that are never text, or when a sniff of its first
 * `binarySniffBytes` finds a NUL byte or more than `binaryNonPrintableRatio` of bytes that are
 * neither printable ASCII, nor `\t \n \r \f \v`, nor part of valid UTF-8. UTF-16 text counts as
 * binary (its ASCII characters carry NUL bytes; a UTF-16 byte-order mark settles it up front).
 *
 * Read refuses such a file with `TOOL_BINARY_CONTENT`; Grep skips it silently. Both use this one
 * module, so Grep never searches a file that Read would refuse, and the reverse.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { Budgets } from "@toolcap/limits"

/**
 * Extensions (lower case, without the dot) of formats that are never text. Kept deliberately
 * short: refusing a text file by its name is the failure hosts are criticised for, so anything
 * that may be text (`.svg`, `.dat`, `.bin`-like generic names, `.lock`) is left to the sniff.
 *
 * @since 0.1.0
 * @category models
 */
export const blockedExtensions: ReadonlySet<string> = new Set([
  // images
  "png",
  "jpg",
  "jpeg",
  "gif",
  "bmp",
  "ico",
  "icns",
  "webp",
  "tif",
  "tiff",
  "psd",
  "heic",
  "heif",
  "avif",
  // documents
  "pdf",
  "doc",
  "docx",
  "xls",
  "xlsx",
  "ppt",
  "pptx",
  "odt",
  "ods",
  "odp",
  "epub",
  // archives and compressed data
  "zip",
  "gz",
  "tgz",
  "bz2",
  "xz",
  "zst",
  "7z",
  "rar",
  "tar",
  "jar",
  "war",
  "apk",
  "dmg",
  "iso",
  "deb",
  "rpm",
  "br",
  "lz4",
  // executables and object code
  "exe",
  "dll",
  "so",
  "dylib",
  "o",
  "a",
  "obj",
  "lib",
  "class",
  "pyc",
  "pyo",
  "wasm",
  "node",
  // audio and video
  "mp3",
  "mp4",
  "m4a",
  "m4v",
  "wav",
  "ogg",
  "oga",
  "flac",
  "aac",
  "avi",
  "mov",
  "mkv",
  "webm",
  // fonts
  "ttf",
  "otf",
  "woff",
  "woff2",
  "eot",
  // databases and serialized data
  "sqlite",
  "sqlite3",
  "db",
  "parquet",
  "npy",
  "npz",
  "pkl",
  "onnx",
  "safetensors"
])

/**
 * Why a file counts as binary.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verdict {
  readonly reason: string
}

/**
 * The blocklist verdict for a file name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const byName = (fileName: string): Option.Option<Verdict> => {
  const ext = path.extname(fileName).slice(1).toLowerCase()
  return ext.length > 0 && blockedExtensions.has(ext)
    ? Option.some({ reason: `its extension .${ext} is a binary format` })
    : Option.none()
}

/** Length of the UTF-8 sequence starting at `at`, or 0 when none starts there. */
const validSequenceLength = (bytes: Uint8Array, at: number, end: number): number => {
  const lead = bytes[at]!
  let length: number
  let min: number
  let max: number
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2
    min = 0x80
    max = 0xbf
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3
    // no overlong forms (E0 A0..) and no surrogates (ED 80..9F)
    min = lead === 0xe0 ? 0xa0 : 0x80
    max = lead === 0xed ? 0x9f : 0xbf
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4
    min = lead === 0xf0 ? 0x90 : 0x80
    max = lead === 0xf4 ? 0x8f : 0xbf
  } else {
    return 0
  }
  // a sequence cut by the end of the sniffed window counts as valid: the file goes on past it
  const second = at + 1
  if (second >= end) return end - at
  const b1 = bytes[second]!
  if (b1 < min || b1 > max) return 0
  for (let k = 2; k < length; k++) {
    if (at + k >= end) return end - at
    const b = bytes[at + k]!
    if ((b & 0xc0) !== 0x80) return 0
  }
  return length
}

const isTextControl = (byte: number): boolean =>
  byte === 0x09 || byte === 0x0a || byte === 0x0b || byte === 0x0c || byte === 0x0d

/**
 * The sniff of a file's first bytes. `ratio` is the share of non-printable bytes above which the
 * bytes are binary (`binaryNonPrintableRatio`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const sniff = (bytes: Uint8Array, ratio: number): Option.Option<Verdict> => {
  const end = bytes.length
  if (end >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    return Option.some({ reason: "it is UTF-16 text (byte-order mark)" })
  }
  let nonPrintable = 0
  let at = 0
  while (at < end) {
    const byte = bytes[at]!
    if (byte === 0) return Option.some({ reason: `it contains a NUL byte at offset ${at}` })
    if ((byte >= 0x20 && byte < 0x7f) || isTextControl(byte)) {
      at++
      continue
    }
    if (byte >= 0x80) {
      const length = validSequenceLength(bytes, at, end)
      if (length > 0) {
        // a NUL inside a would-be sequence is caught on the next pass, as the sequence is invalid
        at += length
        continue
      }
    }
    nonPrintable++
    at++
  }
  return end > 0 && nonPrintable / end > ratio
    ? Option.some({
        reason: `${Math.round((nonPrintable / end) * 100)}% of its first ${end} bytes are not printable text`
      })
    : Option.none()
}

/**
 * Reads up to `maxBytes` from the start of an open file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readHead = (fd: number, maxBytes: number): Uint8Array => {
  const head = Buffer.allocUnsafe(maxBytes)
  let filled = 0
  while (filled < maxBytes) {
    const n = fs.readSync(fd, head, filled, maxBytes - filled, filled)
    if (n === 0) break
    filled += n
  }
  return head.subarray(0, filled)
}

/**
 * The verdict for a file on disk: its name first, then a sniff of its first `binarySniffBytes`.
 * A file that cannot be read answers `None` (the caller's own read reports the real error).
 *
 * @since 0.1.0
 * @category constructors
 */
export const detect = (file: string): Effect.Effect<Option.Option<Verdict>, never, Budgets.Budgets> =>
  Effect.gen(function* () {
    const named = byName(file)
    if (Option.isSome(named)) return named
    const budgets = yield* Budgets.Budgets
    return detectSync(file, budgets.binarySniffBytes, budgets.binaryNonPrintableRatio)
  })

/**
 * `detect` without the effect wrapper, for loops that already hold the budgets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const detectSync = (file: string, sniffBytes: number, ratio: number): Option.Option<Verdict> => {
  const named = byName(file)
  if (Option.isSome(named)) return named
  let fd: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    return sniff(readHead(fd, sniffBytes), ratio)
  } catch {
    return Option.none()
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}
