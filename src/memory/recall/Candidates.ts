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

/**
 * Orders equal scores by id, so a ranking never depends on the order rows come back in: after a restore or a
 * vacuum the same bank must answer the same query in the same order.
 */
export const compareIds = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

export const byScoreThenId = (a: Candidate, b: Candidate): number => b.score - a.score || compareIds(a.id, b.id)

/** The same tie-break for reranked items: score, then fused score, then id. */
export const byRerankedScore = (
  a: { readonly score: number; readonly fused: { readonly id: string; readonly combined: number } },
  b: { readonly score: number; readonly fused: { readonly id: string; readonly combined: number } }
): number => b.score - a.score || b.fused.combined - a.fused.combined || compareIds(a.fused.id, b.fused.id)
