/**
 * The JSON the viewer's server sends, as the types toolcap publishes for it (type-only imports:
 * nothing of them reaches the front end's bundle, which imports no Node module). A field the
 * server sends changes here when it changes there; a copy could not follow.
 */
import type { Outcome as OutcomeModule, ToolDefs } from "@toolcap/adapters"
import type { Checkpoint as CheckpointModule, CheckpointStore } from "@toolcap/checkpoint"
import type { SessionInfo } from "../internal/sources.js"
import type { ServerConfig } from "../internal/server.js"

export type WireError = OutcomeModule.WireError

export type Outcome<A = unknown> = OutcomeModule.Outcome<A>

export type BashResult = ToolDefs.ToolResults["Bash"]

export type ReadResult = ToolDefs.ToolResults["Read"]

export type GrepResult = ToolDefs.ToolResults["Grep"]

/** Which guards applied to the ripgrep of a Grep. */
export type EngineGuard = GrepResult["guard"]

/** A matching line of a Grep in `content` mode. */
export type GrepMatch = Extract<GrepResult, { readonly matches: unknown }>["matches"][number]

export type SpillFile = SessionInfo["spills"][number]

/** `/api/info`: the server's own facts and the data dir's sessions. */
export type Info = ServerConfig["info"] & { readonly sessions: ReadonlyArray<SessionInfo> }

export type CutFigures = CheckpointModule.CutFigures

export type ContextEntry = CheckpointModule.ContextEntry

export type Checkpoint = CheckpointModule.Checkpoint

export type StoredCheckpoint = CheckpointStore.StoredCheckpoint
