/**
 * The budgets a host runs with: every limit of toolcap's limit table as one plain object of
 * numbers (bytes, lines, entries, seconds, milliseconds, tokens, shares). A host overrides any
 * field through `createToolHost({ budgets })` or a `TOOLCAP_<FIELD>` environment variable; the
 * defaults and each field's meaning are in the README's limit table.
 *
 * @since 0.1.0
 */

/**
 * The names of the budget fields, in table order.
 *
 * @since 0.1.0
 * @category models
 */
export type BudgetField =
  | "searchMaxBytes"
  | "searchMaxLines"
  | "shellStdoutMaxBytes"
  | "shellStdoutMaxLines"
  | "shellStderrMaxBytes"
  | "shellStderrMaxLines"
  | "shellStdoutHeadShare"
  | "shellStderrHeadShare"
  | "maxLineChars"
  | "readWindowLines"
  | "grepHeadLimit"
  | "grepMaxPatternBytes"
  | "engineMemoryMaxBytes"
  | "inputMaxPathBytes"
  | "globMaxPatternBytes"
  | "globMaxBraceExpansions"
  | "inputMaxDepth"
  | "bashCommandMaxBytes"
  | "globLimit"
  | "globMaxLimit"
  | "captureMaxBytes"
  | "captureMaxLines"
  | "spillMaxBytes"
  | "bashTimeoutDefaultSeconds"
  | "bashTimeoutMinSeconds"
  | "bashTimeoutMaxSeconds"
  | "bashKillGraceMs"
  | "bashDrainGraceMs"
  | "bashMemoryMaxBytes"
  | "bashTasksMax"
  | "digest"
  | "binarySniffBytes"
  | "binaryNonPrintableRatio"
  | "checkpointRetentionTokens"
  | "checkpointBatchTokens"
  | "checkpointHeadShare"

/**
 * The resolved budgets: `host.budgets`.
 *
 * @since 0.1.0
 * @category models
 */
export type BudgetsValue = { readonly [Field in BudgetField]: number }
