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
 * - a batch (MCP has none) is answered with Invalid Request errors: one per element that has an id
 *   or is not a notification, and one with id null when that makes none (`[]` included);
 * - a message whose envelope is wrong (`jsonrpc`, `id`, `method`, `params`) is answered with an
 *   Invalid Request error naming the field;
 * - a request to a method the server serves whose params do not fit the SDK's schema (`arguments`
 *   as a string, `name: 42`, `level: 7`) is answered with an Invalid params error (-32602) naming
 *   the field, instead of the SDK's internal error with the whole validator report;
 * - everything else passes through unchanged, one line per chunk.
 *
 * Every message an answer carries is at most `PROBLEM_MAX_CHARS` characters.
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
const INVALID_PARAMS = -32602

/** The most characters of an answer's message: enough to name a field and what it must be. */
export const PROBLEM_MAX_CHARS = 300

/** Why a message is refused: the JSON-RPC error code and message of its answer. */
export interface Refusal {
  readonly code: number
  readonly message: string
}

/** Validates one message; answers its first problem, or undefined when the SDK will accept it. */
export type Validate = (message: unknown) => Refusal | undefined

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
  `${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message: message.slice(0, PROBLEM_MAX_CHARS) } })}\n`

const invalidRequest = (problem: string): Refusal => ({
  code: INVALID_REQUEST,
  message: `Invalid Request: ${problem}`
})

const invalidParams = (problem: string): Refusal => ({
  code: INVALID_PARAMS,
  message: `Invalid params: ${problem}`
})

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** What a JSON value is, for a message saying what was sent instead. */
const kindOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "an array"
      : typeof value === "object"
        ? "an object"
        : `a ${typeof value}`

const isId = (value: unknown): boolean =>
  typeof value === "string" || (typeof value === "number" && Number.isInteger(value))

/**
 * The first problem of a message's JSON-RPC envelope, each named by its field; the SDK's schema
 * checks the rest.
 */
export const envelopeProblem = (message: unknown): Refusal | undefined => {
  if (!isObject(message)) return invalidRequest(`a message must be a JSON object, got ${kindOf(message)}`)
  if (message["jsonrpc"] !== "2.0") return invalidRequest(`jsonrpc must be "2.0"`)
  if ("id" in message && !isId(message["id"]))
    return invalidRequest(`id must be a string or an integer, got ${kindOf(message["id"])}`)
  if (!("method" in message)) return undefined
  if (typeof message["method"] !== "string")
    return invalidRequest(`method must be a string, got ${kindOf(message["method"])}`)
  if (!("params" in message)) return undefined
  const params = message["params"]
  // JSON-RPC: params are structured (an object or an array); MCP's are always an object
  if (Array.isArray(params)) return invalidParams(`params must be an object, got an array`)
  if (!isObject(params)) return invalidRequest(`params must be an object, got ${kindOf(params)}`)
  if (!("_meta" in params)) return undefined
  const meta = params["_meta"]
  if (!isObject(meta)) return invalidParams(`params._meta must be an object, got ${kindOf(meta)}`)
  if ("progressToken" in meta && !isId(meta["progressToken"]))
    return invalidParams(
      `params._meta.progressToken must be a string or an integer, got ${kindOf(meta["progressToken"])}`
    )
  return undefined
}

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
    if (Array.isArray(message)) return refuseBatch(message)
    const refusal = validate(message)
    if (refusal === undefined) {
      out.write(`${line}\n`)
      return
    }
    const id = idOf(message)
    // a refused notification (no id) cannot be answered
    if (id !== undefined || !isRequestLike(message)) reply(answer(id ?? null, refusal.code, refusal.message))
  }

  /** MCP has no batches: every element that expects an answer gets one, and the batch at least one. */
  const refuseBatch = (batch: ReadonlyArray<unknown>) => {
    const reason =
      batch.length === 0
        ? "Invalid Request: an empty batch; send one JSON-RPC message per line"
        : "Invalid Request: batches are not supported; send one JSON-RPC message per line"
    let answered = 0
    for (const element of batch) {
      const id = idOf(element)
      if (id === undefined && isRequestLike(element)) continue
      reply(answer(id ?? null, INVALID_REQUEST, reason))
      answered++
    }
    if (answered === 0) reply(answer(null, INVALID_REQUEST, reason))
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

/** A schema as the guard uses it (the SDK's zod schemas have this shape). */
interface Schema {
  readonly safeParse: (value: unknown) =>
    | { readonly success: true }
    | {
        readonly success: false
        readonly error: {
          readonly issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>
        }
      }
}

/** The first issue of a refused value, short: `params.arguments: expected object, received string`. */
const firstIssue = (issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string => {
  const issue = issues[0]
  if (issue === undefined) return "not a JSON-RPC 2.0 message"
  const field = issue.path.map(String).join(".") || "message"
  const what = issue.message.replace(/^Invalid input: /, "").replaceAll("expected record", "expected object")
  return `${field}: ${what}`
}

/**
 * A `Validate` from the envelope checks above, the SDK's own JSON-RPC message schema and, for the
 * requests the server serves, the SDK's schema of their params (loaded on first use, like the SDK).
 */
export const sdkValidate = async (): Promise<Validate> => {
  const types = await import("@modelcontextprotocol/sdk/types.js")
  const requests = new Map<string, Schema>([
    ["initialize", types.InitializeRequestSchema],
    ["ping", types.PingRequestSchema],
    ["tools/list", types.ListToolsRequestSchema],
    ["tools/call", types.CallToolRequestSchema],
    ["logging/setLevel", types.SetLevelRequestSchema]
  ])
  return (message) => {
    const envelope = envelopeProblem(message)
    if (envelope !== undefined) return envelope
    const parsed = (types.JSONRPCMessageSchema as Schema).safeParse(message)
    if (!parsed.success) return invalidRequest(firstIssue(parsed.error.issues))
    const request = message as { readonly id?: unknown; readonly method?: unknown }
    const schema = typeof request.method === "string" ? requests.get(request.method) : undefined
    // a notification's params are not checked here: it gets no answer either way
    if (schema === undefined || !("id" in request)) return undefined
    const checked = schema.safeParse(message)
    return checked.success ? undefined : invalidParams(firstIssue(checked.error.issues))
  }
}
