/**
 * Every option of every `toolcap` command, declared once: `Cli.ts` builds the framework's options
 * from this table, and the fast paths (`call`, `checkpoint build`, `mcp`) scan with it. Plain data,
 * so a fast path that imports it loads no part of the framework.
 */
import type { Transcript } from "@toolcap/checkpoint"
import { Budgets } from "@toolcap/limits"
import * as Argv from "./argv.js"

/**
 * Default age before `sweep` (and `mcp` at startup) removes a dead session's scratch directory:
 * a day, so spill files of a `toolcap call` session stay readable for the rest of the agent's
 * work, while crashed sessions do not pile up. Only directories whose owner process is gone are
 * ever removed, whatever the age.
 *
 * @internal
 */
export const defaultStaleAfterSeconds = 24 * 60 * 60

/** The shapes `checkpoint build --format` names. */
const transcriptFormats = [
  "toolcap",
  "anthropic",
  "openai-chat",
  "openai-responses"
] as const satisfies ReadonlyArray<Transcript.Format>

const workspace = Argv.optional(
  Argv.directory("workspace", "Workspace directory (default: the current directory).")
)
const dataDir = Argv.optional(
  Argv.directory("data-dir", "Data directory (default: $TOOLCAP_DATA_DIR, else $XDG_DATA_HOME/toolcap).")
)
const approve = Argv.repeated(
  Argv.directory("approve", "An external directory the tools may reach (repeatable).")
)
const staleAfter = Argv.withDefault(
  Argv.integer(
    "stale-after",
    "Seconds without change after which a dead session's scratch directory is removed."
  ),
  defaultStaleAfterSeconds
)
const profile = Argv.optional(
  Argv.choice(
    "profile",
    Budgets.profileNames,
    "Preset of budgets: spec (the default) or compact; TOOLCAP_* variables still override a field."
  )
)
const store = Argv.optional(
  Argv.text(
    "store",
    "Checkpoint store: a SQLite file or a postgres:// URL (default: $TOOLCAP_CHECKPOINT_STORE, else <data-dir>/checkpoints.sqlite)."
  )
)

/**
 * Bash's environment policy (`EnvPolicy`): given flags replace the same fields of
 * `$TOOLCAP_ENV_POLICY` (JSON); neither: the default policy (secret-looking names left out).
 *
 * @internal
 */
export const environment = {
  envInherit: Argv.optional(
    Argv.choice(
      "env-inherit",
      ["all", "core", "none"] as const,
      "Which host variables Bash calls start from: all (default), core (HOME, PATH, USER, LANG, LC_*, ...) or none."
    )
  ),
  envExclude: Argv.repeated(
    Argv.text("env-exclude", "A glob of variable names Bash calls do not get (repeatable; case-insensitive).")
  ),
  envIncludeOnly: Argv.repeated(
    Argv.text("env-include-only", "Keep only variables whose names match one of these globs (repeatable).")
  ),
  envInclude: Argv.repeated(
    Argv.text(
      "env-include",
      "A glob of host variables passed whatever else drops them, e.g. ANTHROPIC_API_KEY (repeatable)."
    )
  ),
  envSet: Argv.repeated(Argv.text("env-set", "NAME=VALUE set in Bash calls' environment (repeatable).")),
  envKeepSecrets: Argv.flag(
    "env-keep-secrets",
    "Pass names matching *KEY*, *SECRET*, *TOKEN*, *PASSWORD*, *CREDENTIAL* too (left out by default)."
  )
}

/** `toolcap call <tool> <input>`. @internal */
export const call = {
  workspace,
  dataDir,
  session: Argv.withDefault(Argv.text("session", "Session id (scratch directory name)."), "default"),
  approve,
  stream: Argv.flag("stream", "Print Bash's chunks as NDJSON while it runs, then the result line."),
  profile,
  text: Argv.flag("text", "Print the text the model reads of the outcome instead of the JSON line."),
  ...environment
}

/** `toolcap mcp`. @internal */
export const mcp = {
  workspace,
  dataDir,
  session: Argv.optional(
    Argv.text(
      "session",
      "Session id (default: mcp-<pid>); its scratch directory is removed when the server stops."
    )
  ),
  approve,
  staleAfter,
  maxConcurrentCalls: Argv.optional(
    Argv.integer(
      "max-concurrent-calls",
      "Bash calls run at once; the others wait for a slot (default: $TOOLCAP_MAX_CONCURRENT_CALLS, else 8 per core)."
    )
  ),
  ui: Argv.flag(
    "ui",
    "Also serve the live viewer on 127.0.0.1; its URL (with its token) is printed on stderr."
  ),
  profile,
  ...environment
}

/** `toolcap checkpoint build <transcript.json>`. @internal */
export const checkpointBuild = {
  session: Argv.text("session", "Session id the checkpoint belongs to."),
  summary: Argv.optional(Argv.text("summary", "The host's summary of the dropped history.")),
  format: Argv.optional(
    Argv.choice("format", transcriptFormats, "Shape of the transcript file (default: detected).")
  ),
  dataDir,
  store
}

/** `toolcap checkpoint show`. @internal */
export const checkpointShow = { session: Argv.text("session", "Session id."), dataDir, store }

/** `toolcap session end <id>`. @internal */
export const sessionEnd = { dataDir }

/** `toolcap sweep`. @internal */
export const sweep = { dataDir, staleAfter }

/** `toolcap ui`. @internal */
export const ui = { workspace, dataDir, approve }

/** `toolcap demo`. @internal */
export const demo = { keep: Argv.flag("keep", "Keep the generated data instead of removing it.") }
