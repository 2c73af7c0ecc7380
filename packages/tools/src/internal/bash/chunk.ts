/**
 * Bash chunks that keep their bytes. A chunk made from a pipe read that is valid UTF-8 with
 * nothing held back by the decoder carries those bytes, and its `data` is decoded from them only
 * when someone reads it (then kept, and the bytes let go): a chunk that only passes through —
 * to an MCP client, whose transport escapes JSON straight from the bytes — never becomes a JS
 * string. The decoded text is exactly what the streaming decoder would have given for the read.
 */

/** @internal */
export interface Chunk {
  readonly callId: string
  readonly stream: "stdout" | "stderr"
  readonly seq: number
  readonly data: string
}

/** What a pipe read makes: decoded text, or bytes to decode later (`ascii`: every byte < 0x80). @internal */
export type Payload = string | { readonly bytes: Uint8Array; readonly ascii: boolean }

const bytesKey: unique symbol = Symbol.for("toolcap/BashChunk/bytes")

/** @internal */
export const make = (callId: string, stream: "stdout" | "stderr", seq: number, payload: Payload): Chunk => {
  if (typeof payload === "string") return { callId, stream, seq, data: payload }
  // the getter holds these, not the payload: once decoded, the bytes can go
  let bytes: Uint8Array | undefined = payload.bytes
  const encoding = payload.ascii ? "latin1" : "utf8"
  let data: string | undefined
  const chunk = { callId, stream, seq } as {
    callId: string
    stream: "stdout" | "stderr"
    seq: number
    data: string
  }
  Object.defineProperty(chunk, "data", {
    enumerable: true,
    configurable: true,
    get: () => {
      if (data === undefined) {
        const view = Buffer.from(bytes!.buffer, bytes!.byteOffset, bytes!.byteLength)
        // ASCII reads as latin1: the same text, decoded without a UTF-8 pass
        data = view.toString(encoding)
        bytes = undefined
      }
      return data
    }
  })
  Object.defineProperty(chunk, bytesKey, { enumerable: false, get: () => bytes })
  return chunk
}

/**
 * The UTF-8 bytes of a chunk's `data` while it was not decoded yet; undefined once it was, or
 * for a chunk made from text.
 *
 * @internal
 */
export const bytesOf = (chunk: Chunk): Uint8Array | undefined =>
  (chunk as unknown as { readonly [bytesKey]?: Uint8Array | undefined })[bytesKey]
