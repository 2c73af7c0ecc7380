/**
 * Counting newline bytes, the hot loop of a streaming cut's exact totals: a few lines of
 * WebAssembly compare 16 bytes at a time (SIMD `i8x16.eq`) into 16 byte-wide counters. Per newline,
 * `Buffer#indexOf` pays a call from JavaScript into the runtime; at 100-byte lines that is most
 * of the cost of counting a GiB. Where WebAssembly SIMD is not available, the same count is made
 * with `indexOf`.
 */

/** LEB128 of a non-negative integer (section and body sizes). */
const unsignedLeb = (value: number): Array<number> => {
  const out: Array<number> = []
  do {
    const low = value & 0x7f
    value >>>= 7
    out.push(value === 0 ? low : low | 0x80)
  } while (value !== 0)
  return out
}

/** Signed LEB128 of a non-negative i32 constant (a clear sign bit ends it). */
const signedLeb = (value: number): Array<number> => {
  const out: Array<number> = []
  for (;;) {
    const low = value & 0x7f
    value >>= 7
    if (value === 0 && (low & 0x40) === 0) return [...out, low]
    out.push(low | 0x80)
  }
}

const localGet = (index: number) => [0x20, index]
const localSet = (index: number) => [0x21, index]
const localTee = (index: number) => [0x22, index]
/** v128.load at `offset` past the address on the stack */
const load16 = (offset: number) => [0xfd, 0x00, 0x00, offset]
/** acc -= (v128.load(p + offset) == nl): a match is lane -1, so each lane counts its matches */
const subtractMatches = (offset: number) => [
  ...localGet(0),
  ...load16(offset),
  ...localGet(6),
  0xfd,
  0x23,
  0xfd,
  0x71
]

/**
 * Bytes per block: each byte lane of the accumulator counts at most one match per 16 bytes, so a
 * block of 63 rounds of 64 bytes (252 per lane) never overflows a lane before it is summed.
 */
const BLOCK_BYTES = 63 * 64

/**
 * `count(p, n)`: newline bytes in memory[p, p + n). Memory: one 64 KiB page, exported as `mem`.
 * The body: per block of up to `BLOCK_BYTES`, 64 bytes a round into a vector of 16 byte counters
 * (compare, subtract: two instructions per 16 bytes), summed once per block; the last bytes (fewer
 * than 64) one by one.
 */
// prettier-ignore
const CODE = [
  // locals: c, end, tailEnd, blockEnd (i32); nl, acc (v128)
  0x02, 0x04, 0x7f, 0x02, 0x7b,
  // nl = i8x16.splat(10)
  0x41, 0x0a, 0xfd, 0x0f, ...localSet(6),
  // tailEnd = p + n; end = p + (n & -64)
  ...localGet(0), ...localGet(1), 0x6a, ...localSet(4),
  ...localGet(0), ...localGet(1), 0x41, 0x40, 0x71, 0x6a, ...localSet(3),
  // while (p < end) {
  0x02, 0x40, 0x03, 0x40, ...localGet(0), ...localGet(3), 0x4f, 0x0d, 0x01,
  //   blockEnd = min(p + BLOCK_BYTES, end); acc = 0
  ...localGet(0), 0x41, ...signedLeb(BLOCK_BYTES), 0x6a, ...localTee(5),
  ...localGet(3), ...localGet(5), ...localGet(3), 0x49, 0x1b, ...localSet(5),
  0xfd, 0x0c, ...Array.from({ length: 16 }, () => 0), ...localSet(7),
  //   do { acc -= matches at p, p + 16, p + 32, p + 48; p += 64 } while (p < blockEnd)
  0x03, 0x40, ...localGet(7),
  ...subtractMatches(0), ...subtractMatches(16), ...subtractMatches(32), ...subtractMatches(48),
  ...localSet(7), ...localGet(0), 0x41, ...signedLeb(64), 0x6a, ...localTee(0),
  ...localGet(5), 0x49, 0x0d, 0x00, 0x0b,
  //   c += the sum of acc's lanes (widened pairwise to 4 lanes of 32 bits)
  ...localGet(7), 0xfd, 0x7d, 0xfd, 0x7f, ...localSet(7), ...localGet(2),
  ...[0, 1, 2, 3].flatMap((lane) => [...localGet(7), 0xfd, 0x1b, lane, 0x6a]),
  ...localSet(2),
  // }
  0x0c, 0x00, 0x0b, 0x0b,
  // while (p < tailEnd) { c += load8_u(p) == 10; p += 1 }
  0x02, 0x40, 0x03, 0x40, ...localGet(0), ...localGet(4), 0x4f, 0x0d, 0x01,
  ...localGet(2), ...localGet(0), 0x2d, 0x00, 0x00, 0x41, 0x0a, 0x46, 0x6a, ...localSet(2),
  ...localGet(0), 0x41, 0x01, 0x6a, ...localSet(0), 0x0c, 0x00, 0x0b, 0x0b,
  // return c
  ...localGet(2), 0x0b
]

const section = (id: number, bytes: ReadonlyArray<number>): Array<number> => [
  id,
  ...unsignedLeb(bytes.length),
  ...bytes
]

const MODULE = new Uint8Array([
  // magic, version
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  // type: (i32, i32) -> i32
  ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]),
  // function 0 of type 0
  ...section(3, [0x01, 0x00]),
  // memory: one page
  ...section(5, [0x01, 0x00, 0x01]),
  // exports: "count" (function 0), "mem" (memory 0)
  ...section(7, [0x02, 0x05, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00]),
  ...section(10, [0x01, ...unsignedLeb(CODE.length), ...CODE])
])

/** The bytes the module's memory holds: slices of a larger buffer are counted one after another. */
const PAGE = 65536

/** Below this many bytes the copy into the module costs more than it saves. */
const MIN_BYTES = 512

interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (module: object) => { readonly exports: unknown }
}

const instantiate = ():
  { readonly count: (p: number, n: number) => number; readonly memory: Uint8Array } | undefined => {
  // the global as the runtime has it (this package is typed without the DOM's or Node's globals)
  const wasm = (globalThis as unknown as { readonly WebAssembly?: WasmApi }).WebAssembly
  if (wasm === undefined) return undefined
  try {
    const exports = new wasm.Instance(new wasm.Module(MODULE)).exports as {
      readonly count: (p: number, n: number) => number
      readonly mem: { readonly buffer: ArrayBuffer }
    }
    return { count: exports.count, memory: new Uint8Array(exports.mem.buffer) }
  } catch {
    // no WebAssembly SIMD here
    return undefined
  }
}

let simd: ReturnType<typeof instantiate> | null = null

const byIndexOf = (buffer: Buffer, from: number): number => {
  let count = 0
  for (let at = buffer.indexOf(0x0a, from); at !== -1; at = buffer.indexOf(0x0a, at + 1)) count++
  return count
}

/**
 * The newline bytes of `buffer` from `from` on.
 *
 * @internal
 */
export const countNewlines = (buffer: Buffer, from = 0): number => {
  if (buffer.length - from < MIN_BYTES) return byIndexOf(buffer, from)
  if (simd === null) simd = instantiate()
  if (simd === undefined) return byIndexOf(buffer, from)
  // the common case, one pipe read: copied whole, no view made of it
  if (buffer.length <= PAGE) {
    simd.memory.set(buffer, 0)
    return simd.count(from, buffer.length - from)
  }
  let count = 0
  for (let at = from; at < buffer.length; at += PAGE) {
    const end = Math.min(buffer.length, at + PAGE)
    simd.memory.set(buffer.subarray(at, end), 0)
    count += simd.count(0, end - at)
  }
  return count
}
