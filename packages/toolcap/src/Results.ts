/**
 * What the tools answer, as plain types: the result of each tool, Bash's chunks, and the
 * `{ ok, result } | { ok, error }` outcome every call resolves to. They name no effect type, so a
 * host type-checks against them with any effect version, or none; `internal/conformance.ts`
 * proves at build time that they are exactly what the tools' Schemas produce.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export type ToolName = "Read" | "Glob" | "Grep" | "Bash"

/**
 * What one end of a head-and-tail cut kept.
 *
 * @since 0.1.0
 * @category models
 */
export interface TruncationPart {
  readonly lines: number
  readonly bytes: number
}

/**
 * What a spill file holds: the whole stream (`complete`), or its head and its tail as byte ranges
 * of the stream (`from` inclusive, `to` exclusive) with their line counts.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpillCopy {
  readonly complete: boolean
  readonly totalBytes: number
  readonly ranges: ReadonlyArray<{ readonly from: number; readonly to: number; readonly lines: number }>
}

/**
 * The machine-readable account of a cut: which end survived, how much of how much, the limit
 * that applied, and where the rest is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Truncation {
  /** Which end survived; `both` for a head-and-tail cut (then `head` and `tail` say how much each kept). */
  readonly kept: "head" | "tail" | "both"
  readonly head?: TruncationPart | undefined
  readonly tail?: TruncationPart | undefined
  /** Whole lines kept; 0 when one line was cut to the byte budget. */
  readonly keptLines: number
  /** Unknown for a Read window that stopped before end of file. */
  readonly totalLines?: number | undefined
  readonly keptBytes: number
  readonly totalBytes?: number | undefined
  readonly limitLines: number
  readonly limitBytes: number
  /** Set when no complete line fit: the size in bytes of the one line that was cut. */
  readonly singleLineBytes?: number | undefined
  /** Lines clipped to the per-line character limit. */
  readonly clippedLines?: number | undefined
  /** Only when a spill file was written. */
  readonly spillPath?: string | undefined
  /** What that file holds: the whole stream, or its head and tail byte ranges. */
  readonly spillCopy?: SpillCopy | undefined
  /** The Read `offset` to continue from. */
  readonly nextOffset?: number | undefined
}

/**
 * What Read, Glob and Grep results share: `truncated` and the counts are the stable signals,
 * `notice` is prose for the model.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bounded {
  readonly truncated: boolean
  readonly notice?: string | undefined
  /** Present exactly when `truncated` is true. */
  readonly truncation?: Truncation | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ReadResult extends Bounded {
  /** Workspace-relative (with `/`); absolute for scratch and external files. */
  readonly path: string
  readonly root: "workspace" | "scratch" | "external"
  /** The window, byte-faithful: no line numbers, no markers. */
  readonly content: string
  /** First line of the window (1-based); negative when counted from an unknown end. */
  readonly offset: number
  readonly lineCount: number
  /** Present only once the window reached end of file. */
  readonly totalLines?: number | undefined
  readonly fileBytes: number
}

/**
 * The memory ceiling of a Grep's or Glob's ripgrep: `RLIMIT_DATA` of the process.
 *
 * @since 0.1.0
 * @category models
 */
export interface EngineMemoryCeiling {
  readonly maxBytes: number
  readonly enforcedBy: "rlimit"
  /** Who set it, when not the launcher (`/bin/sh`'s `ulimit -d`), and why. */
  readonly reason?: string | undefined
}

/**
 * Which guards applied to the ripgrep a Grep or Glob ran.
 *
 * @since 0.1.0
 * @category models
 */
export interface EngineGuard {
  /** The native launcher (`toolcap-confine`) started ripgrep. */
  readonly launcher: boolean
  /** Landlock confined ripgrep's reads to the roots in force. */
  readonly landlockRead: boolean
  /** Why Landlock did not confine the reads, when it did not. */
  readonly landlockReadReason?: string | undefined
  /** Absent when the host set none (`engineMemoryMaxBytes: 0`) or no ripgrep ran. */
  readonly memoryCeiling?: EngineMemoryCeiling | undefined
}

/**
 * Paths newest first.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobResult extends Bounded {
  readonly matches: ReadonlyArray<string>
  readonly count: number
  /**
   * Present when the directory was listed by toolcap's own walk instead of ripgrep confined by
   * the kernel to the roots (no Landlock here): why.
   */
  readonly unconfined?: string | undefined
  readonly guard: EngineGuard
}

