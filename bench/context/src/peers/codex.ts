/**
 * Codex CLI (openai/codex), its `exec_command` tool (unified exec): the only way its prompts read
 * files or search (`cat`, `sed -n`, `rg`), so its Read and its search are that tool too.
 *
 * @since 0.1.0
 */
import { type Location, matchingLines, type PeerPolicy, type View } from "../Peer.js"
import { byteLength, combined, headBytes, type RawOutput, tailBytes } from "../Text.js"

const REPO = "openai/codex"

/** `UNIFIED_EXEC_OUTPUT_MAX_BYTES`: the head/tail buffer a command's output is collected into. */
export const CODEX_BUFFER_BYTES = 1024 * 1024
/** `DEFAULT_MAX_OUTPUT_TOKENS`: tokens of output a response carries when the call names none. */
export const CODEX_MAX_OUTPUT_TOKENS = 10_000
/** `APPROX_BYTES_PER_TOKEN`: the truncation counts 4 bytes per token. */
export const CODEX_BYTES_PER_TOKEN = 4

/** The 1 MiB buffer: the first half and the last half of the bytes, the middle dropped. */
const collected = (text: string): string => {
  if (byteLength(text) <= CODEX_BUFFER_BYTES) return text
  return headBytes(text, CODEX_BUFFER_BYTES / 2) + tailBytes(text, CODEX_BUFFER_BYTES / 2)
}

/** `truncate_middle_with_token_budget`: half the byte budget from the start, half from the end. */
const middleCut = (
  text: string
): { readonly head: string; readonly tail: string; readonly marker?: string } => {
  const budget = CODEX_MAX_OUTPUT_TOKENS * CODEX_BYTES_PER_TOKEN
  const total = byteLength(text)
  if (total <= budget) return { head: text, tail: "" }
  const head = headBytes(text, Math.floor(budget / 2))
  const tail = tailBytes(text, budget - Math.floor(budget / 2))
  return { head, tail, marker: `…${Math.ceil((total - budget) / CODEX_BYTES_PER_TOKEN)} tokens truncated…` }
}

/** `format_response` of a finished `exec_command` (its chunk id and wall time are per call). */
const response = (output: string, exitCode: number, originalTokens?: number): string =>
  [
    "Chunk ID: 000000",
    "Wall time: 0.0000 seconds",
    `Process exited with code ${exitCode}`,
    ...(originalTokens === undefined ? [] : [`Original token count: ${originalTokens}`]),
    "Output:",
    output
  ].join("\n")

const exec = (output: string, exitCode: number, location?: Location): View => {
  const text = collected(output)
  const cut = middleCut(text)
  if (cut.marker === undefined)
    return { text: response(text, exitCode), truncated: false, head: text, tail: "" }
  return {
    text: response(
      `${cut.head}${cut.marker}${cut.tail}`,
      exitCode,
      Math.ceil(byteLength(text) / CODEX_BYTES_PER_TOKEN)
    ),
    truncated: true,
    head: cut.head,
    tail: cut.tail,
    marker: cut.marker,
    ...(location === undefined ? {} : { location })
  }
}

const search = (location: Location, pattern: RegExp) => {
  const matches = matchingLines(location.content, pattern)
  const rg = matches.map((match) => `${match.line}:${match.text}\n`).join("")
  const view = exec(rg, matches.length === 0 ? 1 : 0)
  return {
    text: view.text,
    shown: matches
      .filter((match) => view.text.includes(`${match.line}:${match.text}\n`))
      .map((match) => match.text)
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const codex: PeerPolicy = {
  name: "Codex",
  version: "0.171.0",
  shell: {
    describe:
      "stdout and stderr as one text collected into a 1 MiB head/tail buffer; past 10,000 tokens × 4 bytes = 40,000 bytes the middle is removed: 20,000 bytes from the start and 20,000 from the end (at character boundaries, not line ends) around `…N tokens truncated…`, under an `Exit code / Original token count / Output:` header; no copy is saved.",
    apply: (raw: RawOutput) => exec(combined(raw), raw.exitCode ?? 0)
  },
  read: {
    describe:
      "no file tool: the file is printed through `exec_command` (`cat`) and cut like any output; the call named the file, so a cut output points back to it.",
    apply: (file: Location) => exec(file.content, 0, file)
  },
  search: {
    describe: "`rg -n` through `exec_command`: `N:line` per match, cut like any output.",
    apply: search
  },
  sources: [
    {
      numbers:
        "`exec_command` response (`Chunk ID`, `Process exited with code`, `Original token count`, `Output:`)",
      from: `${REPO} \`codex-rs/core/src/tools/handlers/unified_exec.rs\` at 010d3e6290ba; the strings checked in npm \`@openai/codex@0.171.0-linux-x64\``
    },
    {
      numbers:
        "head/tail buffer of `UNIFIED_EXEC_OUTPUT_MAX_BYTES = 1 MiB`, `DEFAULT_MAX_OUTPUT_TOKENS = 10_000`",
      from: `${REPO} \`codex-rs/core/src/unified_exec/head_tail_buffer.rs\` at 1484d9718164 and \`unified_exec/mod.rs\``
    },
    {
      numbers:
        "`truncate_middle_with_token_budget`: 4 bytes per token, budget split in halves at character boundaries, `…N tokens truncated…`",
      from: `${REPO} \`codex-rs/utils/string/src/truncate.rs\` at b24d7f3c9a1a`
    },
    {
      numbers: "files read and searched through the shell (`rg`)",
      from: `${REPO} \`codex-rs/core/gpt_5_codex_prompt.md\` at 1d005f8cc65b`
    }
  ]
}
