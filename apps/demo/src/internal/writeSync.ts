/**
 * Whole, synchronous writes to a file descriptor. Kept free of other imports: the executable
 * uses it to answer a signal that arrives while the rest is still loading.
 */
import * as fs from "node:fs"

/**
 * How long to wait before retrying a write into a full non-blocking pipe: long enough not to spin
 * a core while the reader is slow, short enough that a fast reader barely notices.
 */
const FULL_PIPE_RETRY_MS = 2

const retryClock = new Int32Array(new SharedArrayBuffer(4))

/**
 * Writes all of `text` to a file descriptor synchronously, waiting while the pipe is full. A
 * reader that went away (EPIPE) ends the write quietly: nobody is left to read the answer.
 *
 * @internal
 */
export const writeAllSync = (fd: number, text: string): void => {
  const bytes = Buffer.from(text, "utf8")
  let offset = 0
  while (offset < bytes.length) {
    try {
      offset += fs.writeSync(fd, bytes, offset, bytes.length - offset)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === "EAGAIN" || code === "EWOULDBLOCK") {
        Atomics.wait(retryClock, 0, 0, FULL_PIPE_RETRY_MS)
        continue
      }
      if (code === "EPIPE") return
      throw error
    }
  }
}
