/** The JSON the viewer's server sends (a structural copy; the front end imports no Node module). */
export interface WireError {
  readonly code: string
  readonly message: string
  readonly [field: string]: unknown
}

export type Outcome<A = unknown> =
  { readonly ok: true; readonly result: A } | { readonly ok: false; readonly error: WireError }

export interface BashResult {
  readonly callId: string
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number | null
  readonly signal: string | null
  readonly durationMs: number
  readonly truncated: boolean
  readonly truncation: Record<string, unknown>
  readonly spill: { readonly stdout?: string; readonly stderr?: string }
  readonly killedPids: ReadonlyArray<number>
  readonly termination: {
    readonly containment: string
    readonly cgroupEntry?: string
    readonly fallbackReason?: string
    readonly launcher?: boolean
    readonly landlockScopes?: boolean
    readonly landlockScopesReason?: string
    readonly memoryCeiling?: {
      readonly maxBytes: number
      readonly enforcedBy: string
      readonly reason?: string
      readonly reached?: boolean
    }
    readonly survivors: ReadonlyArray<number>
    readonly pipesHeld: boolean
  }
}

export interface ReadResult {
  readonly path: string
  readonly content: string
  readonly offset: number
  readonly lineCount: number
  readonly totalLines?: number
  readonly fileBytes: number
  readonly truncated: boolean
  readonly notice?: string
}

/** Which guards applied to the ripgrep of a Grep. */
export interface EngineGuard {
  readonly launcher: boolean
  readonly landlockRead: boolean
  readonly landlockReadReason?: string
  readonly memoryCeiling?: { readonly maxBytes: number; readonly reason?: string }
}

export interface GrepMatch {
  readonly path: string
  readonly line: number
  readonly text: string
}

export interface SpillFile {
  readonly path: string
  readonly name: string
  readonly bytes: number
}

export interface Info {
  readonly dataDir: string
  readonly workspace: string
  readonly live: boolean
  readonly sessions: ReadonlyArray<{ readonly sessionId: string; readonly spills: ReadonlyArray<SpillFile> }>
}

export interface CutFigures {
  readonly messageId: string
  readonly originalTokens: number
  readonly budgetTokens: number
  readonly markerTokens: number
  readonly headTokens: number
  readonly tailTokens: number
  readonly tokens: number
  readonly headLength: number
  readonly tailLength: number
}

export interface ContextEntry {
  readonly origin: unknown
  readonly message: {
    readonly role: string
    readonly id: string
    readonly text: string
    readonly callId?: string
  }
  readonly tokens: number
}

export interface Checkpoint {
  readonly context: ReadonlyArray<ContextEntry>
  readonly transcriptLength: number
  readonly retentionBudget: number
  readonly retainedTokens: number
  readonly summaryTokens: number
  readonly cut: CutFigures | null
  readonly dropped: { readonly userMessageIds: ReadonlyArray<string>; readonly otherMessages: number }
  readonly batch: {
    readonly assistantId: string
    readonly budgetTokens: number
    readonly originalTokens: number
    readonly tokens: number
    readonly cap: number | null
    readonly results: ReadonlyArray<{
      readonly callId: string
      readonly messageId: string
      readonly originalTokens: number
      readonly tokens: number
      readonly cut: CutFigures | null
    }>
    readonly pending: ReadonlyArray<string>
  } | null
}

export interface StoredCheckpoint {
  readonly checkpointId: number
  readonly sessionId: string
  readonly createdAt: number
  readonly checkpoint: Checkpoint
}
