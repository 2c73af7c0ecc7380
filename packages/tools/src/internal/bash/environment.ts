/**
 * The environment policy a Bash call runs under, as a context reference: the default policy
 * (inherit all, the default excludes) unless a host provides its own (`Bash.layerEnvironment`).
 */
import * as Context from "effect/Context"
import { EnvPolicy } from "@toolcap/limits"

/** A validated policy and its compiled form. @internal */
export interface Environment {
  readonly policy: EnvPolicy.EnvPolicy
  /** The call's environment from the host's (the cookie is added after it by the supervisor). */
  readonly apply: (host: Readonly<Record<string, string | undefined>>) => Record<string, string>
}

/** @internal */
export class BashEnvironment extends Context.Reference<BashEnvironment>()("@toolcap/tools/Bash/Environment", {
  defaultValue: (): Environment => ({ policy: {}, apply: EnvPolicy.compiledDefault })
}) {}
