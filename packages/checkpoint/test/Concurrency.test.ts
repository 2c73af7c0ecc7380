// Many writers, one session: 4 processes (in-process writers for the memory store) each start 25
// saves at once. Every save either commits or is refused with the documented CheckpointConflict;
// every committed checkpoint reads back exactly as built; the session's latest is one of them, of
// the longest transcript committed, and the stored transcript is that one.
import { assert, describe, it } from "@effect/vitest"
import { Checkpoint, CheckpointError, CheckpointStore, TokenEstimator } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import { Array as Arr, Effect, Either, Layer, Option, Order } from "effect"
import { spawnChild } from "./fixtures/process.js"
import { concurrentSaves, concurrentSession, concurrentTranscript } from "./fixtures/scenarios.js"
import { freshLocation, type StoreKind, storeKinds } from "./fixtures/stores.js"

const writers = 4

const builder = Layer.merge(Budgets.layer, TokenEstimator.layer)

type Outcome = { readonly writer: number; readonly save: number } & (
  | { readonly kind: "COMMITTED"; readonly checkpointId: number }
  | { readonly kind: "CONFLICT"; readonly conflict: string }
  | { readonly kind: "ERROR"; readonly detail: string }
)

const parse = (line: string): Outcome => {
  const [kind, writer, save, ...rest] = line.split(" ")
  const at = { writer: Number(writer), save: Number(save) }
  if (kind === "COMMITTED") return { ...at, kind, checkpointId: Number(rest[0]) }
  if (kind === "CONFLICT") return { ...at, kind, conflict: rest[0]! }
  return { ...at, kind: "ERROR", detail: line }
}

/** The checks on what the writers reported and what the store holds afterwards. */
const verify = (outcomes: ReadonlyArray<Outcome>) =>
  Effect.gen(function* () {
    assert.strictEqual(outcomes.length, writers * concurrentSaves)
    assert.deepStrictEqual(
      outcomes.filter((o) => o.kind === "ERROR"),
      [],
      "no error but the documented conflict"
    )
    const store = yield* CheckpointStore.CheckpointStore
    const committed = outcomes.filter((o) => o.kind === "COMMITTED")
    assert.isAbove(committed.length, 0)
    for (const outcome of committed) {
      const transcript = concurrentTranscript(outcome.writer, outcome.save)
      const expected = yield* Effect.provide(Checkpoint.build(transcript), builder)
      const stored = Option.getOrThrow(yield* store.get(outcome.checkpointId))
      assert.strictEqual(stored.sessionId, concurrentSession)
      assert.deepStrictEqual(stored.checkpoint, expected)
    }
    assert.deepStrictEqual(
      Arr.sort(yield* store.list(concurrentSession), Order.number),
      Arr.sort(
        committed.map((o) => o.checkpointId),
        Order.number
      )
    )
    const latest = Option.getOrThrow(yield* store.latest(concurrentSession))
    const winner = committed.find((o) => o.checkpointId === latest.checkpointId)
    assert.isDefined(winner, "the latest checkpoint is one the writers committed")
    const longest = Math.max(...committed.map((o) => concurrentTranscript(o.writer, o.save).messages.length))
    assert.strictEqual(latest.checkpoint.transcriptLength, longest)
    assert.deepStrictEqual(
      yield* store.transcript(concurrentSession),
      concurrentTranscript(winner!.writer, winner!.save)
    )
    const conflicts = outcomes.filter((o) => o.kind === "CONFLICT")
    console.log(
      `concurrency: ${committed.length} committed, ${conflicts.length} conflicts (${conflicts.filter((o) => o.kind === "CONFLICT" && o.conflict === "behind").length} behind), latest #${latest.checkpointId} of ${longest} messages`
    )
  })

describe("concurrent writers of one session", () => {
  it.scoped(`memory: ${writers} writers x ${concurrentSaves} saves at once`, () =>
    Effect.gen(function* () {
      const outcomes = yield* Effect.forEach(
        Array.from({ length: writers * concurrentSaves }, (_, k) => k),
        (k) =>
          Effect.gen(function* () {
            const writer = Math.floor(k / concurrentSaves)
            const save = k % concurrentSaves
            const transcript = concurrentTranscript(writer, save)
            const store = yield* CheckpointStore.CheckpointStore
            const outcome = yield* Effect.either(
              store.save(concurrentSession, transcript, yield* Checkpoint.build(transcript))
            )
            return Either.isRight(outcome)
              ? ({ writer, save, kind: "COMMITTED", checkpointId: outcome.right.checkpointId } as const)
              : outcome.left instanceof CheckpointError.CheckpointConflict
                ? ({ writer, save, kind: "CONFLICT", conflict: outcome.left.kind } as const)
                : ({ writer, save, kind: "ERROR", detail: outcome.left.message } as const)
          }),
        { concurrency: "unbounded" }
      )
      yield* verify(outcomes)
    }).pipe(Effect.provide(Layer.mergeAll(builder, CheckpointStore.layerMemory)))
  )

  const processes = (kind: StoreKind) =>
    it.scopedLive(
      `${kind}: ${writers} processes x ${concurrentSaves} saves at once`,
      () =>
        Effect.gen(function* () {
          const location = yield* freshLocation(kind)
          const children = yield* Effect.forEach(
            Array.from({ length: writers }, (_, writer) => writer),
            (writer) => spawnChild(["concurrent-writer", location, String(writer)])
          )
          // all loaded first, then all released at once: the stores open and migrate together too
          yield* Effect.forEach(children, (child) =>
            Effect.promise(() => child.waitFor((line) => line === "READY"))
          )
          for (const child of children) child.process.stdin!.end("go\n")
          for (const child of children) {
            const exit = yield* Effect.promise(() => child.exited)
            assert.strictEqual(exit.code, 0, child.stderr())
          }
          const outcomes = children.flatMap((child) =>
            child.lines.filter((line) => line !== "READY").map(parse)
          )
          yield* verify(outcomes).pipe(Effect.provide(CheckpointStore.layerFromLocation(location)))
        }),
      120_000
    )
  for (const kind of storeKinds) processes(kind)
})