/**
 * A matching line, or a context line (`context: true`) around one.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepMatch {
  readonly path: string
  readonly line: number
  readonly text: string
  /** Set when `text` is a window of a long line around its first match: its 1-based byte column. */
  readonly column?: number | undefined
  readonly context?: true | undefined
}

/**
 * `outputMode: "content"`.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepContentResult extends Bounded {
  readonly matches: ReadonlyArray<GrepMatch>
  readonly count: number
  readonly files: number
  readonly guard: EngineGuard
}

/**
 * `outputMode: "filesWithMatches"`.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepFilesResult extends Bounded {
  readonly files: ReadonlyArray<string>
  readonly count: number
  readonly guard: EngineGuard
}

/**
 * `outputMode: "count"`.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrepCountResult extends Bounded {
  readonly counts: ReadonlyArray<{ readonly path: string; readonly count: number }>
  readonly count: number
  readonly guard: EngineGuard
}

/**
 * @since 0.1.0
 * @category models
 */
export type GrepResult = GrepContentResult | GrepFilesResult | GrepCountResult

/**
 * One value per Bash output stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface PerStream<A> {
  readonly stdout: A
  readonly stderr: A
}

/**
 * What rendering a stream as a terminal shows it changed (the notice's counts).
 *
 * @since 0.1.0
 * @category models
 */
export interface RenderCounts {
  /** Line states overwritten (`\r`, cursor-up redraws). */
  readonly progressFrames: number
  /** SGR colour codes removed. */
  readonly colourCodes: number
  /** Other escape sequences removed. */
  readonly otherSequences: number
  /** Rows an erase cleared outside a redraw. */
  readonly linesErased: number
  /** C0 controls applied or dropped (`\r`, backspace, BEL …). */
  readonly controls: number
  /** Characters dropped past a row's right margin. */
  readonly clippedChars: number
}

/**
 * A Bash call's memory ceiling: on its cgroup (v2 `memory.max` or a v1 memory cgroup: the whole
 * call) or per process (`RLIMIT_AS`), and what the kernel counted against a cgroup's.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryCeiling {
  readonly maxBytes: number
  readonly enforcedBy: "cgroup" | "rlimit"
  /** The kernel's mechanism. */
  readonly mechanism?: "cgroup v2 memory.max" | "cgroup v1 memory.limit_in_bytes" | "RLIMIT_AS" | undefined
  /** Why the ceiling is per process, when it is. */
  readonly reason?: string | undefined
  /** The call's memory reached the ceiling (cgroup ceilings only). */
  readonly reached?: boolean | undefined
  /** Processes of the call the kernel's OOM killer ended (cgroup ceilings only). */
  readonly oomKills?: number | undefined
}

