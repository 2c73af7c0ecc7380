/**
 * Counting `\n` bytes fast, for Read's scan to an offset deep in a large file.
 *
 * One `Buffer.indexOf` call per line costs more than the line (tens of nanoseconds each, 18
 * million lines to reach line 18,000,000 of a 1 GiB file). Instead a tiny WebAssembly function
 * compares 16 bytes at a time (SIMD) and counts the matches, so reaching an offset costs little
 * more than reading the bytes. The module is written out below, instruction by instruction; where
 * WebAssembly SIMD is unavailable the scan falls back to `indexOf`.
 *
 * File chunks are read straight into the module's memory, so nothing is copied before counting.
 */

/** Bytes per chunk slot: large enough that per-read overhead vanishes, small enough to stay cheap. */
export const CHUNK_BYTES = 4 * 1024 * 1024

const PAGE_BYTES = 64 * 1024
const SLOTS = 1

const unsignedLeb = (value: number): Array<number> => {
  const out: Array<number> = []
  let rest = value
  do {
    let byte = rest & 0x7f
    rest >>>= 7
    if (rest !== 0) byte |= 0x80
    out.push(byte)
  } while (rest !== 0)
  return out
}

const signedLeb = (value: number): Array<number> => {
  const out: Array<number> = []
  let rest = value
  for (;;) {
    const byte = rest & 0x7f
    rest >>= 7
    if ((rest === 0 && (byte & 0x40) === 0) || (rest === -1 && (byte & 0x40) !== 0)) {
      out.push(byte)
      return out
    }
    out.push(byte | 0x80)
  }
}

const section = (id: number, body: Array<number>): Array<number> => [id, ...unsignedLeb(body.length), ...body]
const name = (text: string): Array<number> => [
  ...unsignedLeb(text.length),
  ...Array.from(text, (c) => c.charCodeAt(0))
]

// Opcodes used below (WebAssembly core spec + fixed-width SIMD proposal).
const I32 = 0x7f
const V128 = 0x7b
const LOCAL_GET = 0x20
const LOCAL_SET = 0x21
const I32_CONST = 0x41
const I32_ADD = 0x6a
const I32_AND = 0x71
const I32_EQ = 0x46
const I32_GE_U = 0x4f
const I32_POPCNT = 0x69
const I32_LOAD8_U = 0x2d
const BLOCK = 0x02
const LOOP = 0x03
const EMPTY = 0x40
const BR = 0x0c
const BR_IF = 0x0d
const END = 0x0b
const SIMD = 0xfd
const V128_LOAD = 0x00
const I8X16_SPLAT = 0x0f
const I8X16_EQ = 0x23
const I8X16_BITMASK = 0x64

// count(p: i32, n: i32) -> i32: the number of 0x0A bytes in memory[p, p + n).
// locals: 2 = end (of the 64-byte blocks, then of everything), 3 = count, 4 = splat(0x0A)
const countVector = (offset: number): Array<number> => [
  LOCAL_GET, 0, SIMD, V128_LOAD, 0x00, ...unsignedLeb(offset),
  LOCAL_GET, 4, SIMD, I8X16_EQ, SIMD, I8X16_BITMASK, I32_POPCNT, I32_ADD
] // prettier-ignore

const countBody: Array<number> = [
  0x02, 0x02, I32, 0x01, V128,
  I32_CONST, 0x0a, SIMD, I8X16_SPLAT, LOCAL_SET, 4,
  // end = p + (n & ~63)
  LOCAL_GET, 0, LOCAL_GET, 1, I32_CONST, ...signedLeb(-64), I32_AND, I32_ADD, LOCAL_SET, 2,
  BLOCK, EMPTY, LOOP, EMPTY,
  LOCAL_GET, 0, LOCAL_GET, 2, I32_GE_U, BR_IF, 1,
  LOCAL_GET, 3,
  ...countVector(0), ...countVector(16), ...countVector(32), ...countVector(48),
  LOCAL_SET, 3,
  LOCAL_GET, 0, I32_CONST, ...signedLeb(64), I32_ADD, LOCAL_SET, 0,
  BR, 0,
  END, END,
  // end += n & 63; the last bytes one at a time
  LOCAL_GET, 2, LOCAL_GET, 1, I32_CONST, ...signedLeb(63), I32_AND, I32_ADD, LOCAL_SET, 2,
  BLOCK, EMPTY, LOOP, EMPTY,
  LOCAL_GET, 0, LOCAL_GET, 2, I32_GE_U, BR_IF, 1,
  LOCAL_GET, 3, LOCAL_GET, 0, I32_LOAD8_U, 0x00, 0x00, I32_CONST, 0x0a, I32_EQ, I32_ADD, LOCAL_SET, 3,
  LOCAL_GET, 0, I32_CONST, 0x01, I32_ADD, LOCAL_SET, 0,
  BR, 0,
  END, END,
  LOCAL_GET, 3,
  END
] // prettier-ignore

const moduleBytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 2, I32, I32, 1, I32]),
  ...section(3, [1, 0]),
  ...section(5, [1, 0x00, ...unsignedLeb((SLOTS * CHUNK_BYTES) / PAGE_BYTES)]),
  ...section(7, [2, ...name("count"), 0x00, 0, ...name("memory"), 0x02, 0]),
  ...section(10, [1, ...unsignedLeb(countBody.length), ...countBody])
]) // prettier-ignore

/** The slice of the WebAssembly JS API used here (the project's `lib` has no DOM typings). */
interface WasmApi {
  readonly validate: (bytes: Uint8Array) => boolean
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> }
}

const wasmApi = (globalThis as unknown as { readonly WebAssembly?: WasmApi }).WebAssembly

let compiled: object | null | undefined

const wasmModule = (): object | null => {
  if (compiled === undefined) {
    try {
      compiled =
        wasmApi !== undefined && wasmApi.validate(moduleBytes) ? new wasmApi.Module(moduleBytes) : null
    } catch {
      compiled = null
    }
  }
  return compiled
}

/**
 * Chunk slots and a counter over them. Each scan takes its own (the memory is the scan's).
 */
export interface ScanBuffer {
  /** Slot `k` as a byte view; reads land here. */
  readonly slot: (k: number) => Uint8Array
  /** The number of `\n` bytes in the first `length` bytes of slot `k`. */
  readonly count: (k: number, length: number) => number
}

const fallbackBuffer = (): ScanBuffer => {
  const slots = Array.from({ length: SLOTS }, () => Buffer.allocUnsafe(CHUNK_BYTES))
  return {
    slot: (k) => slots[k]!,
    count: (k, length) => countWithIndexOf(slots[k]!, length)
  }
}

/**
 * Counts `\n` in `bytes[0, length)` with `indexOf`; right for short spans, and the fallback.
 */
export const countWithIndexOf = (bytes: Uint8Array, length: number): number => {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(length, bytes.byteLength))
  let lines = 0
  for (let at = view.indexOf(0x0a); at !== -1; at = view.indexOf(0x0a, at + 1)) lines++
  return lines
}

const createScanBuffer = (): ScanBuffer => {
  const module = wasmModule()
  if (module === null || wasmApi === undefined) return fallbackBuffer()
  const instance = new wasmApi.Instance(module, {})
  const memory = instance.exports["memory"] as { readonly buffer: ArrayBuffer }
  const count = instance.exports["count"] as (p: number, n: number) => number
  const slots = Array.from(
    { length: SLOTS },
    (_, k) => new Uint8Array(memory.buffer, k * CHUNK_BYTES, CHUNK_BYTES)
  )
  return {
    slot: (k) => slots[k]!,
    count: (k, length) => count(k * CHUNK_BYTES, length)
  }
}

/** One idle scan buffer is kept for the next scan, so sequential reads reuse its memory. */
let idle: ScanBuffer | undefined

/**
 * A scan buffer for one scan: WebAssembly-backed when the runtime supports SIMD, else plain
 * buffers. Hand it back with `release` when the scan is over.
 */
export const acquire = (): ScanBuffer => {
  const reused = idle
  idle = undefined
  return reused ?? createScanBuffer()
}

/** Returns a scan buffer once nothing reads into it any more. */
export const release = (buffer: ScanBuffer): void => {
  idle ??= buffer
}

/** Whether the fast counter is in use (for tests and diagnostics). */
export const usesWasm = (): boolean => wasmModule() !== null
