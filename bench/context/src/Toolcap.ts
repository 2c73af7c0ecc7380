/**
 * The two toolcap rows: its real tools under the `spec` budgets (the defaults) and under the
 * `compact` budgets, passed as overrides of the `Budgets` fields.
 *
 * @since 0.1.0
 */
import { Budgets, Marker } from "@toolcap/limits"
import * as Either from "effect/Either"

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolcapProfile {
  readonly name: string
  /** The preset the row runs (`TOOLCAP_PROFILE`). */
  readonly preset: Budgets.Profile
  /** Fields set over the preset, when a run tries other numbers; empty in the committed rows. */
  readonly overrides: Partial<Record<Budgets.BudgetField, number>>
}

/**
 * The `spec` preset: the default limit table (rules L1–L9).
 *
 * @since 0.1.0
 * @category constructors
 */
export const spec: ToolcapProfile = { name: "toolcap spec", preset: "spec", overrides: {} }

/**
 * The `compact` preset.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compact: ToolcapProfile = { name: "toolcap compact", preset: "compact", overrides: {} }

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
  const made = Budgets.make(profile.overrides, profile.preset)
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
  const stream = (name: "stdout" | "stderr") => {
    const { headShare, maxBytes, maxLines } = Budgets.shellStream(b, name)
    const ends =
      headShare >= 1
        ? "its head"
        : headShare <= 0
          ? "its tail"
          : `its head (${Math.round(headShare * 100)}%) and its tail`
    return `${name} keeps ${ends} within ${Marker.formatBytes(maxBytes)} / ${maxLines} lines`
  }
  return `\`TOOLCAP_PROFILE=${profile.preset}\`${Object.keys(profile.overrides).length === 0 ? "" : ` with ${JSON.stringify(profile.overrides)}`}. Bash: ${stream("stdout")}, ${stream("stderr")}; a cut stream is spilled (whole up to ${Marker.formatBytes(b.spillMaxBytes)}, else its first and last half of that) and its marker says what the file holds. Read returns ${b.readWindowLines} lines / ${Marker.formatBytes(b.searchMaxBytes)} (lines clipped at ${b.maxLineChars} characters) and its notice names the next offset; Grep returns at most ${b.grepHeadLimit} entries within ${Marker.formatBytes(b.searchMaxBytes)}.`
}
