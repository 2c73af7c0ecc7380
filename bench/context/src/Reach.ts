/**
 * The outcome rule, stated once and applied to every policy by the same code: whether the needle
 * is seen in the first result, reached from a saved copy with the case's one follow-up, reached by
 * one re-run of the command with the follow-up as a filter, or lost; and what each costs.
 *
 * The follow-up is the case's, never the needle's pattern: a search term an agent could take from
 * the task or from what the first result shows (see `FollowUp` in `Corpus.ts`).
 *
 * @since 0.1.0
 */
import { visibleIn, type Needle } from "./Needle.js"
import type { PeerPolicy, View } from "./Peer.js"
import { byteLength, type RawOutput } from "./Text.js"
import { readAt, type ReadWindow, windowNamed } from "./Window.js"

/**
 * The rule, stated once; the method section quotes it.
 *
 * @since 0.1.0
 * @category models
 */
export const OUTCOME_RULE =
  "Every case states one follow-up an agent could make without knowing the answer: a search term from the task or from what a first result shows (for a failing test run `FAIL|Error`, for a build the word `error`), never the needle's own pattern. A needle is **seen** when the first result shows its line. Otherwise the agent makes that one follow-up, the cheapest way the first result offers: when the result names a saved copy of the output (by path or id), or is a cut or refused read of a file it names, the host's own search tool runs the follow-up's term over each place named (**saved** when a match it shows is the needle's line, within that tool's own limits); when it names nothing, the agent re-runs the command piped through `grep -E` with the same term (for a file, `grep -E` of the file), and that output goes through the same host's shell tool (**re-run** when its result shows the needle's line). For a case whose follow-up is a Read at the marker (a flood cut in its middle, where an agent reads the lines the marker says were left out), the follow-up over a saved copy is the host's own Read of it at the window the first result's visible text names on the line that names the copy (`kept the first H and the last T of N lines`: offset H+1, limit N−H−T; `showing lines A-B of N`: the lines before A; `offset=N`), one parser for every policy; a copy named without a window is read from its start with the Read tool's default limit. Anything else is **lost**. The score is `seen + ½·(saved + re-run)`; the tokens are the first result's, plus each follow-up call's result and a fixed per-call overhead."

/**
 * Tokens one follow-up call costs beyond its result: the model's tool call (the tool's name and
 * a JSON input holding a path and a pattern, 30–60 o200k tokens), the message framing the host
 * and the model API add around one more call and its result (10–20), and the sentence an agent
 * writes before it (20–40). 100 is the middle of that range, the same for every policy.
 *
 * @since 0.1.0
 * @category models
 */
export const FOLLOW_UP_CALL_TOKENS = 100

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = "seen" | "saved" | "rerun" | "lost"

/**
 * What one call lets the model read: the whole text, and the text the needle is judged in (the
 * lines without a number prefix the host adds).
 *
 * @since 0.1.0
 * @category models
 */
export interface Shown {
  readonly text: string
  readonly shown: string
}

/**
 * A policy's calls on one case: its first result, and the two follow-ups it could make.
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRun {
  readonly first: Shown & { readonly truncated: boolean }
  /**
   * The host's own search over every place the first result names, asked for `pattern`: the
   * results in call order. Absent when the first result names no place.
   */
  readonly searchSaved?: (pattern: RegExp) => Promise<ReadonlyArray<Shown>>
  /**
   * The places the first result names (saved copies by path), and the host's own Read of one at
   * a window: the Read-at-the-marker follow-up. Absent when the first result names no copy.
   */
  readonly readSaved?: {
    readonly places: ReadonlyArray<string>
    readonly read: (place: string, window: ReadWindow) => Promise<Shown>
  }
  /** The re-run with the follow-up as a filter, through the host's own shell tool. */
  readonly rerun: () => Promise<Shown>
}

/**
 * One case through one policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scored {
  readonly outcome: Outcome
  /** UTF-8 bytes and tokens of the first result. */
  readonly bytes: number
  readonly tokens: number
  /** Tokens of the follow-up calls' results; 0 when none was made. */
  readonly followUpTokens: number
  /** Follow-up calls made (one per place searched, or the re-run). */
  readonly calls: number
  readonly truncated: boolean
  /** The first result holds an ESC or a CR byte (terminal control the model reads raw). */
  readonly control: boolean
}

/**
 * Tokens a scored cell spends in all: the first result, the follow-ups' results, their overhead.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spent = (cell: Scored): number =>
  cell.tokens + cell.followUpTokens + cell.calls * FOLLOW_UP_CALL_TOKENS

/**
 * Whether a text holds terminal control bytes (ESC or CR).
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasControl = (text: string): boolean => text.includes("\u001b") || text.includes("\r")

/**
 * The rule, applied: the same code for toolcap's real tools and for every peer model.
 *
 * @since 0.1.0
 * @category constructors
 */
