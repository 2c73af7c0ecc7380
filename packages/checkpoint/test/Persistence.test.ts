// Real processes, real files, a real PostgreSQL server: a checkpoint survives SIGKILL of the
// process that saved it, and a writer killed mid-transaction, again and again, never leaves the
// store unreadable or the last committed checkpoint damaged (rules C7), on SQLite and on
// PostgreSQL.
import { assert, describe, it } from "@effect/vitest"
import { isLong, reportReliability } from "@toolcap/bench-report"
import { Checkpoint, CheckpointStore, TokenEstimator, type Transcript } from "@toolcap/checkpoint"
import { Budgets, Marker } from "@toolcap/limits"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { Array as Arr, Cause, Effect, Exit, Layer, Option, Order, Redacted } from "effect"
import { type Child, spawnChild, uncommittedWalFrames } from "./fixtures/process.js"
import { crashTranscript, restartTranscript } from "./fixtures/scenarios.js"
import { freshLocation, type StoreKind, storeKinds } from "./fixtures/stores.js"

const clientOf = (kind: StoreKind, location: string): Layer.Layer<SqlClient.SqlClient, unknown> =>
  kind === "postgres"
    ? PgClient.layer({ url: Redacted.make(location), maxConnections: 1 })
    : SqliteClient.layer({ filename: location })

/**
 * Evidence that a kill landed inside a save's transaction. SQLite: WAL frames no commit closed.
 * PostgreSQL: the writer's connection had a transaction open just before the kill.
 */
const openTransaction = (kind: StoreKind, location: string, writer: string) =>
  kind === "sqlite"
    ? Effect.succeed(false)
    : Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number | string }>`
          SELECT count(*) AS n FROM pg_stat_activity
          WHERE application_name = ${`toolcap-${writer}`} AND xact_start IS NOT NULL`
      ).pipe(
        Effect.map((rows) => Number(rows[0]!.n) > 0),
        Effect.provide(clientOf(kind, location)),
        Effect.orDie
      )

const builder = Layer.merge(Budgets.layer, TokenEstimator.layer)

const expectedCheckpoint = (transcript: Transcript.Transcript) =>
  Effect.provide(Checkpoint.build(transcript), builder)

