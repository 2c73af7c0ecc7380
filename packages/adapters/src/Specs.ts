/**
 * The four builtin tools as `ToolSpec`s: the one registry every surface derives from (tool
 * definitions, dispatch, typed results, error unions). Descriptions are rendered from the budgets
 * in force so the numbers a model reads are the numbers the host enforces (rules D1);
 * a tool that looks incapable of the scoped thing gets routed around through Bash, so every
 * description names its scoping parameters and its limits verbatim.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Abort, Budgets, Marker, ToolError, Truncate } from "@toolcap/limits"
import { Bash as BashTool, Glob as GlobTool, Grep as GrepTool, Read as ReadTool } from "@toolcap/tools"
import * as ToolSpec from "./ToolSpec.js"

const seconds = (ms: number): string => `${ms / 1000}s`

/** The search budget shared by Read, Glob and Grep. */
const searchBudget = (b: Budgets.BudgetsValue): string =>
  `${b.searchMaxLines} lines / ${Marker.formatBytes(b.searchMaxBytes)}`

/** What a Bash stream keeps under the budgets: its head, its tail, or both, in lines and KB. */
const streamKeeps = (b: Budgets.BudgetsValue, stream: "stdout" | "stderr"): string => {
  const budget = Budgets.shellStream(b, stream)
  const { head, tail } = Truncate.splitBudget(budget, budget.headShare)
  const first =
    head === undefined ? undefined : `its first ${head.maxLines} lines / ${Marker.formatBytes(head.maxBytes)}`
  const last =
    tail === undefined ? undefined : `its last ${tail.maxLines} lines / ${Marker.formatBytes(tail.maxBytes)}`
  return [first, last].filter((part) => part !== undefined).join(" and ")
}

const cutsBothEnds = (b: Budgets.BudgetsValue): boolean =>
  [b.shellStdoutHeadShare, b.shellStderrHeadShare].some((share) => share > 0 && share < 1)

/** What the path-taking tools' shared error codes mean, said once for every spec that names them. */
const INVALID_INPUT = "the input does not fit the schema or its ranges"
const PATH_DENIED = "the path is outside every allowed root"
const NOT_FOUND = "the path does not exist"

const pathScope =
  "`path` (optional; default: the workspace root). An explicit `path` stops ignore files above it from applying, so it reaches into ignored trees such as node_modules, dist or the Bash spill directory."

/**
 * Runs Bash. With a chunk consumer it runs as a stream, so the consumer's effect is awaited
 * before the next chunk and a slow consumer pauses the pipes instead of queueing chunks.
 */
const runBash = (
  input: unknown,
  options: ToolSpec.RunOptions
): Effect.Effect<BashTool.BashResult, BashTool.BashError, ToolSpec.ToolContext> => {
  const { onChunk } = options
  const runOptions = { callId: options.callId, signal: options.signal }
  if (onChunk === undefined) return BashTool.run(input, runOptions)
  return BashTool.stream(input, runOptions).pipe(
    Stream.runFoldEffect(Option.none<BashTool.BashResult>(), (result, event) => {
      if ("result" in event) return Effect.succeed(Option.some(event.result))
      const delivered = onChunk(event.chunk)
      return Effect.isEffect(delivered) ? Effect.as(delivered, result) : Effect.succeed(result)
    }),
    Effect.flatMap(
      Option.match({
        onNone: () => Effect.dieMessage("Bash's stream ended without a result"),
        onSome: Effect.succeed
      })
    )
  )
}

/**
 * Read.
 *
 * @since 0.1.0
 * @category specs
 */
export const Read = ToolSpec.make({
  name: "Read",
  input: ReadTool.ReadInput,
  result: ReadTool.ReadResult,
  errors: {
    TOOL_INVALID_INPUT: INVALID_INPUT,
    TOOL_PATH_DENIED: PATH_DENIED,
    TOOL_NOT_FOUND: NOT_FOUND,
    TOOL_IS_DIRECTORY: "the path is a directory",
    TOOL_BINARY_CONTENT: "the file looks binary"
  },
  description: (b) =>
    [
      "Reads a text file and returns one window of it, byte-faithful: `content` has no line numbers and no markers, so text copied out of it matches the file exactly.",
      `Parameters: \`path\` (required; inside the workspace, the session scratch directory, or a host-approved external root), \`offset\` (1-based first line, default 1; \`-N\` starts N lines before the end, e.g. \`-${b.readWindowLines}\` for the last ${b.readWindowLines} lines of a log, found by reading backwards from the end), \`limit\` (number of lines, default and maximum ${b.readWindowLines}; larger values are clamped).`,
      `A window stops at \`limit\`, at ${b.searchMaxLines} lines or at ${Marker.formatBytes(b.searchMaxBytes)}, whichever comes first; any line longer than ${b.maxLineChars} characters is clipped and counted in \`notice\`.`,
      "Files of any size are paginated, never refused: when `truncated` is true, `notice` names the next `offset` to ask for. `totalLines` is present once the window reached the end of the file. A window read from the end reports `offset` as the real first line number when the file's line count is known, else as the negative offset (its line numbers are unknown without counting the whole file).",
      "Binary files are refused with TOOL_BINARY_CONTENT; a directory gives TOOL_IS_DIRECTORY (use Glob to list it)."
    ].join("\n"),
  parameters: (b) => ({
    path: "File to read: inside the workspace (relative or absolute), the session scratch directory, or a host-approved external root.",
    offset: `1-based line number to start at (default 1), or -N to start N lines before the end (-${b.readWindowLines}: the last ${b.readWindowLines} lines). Use the next offset a previous notice named.`,
    limit: `Number of lines (default and maximum ${b.readWindowLines}).`
  }),
  run: (input, { signal }) => Abort.interruptOnAbort(ReadTool.read(input), signal)
})

