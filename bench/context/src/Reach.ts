/**
 * The one rule for "one more call", applied to every policy alike, and the cell a policy earns on
 * a case: what the first result cost, whether it shows the needle, and whether one more call of
 * the same host's own search tool reaches it.
 *
 * @since 0.1.0
 */
import { visibleIn, type Needle } from "./Needle.js"
import type { PeerPolicy, View } from "./Peer.js"
import { byteLength } from "./Text.js"

/**
 * The rule, stated once; the method section quotes it.
 *
 * @since 0.1.0
 * @category models
 */
export const ONE_MORE_CALL_RULE =
  "A needle not seen in the first result is reached with one more call when that result names where the rest is — a copy of the output it says it saved (by path or id), or, for a file read that was cut or refused, the file the call named — and one call of the same host's own search tool over that place, asked for the needle's pattern, shows the needle's line within that tool's own limits (its match cap, its per-line clip, its output cap). The call's result is counted as that tool returns it, and its tokens are added to the first result's. Re-running the command is not counted: it is not a place the result names, and it costs the run again."

/**
 * One case through one policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cell {
  readonly bytes: number
  readonly tokens: number
  readonly truncated: boolean
  readonly visible: boolean
  /** Not visible, but one more call (the rule above) shows it. */
  readonly reachable: boolean
  /** Tokens of the one more call's result; 0 when no call was made. */
  readonly callTokens: number
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
 * A peer's cell: the first result, and when it does not show the needle, the search the rule
 * allows over the place it names.
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
  const first = {
    bytes: byteLength(view.text),
    tokens: estimate(view.text),
    truncated: view.truncated
  }
  if (visibleIn(shownText(view), needle)) return { ...first, visible: true, reachable: false, callTokens: 0 }
  const location = view.location
  const named =
    location !== undefined && (location.kind === "file" ? view.truncated : view.text.includes(location.path))
  if (!named) return { ...first, visible: false, reachable: false, callTokens: 0 }
  const search = peer.search.apply(location, pattern)
  return {
    ...first,
    visible: false,
    reachable: visibleIn(search.shown.join("\n"), needle),
    callTokens: estimate(search.text)
  }
}
