/**
 * Types the dream files share, kept apart so that the store, the evidence and the result can each import them
 * without importing one another.
 */

/** What earlier dream runs of a bank left: recent summaries and how their predictions fared. */
export interface History {
  readonly recentSummaries: ReadonlyArray<string>
  readonly unresolved: number
  readonly confirmed: number
  readonly contradicted: number
  readonly outcomes: number
  readonly outcomesConfirmed: number
  readonly calibration: number
  readonly validationRate: number
}
