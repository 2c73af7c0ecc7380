/**
 * Counting newline bytes, the hot loop of a streaming cut's exact totals, of a spill copy's line
 * count and of Read's scan to an offset deep in a large file. Per newline, `Buffer#indexOf` pays a
 * call from JavaScript into the runtime; at 100-byte lines that is most of the cost of counting a
 * GiB. Instead a few lines of WebAssembly compare 16 bytes at a time (SIMD `i8x16.eq`) into 16
 * byte-wide counters. Where WebAssembly SIMD is not available, the same count is made with
 * `indexOf`.
 *
 * Two ways in: `count` copies the bytes into a small counter's memory a page at a time; a
 * `Counter` of one's own (`acquire`) has memory that reads land in directly, so a file is counted
 * without a copy.
 *
 * @since 0.1.0
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

/** A name in the module's binary form: its length, then its (ASCII) bytes. */
const name = (text: string): Array<number> => [
  ...unsignedLeb(text.length),
  ...Array.from(text, (char) => char.charCodeAt(0))
]

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
 * `count(p, n)`: newline bytes in memory[p, p + n). The body: per block of up to `BLOCK_BYTES`,
 * 64 bytes a round into a vector of 16 byte counters (compare, subtract: two instructions per 16
 * bytes, measured 1.7 times as fast as a bitmask and popcount per 16), summed once per block; the
 * last bytes (fewer than 64) one by one.
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

/**
 * `scan(p, n)`: the offset from `p` of the first 64-byte block of memory[p, p + n & ~63) holding a
 * byte a terminal acts on — a C0 control but `\t` and `\n`, DEL, or `C2` (the lead byte of the C1
 * controls, and of U+00A0–U+00BF, which the caller tells apart) — else `n & ~63`; the caller
 * checks that block and the last bytes exactly. Per 16 bytes: one load, five compares, three ors
 * and an and-not; one any_true per 64 bytes.
 */
const vectorSplat = (value: number, local: number) => [
  0x41,
  ...signedLeb(value),
  0xfd,
  0x0f,
  ...localSet(local)
]
const equalsLocal = (local: number) => [...localGet(9), ...localGet(local), 0xfd, 0x23]
/** The lanes of memory[p + offset, +16) a terminal acts on, as a mask on the stack. */
const controlLanes = (offset: number) => [
  ...localGet(0),
  ...load16(offset),
  ...localSet(9),
  ...localGet(9),
  ...localGet(4),
  0xfd,
  0x26,
  ...equalsLocal(5),
  ...equalsLocal(6),
  0xfd,
  0x50,
  0xfd,
  0x4f,
  ...equalsLocal(7),
  0xfd,
  0x50,
  ...equalsLocal(8),
  0xfd,
  0x50
]
// prettier-ignore
const SCAN = [
  // locals: start, end (i32); below, tab, newline, del, lead, v (v128)
  0x02, 0x02, 0x7f, 0x06, 0x7b,
  ...vectorSplat(0x20, 4), ...vectorSplat(0x09, 5), ...vectorSplat(0x0a, 6),
  ...vectorSplat(0x7f, 7), ...vectorSplat(0xc2, 8),
  // start = p; end = p + (n & -64)
  ...localGet(0), ...localSet(2),
  ...localGet(0), ...localGet(1), 0x41, 0x40, 0x71, 0x6a, ...localSet(3),
  // while (p < end) {
  0x02, 0x40, 0x03, 0x40, ...localGet(0), ...localGet(3), 0x4f, 0x0d, 0x01,
  //   if any of the lanes at p, p + 16, p + 32, p + 48 acts: break
  ...controlLanes(0), ...controlLanes(16), 0xfd, 0x50, ...controlLanes(32), 0xfd, 0x50,
  ...controlLanes(48), 0xfd, 0x50, 0xfd, 0x53, 0x0d, 0x01,
  //   p += 64
  ...localGet(0), 0x41, ...signedLeb(64), 0x6a, ...localSet(0), 0x0c, 0x00, 0x0b, 0x0b,
  // return p - start
  ...localGet(0), ...localGet(2), 0x6b, 0x0b
]

