/**
 * Command-line options declared once, as plain data: the framework's options (`Cli.ts`) are built
 * from these declarations, and the executable's fast paths (`call`, `checkpoint build`, `mcp`),
 * which skip the framework, scan with the same ones. Nothing here loads the framework.
 *
 * The scan: options (`--` first) anywhere, `--name value` or `--name=value`, a value option given
 * several times keeps every value in order. What the scan does not know is the caller's to word
 * (`call`) or to hand to the framework (the others).
 */
import * as Option from "effect/Option"

/** What an option's value is. @internal */
export type Kind = "directory" | "text" | "integer" | "choice" | "flag"

/** How often an option is given: exactly once, at most once (with or without a default), any number of times. @internal */
export type Occurs = "once" | "optional" | "default" | "repeated"

/** One option: its name (without `--`), its help, its kind, how often it is given; `A` is its parsed value. @internal */
export interface Declaration<A> {
  readonly name: string
  readonly description: string
  readonly kind: Kind
  /** The values a `choice` takes. */
  readonly choices: ReadonlyArray<string>
  readonly occurs: Occurs
  /** The value of a `default` option that is not given. */
  readonly fallback: unknown
  /** Carries the value's type only; never set. */
  readonly value?: A
}

/** Any declaration. @internal */
// oxlint-disable-next-line typescript/no-explicit-any -- any value type, so records of declarations infer their own
export type Any = Declaration<any>

/** The options of a command, by the field its handler reads. @internal */
export type Declarations = Readonly<Record<string, Any>>

/** The parsed value of a declaration. @internal */
export type ValueOf<D> = D extends Declaration<infer A> ? A : never

/** The parsed values of a command's options. @internal */
export type Values<R extends Declarations> = { readonly [K in keyof R]: ValueOf<R[K]> }

const declare = <A>(kind: Kind, name: string, description: string, choices: ReadonlyArray<string> = []) =>
  ({ name, description, kind, choices, occurs: "once", fallback: undefined }) as Declaration<A>

/** A directory (the framework refuses a path that exists and is no directory). @internal */
export const directory = (name: string, description: string): Declaration<string> =>
  declare("directory", name, description)

/** Any text. @internal */
export const text = (name: string, description: string): Declaration<string> =>
  declare("text", name, description)

/** A whole number. @internal */
export const integer = (name: string, description: string): Declaration<number> =>
  declare("integer", name, description)

/** One of `choices`. @internal */
export const choice = <const C extends string>(
  name: string,
  choices: ReadonlyArray<C>,
  description: string
): Declaration<C> => declare("choice", name, description, choices)

/** An option without a value: present or not. @internal */
export const flag = (name: string, description: string): Declaration<boolean> =>
  declare("flag", name, description)

/** Given at most once. @internal */
export const optional = <A>(option: Declaration<A>): Declaration<Option.Option<A>> =>
  ({ ...option, occurs: "optional" }) as Declaration<Option.Option<A>>

/** Given at most once; `fallback` when it is not. @internal */
export const withDefault = <A>(option: Declaration<A>, fallback: A): Declaration<A> => ({
  ...option,
  occurs: "default",
  fallback
})

/** Given any number of times; every value, in order. @internal */
export const repeated = <A>(option: Declaration<A>): Declaration<ReadonlyArray<A>> =>
  ({ ...option, occurs: "repeated" }) as Declaration<ReadonlyArray<A>>

/** `--name` of a declaration. @internal */
export const flagName = (option: Any): string => `--${option.name}`

/** A scanned command line: the words, and every value of each value option in order. @internal */
export interface Scanned {
  readonly kind: "Scanned"
  readonly positional: ReadonlyArray<string>
  /** Every value of each value option, by its `--name`, in order. */
  readonly values: ReadonlyMap<string, ReadonlyArray<string>>
  /** The `--name` of each flag given. */
  readonly flags: ReadonlySet<string>
}

/** What stopped a scan: an option the command does not take, or one without its value. @internal */
export type Refused =
  | { readonly kind: "Unknown"; readonly name: string }
  | { readonly kind: "MissingValue"; readonly name: string }

