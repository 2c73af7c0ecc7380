/**
 * The digest of a command's rendered output (rules G1–G10): fed one rendered line at a time, it
 * folds runs of near-repeated lines (first and last kept), passing tests, progress frames and
 * repeats of one warning code, never drops a must-keep line without counting it, holds memory
 * within the capture budgets, and at the end fits what it shows to the result budget with
 * must-keep lines first. Everything it shows is a rendered line, in order, or a marker naming
 * the raw lines it stands for; its first line says what it did. Deterministic.
 *
 * @since 0.1.0
 */
import * as Mask from "./Mask.js"
import * as Notice from "./Notice.js"
import * as Shape from "./Shape.js"
import * as Fit from "./internal/fit.js"
import * as Retain from "./internal/retain.js"

/**
 * The digest's options; the defaults say why each number is what it is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Bytes the digest may hold while it runs (the capture budget, `captureMaxBytes`). */
  readonly retainBytes: number
  /** Lines the digest may hold while it runs (the capture budget, `captureMaxLines`). */
  readonly retainLines: number
  /** Last lines kept whatever they are when the command failed (default `tailLinesOnFailure`). */
  readonly tailLines?: number
  /** Output smaller than this is shown unfolded (default `minBytes`). */
  readonly minBytes?: number
  /** A fold saving less than this share of the bytes is not applied (default `minSavings`). */
  readonly minSavings?: number
}

/**
 * A failed command's last lines are kept whatever they are: runners and compilers end with their
 * verdict and the failure nearest to it, and 20 lines hold a typical summary block with the last
 * failure above it.
 *
 * @since 0.1.0
 * @category models
 */
export const tailLinesOnFailure = 20

/**
 * Below 4 KB (about a thousand tokens) a fold saves less than its header costs to read.
 *
 * @since 0.1.0
 * @category models
 */
export const minBytes = 4 * 1024

/**
 * A fold that saves less than a fifth of the bytes costs the model more in markers to reason
 * about than it saves, so the lines are shown as they are.
 *
 * @since 0.1.0
 * @category models
 */
export const minSavings = 0.2

/**
 * The result budget of the stream the digest stands for (see `Budgets.shellStream`).
 *
 * @since 0.1.0
 * @category models
 */
export type Budget = Fit.Budget

/**
 * One line the digest shows: a rendered line (with the raw line it ended on and its kind), or a
 * gap marker with the raw range and the counts it stands for.
 *
 * @since 0.1.0
 * @category models
 */
export type Shown =
  | { readonly type: "line"; readonly text: string; readonly raw: number; readonly kind: Shape.Kind }
  | {
      readonly type: "gap"
      readonly text: string
      readonly firstRaw: number
      readonly lastRaw: number
      readonly counts: Notice.Counts
      readonly mustKeep: number
    }

/**
 * The digest of a stream, before the raw copy's path is known.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  /**
   * False when the digest leaves the rendered text as it is (small, a fold not worth it and the
   * text within its budget): show the rendered text; nothing was folded or cut.
   */
  readonly changed: boolean
  /** Whether lines were folded (false: only the budget cut, must-keep lines first). */
  readonly folded: boolean
  /** What the digest shows, header aside. */
  readonly shown: ReadonlyArray<Shown>
  /** Rendered lines and their UTF-8 bytes (with newlines). */
  readonly rendered: { readonly lines: number; readonly bytes: number }
  /** Lines shown verbatim, lines left out per kind and per warning code, must-keep lines left out. */
  readonly kept: number
  readonly counts: Notice.Counts
  readonly warningCodes: ReadonlyArray<readonly [string, number]>
  readonly mustKeepOmitted: number
  /** Lines longer than the digest could hold whole, shown by their start (see `push`). */
  readonly clippedLines: number
  /** The header and the shown lines as one text, given the raw stream's size and copy. */
  readonly render: (raw: Notice.Summary["raw"]) => string
}

/**
 * Fed rendered lines in order, digests them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Digester {
  /** The longest line it holds whole, in UTF-16 units; a longer one is shown by its start and counted. */
  readonly lineMaxChars: number
  /** One rendered line without its newline, and the raw line (1-based) it ended on. */
  readonly push: (line: string, rawLine: number) => void
  /** Ends the stream: `failed` when the command's exit was not 0; `budget` is the result budget. */
  readonly finish: (input: { readonly failed: boolean; readonly budget: Budget }) => Outcome
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

/** The header is at most this long (its counts and the copy's path): room kept for it in the budget. */
const HEADER_RESERVE_BYTES = 1024

