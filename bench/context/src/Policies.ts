/**
 * Other hosts' truncation policies, modelled as plain functions from their documented numbers, so
 * the benchmark can put the same real output through each of them and through toolcap. Each
 * function returns what reaches the model, the head and tail it kept, its marker when it cut, and
 * the saved copy the excerpt names (when the host writes one).
 *
 * Where each number comes from is in `PeerPolicy.source` and in the method section the benchmark
 * writes into BENCHMARKS.md.
 *
 * @since 0.1.0
 */

/**
 * A tool call's raw output: the two streams of a command, or a file's text (in `stdout`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RawOutput {
  readonly stdout: string
  readonly stderr: string
}

/**
 * What one policy lets reach the model.
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyView {
  /** The whole text the model reads. */
  readonly text: string
  /** True when the policy cut anything. */
  readonly truncated: boolean
  /** The part of the input kept from its start (a prefix of it). */
  readonly head: string
  /** The part of the input kept from its end (a suffix of it); empty for head-only policies. */
  readonly tail: string
  /** The marker or notice the policy adds when it cuts; absent when nothing was cut. */
  readonly marker?: string
  /** A file the excerpt names, and what it holds (the hosts that save one save the whole output). */
  readonly savedCopy?: { readonly path: string; readonly content: string }
}

/**
 * A peer host's policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface PeerPolicy {
  readonly name: string
  /** How the policy is modelled, one sentence, for the method section. */
  readonly model: string
  /** Where the numbers come from. */
  readonly source: string
  readonly apply: (raw: RawOutput, savedPath: string) => PolicyView
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** UTF-8 size of a text. */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8")

/**
 * The one text a host that merges the streams shows: stdout, then stderr (on a line of its own).
 *
 * @since 0.1.0
 * @category constructors
 */
export const combined = (raw: RawOutput): string =>
  raw.stderr === ""
    ? raw.stdout
    : raw.stdout === "" || raw.stdout.endsWith("\n")
      ? raw.stdout + raw.stderr
      : `${raw.stdout}\n${raw.stderr}`

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80

/** The longest prefix of `bytes` within `budget` bytes that ends at a code point boundary. */
const prefixEnd = (bytes: Uint8Array, budget: number): number => {
  let end = Math.min(budget, bytes.length)
  while (end > 0 && isContinuation(bytes[end])) end--
  return end
}

/** The start of the longest suffix of `bytes` within `budget` bytes that starts at a boundary. */
const suffixStart = (bytes: Uint8Array, budget: number): number => {
  let start = Math.max(bytes.length - budget, 0)
  while (start < bytes.length && isContinuation(bytes[start])) start++
  return start
}

/**
 * The head within `budget` bytes, ending after the last newline that fits; when no newline fits,
 * cut at a code point boundary instead (so one huge line still shows its start).
 */
export const headAtLine = (text: string, budget: number): string => {
  const bytes = encoder.encode(text)
  if (bytes.length <= budget) return text
  const end = prefixEnd(bytes, budget)
  const newline = bytes.lastIndexOf(10, end - 1)
  return decoder.decode(bytes.subarray(0, newline >= 0 ? newline + 1 : end))
}

/**
 * The tail within `budget` bytes, starting after the first newline inside it; when there is none,
 * at a code point boundary.
 */