export const score = async (
  run: PolicyRun,
  needle: Needle,
  followUp: RegExp,
  count: (text: string) => number,
  /** `read`: over a saved copy, the follow-up is a Read at the window the first result names. */
  mode: "search" | "read" = "search"
): Promise<Scored> => {
  const first = {
    bytes: byteLength(run.first.text),
    tokens: count(run.first.text),
    truncated: run.first.truncated,
    control: hasControl(run.first.text)
  }
  if (visibleIn(run.first.shown, needle)) return { ...first, outcome: "seen", followUpTokens: 0, calls: 0 }
  const readSaved = run.readSaved
  if (mode === "read" && readSaved !== undefined && readSaved.places.length > 0) {
    // the window comes from the visible text alone, by the same parser for every policy
    const results = await Promise.all(
      readSaved.places.map((place) => readSaved.read(place, windowNamed(run.first.text, place)))
    )
    return {
      ...first,
      outcome: results.some((result) => visibleIn(result.shown, needle)) ? "saved" : "lost",
      followUpTokens: results.reduce((sum, result) => sum + count(result.text), 0),
      calls: results.length
    }
  }
  if (run.searchSaved !== undefined) {
    const results = await run.searchSaved(followUp)
    return {
      ...first,
      outcome: results.some((result) => visibleIn(result.shown, needle)) ? "saved" : "lost",
      followUpTokens: results.reduce((sum, result) => sum + count(result.text), 0),
      calls: results.length
    }
  }
  const again = await run.rerun()
  return {
    ...first,
    outcome: visibleIn(again.shown, needle) ? "rerun" : "lost",
    followUpTokens: count(again.text),
    calls: 1
  }
}

/**
 * The text a view shows the needle in: its lines without number prefixes when it numbers them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const shownText = (view: View): string =>
  view.shown === undefined ? view.text : view.shown.join("\n")

/**
 * Whether a peer's first result names the place its `location` is: a saved copy by its path in
 * the text, or, for a file read, the file when the read was cut or refused.
 *
 * @since 0.1.0
 * @category predicates
 */
export const namesPlace = (view: View): boolean => {
  const location = view.location
  return (
    location !== undefined && (location.kind === "file" ? view.truncated : view.text.includes(location.path))
  )
}

/**
 * A peer's calls on a case: its shell cut (or its Read) as the first result, its search tool over
 * the place that result names, and its shell cut of the re-run's output (produced once, outside,
 * and given to every policy).
 *
 * @since 0.1.0
 * @category constructors
 */
export const peerRun = (
  peer: PeerPolicy,
  view: View,
  rerun: () => Promise<{ readonly raw: RawOutput; readonly savedPath: string }>
): PolicyRun => {
  const location = view.location
  return {
    first: { text: view.text, shown: shownText(view), truncated: view.truncated },
    ...(location !== undefined && namesPlace(view)
      ? {
          searchSaved: async (pattern: RegExp) => {
            const search = peer.search.apply(location, pattern)
            return [{ text: search.text, shown: search.shown.join("\n") }]
          },
          ...(location.kind === "copy"
            ? {
                readSaved: {
                  places: [location.path],
                  read: async (_place: string, window: ReadWindow) => {
                    const read = readAt(peer, location, window)
                    return { text: read.text, shown: shownText(read) }
                  }
                }
              }
            : {})
        }
      : {}),
    rerun: async () => {
      const again = await rerun()
      const cut = peer.shell.apply(again.raw, again.savedPath)
      return { text: cut.text, shown: shownText(cut) }
    }
  }
}

/**
 * One case through one policy under the earlier "one more call" reading (a search for the
 * pattern given, over the place the first result names); the peer-model tests use it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cell {
  readonly bytes: number
  readonly tokens: number
  readonly truncated: boolean
  readonly visible: boolean
  readonly reachable: boolean
  readonly callTokens: number
}

/**
 * A peer's first result, and when it does not show the needle, a search of the place it names
 * for `pattern`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const peerCell = (
  peer: PeerPolicy,
  view: View,
  needle: Needle,
  pattern: RegExp,
  estimate: (text: string) => number
): Cell => {
  const first = { bytes: byteLength(view.text), tokens: estimate(view.text), truncated: view.truncated }
  if (visibleIn(shownText(view), needle)) return { ...first, visible: true, reachable: false, callTokens: 0 }
  const location = view.location
  if (location === undefined || !namesPlace(view))
    return { ...first, visible: false, reachable: false, callTokens: 0 }
  const search = peer.search.apply(location, pattern)
  return {
    ...first,
    visible: false,
    reachable: visibleIn(search.shown.join("\n"), needle),
    callTokens: estimate(search.text)
  }
}
