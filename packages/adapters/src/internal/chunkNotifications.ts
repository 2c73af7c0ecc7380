/**
 * Bash chunks as MCP notifications, within the call's result budget: log messages (once the
 * client set a logging level that lets the stream through) and progress notifications (when the
 * call carries a progress token). Every notification line a stream causes, envelope included, is
 * charged to that stream's budget (`shellStdoutMaxBytes` / `shellStderrMaxBytes`): a client at
 * `logging/setLevel debug` receives at most what the result itself may carry, whatever the
 * command prints. The run that crosses the budget is cut to fit (at a UTF-8 boundary, its log data
 * saying how many of its bytes were left out); later chunks of the stream are not forwarded, and
 * when the call ends one notice per stream says how many bytes were left out. Room for that notice
 * is held back from the start.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Abort, Utf8 } from "@toolcap/limits"
import { Bash } from "@toolcap/tools"
import * as ChunkForwarder from "./chunkForwarder.js"
import * as JsonLine from "./jsonLine.js"

/** The MCP logging levels. @internal */
export type LoggingLevel =
  "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency"

type StreamName = "stdout" | "stderr"

/** A server notification as the SDK's `sendNotification` takes it. @internal */
export interface Notification {
  readonly method: "notifications/message" | "notifications/progress"
  readonly params: Record<string, unknown>
}

/** @internal */
export interface Options {
  readonly callId: string
  /** Wire bytes of notifications each stream may cause. */
  readonly budget: Readonly<Record<StreamName, number>>
  readonly progressToken?: string | number | undefined
  /** The log level of a stream's messages, or undefined when the client's level filters them out. */
  readonly logLevel: (stream: StreamName) => LoggingLevel | undefined
  readonly logger: string
  readonly send: (notification: Notification) => Promise<void>
  /** The call's cancellation: nothing is sent once it aborted. */
  readonly signal?: AbortSignal | undefined
}

/** What a stream has spent and left out. */
interface StreamState {
  /** Wire bytes chunk notifications may still take (the notice's room is held back). */
  left: number
  /** Whether the notice fits the budget at all (a budget smaller than one notice sends none). */
  readonly noticeFits: boolean
  omittedBytes: number
  /** The first chunk not forwarded at all, once one was left out. */
  firstOmitted: number | undefined
  lastSeq: number
}

/**
 * The largest figure a notice may hold (seq numbers and byte counts): the room held back for the
 * notice is measured with it, so the real notice always fits.
 */
const LARGEST_FIGURE = Number.MAX_SAFE_INTEGER

/** The size of a notification on the wire: the line the transport writes. */
const wireBytes = (notification: Notification): number =>
  JsonLine.encode({ ...notification, jsonrpc: "2.0" }).length

const bytesOf = (data: string | JsonLine.Utf8Text): Uint8Array =>
  typeof data === "string"
    ? Buffer.from(data)
    : data.pieces.length === 1
      ? data.pieces[0]!
      : Buffer.concat(data.pieces)

/** A chunk's size in bytes, counted without decoding it. */
const chunkSize = (chunk: Bash.BashChunk): number =>
  Bash.chunkBytes(chunk)?.length ?? Buffer.byteLength(chunk.data)

const totalWireBytes = (notifications: ReadonlyArray<Notification>): number =>
  notifications.reduce((sum, notification) => sum + wireBytes(notification), 0)

/** The notice of what a stream left out, in words. */
const noticeText = (stream: StreamName, omittedBytes: number, budget: number): string =>
  `[toolcap: ${omittedBytes} bytes of ${stream} were left out of these notifications, which carry at most ${budget} bytes per stream; the call's result says where the full output is]`

/** @internal */
export interface ChunkNotifications {
  /**
   * Runs a call's event stream, sending its chunks as notifications (coalesced while the client
   * is busy, the stream paused once a batch is at its bound) and succeeding with its outcome,
   * the stream's last element; the notices of what was left out are sent after it.
   */
  readonly forward: <A, E, R>(events: Stream.Stream<ChunkForwarder.Event<A>, E, R>) => Effect.Effect<A, E, R>
}

/**
 * The notifications of a call's chunks within the budget, or undefined when the client asked for
 * no notification of either stream.
 *
 * @internal
 */
