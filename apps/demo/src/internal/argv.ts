/**
 * The command-line scan of the executable's fast paths (`call`, `checkpoint build`, `mcp`), which
 * skip the command-line framework: options (`--` first) anywhere, `--name value` or `--name=value`, a value
 * option given several times keeps every value in order. What the scan does not know is the
 * caller's to word (`call`) or to hand to the framework (the others).
 */

/** The options a command takes. @internal */
export interface Spec {
  /** Options followed by a value. */
  readonly values: ReadonlySet<string>
  /** Options without a value. */
  readonly flags: ReadonlySet<string>
}

/** A scanned command line. @internal */
export interface Scanned {
  readonly kind: "Scanned"
  readonly positional: ReadonlyArray<string>
  /** Every value of each value option, in order. */
  readonly values: ReadonlyMap<string, ReadonlyArray<string>>
  readonly flags: ReadonlySet<string>
}

/** What stopped a scan: an option the command does not take, or one without its value. @internal */
export type Refused =
  | { readonly kind: "Unknown"; readonly name: string }
  | { readonly kind: "MissingValue"; readonly name: string }

/** Scans `argv` (the arguments after the command's own words). @internal */
export const scan = (argv: ReadonlyArray<string>, spec: Spec): Scanned | Refused => {
  const positional: Array<string> = []
  const values = new Map<string, Array<string>>()
  const flags = new Set<string>()
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!
    if (!arg.startsWith("--")) {
      positional.push(arg)
      continue
    }
    if (spec.flags.has(arg)) {
      flags.add(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = eq < 0 ? arg : arg.slice(0, eq)
    if (!spec.values.has(name)) return { kind: "Unknown", name }
    const value = eq < 0 ? argv[++index] : arg.slice(eq + 1)
    if (value === undefined) return { kind: "MissingValue", name }
    values.set(name, [...(values.get(name) ?? []), value])
  }
  return { kind: "Scanned", positional, values, flags }
}

/** The last value of a value option, if given. @internal */
export const last = (scanned: Scanned, name: string): string | undefined => scanned.values.get(name)?.at(-1)
