/**
 * Fusing strategy rankings and reranking the fused set without a model. Each strategy's scores are normalised
 * by its best score and summed with per-strategy weights (reciprocal rank is kept too: it picks the seeds for
 * spreading activation). Score fusion keeps a strong keyword match on top where rank fusion would let several
 * weak strategies outvote it. The deterministic reranker then orders the set by the fused score, how close the
 * meaning is, how many query words it contains and, for queries that name a time, how close the memory is to
 * it. Scores end in 0–1 so a minimum-score filter means something.
 */
import { byRerankedScore, type Candidate, compareIds, type StrategyName, type StrategyRun } from "./Candidates.ts"

/**
 * How much each strategy counts. Measured on LoCoMo with offline GloVe vectors: keyword evidence is the most
 * reliable, word-averaged vectors much less (hit@10 0.67 vs 0.51 alone); graph and time support.
 */
export const strategyWeights: Record<StrategyName, number> = { semantic: 0.35, keyword: 1, graph: 0.15, temporal: 0.3 }

const rrfK = 60

export interface Fused {
  readonly id: string
  readonly rrf: number
  /** Weighted sum of each strategy's score divided by that strategy's best score. */
  readonly combined: number
  readonly ranks: Partial<Record<StrategyName, number>>
  readonly scores: Partial<Record<StrategyName, number>>
}

export const reciprocalRankFusion = (runs: ReadonlyArray<StrategyRun>): Array<Fused> => {
  const fused = new Map<string, {
    rrf: number
    combined: number
    ranks: Partial<Record<StrategyName, number>>
    scores: Partial<Record<StrategyName, number>>
  }>()
  for (const run of runs) {
    const best = Math.max(...run.candidates.map((candidate) => candidate.score), 1e-9)
    run.candidates.forEach((candidate: Candidate, rank) => {
      const entry = fused.get(candidate.id) ?? { rrf: 0, combined: 0, ranks: {}, scores: {} }
      entry.rrf += strategyWeights[run.name] / (rrfK + rank + 1)
      entry.combined += strategyWeights[run.name] * Math.max(0, candidate.score) / best
      entry.ranks[run.name] = rank + 1
      entry.scores[run.name] = candidate.score
      fused.set(candidate.id, entry)
    })
  }
  return [...fused.entries()].map(([id, entry]) => ({ id, ...entry })).sort((a, b) => b.rrf - a.rrf || compareIds(a.id, b.id))
}

/** The same fused set, ordered by the weighted score sum. */
export const byCombinedScore = (fused: ReadonlyArray<Fused>): Array<Fused> =>
  [...fused].sort((a, b) => b.combined - a.combined || b.rrf - a.rrf || compareIds(a.id, b.id))

export interface RerankInput {
  readonly fused: Fused
  readonly text: string
  readonly time: Date | null
  readonly factType: string
}

const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])

/**
 * No reranking (the bank's `enable_reranking` off): the fused order as it is, each score the fused score relative to
 * the best, so a minimum score still means something.
 */
export const fusedOrder = <T extends RerankInput>(items: ReadonlyArray<T>): Array<T & { readonly score: number }> => {
  const topCombined = Math.max(...items.map((item) => item.fused.combined), 1e-9)
  return items.map((item) => ({ ...item, score: Math.max(0, Math.min(1, item.fused.combined / topCombined)) }))
}

export const deterministicRerank = (
  query: string,
  items: ReadonlyArray<RerankInput>,
  options: { readonly window: { readonly start: Date; readonly end: Date } | null; readonly preferObservations: boolean }
): Array<RerankInput & { readonly score: number }> => {
  const queryWords = words(query)
  const topCombined = Math.max(...items.map((item) => item.fused.combined), 1e-9)
  return items
    .map((item) => {
      const fusedScore = item.fused.combined / topCombined
      const semanticScore = Math.max(0, Math.min(1, item.fused.scores.semantic ?? 0))
      const itemWords = words(item.text)
      let shared = 0
      for (const word of queryWords) if (itemWords.has(word)) shared++
      const coverage = queryWords.size === 0 ? 0 : shared / queryWords.size
      let score = 0.75 * fusedScore + 0.1 * semanticScore + 0.15 * coverage
      if (options.window !== null && item.time !== null) {
        const middle = (options.window.start.getTime() + options.window.end.getTime()) / 2
        const half = Math.max(86_400_000, (options.window.end.getTime() - options.window.start.getTime()) / 2)
        score = 0.85 * score + 0.15 / (1 + Math.abs(item.time.getTime() - middle) / half)
      }
      if (options.preferObservations && item.factType === "observation") score = Math.min(1, score * 1.15)
      return { ...item, score: Math.max(0, Math.min(1, score)) }
    })
    .sort(byRerankedScore)
}