const persistence = (kind: StoreKind) => {
  it.scopedLive(
    `an oversized parallel batch compacts to a bounded marked tail, survives SIGKILL and restart, originals unchanged (${kind})`,
    () =>
      Effect.gen(function* () {
        const location = yield* freshLocation(kind)
        const writer = yield* spawnChild(["restart-writer", location, "session-restart"])
        const saved = yield* Effect.promise(() => writer.waitFor((line) => line.startsWith("SAVED ")))
        writer.process.kill("SIGKILL")
        const exit = yield* Effect.promise(() => writer.exited)
        assert.strictEqual(exit.signal, "SIGKILL")

        const reader = yield* spawnChild(["reader", location, "session-restart"])
        const line = yield* Effect.promise(() => reader.waitFor(() => true))
        assert.strictEqual((yield* Effect.promise(() => reader.exited)).code, 0, reader.stderr())
        const read = JSON.parse(line) as {
          latest: CheckpointStore.StoredCheckpoint
          transcript: Transcript.Transcript
        }

        // the same checkpoint, read back by a new process
        assert.deepStrictEqual(read.latest, JSON.parse(saved.slice("SAVED ".length)))
        const original = restartTranscript()
        assert.deepStrictEqual(read.latest.checkpoint, yield* expectedCheckpoint(original))

        // a bounded tail, re-estimated here: the turn, then one result per call, cut ones marked
        const { checkpoint } = read.latest
        const batch = checkpoint.batch!
        const tail = checkpoint.context.filter((entry) => entry.message.role === "tool")
        const results = tail.reduce((sum, entry) => sum + TokenEstimator.estimate(entry.message.text), 0)
        assert.isAtMost(results, Budgets.defaults.checkpointBatchTokens)
        assert.isAbove(batch.originalTokens, 5 * Budgets.defaults.checkpointBatchTokens)
        const turn = original.messages.find((m) => m.id === batch.assistantId) as Transcript.AssistantMessage
        assert.deepStrictEqual(
          Arr.sort(
            tail.map((entry) => (entry.message as Transcript.ToolResultMessage).callId),
            Order.string
          ),
          Arr.sort(
            turn.toolCalls.map((call) => call.id),
            Order.string
          )
        )
        const cut = tail.filter((entry) => entry.origin === "result-cut")
        assert.isAtLeast(cut.length, 2)
        for (const entry of tail) {
          assert.strictEqual(
            entry.message.text.includes(Marker.checkpointMarker),
            entry.origin === "result-cut"
          )
        }
        // the original transcript and its results are stored untouched
        assert.strictEqual(JSON.stringify(read.transcript), JSON.stringify(original))
      }),
    60_000
  )

  // 8 kills (at most 16) in the default suite, 20 (at most 30) in the long mode
  const minRuns = isLong() ? 20 : 8
  const maxRuns = isLong() ? 30 : 16
  it.scopedLive(
    `${kind}: a writer SIGKILLed mid-transaction, ${minRuns} to ${maxRuns} times: the store stays readable, committed checkpoints intact, nothing half-written`,
    () =>
      Effect.gen(function* () {
        const location = yield* freshLocation(kind)
        let killedWithFramesPending = 0
        // a few more than minRuns only while none has yet been seen inside a transaction
        const more = (run: number) => run < minRuns || (killedWithFramesPending === 0 && run < maxRuns)
        let runs = 0
        // The kill comes this long after the writer announces a save. It starts at half of a save
        // measured by the first writer (let commit once before it is killed) and steers itself into
        // the transaction: longer after a kill that found no transaction started, shorter after one
        // that came too late; a little jitter spreads the kills across the transaction.
        let delayMs: number | undefined
        const jitter = [0.6, 1, 1.4, 0.8, 1.2]
        const expected = new Map<string, { transcript: string; checkpoint: Checkpoint.Checkpoint }>()
        const expectedOf = (session: string) =>
          Effect.gen(function* () {
            const known = expected.get(session)
            if (known !== undefined) return known
            const transcript = crashTranscript(session)
            const made = {
              transcript: JSON.stringify(transcript),
              checkpoint: yield* expectedCheckpoint(transcript)
            }
            expected.set(session, made)
            return made
          })
        let killedAfterCommit = 0
        let brokenStores = 0
        let firstBreak: string | undefined
        let lastCommitted: { session: string; id: number } | undefined

        // writers load ahead (three at a time) so the runs wait less for Node and tsx to start
        const ahead = 3
        const writers: Array<Child> = []
        for (let k = 0; k < ahead; k++) writers.push(yield* spawnChild(["crash-writer", location, `w${k}`]))
        for (let run = 0; more(run); run++) {
          runs = run + 1
          const writer = writers[run]!
          yield* Effect.promise(() => writer.waitFor((line) => line === "READY"))
          writer.process.stdin!.end("go\n")
          if (delayMs === undefined) {
            const first = yield* Effect.promise(() => writer.waitFor((line) => line.startsWith("COMMITTED ")))
            delayMs = Number(first.split(" ")[3]) / 2
          }
          const round = run === 0 ? 2 : 1
          yield* Effect.promise(() => writer.waitFor((line) => line === `SAVING w${run}-${round}`))
          yield* Effect.sleep(Math.round(delayMs * jitter[run % jitter.length]!))
          const inTransaction = yield* openTransaction(kind, location, `w${run}`)
          writer.process.kill("SIGKILL")
          const exit = yield* Effect.promise(() => writer.exited)
          assert.strictEqual(exit.signal, "SIGKILL", writer.stderr())
          if (more(run + ahead))
            writers.push(yield* spawnChild(["crash-writer", location, `w${run + ahead}`]))
          const commits = writer.lines.filter((line) => line.startsWith("COMMITTED "))
          for (const commit of commits) {
            const [, session, id] = commit.split(" ")
            lastCommitted = { session: session!, id: Number(id) }
          }
          const saving = writer.lines
            .filter((line) => line.startsWith("SAVING "))
            .at(-1)!
            .split(" ")[1]!
          const interrupted = commits.some((line) => line.split(" ")[1] === saving) ? undefined : saving
          const pendingFrames = kind === "sqlite" ? uncommittedWalFrames(location) : inTransaction ? 1 : 0
          if (pendingFrames > 0) killedWithFramesPending++
          const tooLate = commits.length > (run === 0 ? 1 : 0)
          if (tooLate) killedAfterCommit++
          delayMs *= tooLate ? 0.7 : pendingFrames > 0 ? 1 : 1.3

          // each kill's checks run to the end of the series; a failing one is counted, its first cause kept
          const checked = yield* Effect.gen(function* () {
            const store = yield* CheckpointStore.CheckpointStore
            // the last committed checkpoint reads back exactly as it was built, with its transcript
            if (lastCommitted !== undefined) {
              const want = yield* expectedOf(lastCommitted.session)
              const latest = Option.getOrThrow(yield* store.latest(lastCommitted.session))
              assert.strictEqual(latest.checkpointId, lastCommitted.id)
              assert.deepStrictEqual(latest.checkpoint, want.checkpoint)
              assert.strictEqual(
                JSON.stringify(yield* store.transcript(lastCommitted.session)),
                want.transcript
              )
            }
            // the interrupted save left all or nothing
            if (interrupted !== undefined) {
              const latest = yield* store.latest(interrupted)
              const transcript = yield* store.transcript(interrupted)
              if (Option.isNone(latest)) assert.deepStrictEqual(transcript, { messages: [] })
              else {
                // committed, killed before it could say so
                const want = yield* expectedOf(interrupted)
                assert.strictEqual(JSON.stringify(transcript), want.transcript)
                assert.deepStrictEqual(latest.value.checkpoint, want.checkpoint)
              }
            }
            const sql = yield* SqlClient.SqlClient
            if (kind === "sqlite") {
              const [integrity] = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
              assert.strictEqual(integrity!.integrity_check, "ok")
            }
            // no transcript rows without the checkpoint they were saved with
            const [orphans] = yield* sql<{ n: number }>`
              SELECT count(*) AS n FROM (SELECT DISTINCT session_id FROM transcript_messages) t
              WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.session_id = t.session_id)`
            assert.strictEqual(Number(orphans!.n), 0)
          }).pipe(
            Effect.provide(
              Layer.merge(CheckpointStore.layerFromLocation(location), clientOf(kind, location))
            ),
            Effect.scoped,
            Effect.exit
          )
          if (Exit.isFailure(checked)) {
            brokenStores++
            firstBreak ??= Cause.pretty(checked.cause)
          }
        }
        assert.isDefined(lastCommitted)
        // the kills did land inside transactions (SQLite: a WAL holding frames no commit closed)
        assert.isAtLeast(killedWithFramesPending, 1)
        reportReliability(
          `checkpoint store (${kind}) writer SIGKILLed`,
          { inputs: runs, "lost or half-written checkpoints": brokenStores },
          `${runs} kills of a checkpoint writer, ${killedWithFramesPending} inside a transaction, ${killedAfterCommit} after a commit`
        )
        assert.strictEqual(brokenStores, 0, firstBreak)
      }),
    180_000
  )
}

for (const kind of storeKinds) {
  describe(`persistence (${kind})`, () => {
    persistence(kind)
  })
}