/**
 * A Bash call's task limit (`bashTasksMax`): processes and threads at once, on its cgroup
 * (`pids.max`, v2 or a v1 pids cgroup) or not enforced (no pids controller, with the reason).
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskLimit {
  readonly maxTasks: number
  readonly enforcedBy: "cgroup" | "none"
  readonly mechanism?: "cgroup v2 pids.max" | "cgroup v1 pids.max" | undefined
  /** Why no cgroup enforces it, when none does. */
  readonly reason?: string | undefined
  /** A fork was refused for it. */
  readonly reached?: boolean | undefined
  /** How many forks the kernel refused. */
  readonly forkFailures?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface BashResult {
  readonly callId: string
  /** Every process of the call's tree carried `TOOLCAP_RUN_ID=<runId>` in its environment. */
  readonly runId: string
  /** The raw excerpt (head), with its marker when cut: the bytes as the command wrote them. */
  readonly stdout: string
  /** The raw excerpt (tail), with its marker when cut. */
  readonly stderr: string
  /** Null when the command ended by a signal. */
  readonly exitCode: number | null
  readonly signal: string | null
  readonly durationMs: number
  readonly truncated: boolean
  readonly truncation: Partial<PerStream<Truncation | undefined>>
  /** What the capture did not retain. */
  readonly omitted: PerStream<{ readonly lines: number; readonly bytes: number }>
  /** Spill file of each cut stream, when one was written. */
  readonly spill: Partial<PerStream<string | undefined>>
  /** `seq` of each stream's last chunk; null when it sent none. */
  readonly lastSeq: PerStream<number | null>
  /** What rendering changed per stream (`output` is rendered), when it changed anything. */
  readonly rendering?: PerStream<RenderCounts> | undefined
  /** Every pid the call signalled. */
  readonly killedPids: ReadonlyArray<number>
  /** How long the call waited for one of the host's `limit` slots before it started (not in `durationMs` or the timeout). */
  readonly admission?: { readonly waitedMs: number; readonly limit: number } | undefined
  readonly termination: {
    /** `cgroup`: a cgroup v2 per call; `group`: process group, environment cookie, parent links. */
    readonly containment: "cgroup" | "group"
    /** How the shell entered its cgroup (cgroup tier only): created inside it, or moved in by `sh`. */
    readonly cgroupEntry?: "launcher" | "prologue" | undefined
    /** Why the tier or the entry is weaker than the best one, when it is. */
    readonly fallbackReason?: string | undefined
    /** The native launcher (`toolcap-confine`) started the call's shell. */
    readonly launcher: boolean
    /** Landlock scopes kept the call from signalling, ptracing or opening `/proc` of the host, its watchdog and other calls. */
    readonly landlockScopes: boolean
    /** Why Landlock scopes were not applied, when they were not. */
    readonly landlockScopesReason?: string | undefined
    /** The call's memory ceiling, when the host set one (`bashMemoryMaxBytes`). */
    readonly memoryCeiling?: MemoryCeiling | undefined
    /** The lifeline watchdog, outside the host, also kept the deadline (it stops the call if the host's loop is blocked). */
    readonly deadlineBackstop?: boolean | undefined
    /** Why the deadline had no backstop outside the host, when it had none. */
    readonly deadlineBackstopReason?: string | undefined
    /** The call's task limit, when the host set one (`bashTasksMax`, 4096 by default). */
    readonly taskLimit?: TaskLimit | undefined
    /** What kept the call from writing cgroup files (`landlock`, `read-only mount`), or `none`. */
    readonly cgroupfs?: "landlock" | "read-only mount" | "none" | undefined
    readonly cgroupfsReason?: string | undefined
    /** What kept the host's `/proc/<pid>` from the call (`pid namespace`, `landlock`), or `none`. */
    readonly proc?: "pid namespace" | "landlock" | "none" | undefined
    readonly procReason?: string | undefined
    /** The call's `/dev/shm`: a private tmpfs of `shmMaxBytes`, or the host's. */
    readonly shm?: "private" | "shared" | undefined
    readonly shmMaxBytes?: number | undefined
    readonly shmReason?: string | undefined
    /** Pids of the tree still alive when the call returned. */
    readonly survivors: ReadonlyArray<number>
    /** A process outside the tree still held the output pipes at the end. */
    readonly pipesHeld: boolean
    /** Processes the call did not start found in its cgroup: moved back (`movedTo`), never signalled. */
    readonly foreign?:
      ReadonlyArray<{ readonly pid: number; readonly movedTo?: string | undefined }> | undefined
    /** Frozen cgroups the stop thawed first. */
    readonly thawed?: number | undefined
    /** Files the call left in /dev/shm, removed when it ended. */
    readonly shmRemoved?: ReadonlyArray<string> | undefined
  }
  /** The bounded combined text the model reads. */
  readonly output: string
}

/**
 * A piece of Bash output while the command runs; `seq` counts from 0 per stream with no gaps.
 *
 * @since 0.1.0
 * @category models
 */
export interface BashChunk {
  readonly callId: string
  readonly stream: "stdout" | "stderr"
  readonly seq: number
  readonly data: string
}

/**
 * The result of each tool, by name: what `call("Read", ...)` carries as `result`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolResults {
  readonly Read: ReadResult
  readonly Glob: GlobResult
  readonly Grep: GrepResult
  readonly Bash: BashResult
}

/**
 * A tool error as JSON: its stable `code` (`TOOL_TIMEOUT`, ...), a message saying what to do
 * next, and the error's own fields (`killedPids`, `partial`, ...).
 *
 * @since 0.1.0
 * @category models
 */
export interface WireError {
  readonly code: string
  readonly message: string
  readonly [field: string]: unknown
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Success<A = unknown> {
  readonly ok: true
  readonly result: A
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Failure {
  readonly ok: false
  readonly error: WireError
}

/**
 * What every call resolves to; tool errors never reject.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolOutcome<A = unknown> = Success<A> | Failure