/** Scans `argv` (the arguments after the command's own words) for the options of `declarations`. @internal */
export const scan = (argv: ReadonlyArray<string>, declarations: Declarations): Scanned | Refused => {
  const byName = new Map(Object.values(declarations).map((option) => [flagName(option), option]))
  const positional: Array<string> = []
  const values = new Map<string, Array<string>>()
  const flags = new Set<string>()
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!
    if (!arg.startsWith("--")) {
      positional.push(arg)
      continue
    }
    if (byName.get(arg)?.kind === "flag") {
      flags.add(arg)
      continue
    }
    const eq = arg.indexOf("=")
    const name = eq < 0 ? arg : arg.slice(0, eq)
    const option = byName.get(name)
    if (option === undefined || option.kind === "flag") return { kind: "Unknown", name }
    const value = eq < 0 ? argv[++index] : arg.slice(eq + 1)
    if (value === undefined) return { kind: "MissingValue", name }
    values.set(name, [...(values.get(name) ?? []), value])
  }
  return { kind: "Scanned", positional, values, flags }
}

/** A value the framework's parser takes for an integer option without doubt: plain decimal digits. */
const PLAIN_INTEGER = /^[0-9]{1,15}$/

/** A command line read against its declarations. @internal */
export interface Parsed<R extends Declarations> {
  readonly kind: "Parsed"
  readonly positional: ReadonlyArray<string>
  /** Each option's value; an option given more than once where once is allowed has its last. */
  readonly values: Values<R>
  /** `--name` of each option given more than once where once is allowed. */
  readonly repeated: ReadonlyArray<string>
  /** Every value given to a directory option, for a caller that checks them as the framework does. */
  readonly directories: ReadonlyArray<string>
}

/** What makes a scanned command line unreadable against its declarations. @internal */
export type Invalid =
  | { readonly kind: "Missing"; readonly name: string }
  | {
      readonly kind: "Invalid"
      readonly name: string
      readonly value: string
      /** What it takes, as a phrase: `one of spec, compact`. */
      readonly expected: string
    }

/** A value read from the command line. */
interface Read {
  readonly kind: "Read"
  readonly value: unknown
}

/** The value a declaration reads from its given values, or why it reads none. */
const valueOf = (option: Any, given: ReadonlyArray<string>): Read | Invalid => {
  const name = flagName(option)
  const read = (raw: string): Read | Invalid => {
    if (option.kind === "integer")
      return PLAIN_INTEGER.test(raw)
        ? { kind: "Read", value: Number(raw) }
        : { kind: "Invalid", name, value: raw, expected: "a whole number of 0 or more" }
    if (option.kind === "choice" && !option.choices.includes(raw))
      return { kind: "Invalid", name, value: raw, expected: `one of ${option.choices.join(", ")}` }
    return { kind: "Read", value: raw }
  }
  const values: Array<unknown> = []
  for (const raw of given) {
    const one = read(raw)
    if (one.kind !== "Read") return one
    values.push(one.value)
  }
  switch (option.occurs) {
    case "repeated":
      return { kind: "Read", value: values }
    case "optional":
      return { kind: "Read", value: Option.fromNullable(values.at(-1)) }
    case "default":
      return { kind: "Read", value: values.length === 0 ? option.fallback : values.at(-1) }
    case "once":
      return values.length === 0 ? { kind: "Missing", name } : { kind: "Read", value: values.at(-1) }
  }
}

/** Reads `argv` against `declarations`: every option's value, typed as declared. @internal */
export const parse = <R extends Declarations>(
  argv: ReadonlyArray<string>,
  declarations: R
): Parsed<R> | Refused | Invalid => {
  const scanned = scan(argv, declarations)
  if (scanned.kind !== "Scanned") return scanned
  const values: Record<string, unknown> = {}
  const givenTwice: Array<string> = []
  const directories: Array<string> = []
  for (const [field, option] of Object.entries(declarations)) {
    const name = flagName(option)
    if (option.kind === "flag") {
      values[field] = scanned.flags.has(name)
      continue
    }
    const given = scanned.values.get(name) ?? []
    if (option.occurs !== "repeated" && given.length > 1) givenTwice.push(name)
    if (option.kind === "directory") directories.push(...given)
    const value = valueOf(option, given)
    if (value.kind !== "Read") return value
    values[field] = value.value
  }
  return {
    kind: "Parsed",
    positional: scanned.positional,
    values: values as Values<R>,
    repeated: givenTwice,
    directories
  }
}
