// Types of scripts/tiers.mjs, for the tests that check it.
export type Tiers = Readonly<Record<string, boolean>>
export interface Guard {
  readonly file: string
  readonly name: string
  readonly needs: ReadonlyArray<string>
}
export interface Report {
  readonly testResults: ReadonlyArray<{
    readonly name: string
    readonly assertionResults: ReadonlyArray<{
      readonly ancestorTitles: ReadonlyArray<string>
      readonly title: string
      readonly status: string
    }>
  }>
}
export const detectTiers: (root: string) => Tiers
export const GUARDS: ReadonlyArray<Guard>
export const describeTiers: (tiers: Tiers) => Array<string>
export const checkGuards: (
  root: string,
  tiers: Tiers,
  report: Report,
  guards?: ReadonlyArray<Guard>
) => { readonly lines: Array<string>; readonly missed: Array<string> }
