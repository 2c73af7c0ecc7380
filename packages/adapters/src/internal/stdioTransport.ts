/**
 * The MCP stdio transport of the server: newline-delimited JSON-RPC on a readable/writable pair.
 * Unlike a write-and-forget transport, sends are serialized and each one resolves only once the
 * writable took it (its buffer drained), so a sender that awaits its sends — the chunk
 * forwarder — is paced by the client's reading, and at most one `drain` listener exists at a time.
 * The end (or an error) of the input is the client going away: the transport closes.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"
import * as JsonLine from "./jsonLine.js"

/** @internal */
export const make = async (input: Readable, output: Writable): Promise<Transport> => {
  const { ReadBuffer } = await import("@modelcontextprotocol/sdk/shared/stdio.js")
  const readBuffer = new ReadBuffer()
  let closed = false
  let tail: Promise<void> = Promise.resolve()

  /** Resolves once `output` can take more (or is gone: nobody reads, nothing to wait for). */
  const writable = (): Promise<void> =>
    new Promise((resolve) => {
      if (!output.writableNeedDrain || output.destroyed) return resolve()
      const done = () => {
        output.off("drain", done)
        output.off("close", done)
        output.off("error", done)
        resolve()
      }
      output.on("drain", done)
      output.on("close", done)
      output.on("error", done)
    })

  const transport: Transport = {
    start: async () => {
      input.on("data", onData)
      input.on("end", onEnd)
      input.on("error", onEnd)
      // A client that went away makes writes fail (EPIPE): that is the end, not a crash.
      output.on("error", onEnd)
    },
    send: (message: JSONRPCMessage) => {
      const sent = tail.then(() => {
        if (closed || output.destroyed) return
        // bytes, not a string: a chunk notification is not copied into the JS heap on its way out
        output.write(JsonLine.encode(message))
        return writable()
      })
      tail = sent.catch(() => undefined)
      return sent
    },
    close: async () => {
      if (closed) return
      closed = true
      input.off("data", onData)
      input.off("end", onEnd)
      input.off("error", onEnd)
      input.pause()
      readBuffer.clear()
      transport.onclose?.()
    }
  }

  function onData(chunk: Buffer): void {
    readBuffer.append(chunk)
    for (;;) {
      let message: JSONRPCMessage | null
      try {
        message = readBuffer.readMessage()
      } catch (error) {
        transport.onerror?.(error instanceof Error ? error : new Error(String(error)))
        continue
      }
      if (message === null) return
      transport.onmessage?.(message)
    }
  }

  function onEnd(): void {
    void transport.close()
  }

  return transport
}
