// Writes dist/index.d.ts: the package's public types without a single effect type, so a host
// type-checks against it whatever effect version it has (or none). The data types (results,
// chunks, checkpoints, budgets) are expanded by the compiler from the tools' Schemas; the API
// around them is declared here, and `check` proves both directions against the source, so the
// published types cannot drift from what the code does.
import fs from "node:fs"
import path from "node:path"
import ts from "typescript"

/** Aliases of src/index.ts printed structurally (expanded from the Schemas). */
const expanded = [
  "ToolName",
  "ReadResult",
  "GlobResult",
  "GrepResult",
  "BashResult",
  "BashChunk",
  "StoredCheckpoint",
  "BudgetsValue",
  "BudgetField",
  "TranscriptFormat"
]

const api = `
/** The result of each tool, by name: what \`call("Read", ...)\` carries as \`result\`. */
export interface ToolResults {
  readonly Read: ReadResult
  readonly Glob: GlobResult
  readonly Grep: GrepResult
  readonly Bash: BashResult
}

/** A tool error as JSON: the stable \`code\`, a message saying what to do next, and its own fields. */
export interface WireError {
  readonly code: string
  readonly message: string
  readonly [field: string]: unknown
}

export interface Success<A = unknown> {
  readonly ok: true
  readonly result: A
}

export interface Failure {
  readonly ok: false
  readonly error: WireError
}

/** What every call answers: \`{ ok: true, result }\` or \`{ ok: false, error }\`; tool errors never reject. */
export type ToolOutcome<A = unknown> = Success<A> | Failure

export interface ToolHostOptions {
  /** The workspace directory (Bash's cwd, base of relative paths). */
  readonly workspace: string
  /** Holds \`scratch/<sessionId>/\` (spill files) and the checkpoint database. */
  readonly dataDir: string
  /** \`[A-Za-z0-9._-]{1,128}\`, not \`.\` or \`..\`. */
  readonly sessionId: string
  /** Directories outside the workspace the tools may reach. */
  readonly approvedExternalRoots?: ReadonlyArray<string> | undefined
  /** The preset of budgets: \`spec\` (the spec's limit table, the default) or \`compact\`. */
  readonly profile?: "spec" | "compact" | undefined
  /** Per-field overrides of the preset's budgets. */
  readonly budgets?: Partial<Record<BudgetField, number>> | undefined
  /** SQLite file of the checkpoint store; default \`<dataDir>/checkpoints.sqlite\`. */
  readonly checkpointFile?: string | undefined
  /** Sweep stale scratch directories of dead sessions at startup, after this many ms unchanged. */
  readonly sweepStaleAfterMs?: number | undefined
}

export interface CallOptions {
  /** Aborting stops the call; for Bash, the whole process tree, answering \`TOOL_ABORTED\`. */
  readonly signal?: AbortSignal | undefined
  /** Receives Bash's chunks in order; a returned promise is awaited before the next chunk. */
  readonly onChunk?: ((chunk: BashChunk) => void | PromiseLike<void>) | undefined
  readonly callId?: string | undefined
}

export interface CheckpointOptions {
  /** The host's summary of the dropped history; follows the retained user messages. */
  readonly summary?: string | undefined
  /** The transcript's shape; guessed when omitted. */
  readonly format?: TranscriptFormat | undefined
}

/** A JSON Schema object describing a tool's input. */
export interface InputSchema {
  readonly type: "object"
  readonly properties: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly [keyword: string]: unknown
}

export interface ToolDef {
  readonly name: ToolName
  readonly description: string
  readonly inputSchema: InputSchema
}

export interface PromiseToolHost {
  readonly sessionId: string
  /** The session's scratch directory, where spill files are written. */
  readonly sessionDir: string
  /** Real path of the workspace. */
  readonly workspace: string
  readonly budgets: BudgetsValue
  /** The tool definitions rendered from \`budgets\`. */
  readonly definitions: ReadonlyArray<ToolDef>
  /** Runs Read, Glob, Grep or Bash. Tool errors resolve as \`{ ok: false }\`; only bugs reject. */
  readonly call: {
    <N extends ToolName>(name: N, input: unknown, options?: CallOptions): Promise<ToolOutcome<ToolResults[N]>>
    (name: string, input: unknown, options?: CallOptions): Promise<ToolOutcome>
  }
  /** Builds and persists a checkpoint of a transcript (neutral, Anthropic or OpenAI shape). */
  readonly checkpoint: (transcript: unknown, options?: CheckpointOptions) => Promise<ToolOutcome<StoredCheckpoint>>
  /** The newest persisted checkpoint of this session (\`result: null\` when there is none). */
  readonly latestCheckpoint: () => Promise<ToolOutcome<StoredCheckpoint | null>>
  /** What the model reads of an outcome of \`tool\`: plain text (Read's lines, Grep's and Glob's lines, Bash's output, or \`CODE: message\`). */
  readonly modelText: (tool: string, outcome: ToolOutcome, options?: TextOptions) => string
  /** Ends the session: stops running calls, removes the scratch directory. */
  readonly close: () => Promise<void>
}

/** How results read as text for the model. */
export interface TextOptions {
  /** Read: prefix each line with its number and a tab, as \`cat -n\` does (default false). */
  readonly lineNumbers?: boolean | undefined
}

export interface StdioOptions extends ToolHostOptions {
  readonly name?: string | undefined
  readonly version?: string | undefined
  /** Default: \`process.stdin\`. */
  readonly stdin?: import("node:stream").Readable | undefined
  /** Default: \`process.stdout\`; it carries the protocol, so nothing else may write to it. */
  readonly stdout?: import("node:stream").Writable | undefined
}

export interface RunningServer {
  /** Resolves once the server stopped and the session ended. */
  readonly closed: Promise<void>
  /** Stops the server: running calls are stopped, the session's scratch dir removed. */
  readonly close: () => Promise<void>
}

export interface AiSdkToolsOptions {
  /** Receives Bash's stdout/stderr chunks while it runs (e.g. to render them in a UI). */
  readonly onChunk?: ((chunk: BashChunk) => void) | undefined
  /** How results read as text for the model (Read's line numbers). */
  readonly text?: TextOptions | undefined
}

/** Starts a tool host; rejects when the workspace is not a directory or an option is invalid. */
export declare const createToolHost: (options: ToolHostOptions) => Promise<PromiseToolHost>

/** Serves the tools over MCP on stdio until stdin ends (needs \`@modelcontextprotocol/sdk\`). */
export declare const serveStdio: (options: StdioOptions) => Promise<RunningServer>

/** The AI SDK tool set of a host, \`{ Read, Glob, Grep, Bash }\` (needs \`ai\`). */
export declare const aiSdkTools: (
  host: PromiseToolHost,
  options?: AiSdkToolsOptions
) => Promise<Record<ToolName, import("ai").Tool<unknown, ToolOutcome>>>
`

