// Transcript rows into PostgreSQL with `COPY ... FROM STDIN (FORMAT binary)` on the transaction's
// own connection: the rows' bytes go out as they are (a message's text as the UTF-8 the digest was
// taken over), with no statement text to parse, no parameters to bind, and the server's bulk insert
// path. A 50 MB first save spent a fifth of its client time copying parameters into the driver's
// growing message buffer with multi-row INSERTs.
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { from as copyFrom } from "pg-copy-streams"
import type * as Record from "./record.js"

/** The columns, in the order each row's fields are written. */
const columns = "session_id, seq, message_id, role, body, text, digest, prefix"

const fieldsPerRow = 8

/** The binary COPY signature, then 32-bit flags (0) and header extension length (0). */
const header = Buffer.concat([Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"), Buffer.alloc(8)])

/** A 16-bit field count of -1 ends the data. */
const trailer = Buffer.from([0xff, 0xff])

/** Bytes of a length-prefixed text field. */
const textField = (value: string) => 4 + Buffer.byteLength(value)

/**
 * The rows in the binary COPY format (see PostgreSQL's "COPY" reference, "Binary Format"): per
 * row, a 16-bit field count, then each field as a 32-bit length (-1 for NULL) and its bytes; an
 * integer is 4 bytes big-endian, a text its UTF-8.
 */
export const encodeRows = (sessionId: string, rows: ReadonlyArray<Record.MessageRow>): Buffer => {
  const session = textField(sessionId)
  let size = header.length + trailer.length
  for (const row of rows) {
    size +=
      2 +
      session +
      8 +
      textField(row.messageId) +
      textField(row.role) +
      textField(row.body) +
      4 +
      (row.bytes?.length ?? 0) +
      textField(row.digest) +
      textField(row.prefix)
  }
  const out = Buffer.allocUnsafe(size)
  let at = header.copy(out, 0)
  const text = (value: string) => {
    const length = out.write(value, at + 4)
    out.writeInt32BE(length, at)
    at += 4 + length
  }
  for (const row of rows) {
    out.writeInt16BE(fieldsPerRow, at)
    at += 2
    text(sessionId)
    out.writeInt32BE(4, at)
    out.writeInt32BE(row.seq, at + 4)
    at += 8
    text(row.messageId)
    text(row.role)
    text(row.body)
    if (row.bytes === null) {
      out.writeInt32BE(-1, at)
      at += 4
    } else {
      out.writeInt32BE(row.bytes.length, at)
      out.set(row.bytes, at + 4)
      at += 4 + row.bytes.length
    }
    text(row.digest)
    text(row.prefix)
  }
  trailer.copy(out, at)
  return out
}

/** The driver's client under `@effect/sql-pg`'s transaction connection (a node-postgres client). */
interface PgClient {
  readonly query: (query: ReturnType<typeof copyFrom>) => ReturnType<typeof copyFrom>
}

const copyFailed = (cause: unknown) => new SqlError({ cause, message: "Failed to copy transcript rows" })

/**
 * Appends the batches inside the current transaction, one COPY each. A batch is taken from
 * `batches` (its rows encoded and hashed) once the previous one is handed to the socket, so the
 * client computes while the server inserts. Fails outside a transaction or on a connection that
 * is not a node-postgres client (the store writes rows only inside a save's transaction).
 */
export const appendRows = (
  sessionId: string,
  batches: Iterable<ReadonlyArray<Record.MessageRow>>
): Effect.Effect<void, SqlError> =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) => {
    const client = Option.getOrUndefined(transaction)?.[0] as { readonly pg?: PgClient } | undefined
    if (client?.pg === undefined) {
      return Effect.fail(copyFailed(new Error("COPY needs the transaction's PostgreSQL connection")))
    }
    const pg = client.pg
    return Effect.async<void, SqlError>((resume_) => {
      const iterator = batches[Symbol.iterator]()
      let stream: ReturnType<typeof copyFrom> | undefined
      let settled = false
      const resume = (result: Effect.Effect<void, SqlError>) => {
        if (settled) return
        settled = true
        resume_(result)
      }
      const copy = (batch: IteratorResult<ReadonlyArray<Record.MessageRow>>): void => {
        if (batch.done === true) return resume(Effect.void)
        const current = pg.query(copyFrom(`COPY transcript_messages (${columns}) FROM STDIN (FORMAT binary)`))
        stream = current
        let next: IteratorResult<ReadonlyArray<Record.MessageRow>> | undefined
        current.on("error", (cause) => resume(Effect.fail(copyFailed(cause))))
        // once the batch is handed to the socket: CopyDone, then the next batch is computed while
        // the server inserts this one; "finish" is the server's acknowledgement
        current.once("finish", () => {
          if (!settled) copy(next!)
        })
        current.write(encodeRows(sessionId, batch.value), (error) => {
          if (error !== undefined && error !== null) return
          current.end()
          try {
            next = iterator.next()
          } catch (defect) {
            current.destroy()
            resume(Effect.die(defect))
          }
        })
      }
      try {
        copy(iterator.next())
      } catch (defect) {
        resume(Effect.die(defect))
      }
      // interrupted: the server is told to fail the COPY, and the transaction rolls back
      return Effect.sync(() => stream?.destroy())
    })
  })
