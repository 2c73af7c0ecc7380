/**
 * Counting newline bytes, the hot loop of a streaming cut's exact totals: a few lines of
 * WebAssembly compare 16 bytes at a time (SIMD `i8x16.eq`, a bitmask, a popcount). Per newline,
 * `Buffer#indexOf` pays a call from JavaScript into the runtime; at 100-byte lines that is most
 * of the cost of counting a GiB. Where WebAssembly SIMD is not available, the same count is made
 * with `indexOf`.
 */

/**
 * `count(p, n)`: newline bytes in memory[p, p + n). Memory: one 64 KiB page, exported as `mem`.
 * The body: 16 bytes at a time while at least 16 are left, then byte by byte.
 */
const CODE = [
  // locals: c, end, tailEnd (i32); nl (v128)
  0x02, 0x03, 0x7f, 0x01, 0x7b,
  // nl = i8x16.splat(10)
  0x41, 0x0a, 0xfd, 0x0f, 0x21, 0x05,
  // tailEnd = p + n
  0x20, 0x00, 0x20, 0x01, 0x6a, 0x21, 0x04,
  // end = p + (n & -16)
  0x20, 0x00, 0x20, 0x01, 0x41, 0x70, 0x71, 0x6a, 0x21, 0x03,
  // while (p < end) { c += popcnt(bitmask(load(p) == nl)); p += 16 }
  0x02, 0x40, 0x03, 0x40, 0x20, 0x00, 0x20, 0x03, 0x4f, 0x0d, 0x01, 0x20, 0x02, 0x20, 0x00, 0xfd, 0x00, 0x00,
  0x00, 0x20, 0x05, 0xfd, 0x23, 0xfd, 0x64, 0x69, 0x6a, 0x21, 0x02, 0x20, 0x00, 0x41, 0x10, 0x6a, 0x21, 0x00,
  0x0c, 0x00, 0x0b, 0x0b,
  // while (p < tailEnd) { c += load8_u(p) == 10; p += 1 }
  0x02, 0x40, 0x03, 0x40, 0x20, 0x00, 0x20, 0x04, 0x4f, 0x0d, 0x01, 0x20, 0x02, 0x20, 0x00, 0x2d, 0x00, 0x00,
  0x41, 0x0a, 0x46, 0x6a, 0x21, 0x02, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, 0x0c, 0x00, 0x0b, 0x0b,
  // return c
  0x20, 0x02, 0x0b
]

const section = (id: number, bytes: ReadonlyArray<number>): Array<number> => [id, bytes.length, ...bytes]

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
  ...section(10, [0x01, CODE.length, ...CODE])
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
  let count = 0
  for (let at = from; at < buffer.length; at += PAGE) {
    const end = Math.min(buffer.length, at + PAGE)
    simd.memory.set(buffer.subarray(at, end), 0)
    count += simd.count(0, end - at)
  }
  return count
}