const section = (id: number, bytes: ReadonlyArray<number>): Array<number> => [
  id,
  ...unsignedLeb(bytes.length),
  ...bytes
]

/** The memory is imported, so one compiled module serves counters of any size. */
const MEMORY_MODULE = "m"
const MEMORY_NAME = "mem"

// prettier-ignore
const MODULE = new Uint8Array([
  // magic, version
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  // type: (i32, i32) -> i32
  ...section(1, [0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f]),
  // import: memory m.mem of at least one page
  ...section(2, [0x01, ...name(MEMORY_MODULE), ...name(MEMORY_NAME), 0x02, 0x00, 0x01]),
  // functions 0 and 1 of type 0
  ...section(3, [0x02, 0x00, 0x00]),
  // export: "count" (function 0), "scan" (function 1)
  ...section(7, [0x02, ...name("count"), 0x00, 0x00, ...name("scan"), 0x00, 0x01]),
  ...section(10, [0x02, ...unsignedLeb(CODE.length), ...CODE, ...unsignedLeb(SCAN.length), ...SCAN])
])

/** A WebAssembly memory page. */
const PAGE = 65536

/** Below this many bytes the copy into a counter costs more than it saves. */
const MIN_BYTES = 512

/** The slice of the WebAssembly JS API used here (this package is typed without the DOM's globals). */
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Memory: new (descriptor: { readonly initial: number }) => { readonly buffer: ArrayBuffer }
  readonly Instance: new (module: object, imports: object) => { readonly exports: unknown }
}

const wasmApi = (): WasmApi | undefined =>
  (globalThis as unknown as { readonly WebAssembly?: WasmApi }).WebAssembly

/** The compiled module, or `null` where WebAssembly SIMD is not available. */
const compile = (): object | null => {
  const wasm = wasmApi()
  if (wasm === undefined) return null
  try {
    return new wasm.Module(MODULE)
  } catch {
    // no WebAssembly SIMD here
    return null
  }
}

/** Memory and the module's `count(p, n)` and `scan(p, n)` over it. */
interface Instance {
  readonly memory: Uint8Array
  readonly countRange: (p: number, n: number) => number
  readonly scanRange: (p: number, n: number) => number
}

// Caches, the same for every host in the process: the compiled module, the instance `count` copies into.
let compiled: object | null | undefined
let shared: Instance | undefined

/** An instance with `capacity` bytes of memory, or undefined without WebAssembly SIMD. */
const instantiate = (capacity: number): Instance | undefined => {
  if (compiled === undefined) compiled = compile()
  const wasm = wasmApi()
  if (compiled === null || wasm === undefined) return undefined
  const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(capacity / PAGE)) })
  const instance = new wasm.Instance(compiled, { [MEMORY_MODULE]: { [MEMORY_NAME]: memory } })
  const exports = instance.exports as {
    readonly count: (p: number, n: number) => number
    readonly scan: (p: number, n: number) => number
  }
  return {
    memory: new Uint8Array(memory.buffer, 0, capacity),
    countRange: exports.count,
    scanRange: exports.scan
  }
}

/** Newline bytes in `bytes[from, to)`, one `indexOf` per newline. */
const byIndexOf = (bytes: Uint8Array, from: number, to: number): number => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, to)
  let count = 0
  for (let at = buffer.indexOf(0x0a, from); at !== -1; at = buffer.indexOf(0x0a, at + 1)) count++
  return count
}

/**
 * A counter with memory of its own: bytes read into `memory` are counted where they lie.
 *
 * @since 0.1.0
 * @category models
 */
export interface Counter {
  /** The counter's memory; reads land here. */
  readonly memory: Uint8Array
  /** The newline bytes in `memory[0, length)`. */
  readonly count: (length: number) => number
}

