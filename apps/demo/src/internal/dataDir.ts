/**
 * Where the CLI keeps its data (scratch directories, the checkpoint database) when `--data-dir`
 * is not given: `$TOOLCAP_DATA_DIR`, else the XDG data directory (`$XDG_DATA_HOME/toolcap`,
 * default `~/.local/share/toolcap`).
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as os from "node:os"
import * as path from "node:path"

/** @internal */
export const defaultDataDir: Effect.Effect<string> = Effect.gen(function* () {
  const explicit = yield* Config.option(Config.nonEmptyString("TOOLCAP_DATA_DIR")).pipe(Effect.orDie)
  if (Option.isSome(explicit)) return path.resolve(explicit.value)
  const xdg = yield* Config.option(Config.nonEmptyString("XDG_DATA_HOME")).pipe(Effect.orDie)
  // The XDG spec ignores a relative XDG_DATA_HOME.
  const base =
    Option.isSome(xdg) && path.isAbsolute(xdg.value) ? xdg.value : path.join(os.homedir(), ".local", "share")
  return path.join(base, "toolcap")
})

/** @internal */
export const resolveDataDir = (flag: Option.Option<string>): Effect.Effect<string> =>
  Option.match(flag, { onNone: () => defaultDataDir, onSome: (dir) => Effect.succeed(path.resolve(dir)) })