const toShown = (item: Retain.Line | Retain.Gap): Shown =>
  Retain.isGap(item)
    ? {
        type: "gap",
        text: Notice.gap(item.counts, item.first, item.last),
        firstRaw: item.first,
        lastRaw: item.last,
        counts: { ...item.counts },
        mustKeep: item.mustKeep
      }
    : { type: "line", text: item.text, raw: item.raw, kind: item.kind }

/**
 * Distinct warning codes whose repeats are folded; later codes are shown like plain lines. Real
 * tools have a few hundred codes (eslint's rules, gcc's -W flags); the bound keeps the table small
 * whatever a stream makes up.
 */
const WARNING_CODES_MAX = 4096

/** The folding state machine: rendered, judged lines in, items (lines and fold gaps) out. */
const folder = (emit: (item: Retain.Item) => void) => {
  let gap: Retain.Gap | undefined
  // the current run of near-repeats: key = the mask; its first line shown, its latest held
  let run: { key: string; held: Retain.Line | undefined } | undefined
  // per warning code: how many, and the lines of the latest occurrence (held as the last)
  const warnings = new Map<string, { count: number; latest: Array<Retain.Line> }>()
  const flushGap = () => {
    if (gap !== undefined) {
      emit(gap)
      gap = undefined
    }
  }
  const show = (line: Retain.Line) => {
    flushGap()
    emit(line)
  }
  // lines folded after a run's held line: they follow it, so they join the gap before it only
  // when a later near-repeat folds the held line too
  let afterHeld: Retain.Gap | undefined
  const fold = (line: Retain.Line, kind: Notice.Folded) => {
    line.folded = kind
    if (run?.held !== undefined) {
      if (afterHeld === undefined) afterHeld = Retain.emptyGap(line.raw)
      Retain.addLine(afterHeld, line)
      return
    }
    if (gap === undefined) {
      gap = Retain.emptyGap(line.raw)
    }
    Retain.addLine(gap, line)
  }
  /** Folds the run's held line (a near-repeat came after it), with what was folded after it. */
  const foldHeld = (held: Retain.Line) => {
    const after = afterHeld
    afterHeld = undefined
    run!.held = undefined
    fold(held, "repeat")
    if (after !== undefined) Retain.mergeGap(gap!, after)
  }
  const endRun = () => {
    if (run?.held !== undefined) {
      show(run.held)
      if (afterHeld !== undefined) {
        gap = afterHeld
        afterHeld = undefined
      }
    }
    run = undefined
  }
  const warning = (line: Retain.Line, continues: boolean): void => {
    const code = line.code!
    const seen = warnings.get(code)
    if (seen === undefined) {
      warnings.set(code, { count: 1, latest: [line] })
      return show(line)
    }
    if (continues) {
      seen.latest.push(line)
      return show(line)
    }
    // a new occurrence: the previous one, unless it was the first, is folded where it stands
    if (seen.count > 1) {
      for (const previous of seen.latest) {
        if (previous.folded === undefined) {
          previous.folded = "warning"
        }
      }
    }
    seen.count++
    seen.latest = [line]
    show(line)
  }
  return {
    push(line: Judged) {
      const kind = line.kind
      // passing tests and progress frames fold whole, and a run of near-repeats goes on across them
      if (kind === "pass" || kind === "progress") return fold(line, kind)
      if (kind === "plain") {
        const key = Mask.mask(line.text)
        if (run?.key === key) {
          if (run.held !== undefined) foldHeld(run.held)
          run.held = line
          return
        }
        endRun()
        show(line)
        run = { key, held: undefined }
        return
      }
      endRun()
      if (kind === "warning" && (warnings.has(line.code!) || warnings.size < WARNING_CODES_MAX))
        return warning(line, line.continues)
      show(line)
    },
    end() {
      endRun()
      flushGap()
    }
  }
}

interface Judged extends Retain.Line {
  readonly continues: boolean
}

