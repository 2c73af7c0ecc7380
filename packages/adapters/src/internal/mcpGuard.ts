/**
 * The MCP server's input guard: a line filter between stdin and the SDK's stdio transport, so every
 * request that carries an id is answered even when the SDK cannot serve it. The SDK drops a line it
 * cannot parse or validate (a BOM, `"jsonrpc":"1.0"`, id 1.5, a `progressToken` that is an object)
 * without a word, and ends the session on a message over its 10 MiB buffer. Here:
 *
 * - a leading byte order mark is removed, `\r\n` is accepted;
 * - a line over `MAX_MESSAGE_BYTES` is never held whole: it is answered with an Invalid Request
 *   error (its id read from its start), a note goes to stderr, and the session goes on;
 * - a line that is not JSON is answered with a Parse error (id read from its text when it has one);
 * - a message the SDK's own schema refuses is answered with an Invalid Request error naming the
 *   first problem (a batch: each element with an id);
 * - everything else passes through unchanged, one line per chunk.
 */
import { PassThrough, type Readable, type Writable } from "node:stream"

/**
 * The largest message passed on. Below the SDK's 10 MiB read buffer (which ends the session when
 * exceeded) and far above any real tool call (inputs are paths, patterns and commands).
 */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024

/** How much of an oversized line is kept to find its id: the envelope comes first. */
const ID_SEARCH_BYTES = 64 * 1024

/** JSON-RPC 2.0 error codes. */
const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600

/** The most characters of a validation problem quoted in an answer. */
const PROBLEM_MAX_CHARS = 300

/** Validates one message; answers the first problem, or undefined when the SDK will accept it. */
export type Validate = (message: unknown) => string | undefined

type Id = string | number | null

const ID_IN_TEXT = /"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.){0,256}")/

/** The id of a message that could not be parsed, read from its text, or null. */
const idInText = (text: string): Id => {
  const found = ID_IN_TEXT.exec(text)
  if (found === null) return null
  try {
    const id = JSON.parse(found[1]!) as unknown
    return typeof id === "string" || typeof id === "number" ? id : null
  } catch {
    return null
  }
}

/** The id a refused message carries: echoed when it is a string or a number, else null. */
const idOf = (message: unknown): Id | undefined => {
  if (typeof message !== "object" || message === null || !("id" in message)) return undefined
  const id = (message as { id: unknown }).id
  return typeof id === "string" || typeof id === "number" ? id : null
}

const isRequestLike = (message: unknown): boolean =>
  typeof message === "object" && message !== null && "method" in message

const answer = (id: Id, code: number, message: string): string =>
  `${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`

/**
 * Wraps `stdin`: the returned stream carries the lines the SDK can take; every other request with
 * an id is answered on `stdout` from here.
 */
export const guard = (stdin: Readable, stdout: Writable, validate: Validate, stderr?: Writable): Readable => {
  const out = new PassThrough()
  let pieces: Array<Buffer> = []
  let size = 0
  let oversized: Buffer | undefined
  let first = true

  const reply = (text: string) => {
    stdout.write(text)
  }

  const judge = (raw: string) => {
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if (first || line.charCodeAt(0) === 0xfeff) line = line.replace(/^\ufeff/, "")
    first = false
    if (line.trim().length === 0) return
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      reply(
        answer(idInText(line.slice(0, ID_SEARCH_BYTES)), PARSE_ERROR, "Parse error: the line is not JSON")
      )
      return
    }
    const problem = validate(message)
    if (problem === undefined) {
      out.write(`${line}\n`)
      return
    }
    const reason = `Invalid Request: ${problem.slice(0, PROBLEM_MAX_CHARS)}`
    if (Array.isArray(message)) {
      // batches are not part of MCP: refuse each request of it that has an id
      for (const element of message) {
        const id = idOf(element)
        if (id !== undefined) reply(answer(id, INVALID_REQUEST, "Invalid Request: batches are not supported"))
      }
      return
    }
    const id = idOf(message)
    // a refused notification (no id) cannot be answered
    if (id !== undefined || !isRequestLike(message)) reply(answer(id ?? null, INVALID_REQUEST, reason))
  }

  const finishLine = () => {
    if (oversized !== undefined) {
      const id = idInText(oversized.toString("utf8"))
      stderr?.write(
        `toolcap mcp: refused a message of over ${MAX_MESSAGE_BYTES} bytes (id ${JSON.stringify(id)}); the session goes on\n`
      )
      reply(
        answer(id, INVALID_REQUEST, `Invalid Request: the message is larger than ${MAX_MESSAGE_BYTES} bytes`)
      )
    } else {
      judge(Buffer.concat(pieces, size).toString("utf8"))
    }
    pieces = []
    size = 0
    oversized = undefined
  }

  const append = (segment: Buffer) => {
    if (segment.length === 0) return
    if (oversized !== undefined) return
    if (size + segment.length > MAX_MESSAGE_BYTES) {
      oversized = Buffer.concat([...pieces, segment]).subarray(0, ID_SEARCH_BYTES)
      pieces = []
      size = 0
      return
    }
    pieces.push(segment)
    size += segment.length
  }

  stdin.on("data", (chunk: Buffer | string) => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
    let start = 0
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, start)) {
      append(bytes.subarray(start, at))
      finishLine()
      start = at + 1
    }
    append(bytes.subarray(start))
  })
  stdin.once("end", () => {
    if (size > 0 || oversized !== undefined) finishLine()
    out.end()
  })
  stdin.once("error", (error) => out.destroy(error))
  return out
}

/**
 * A `Validate` from the SDK's own JSON-RPC message schema (loaded on first use, like the SDK).
 */
export const sdkValidate = async (): Promise<Validate> => {
  const { JSONRPCMessageSchema } = await import("@modelcontextprotocol/sdk/types.js")
  return (message) => {
    const parsed = JSONRPCMessageSchema.safeParse(message)
    if (parsed.success) return undefined
    const issue = parsed.error.issues[0]
    return issue === undefined
      ? "not a JSON-RPC 2.0 message"
      : `${issue.path.join(".") || "message"}: ${issue.message}`
  }
}