export const tailAtLine = (text: string, budget: number): string => {
  const bytes = encoder.encode(text)
  if (bytes.length <= budget) return text
  const start = suffixStart(bytes, budget)
  const newline = bytes.indexOf(10, start)
  return decoder.decode(
    bytes.subarray(newline >= 0 && newline + 1 < bytes.length ? newline + 1 : start, bytes.length)
  )
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)}KB`

// --- Claude Code ---------------------------------------------------------------------------------

/** BASH_MAX_OUTPUT_LENGTH's default: output up to this many characters reaches the model whole. */
export const CLAUDE_CODE_MAX_CHARS = 30_000
/** Past the limit the output is persisted to a file and the model gets a preview of its first ~2KB. */
export const CLAUDE_CODE_PREVIEW_BYTES = 2048

/**
 * @since 0.1.0
 * @category constructors
 */
export const claudeCode: PeerPolicy = {
  name: "Claude Code",
  model:
    "stdout then stderr as one text; up to 30,000 characters pass whole; a longer output is saved whole to a file and the model gets the file's path and a preview of its first 2 KB (cut at a line end when one fits).",
  source:
    "Claude Code's settings documentation (`BASH_MAX_OUTPUT_LENGTH`, default 30,000 characters) and the `<persisted-output>` message current versions print past it (`Output too large (N KB). Full output saved to: <path>`, `Preview (first 2KB):`); earlier versions cut the middle out at the same limit instead.",
  apply: (raw, savedPath) => {
    const text = combined(raw)
    if (text.length <= CLAUDE_CODE_MAX_CHARS) return { text, truncated: false, head: text, tail: "" }
    const head = headAtLine(text, CLAUDE_CODE_PREVIEW_BYTES)
    const marker = `Output too large (${kb(byteLength(text))}). Full output saved to: ${savedPath}\n\nPreview (first 2KB):`
    return {
      text: `<persisted-output>\n${marker}\n${head}\n...\n</persisted-output>`,
      truncated: true,
      head,
      tail: "",
      marker,
      savedCopy: { path: savedPath, content: text }
    }
  }
}

// --- Codex ---------------------------------------------------------------------------------------

/** The exec capture keeps the first 1 MiB of each stream. */
export const CODEX_STREAM_CAPTURE_BYTES = 1024 * 1024
/** The model sees at most 10,000 tokens of a tool output... */
export const CODEX_TOKEN_LIMIT = 10_000
/** ...counted as 4 bytes per token where no tokenizer is at hand. */
export const CODEX_BYTES_PER_TOKEN = 4

const codexMarker = (removedBytes: number): string =>
  `…${Math.ceil(removedBytes / CODEX_BYTES_PER_TOKEN)} tokens truncated…`

/**
 * @since 0.1.0
 * @category constructors
 */
export const codex: PeerPolicy = {
  name: "Codex",
  model:
    "each stream's first 1 MiB is captured (the rest is dropped), stdout then stderr as one text; past 10,000 tokens × 4 bytes = 40,000 bytes the middle is removed: half of the budget left after the marker keeps the head (ending at a line end), half the tail (starting at a line start), with `…N tokens truncated…` between; no copy is saved.",
  source:
    "openai/codex `codex-rs/core/src/truncate.rs` (`truncate_middle`: 50/50 head/tail at line boundaries, 4 bytes per token when no tokenizer), the 10,000-token tool-output policy of its Codex models (`TruncationPolicy::Tokens(10_000)`; some other model families use `Bytes(10_000)`), and `EXEC_OUTPUT_MAX_BYTES` (1 MiB per stream) in `codex-rs/core/src/exec.rs`.",
  apply: (raw) => {
    const text = combined({
      stdout: headAtCapture(raw.stdout),
      stderr: headAtCapture(raw.stderr)
    })
    const budget = CODEX_TOKEN_LIMIT * CODEX_BYTES_PER_TOKEN
    const total = byteLength(text)
    // a stream past the capture is longer than the budget too, so the cut below always follows it
    if (total <= budget) return { text, truncated: false, head: text, tail: "" }
    // the marker's own length depends on the count; size it for the largest count first
    const keep = budget - byteLength(codexMarker(total)) - 1
    const head = headAtLine(text, Math.floor(keep / 2))
    const tail = tailAtLine(text, keep - Math.floor(keep / 2))
    const marker = codexMarker(total - byteLength(head) - byteLength(tail))
    return { text: `${head}${marker}\n${tail}`, truncated: true, head, tail, marker }
  }
}

/** The first 1 MiB of a stream, at a code point boundary. */
const headAtCapture = (stream: string): string => {
  const bytes = encoder.encode(stream)
  return bytes.length <= CODEX_STREAM_CAPTURE_BYTES
    ? stream
    : decoder.decode(bytes.subarray(0, prefixEnd(bytes, CODEX_STREAM_CAPTURE_BYTES)))
}

// --- opencode ------------------------------------------------------------------------------------

/** `Truncate.MAX_LINES` */
export const OPENCODE_MAX_LINES = 2000
/** `Truncate.MAX_BYTES` (50 * 1024) */
export const OPENCODE_MAX_BYTES = 50 * 1024

/**
 * @since 0.1.0
 * @category constructors
 */
export const opencode: PeerPolicy = {
  name: "opencode",
  model:
    "stdout then stderr as one text; up to 2000 lines and 50 KB pass whole; otherwise the head is kept, whole lines, until either limit, followed by `...N lines truncated...` (or bytes) and a hint naming the file where the whole output was saved.",
  source:
    "sst/opencode `packages/opencode/src/tool/truncation.ts` (`Truncate.output`: `MAX_LINES = 2000`, `MAX_BYTES = 50 * 1024`, direction `head`, full output written to the tool-output directory).",
  apply: (raw, savedPath) => {
    const text = combined(raw)
    const lines = text.split("\n")
    if (lines.length <= OPENCODE_MAX_LINES && byteLength(text) <= OPENCODE_MAX_BYTES)
      return { text, truncated: false, head: text, tail: "" }
    const kept: Array<string> = []
    let bytes = 0
    let hitBytes = false
    for (let i = 0; i < lines.length && i < OPENCODE_MAX_LINES; i++) {
      const size = byteLength(lines[i]!) + (i > 0 ? 1 : 0)
      if (bytes + size > OPENCODE_MAX_BYTES) {
        hitBytes = true
        break
      }
      kept.push(lines[i]!)
      bytes += size
    }
    const removed = hitBytes ? byteLength(text) - bytes : lines.length - kept.length
    const head = kept.join("\n")
    const marker = `...${removed} ${hitBytes ? "bytes" : "lines"} truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: ${savedPath}\nUse Grep to search the full content or Read with offset/limit to view specific sections.`
    return {
      text: `${head}\n\n${marker}`,
      truncated: true,
      head,
      tail: "",
      marker,
      savedCopy: { path: savedPath, content: text }
    }
  }
}

// --- Gemini CLI ----------------------------------------------------------------------------------

/** `tools.truncateToolOutputThreshold` default, in characters. */
export const GEMINI_THRESHOLD_CHARS = 40_000
/** The head keeps a fifth of the budget, the tail the rest. */
export const GEMINI_HEAD_SHARE = 0.2
/** The first `n` UTF-16 units of a line, one fewer rather than half of a surrogate pair. */
const sliceHead = (line: string, n: number): string =>
  line.slice(0, n > 0 && /[\uD800-\uDBFF]/.test(line[n - 1] ?? "") ? n - 1 : n)

/** The last `n` UTF-16 units of a line, one fewer rather than half of a surrogate pair. */
const sliceTail = (line: string, n: number): string => {
  if (n <= 0) return ""
  const start = line.length - n
  return line.slice(/[\uDC00-\uDFFF]/.test(line[start] ?? "") ? start + 1 : start)
}

const GEMINI_SEPARATOR = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"
const ELLIPSIS = "..."

/**
 * @since 0.1.0
 * @category constructors
 */
export const geminiCli: PeerPolicy = {
  name: "Gemini CLI",
  model:
    "stdout then stderr as one text; up to 40,000 characters pass whole; otherwise whole lines from the start fill 20% of the budget (8,000 characters) and whole lines from the end fill the rest less the separator (a line too long for what is left is sliced, with `...`), the whole output is saved to a file and an envelope names it.",
  source:
    'google-gemini/gemini-cli `docs/cli/settings.md` (`tools.truncateToolOutputThreshold`, default 40000, "maximum characters to show when truncating large tool outputs") and its truncation helper (head budget `threshold / 5`, the rest for the tail, `... [CONTENT TRUNCATED] ...`, full output saved to the project temp dir).',
  apply: (raw, savedPath) => {
    const text = combined(raw)
    if (text.length <= GEMINI_THRESHOLD_CHARS) return { text, truncated: false, head: text, tail: "" }
    const lines = text.split("\n")
    const headBudget = Math.floor(GEMINI_THRESHOLD_CHARS * GEMINI_HEAD_SHARE)
    const beginning: Array<string> = []
    let headChars = 0
    let headSliced = false
    for (const line of lines) {
      const remaining = headBudget - headChars
      if (remaining <= 0) break
      if (line.length + 1 > remaining) {
        beginning.push(sliceHead(line, Math.max(remaining - ELLIPSIS.length, 0)))
        headChars = headBudget
        headSliced = true
        break
      }
      beginning.push(line)
      headChars += line.length + 1
    }
    const tailBudget = Math.max(GEMINI_THRESHOLD_CHARS - headChars - GEMINI_SEPARATOR.length, 0)
    const end: Array<string> = []
    let tailChars = 0
    let tailSliced = false
    for (let i = lines.length - 1; i >= beginning.length; i--) {
      const remaining = tailBudget - tailChars
      if (remaining <= 0) break
      const line = lines[i]!
      if (line.length + 1 > remaining) {
        const sliceLength = Math.max(remaining - ELLIPSIS.length, 0)
        end.unshift(sliceTail(line, sliceLength))
        tailChars = tailBudget
        tailSliced = true
        break
      }
      end.unshift(line)
      tailChars += line.length + 1
    }
    const head = beginning.join("\n")
    const tail = end.join("\n")
    const marker = `Tool output was too large and has been truncated.\nThe full output has been saved to: ${savedPath}\nTo read the complete output, use the read_file tool with the absolute file path above.\nThe truncated output below shows the beginning and end of the content. The marker '... [CONTENT TRUNCATED] ...' indicates where content was removed.\n\nTruncated part of the output:`
    return {
      text: `${marker}\n${head}${headSliced ? ELLIPSIS : ""}${GEMINI_SEPARATOR}${tailSliced ? ELLIPSIS : ""}${tail}`,
      truncated: true,
      head,
      tail,
      marker,
      savedCopy: { path: savedPath, content: text }
    }
  }
}

// --- Cline / Roo Code ----------------------------------------------------------------------------

/** The output budget in bytes (10 KB). */
export const CLINE_MAX_BYTES = 10 * 1024

/**
 * @since 0.1.0
 * @category constructors
 */
export const clineRoo: PeerPolicy = {
  name: "Cline / Roo",
  model:
    "stdout then stderr as one text; up to 10 KB pass whole; otherwise half of the budget keeps the head (ending at a line end), half the tail (starting at a line start), with `[... N bytes omitted ...]` between; no copy is saved.",
  source:
    "the figures this benchmark was specified with for Cline's and Roo Code's terminal output (a 50/50 head/tail cut to 10 KB); not checked against those hosts' sources, which expose their terminal limits as settings.",
  apply: (raw) => {
    const text = combined(raw)
    const total = byteLength(text)
    if (total <= CLINE_MAX_BYTES) return { text, truncated: false, head: text, tail: "" }
    const head = headAtLine(text, CLINE_MAX_BYTES / 2)
    const tail = tailAtLine(text, CLINE_MAX_BYTES / 2)
    const marker = `[... ${total - byteLength(head) - byteLength(tail)} bytes omitted ...]`
    return { text: `${head}\n${marker}\n${tail}`, truncated: true, head, tail, marker }
  }
}

/**
 * Every peer policy the benchmark compares toolcap with.
 *
 * @since 0.1.0
 * @category constructors
 */
export const peers: ReadonlyArray<PeerPolicy> = [claudeCode, codex, opencode, geminiCli, clineRoo]