/** Proves the declarations against the source: what the code returns fits them, and back. */
const check = `
import type * as P from "./dist/index.js"
import type * as S from "./src/index.js"
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const same = <T extends true>(): T => undefined as unknown as T
export const types = [
  same<Same<P.ToolResults, S.ToolResults>>(),
  same<Same<P.BashChunk, S.BashChunk>>(),
  same<Same<P.StoredCheckpoint, S.StoredCheckpoint>>(),
  same<Same<P.ToolHostOptions, S.ToolHostOptions>>(),
  same<Same<P.ToolDef, S.ToolDef>>(),
  same<Same<P.ToolOutcome, S.ToolOutcome>>()
]
declare const source: typeof import("./src/index.js")
export const createToolHost: typeof P.createToolHost = source.createToolHost
export const serveStdio: typeof P.serveStdio = source.serveStdio
export const aiSdkTools: (host: S.PromiseToolHost, options?: P.AiSdkToolsOptions) => ReturnType<typeof P.aiSdkTools> =
  source.aiSdkTools
declare const published: P.PromiseToolHost
export const host: Omit<S.PromiseToolHost, "toolHost"> = published
`

const formatFlags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias

const programOf = (root, rootNames) => {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
      }
    }
  )
  return ts.createProgram({ rootNames, options: { ...config.options, noEmit: true } })
}

const failOn = (diagnostics) => {
  if (diagnostics.length === 0) return
  const host = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => "\n"
  }
  throw new Error(`the published types do not match the source:\n${ts.formatDiagnostics(diagnostics, host)}`)
}

export const writeTypes = (root) => {
  const index = path.join(root, "src", "index.ts")
  const program = programOf(root, [index])
  const checker = program.getTypeChecker()
  const aliases = new Map()
  for (const statement of program.getSourceFile(index).statements) {
    if (ts.isTypeAliasDeclaration(statement) && expanded.includes(statement.name.text)) {
      const type = checker.getTypeAtLocation(statement.name)
      aliases.set(statement.name.text, checker.typeToString(type, statement, formatFlags))
    }
  }
  const missing = expanded.filter((name) => !aliases.has(name))
  if (missing.length > 0) throw new Error(`src/index.ts does not export ${missing.join(", ")}`)
  const printed = expanded.map((name) => `export type ${name} = ${aliases.get(name)}\n`).join("\n")
  const header = "// Generated by scripts/types.mjs from src/index.ts; do not edit.\n\n"
  fs.writeFileSync(path.join(root, "dist", "index.d.ts"), header + printed + api)

  const checkFile = path.join(root, `types-check-${process.pid}.ts`)
  fs.writeFileSync(checkFile, check)
  try {
    const checked = programOf(root, [checkFile])
    failOn([
      ...checked.getSemanticDiagnostics(),
      ...checked.getSyntacticDiagnostics(),
      ...checked.getSemanticDiagnostics(checked.getSourceFile(path.join(root, "dist", "index.d.ts")))
    ])
  } finally {
    fs.rmSync(checkFile, { force: true })
  }
}