/**
 * Glob.
 *
 * @since 0.1.0
 * @category specs
 */
export const Glob = ToolSpec.make({
  name: "Glob",
  input: GlobTool.GlobInput,
  result: GlobTool.GlobResult,
  errors: {
    TOOL_INVALID_INPUT: INVALID_INPUT,
    TOOL_PATH_DENIED: PATH_DENIED,
    TOOL_NOT_FOUND: NOT_FOUND,
    TOOL_PATTERN_INVALID: "the pattern does not compile"
  },
  description: (b) =>
    [
      "Finds files by glob pattern (e.g. `src/**/*.ts`) and returns their paths, newest modification time first.",
      `Parameters: \`pattern\` (required), ${pathScope} \`limit\` (maximum entries, default ${b.globLimit}, maximum ${b.globMaxLimit}; larger values are clamped).`,
      `When more files match than \`limit\`, the result stops with \`truncated: true\` and keeps the newest; the result is bounded to ${Marker.formatBytes(b.searchMaxBytes)}. Narrow \`pattern\` or \`path\` to see the rest.`,
      "`.gitignore` and `.ignore` rules apply below the search root; hidden files are included, `.git/` never is. Workspace matches are workspace-relative, matches under an approved external root are absolute."
    ].join("\n"),
  parameters: (b) => ({
    pattern: "Glob pattern, e.g. `**/*.ts`.",
    path: "Directory to search (default: the workspace root). Reaches into ignored trees such as node_modules.",
    limit: `Maximum entries (default ${b.globLimit}, maximum ${b.globMaxLimit}).`
  }),
  run: (input, { signal }) => GlobTool.glob(input, { signal })
})

/**
 * Grep.
 *
 * @since 0.1.0
 * @category specs
 */
export const Grep = ToolSpec.make({
  name: "Grep",
  input: GrepTool.GrepInput,
  result: GrepTool.GrepResult,
  errors: {
    TOOL_INVALID_INPUT: INVALID_INPUT,
    TOOL_PATH_DENIED: PATH_DENIED,
    TOOL_NOT_FOUND: NOT_FOUND,
    TOOL_PATTERN_INVALID: "the pattern does not compile",
    TOOL_SPAWN_FAILED: "the search process could not start",
    TOOL_MEMORY_LIMIT: "a line (with `multiline`, a file) needs more memory than the search may take"
  },
  description: (b) =>
    [
      "Searches file contents with a regular expression (ripgrep syntax) and returns matches, newest modified files first.",
      `Parameters: \`pattern\` (required, at most ${Marker.formatBytes(b.grepMaxPatternBytes)}), ${pathScope} \`glob\` (only files matching this glob, e.g. \`*.ts\`), \`type\` (a ripgrep file type, e.g. \`ts\`), \`outputMode\` (\`filesWithMatches\`, the default: paths of matching files; \`content\`: matching lines with path and line number; \`count\`: matching lines per file), \`caseInsensitive\`, \`contextBefore\` / \`contextAfter\` (lines of context), \`multiline\` (let a match span lines), \`headLimit\` (maximum matches or entries, default ${b.grepHeadLimit}).`,
      `It stops at \`headLimit\` with \`truncated: true\`; the result is bounded to ${searchBudget(b)} and every line is clipped at ${b.maxLineChars} characters (counted in \`notice\`). Binary files are skipped.`,
      "Narrow `pattern`, `path`, `glob` or `type` to see more, rather than piping grep through Bash."
    ].join("\n"),
  parameters: (b) => ({
    pattern: `Regular expression (ripgrep syntax), at most ${Marker.formatBytes(b.grepMaxPatternBytes)}.`,
    path: "File or directory to search (default: the workspace root). Reaches into ignored trees such as node_modules or the spill directory.",
    glob: "Only search files matching this glob, e.g. `*.ts`.",
    type: "Only search files of this ripgrep type, e.g. `ts`, `py`.",
    outputMode:
      "`filesWithMatches` (default: paths only), `content` (matching lines) or `count` (matching lines per file).",
    caseInsensitive: "Match case-insensitively.",
    contextBefore: "Lines of context before each match (content mode).",
    contextAfter: "Lines of context after each match (content mode).",
    multiline: "Let a match span lines.",
    headLimit: `Maximum matches or entries (default ${b.grepHeadLimit}).`
  }),
  run: (input, { signal }) => GrepTool.grep(input, { signal })
})

