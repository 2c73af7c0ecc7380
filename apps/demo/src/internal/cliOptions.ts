/**
 * The framework's options built from the declarations of `options.ts`: the one place `@effect/cli`
 * meets them. Only `Cli.ts` imports this module; the fast paths scan the declarations directly.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Effect from "effect/Effect"
import * as Record from "effect/Record"
import type * as Argv from "./argv.js"

/** An integer option counts something: refused below 0, as the fast paths' parse refuses it. */
const wholeNumber = (name: string) => (value: number) =>
  value >= 0
    ? Effect.succeed(value)
    : Effect.fail(
        ValidationError.invalidValue(HelpDoc.p(`--${name} must be a whole number of 0 or more, got ${value}`))
      )

/** The framework's option for one declared in `internal/options.ts`. */
const toOption = <A>(declared: Argv.Declaration<A>): Options.Options<A> => {
  const single: Options.Options<unknown> =
    declared.kind === "directory"
      ? Options.directory(declared.name)
      : declared.kind === "text"
        ? Options.text(declared.name)
        : declared.kind === "integer"
          ? Options.integer(declared.name).pipe(Options.mapEffect(wholeNumber(declared.name)))
          : declared.kind === "choice"
            ? Options.choice(declared.name, declared.choices)
            : Options.boolean(declared.name)
  const described: Options.Options<unknown> = Options.withDescription(single, declared.description)
  const occurring =
    declared.occurs === "optional"
      ? Options.optional(described)
      : declared.occurs === "repeated"
        ? Options.repeated(described)
        : declared.occurs === "default"
          ? Options.withDefault(described, declared.fallback)
          : described
  // the declaration's value type is the one these combinators produce
  return occurring as Options.Options<A>
}

/** The framework's options of a command, field for field. @internal */
export const optionsOf = <R extends Argv.Declarations>(
  declared: R
): { readonly [K in keyof R]: Options.Options<Argv.ValueOf<R[K]>> } =>
  Record.map(declared, toOption) as { readonly [K in keyof R]: Options.Options<Argv.ValueOf<R[K]>> }