/**
 * A new counter of `capacity` bytes: WebAssembly-backed where the runtime has SIMD, else a plain
 * buffer counted with `indexOf`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (capacity: number): Counter => {
  const instance = instantiate(capacity)
  if (instance === undefined) {
    const memory = new Uint8Array(capacity)
    return { memory, count: (length) => byIndexOf(memory, 0, length) }
  }
  return { memory: instance.memory, count: (length) => instance.countRange(0, length) }
}

/** One idle counter is kept for the next `acquire` of its size, so sequential scans reuse its memory. */
let idle: Counter | undefined

/**
 * A counter of `capacity` bytes for one scan, the idle one when it has that size. Hand it back
 * with `release` when nothing reads into it any more.
 *
 * @since 0.1.0
 * @category constructors
 */
export const acquire = (capacity: number): Counter => {
  const reused = idle
  if (reused === undefined || reused.memory.byteLength !== capacity) return make(capacity)
  idle = undefined
  return reused
}

/**
 * Returns a counter from `acquire` once its scan is over.
 *
 * @since 0.1.0
 * @category constructors
 */
export const release = (counter: Counter): void => {
  idle ??= counter
}

/**
 * The newline bytes of `bytes` from `from` on.
 *
 * @since 0.1.0
 * @category constructors
 */
export const count = (bytes: Uint8Array, from = 0): number => {
  if (bytes.length - from < MIN_BYTES) return byIndexOf(bytes, from, bytes.length)
  shared ??= instantiate(PAGE)
  if (shared === undefined) return byIndexOf(bytes, from, bytes.length)
  // the common case, one pipe read: copied whole, no view made of it
  if (bytes.length <= PAGE) {
    shared.memory.set(bytes, 0)
    return shared.countRange(from, bytes.length - from)
  }
  let total = 0
  for (let at = from; at < bytes.length; at += PAGE) {
    const end = Math.min(bytes.length, at + PAGE)
    shared.memory.set(bytes.subarray(at, end), 0)
    total += shared.countRange(0, end - at)
  }
  return total
}

/** Whether `bytes[index]` is a byte a terminal acts on (see `firstControl`). */
const isControlAt = (bytes: Uint8Array, index: number): boolean => {
  const byte = bytes[index]!
  if (byte < 0x20) return byte !== 0x0a && byte !== 0x09
  if (byte === 0x7f) return true
  if (byte !== 0xc2) return false
  // a lead byte that ends the bytes counts: its C1 may follow in the next read
  const next = index + 1 < bytes.length ? bytes[index + 1]! : 0x80
  return next >= 0x80 && next <= 0x9f
}

/** The first control in `bytes[from, to)`, byte by byte, or -1. */
const controlByByte = (bytes: Uint8Array, from: number, to: number): number => {
  for (let index = from; index < to; index++) if (isControlAt(bytes, index)) return index
  return -1
}

/**
 * The index of the first byte of UTF-8 `bytes` a terminal acts on — a C0 control other than `\t`
 * and `\n`, DEL, or a C1 control (U+0080–U+009F, encoded `C2 80`–`C2 9F`; a `C2` that ends the
 * bytes counts) — or -1. The common pipe read holds none: 16 bytes at a time in WebAssembly SIMD
 * where there is, byte by byte where there is not. Used by `Terminal.firstControl`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const firstControl = (bytes: Uint8Array): number => {
  if (bytes.length < MIN_BYTES) return controlByByte(bytes, 0, bytes.length)
  shared ??= instantiate(PAGE)
  if (shared === undefined) return controlByByte(bytes, 0, bytes.length)
  for (let at = 0; at < bytes.length; at += PAGE) {
    const end = Math.min(bytes.length, at + PAGE)
    shared.memory.set(at === 0 && end === bytes.length ? bytes : bytes.subarray(at, end), 0)
    const length = end - at
    let from = 0
    for (;;) {
      const block = from + shared.scanRange(from, length - from)
      // the block the vector scan stopped at, or the last bytes it does not look at
      const blockEnd = block + 64 <= length ? block + 64 : length
      const found = controlByByte(bytes, at + block, at + blockEnd)
      if (found !== -1) return found
      if (blockEnd >= length) break
      from = blockEnd
    }
  }
  return -1
}