export const make = (options: Options): ChunkNotifications | undefined => {
  const { callId, progressToken, logger } = options
  const channels = (stream: StreamName) =>
    (progressToken === undefined ? 0 : 1) + (options.logLevel(stream) === undefined ? 0 : 1)
  if (channels("stdout") === 0 && channels("stderr") === 0) return undefined

  // progress counts up across the call, as MCP requires
  let progress = 0

  /** The notifications of one run of `stream` carrying `text` (its progress number the next one). */
  const notificationsOf = (
    stream: StreamName,
    log: Record<string, unknown>,
    text: string | JsonLine.Utf8Text,
    progressFigure = progress + 1
  ): Array<Notification> => {
    const out: Array<Notification> = []
    if (progressToken !== undefined)
      out.push({
        method: "notifications/progress",
        params: { progressToken, progress: progressFigure, message: `${stream}: ${text.toString()}` }
      })
    const level = options.logLevel(stream)
    // `data` may be the run's UTF-8 bytes: the transport escapes them into the line
    if (level !== undefined)
      out.push({ method: "notifications/message", params: { level, logger, data: log } })
    return out
  }

  const noticeOf = (stream: StreamName, state: StreamState, figure?: number) => {
    const omitted = figure ?? state.omittedBytes
    const text = noticeText(stream, omitted, options.budget[stream])
    return notificationsOf(
      stream,
      {
        callId,
        stream,
        seq: figure ?? state.firstOmitted ?? state.lastSeq + 1,
        lastSeq: figure ?? state.lastSeq,
        data: "",
        omittedBytes: omitted,
        notice: text
      },
      text,
      figure
    )
  }

  const stateOf = (stream: StreamName): StreamState => {
    const budget = options.budget[stream]
    const probe: StreamState = {
      left: 0,
      noticeFits: true,
      omittedBytes: 0,
      firstOmitted: undefined,
      lastSeq: -1
    }
    const reserve = totalWireBytes(noticeOf(stream, probe, LARGEST_FIGURE))
    return { ...probe, left: Math.max(0, budget - reserve), noticeFits: reserve <= budget }
  }
  const states: Record<StreamName, StreamState> = { stdout: stateOf("stdout"), stderr: stateOf("stderr") }

  const stopped = () => options.signal?.aborted === true
  /** Sends the notifications of one run, measured with the progress number they carry. */
  const send = async (notifications: ReadonlyArray<Notification>) => {
    if (progressToken !== undefined) progress++
    for (const notification of notifications) {
      if (stopped()) return
      await options.send(notification)
    }
  }

  const leaveOut = (state: StreamState, seq: number, bytes: number) => {
    state.omittedBytes += bytes
    state.firstOmitted ??= seq
  }

  /** Sends a run whole, cut to the stream's budget, or not at all. */
  const sendRun = async (run: ChunkForwarder.ChunkRun) => {
    const state = states[run.stream]
    const log = { callId: run.callId, stream: run.stream, seq: run.seq, lastSeq: run.lastSeq }
    if (state.firstOmitted !== undefined) return leaveOut(state, run.seq, bytesOf(run.data).length)
    const whole = notificationsOf(run.stream, { ...log, data: run.data }, run.data)
    const wholeBytes = totalWireBytes(whole)
    if (wholeBytes <= state.left) {
      state.left -= wholeBytes
      return send(whole)
    }
    // the run crosses the budget: the longest prefix whose notifications fit, at a UTF-8 boundary
    const bytes = bytesOf(run.data)
    const count = whole.length
    let end = Utf8.prefixBoundary(bytes, Math.min(bytes.length, Math.floor(state.left / count)))
    for (;;) {
      if (end <= 0) return leaveOut(state, run.seq, bytes.length)
      const text = Utf8.decode(bytes.subarray(0, end))
      const cut = notificationsOf(run.stream, { ...log, data: text, omittedBytes: bytes.length - end }, text)
      const cutBytes = totalWireBytes(cut)
      if (cutBytes <= state.left) {
        state.left = 0
        // later chunks are left out from the next seq on; this run's tail is counted here
        state.omittedBytes += bytes.length - end
        state.firstOmitted = run.lastSeq + 1
        return send(cut)
      }
      end = Utf8.prefixBoundary(bytes, end - Math.ceil((cutBytes - state.left) / count))
    }
  }

  /** Counts every chunk; false for one that is not to be sent (no channel, or past its budget). */
  const admit = (chunk: Bash.BashChunk): boolean => {
    const state = states[chunk.stream]
    state.lastSeq = chunk.seq
    if (channels(chunk.stream) === 0) return false
    // a stream past its budget is counted, not queued: it never waits for the client
    if (state.firstOmitted !== undefined || state.left === 0) {
      leaveOut(state, chunk.seq, chunkSize(chunk))
      return false
    }
    return true
  }

  /** Sends a batch's runs; a failed send drops them (the client is gone), a cancellation stops waiting. */
  const sendBatch = (chunks: ReadonlyArray<Bash.BashChunk>): Effect.Effect<void> =>
    chunks.length === 0 || stopped()
      ? Effect.void
      : Effect.raceFirst(
          Effect.promise(async () => {
            for (const run of ChunkForwarder.coalesce(chunks)) await sendRun(run)
          }).pipe(Effect.catchAllDefect(() => Effect.void)),
          Abort.aborted(options.signal)
        )

  const notices = Effect.promise(async () => {
    for (const stream of ["stdout", "stderr"] as const) {
      const state = states[stream]
      if (state.omittedBytes > 0 && state.noticeFits) await send(noticeOf(stream, state))
    }
  }).pipe(Effect.catchAllDefect(() => Effect.void))

  const forward = <A, E, R>(events: Stream.Stream<ChunkForwarder.Event<A>, E, R>): Effect.Effect<A, E, R> =>
    ChunkForwarder.batches(events, admit).pipe(
      Stream.runFoldEffect(undefined as { readonly value: A } | undefined, (outcome, batch) =>
        Effect.as(sendBatch(batch.chunks), batch.result ?? outcome)
      ),
      Effect.flatMap((outcome) =>
        outcome === undefined
          ? Effect.dieMessage("a call's stream ended without its outcome")
          : Effect.succeed(outcome.value)
      ),
      Effect.exit,
      Effect.zipLeft(Effect.suspend(() => (stopped() ? Effect.void : notices))),
      Effect.flatten
    )

  return { forward }
}