/**
 * A digester within the options' memory budget.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Digester => {
  const tailLines = options.tailLines ?? tailLinesOnFailure
  const smallest = options.minBytes ?? minBytes
  const savings = options.minSavings ?? minSavings
  // each retention gets half: the folded digest and, in case folding is not worth it, the lines
  // as they are; at least four times the smallest output folded, so that output (which is shown
  // as it is) fits the head and tail quarters whole whatever the capture budget
  const retainBytes = Math.max(4 * smallest, Math.floor(options.retainBytes / 2))
  const retainLines = Math.max(4 * smallest, Math.floor(options.retainLines / 2))
  // a line is held whole up to an eighth of a retention in bytes (4 per code point at most): one
  // line can neither fill the head or tail quarter nor crowd out the lines around it
  const lineMaxChars = Math.max(1, Math.floor(retainBytes / 32))
  const folded = Retain.make(retainBytes, retainLines)
  const plain = Retain.make(retainBytes, retainLines)
  const fold = folder(folded.push)
  const recogniser = Shape.make(tailLines)
  // lines not judged yet: the recogniser looks ahead into them, and a failed command keeps them
  const window: Array<{ text: string; raw: number }> = []
  let lines = 0
  let bytes = 0
  let clipped = 0
  const accept = (text: string, raw: number, verdict: Shape.Verdict) => {
    const kind = verdict.kind
    const lineBytes = utf8Bytes(text) + 1
    const continues = verdict.continues === true
    const line: Judged = {
      text,
      raw,
      kind,
      code: verdict.code,
      bytes: lineBytes,
      folded: undefined,
      continues
    }
    plain.push({ text, raw, kind, code: undefined, bytes: lineBytes, folded: undefined })
    fold.push(line)
  }
  const judgeOldest = () => {
    const next = window.shift()!
    accept(
      next.text,
      next.raw,
      recogniser.judge(next.text, (n) => window[n - 1]?.text)
    )
  }
  return {
    lineMaxChars,
    push(line, rawLine) {
      lines++
      bytes += utf8Bytes(line) + 1
      let text = line
      if (text.length > lineMaxChars) {
        clipped++
        text = text.slice(0, lineMaxChars)
        // never end on half a surrogate pair
        if (/[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1)
      }
      window.push({ text, raw: rawLine })
      if (window.length > tailLines) judgeOldest()
    },
    finish({ budget, failed }) {
      while (window.length > 0) {
        if (failed) {
          const next = window.shift()!
          const verdict = recogniser.judge(next.text, (n) => window[n - 1]?.text)
          accept(next.text, next.raw, Shape.isMustKeep(verdict.kind) ? verdict : { kind: "tail" })
        } else judgeOldest()
      }
      fold.end()
      const rendered = { lines, bytes }
      const small = bytes < smallest
      // exact: the folded text as it would be shown whole, markers included, against the rendered text
      const worthFolding = !small && Fit.measure(Fit.collapse(folded.items())).bytes <= bytes * (1 - savings)
      const items = worthFolding ? folded.items() : plain.items()
      // a small output is shown as it is (the caller's own cut applies, as without a digest)
      const { cut, shown } = small
        ? { cut: false, shown: Fit.collapse(items) }
        : Fit.fit(items, budget, HEADER_RESERVE_BYTES, bytes)
      const counts = Notice.noCounts()
      const codes = new Map<string, number>()
      let kept = 0
      let mustKeepOmitted = 0
      for (const item of shown) {
        if (!Retain.isGap(item)) {
          kept++
          continue
        }
        for (const kind of Notice.foldedKinds) counts[kind] += item.counts[kind]
        for (const [code, n] of item.codes) codes.set(code, (codes.get(code) ?? 0) + n)
        mustKeepOmitted += item.mustKeep
      }
      const warningCodes = [...codes].toSorted((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      const changed = !small && (worthFolding || cut || clipped > 0 || kept < lines)
      const shownLines = shown.map(toShown)
      return {
        changed,
        folded: worthFolding,
        shown: shownLines,
        rendered,
        kept,
        counts,
        warningCodes,
        mustKeepOmitted,
        clippedLines: clipped,
        render: (raw) =>
          [
            Notice.header({
              lines,
              kept,
              folded: counts,
              warningCodes,
              mustKeepOmitted,
              clippedLines: clipped,
              raw
            }),
            ...shownLines.map((line) => line.text)
          ].join("\n")
      }
    }
  }
}

/**
 * Splits a rendered text into its lines (a final piece without a newline is a line; a final
 * newline ends the last line), numbering them 1.. as their own raw lines.
 *
 * @since 0.1.0
 * @category constructors
 */
export const splitLines = (text: string): Array<string> => {
  if (text.length === 0) return []
  const parts = text.split("\n")
  if (parts[parts.length - 1] === "") parts.pop()
  return parts
}

/**
 * The digest of a whole rendered text whose lines are its raw lines (1-based): a convenience
 * over `make` for text already in memory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ofText = (
  text: string,
  input: { readonly failed: boolean; readonly budget: Budget } & Partial<Options>
): Outcome => {
  const digester = make({
    retainBytes: input.retainBytes ?? 512 * 1024,
    retainLines: input.retainLines ?? 200_000,
    ...(input.tailLines !== undefined ? { tailLines: input.tailLines } : {}),
    ...(input.minBytes !== undefined ? { minBytes: input.minBytes } : {}),
    ...(input.minSavings !== undefined ? { minSavings: input.minSavings } : {})
  })
  splitLines(text).forEach((line, index) => digester.push(line, index + 1))
  return digester.finish(input)
}
