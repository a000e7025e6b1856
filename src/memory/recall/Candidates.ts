/** What each retrieval strategy returns: memory ids with a strategy-specific score, best first. */
export interface Candidate {
  readonly id: string
  readonly score: number
}

export type StrategyName = "semantic" | "keyword" | "graph" | "temporal"

export interface StrategyRun {
  readonly name: StrategyName
  readonly candidates: ReadonlyArray<Candidate>
  readonly durationMs: number
  readonly note?: string
}

/** Candidate depth per strategy for each budget: more depth finds more, at more cost. */
export const budgetDepth = { low: 20, mid: 50, high: 120 } as const
