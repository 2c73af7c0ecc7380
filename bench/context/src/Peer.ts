/**
 * What a peer host is to the benchmark: its shell tool's cut, its Read tool, and its search tool
 * (the one more call), each a plain function of the real output, plus where every number comes
 * from. The hosts themselves live in `src/peers/`.
 *
 * @since 0.1.0
 */
import { type RawOutput, splitLines } from "./Text.js"

/**
 * A text the excerpt names as holding more: a saved copy of the output, or the file that was read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Location {
  /** `copy`: a copy of the output the host saved; `file`: the file the call read. */
  readonly kind: "copy" | "file"
  readonly path: string
  readonly content: string
}

/**
 * What one tool call lets reach the model.
 *
 * @since 0.1.0
 * @category models
 */
export interface View {
  /** The whole text the model reads. */
  readonly text: string
  /** True when anything of the input was left out (or the call was refused). */
  readonly truncated: boolean
  /** What was kept from the input's start: a prefix of it (for a Read, of the file's lines). */
  readonly head: string
  /** What was kept from the input's end: a suffix of it; empty for head-only cuts. */
  readonly tail: string
  /** The marker or notice the host adds when it cuts; absent when nothing was cut. */
  readonly marker?: string
  /** Where the rest is, as the text names it: a saved copy, or the file read. */
  readonly location?: Location
  /** For a view that numbers lines: the input's lines as shown, without their number prefixes. */
  readonly shown?: ReadonlyArray<string>
}

/**
 * What a search call (the one more call) lets reach the model.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchView {
  readonly text: string
  /** The matching lines as shown (after the host's per-line clip), one entry per match shown. */
  readonly shown: ReadonlyArray<string>
}

/**
 * A host's shell tool: the cut of a command's output, and the copy it saves.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellModel {
  /** The cut in one sentence, for the method section. */
  readonly describe: string
  readonly apply: (raw: RawOutput, savedPath: string) => View
  /**
   * For a host that runs command lines of its own in place of the agent's (rtk re-runs a tool
   * with its own flags): those lines for the agent's command, run at bench time in the workspace;
   * their outputs reach `apply` as `raw.hostRuns`, in this order. Empty or absent: none.
   */
  readonly hostRuns?: (command: string) => ReadonlyArray<string>
}

/**
 * A host's file-read tool called with a path only (its defaults), on a file of the workspace.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadModel {
  readonly describe: string
  readonly apply: (file: Location) => View
}

/**
 * A host's search tool over one file, asked for the lines matching a pattern.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchModel {
  readonly describe: string
  readonly apply: (location: Location, pattern: RegExp) => SearchView
}

/**
 * One number of a model and the file (with its commit or package version) it was read from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly numbers: string
  readonly from: string
}

/**
 * A peer host, modelled from its source at one version.
 *
 * @since 0.1.0
 * @category models
 */
export interface PeerPolicy {
  readonly name: string
  /** The version or commit the model was derived from. */
  readonly version: string
  readonly shell: ShellModel
  readonly read: ReadModel
  readonly search: SearchModel
  readonly sources: ReadonlyArray<Source>
}

/**
 * The lines of a text that match a pattern, 1-based, in order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const matchingLines = (
  content: string,
  pattern: RegExp
): Array<{ readonly line: number; readonly text: string }> => {
  const single = new RegExp(pattern.source, pattern.flags.replace("g", ""))
  const out: Array<{ readonly line: number; readonly text: string }> = []
  splitLines(content).forEach((text, index) => {
    if (single.test(text)) out.push({ line: index + 1, text })
  })
  return out
}

/**
 * A view that passed its input whole.
 *
 * @since 0.1.0
 * @category constructors
 */
export const whole = (text: string): View => ({ text, truncated: false, head: text, tail: "" })