/**
 * Bash.
 *
 * @since 0.1.0
 * @category specs
 */
export const Bash = ToolSpec.make({
  name: "Bash",
  input: BashTool.BashInput,
  result: BashTool.BashResult,
  errors: {
    TOOL_INVALID_INPUT: INVALID_INPUT,
    TOOL_TIMEOUT: "the command outlived its timeout; its tree was stopped",
    TOOL_ABORTED: "the call was aborted; its tree was stopped",
    TOOL_SPAWN_FAILED: "the shell could not start",
    TOOL_LAUNCHER_LOST:
      "the launcher server running the command went away before it told how the command ended; what was left of it was stopped"
  },
  description: (b) =>
    [
      "Runs a shell command with `bash -c` in the workspace directory, stdin closed, and returns its exit code, stdout and stderr.",
      `Parameters: \`command\` (required), \`timeout\` (seconds, default ${b.bashTimeoutDefaultSeconds}, allowed ${b.bashTimeoutMinSeconds}–${b.bashTimeoutMaxSeconds}; anything else is refused with TOOL_INVALID_INPUT), \`digest\` (boolean, default ${b.digest === 1 ? "true" : "false"}).`,
      `stdout keeps ${streamKeeps(b, "stdout")}; stderr keeps ${streamKeeps(b, "stderr")}, where a failing command's message is. A cut adds a \`[truncated: ...]\` marker${cutsBothEnds(b) ? " (between the two ends where both are kept)" : ""}, and the stream is saved to a file the marker names: the whole stream when it fits ${Marker.formatBytes(b.spillMaxBytes)}, else its first and last lines, half of that each (the marker says which). Grep it, or Read it with offset/limit.`,
      ...(b.digest === 1
        ? [
            "Output over 4 KB is digested: passing tests, progress frames and runs of near-identical lines are folded into `[… N …, raw lines a–b …]` markers, while every error, failure, diagnostic, summary and, on failure, the last 20 lines are kept; the first line counts what was folded and names the raw copy (Read it with offset/limit at the raw lines a marker names). Pass `digest: false` for the exact head and tail."
          ]
        : []),
      `On timeout or abort the whole process tree is stopped (SIGTERM, then SIGKILL after ${seconds(b.bashKillGraceMs)}) and the call fails with TOOL_TIMEOUT or TOOL_ABORTED, carrying the partial output and the killed pids.`,
      "To read or search files use Read, Glob and Grep: their results are paginated and bounded, while a sed/awk/cat pipeline is cut at the budget above."
    ].join("\n"),
  parameters: (b) => ({
    command: "The command, run with `bash -c` in the workspace directory.",
    timeout: `Seconds before the process tree is killed (default ${b.bashTimeoutDefaultSeconds}, allowed ${b.bashTimeoutMinSeconds}–${b.bashTimeoutMaxSeconds}).`,
    digest: `Digest the output: fold passing tests, progress frames and repeated lines, keep every error, failure and summary, with the raw output saved to a file the first line names (default ${b.digest === 1 ? "on" : "off"}).`
  }),
  run: runBash
})

/**
 * Every builtin spec, in the order the definitions are listed.
 *
 * @since 0.1.0
 * @category specs
 */
export const all = [Read, Glob, Grep, Bash] as const

/**
 * The names of the builtin tools.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolName = (typeof all)[number]["name"]

/**
 * The specs by name.
 *
 * @since 0.1.0
 * @category specs
 */
export const byName: { readonly [N in ToolName]: Extract<(typeof all)[number], { readonly name: N }> } = {
  Read,
  Glob,
  Grep,
  Bash
}

/**
 * The result of each tool, by name: what `ToolHost.call("Read", ...)` succeeds with, and what the
 * Promise API's `call("Read", ...)` carries as `result` (results are plain JSON data).
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResults = { readonly [N in ToolName]: ToolSpec.Result<(typeof byName)[N]> }

/**
 * The typed failures of each tool, by name.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolErrors = { readonly [N in ToolName]: ToolSpec.Error<(typeof byName)[N]> }

/**
 * Any typed failure of a tool call: a tool's own, or an unknown tool name.
 *
 * @since 0.1.0
 * @category errors
 */
export type CallError = ToolErrors[ToolName] | ToolError.ToolInvalidInput

/**
 * Runs the tool a name stands for (dispatch, derived from the specs).
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = <N extends ToolName>(
  name: N,
  input: unknown,
  options: ToolSpec.RunOptions
): Effect.Effect<ToolResults[N], ToolErrors[N], ToolSpec.ToolContext> =>
  // one call site over a union of specs: each spec's own `make` checked its run against its types
  (byName[name] as ToolSpec.Any).run(input, options)
