/**
 * The two toolcap rows: its real tools under the `spec` budgets (the defaults) and under the
 * `compact` budgets, passed as overrides of the `Budgets` fields.
 *
 * @since 0.1.0
 */
import { Budgets } from "@toolcap/limits"
import * as Either from "effect/Either"

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolcapProfile {
  readonly name: string
  /** The budget fields this profile sets; every other field keeps its default. */
  readonly overrides: Partial<Record<Budgets.BudgetField, number>>
}

const KB = 1024

/**
 * The defaults (the spec's limit table).
 *
 * @since 0.1.0
 * @category constructors
 */
export const spec: ToolcapProfile = { name: "toolcap spec", overrides: {} }

/**
 * Excerpts sized in KB and a Read window of a few screens.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compact: ToolcapProfile = {
  name: "toolcap compact",
  overrides: {
    shellStdoutMaxBytes: 16 * KB,
    shellStdoutMaxLines: 400,
    shellStderrMaxBytes: 16 * KB,
    shellStderrMaxLines: 400,
    searchMaxBytes: 24 * KB,
    searchMaxLines: 500,
    readWindowLines: 500
  }
}

/**
 * Both rows, in report order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const profiles: ReadonlyArray<ToolcapProfile> = [spec, compact]

/**
 * The budgets a profile resolves to; throws when its overrides break a budget rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const budgetsOf = (profile: ToolcapProfile): Budgets.BudgetsValue => {
  const made = Budgets.make(profile.overrides)
  if (Either.isLeft(made)) throw new Error(`${profile.name}: ${made.left.message}`)
  return made.right
}

/**
 * The profile's numbers in one sentence, for the method section.
 *
 * @since 0.1.0
 * @category constructors
 */
export const describe = (profile: ToolcapProfile): string => {
  const b = budgetsOf(profile)
  return `Bash stdout keeps its head within ${b.shellStdoutMaxBytes / KB} KB / ${b.shellStdoutMaxLines} lines, stderr its tail within ${b.shellStderrMaxBytes / KB} KB / ${b.shellStderrMaxLines} lines, each cut stream spilled (up to ${b.spillMaxBytes / KB} KB) and named in its marker; Read returns ${b.readWindowLines} lines / ${b.searchMaxBytes / KB} KB (lines clipped at ${b.maxLineChars} characters) and its notice names the next offset; Grep returns at most ${b.grepHeadLimit} entries within ${b.searchMaxBytes / KB} KB.`
}
