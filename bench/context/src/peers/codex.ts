/**
 * Codex CLI (openai/codex), its `shell_command` tool: the shell tool of every model bundled with
 * 0.171.0 (`shell_type: "shell_command"` in the embedded model list), and the only way its prompts
 * read files or search (`cat`, `sed -n`, `rg`), so its Read and its search are that tool too.
 *
 * @since 0.1.0
 */
import { type Location, matchingLines, type PeerPolicy, type View } from "../Peer.js"
import { byteLength, headBytes, lineCount, type RawOutput, tailBytes } from "../Text.js"

const REPO = "openai/codex"
const PACKAGE = "npm `@openai/codex@0.171.0-linux-x64` (the `codex` binary and its embedded model list)"

/** `EXEC_OUTPUT_MAX_BYTES` (= `DEFAULT_OUTPUT_BYTES_CAP`): bytes of each stream kept, from its start. */
export const CODEX_STREAM_CAP_BYTES = 1024 * 1024
/** `truncation_policy` of every bundled model: `{ mode: "tokens", limit: 10000 }`. */
export const CODEX_MAX_OUTPUT_TOKENS = 10_000
/** `APPROX_BYTES_PER_TOKEN`: the truncation counts 4 bytes per token. */
export const CODEX_BYTES_PER_TOKEN = 4

/**
 * `aggregate_output`: stdout then stderr (not in arrival order), each already cut to its first
 * 1 MiB; past 1 MiB together, stdout keeps up to a third, stderr the rest, unused room back to stdout.
 */
export const codexAggregate = (raw: RawOutput): string => {
  const stdout = headBytes(raw.stdout, CODEX_STREAM_CAP_BYTES)
  const stderr = headBytes(raw.stderr, CODEX_STREAM_CAP_BYTES)
  const max = CODEX_STREAM_CAP_BYTES
  const outBytes = byteLength(stdout)
  const errBytes = byteLength(stderr)
  if (outBytes + errBytes <= max) return stdout + stderr
  const wantOut = Math.min(outBytes, Math.floor(max / 3))
  const errTake = Math.min(errBytes, max - wantOut)
  const outTake = wantOut + Math.min(max - wantOut - errTake, outBytes - wantOut)
  return headBytes(stdout, outTake) + headBytes(stderr, errTake)
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

/** The wall time is per call; one value stands for all (`{duration_seconds}`, one decimal). */
const WALL_TIME = "0.1"

/**
 * `format_exec_output_for_model_freeform`: `Exit code`, `Wall time`, `Total output lines` when the
 * cut changed the line count, then `Output:` and the (cut) output.
 */
const freeform = (content: string, formatted: string, exitCode: number): string =>
  [
    `Exit code: ${exitCode}`,
    `Wall time: ${WALL_TIME} seconds`,
    ...(lineCount(content) === lineCount(formatted) ? [] : [`Total output lines: ${lineCount(content)}`]),
    "Output:",
    formatted
  ].join("\n")

const exec = (content: string, exitCode: number, location?: Location): View => {
  const cut = middleCut(content)
  if (cut.marker === undefined)
    return { text: freeform(content, content, exitCode), truncated: false, head: content, tail: "" }
  return {
    text: freeform(content, `${cut.head}${cut.marker}${cut.tail}`, exitCode),
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
      "`shell_command`: each stream kept to its first 1 MiB, then stdout and stderr joined (stdout first, a third of 1 MiB reserved for it when both are large); past 10,000 tokens × 4 bytes = 40,000 bytes the middle is removed: 20,000 bytes from the start and 20,000 from the end (at character boundaries, not line ends) around `…N tokens truncated…`, under an `Exit code: / Wall time: / Total output lines: / Output:` header; no copy is saved.",
    apply: (raw: RawOutput) => exec(codexAggregate(raw), raw.exitCode ?? 0)
  },
  read: {
    describe:
      "no file tool: the file is printed through `shell_command` (`cat`) and cut like any output; the call named the file, so a cut output points back to it.",
    apply: (file: Location) => exec(file.content, 0, file)
  },
  search: {
    describe: "`rg -n` through `shell_command`: `N:line` per match, cut like any output.",
    apply: search
  },
  sources: [
    {
      numbers:
        '`shell_type: "shell_command"` and `truncation_policy: { mode: "tokens", limit: 10000 }` for all 14 bundled models; the reply strings `Exit code: `, `Wall time: `, `Total output lines: `',
      from: PACKAGE
    },
    {
      numbers:
        "`shell_command` handled by `ShellCommandHandler` through `run_exec_like(..., freeform = true)`",
      from: `${REPO} \`codex-rs/core/src/tools/handlers/shell.rs\` at bdba7852f205`
    },
    {
      numbers:
        "`format_exec_output_for_model_freeform`: `Exit code`, `Wall time` (one decimal), `Total output lines` when the line count changed, `Output:`; `truncate_text` with the token policy",
      from: `${REPO} \`codex-rs/core/src/tools/mod.rs\` at 019402a8d07d`
    },
    {
      numbers:
        "`read_output` keeps the first `EXEC_OUTPUT_MAX_BYTES = DEFAULT_OUTPUT_BYTES_CAP` of each stream (`ExecCapturePolicy::ShellTool`); `aggregate_output` joins stdout then stderr, a third reserved for stdout past the cap (the capture-policy version of the file; the index that holds it names no commit)",
      from: `${REPO} \`codex-rs/core/src/exec.rs\`; \`DEFAULT_OUTPUT_BYTES_CAP = 1024 * 1024\` in \`codex-rs/utils/pty/src/lib.rs\` at 6882fda6e32f`
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
