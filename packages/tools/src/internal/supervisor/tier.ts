/**
 * A containment tier: how a tree is started and stopped. The tiers (cgroup through the launcher,
 * cgroup through the prologue, process group and cookie) and the fake supervisor's scripted trees
 * are implementations of this one interface, chosen once per layer.
 */
import type * as Effect from "effect/Effect"
import type { ToolError } from "@toolcap/limits"
import type { Command, Containment, TreeOptions } from "../../Supervisor.js"
import type { Handle } from "./scoped.js"

/** @internal */
export interface Tier {
  /** What this tier reports before any call (a call's own adds its memory ceiling). */
  readonly containment: Containment
  /** Starts `command` as a tree with this environment (the cookie already in it); its handle says how it is contained. */
  readonly launch: (
    command: Command,
    tree: TreeOptions,
    env: Readonly<Record<string, string | undefined>>
  ) => Effect.Effect<Handle, ToolError.ToolSpawnFailed>
}
