// The benches' transcript: a long agent session of 10,000 messages (~50 MB of JSON), user turns and
// tool exchanges with large results, ending mid-turn in an oversized parallel batch.
import type { Transcript } from "@toolcap/checkpoint"
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import { prng, words } from "../test/fixtures/generate.js"

export const MESSAGES = 10_000

export const generate = (): Transcript.Transcript => {
  const random = prng(42)
  const messages: Array<Transcript.Message> = []
  let call = 0
  const batch = 6
  const history = MESSAGES - 1 - batch
  while (messages.length < history - 4) {
    messages.push({
      role: "user",
      id: `u${messages.length}`,
      text: words(random, 150 + Math.floor(random() * 500))
    })
    const calls = 1 + Math.floor(random() * 3)
    const ids = Array.from({ length: calls }, () => `call-${call++}`)
    messages.push({
      role: "assistant",
      id: `a${messages.length}`,
      text: words(random, 30),
      toolCalls: ids.map((id) => ({ id, name: "Read", arguments: JSON.stringify({ path: `src/${id}.ts` }) }))
    })
    for (const id of ids) {
      messages.push({
        role: "tool",
        id: `r-${id}`,
        callId: id,
        text: words(random, 700 + Math.floor(random() * 1500))
      })
    }
  }
  while (messages.length < history)
    messages.push({ role: "user", id: `u${messages.length}`, text: words(random, 200) })
  const open = Array.from({ length: batch }, () => `call-${call++}`)
  messages.push({
    role: "assistant",
    id: "a-open",
    text: "Running the suites.",
    toolCalls: open.map((id) => ({ id, name: "Bash", arguments: "{}" }))
  })
  for (const id of open)
    messages.push({ role: "tool", id: `r-${id}`, callId: id, text: words(random, 30_000) })
  return { messages }
}

export const median = (xs: ReadonlyArray<number>): number =>
  Arr.sort(xs, Order.number)[Math.floor(xs.length / 2)]!

/** Runs the collector between measurements when node runs with --expose-gc (as `pnpm bench` does). */
export const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
