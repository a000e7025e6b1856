/**
 * The influence score of one item from its five factors, shared by the influence analytics (the leaderboard) and
 * by retention (which evicts the least influential memories first), so both rank memories the same way. Pure.
 */
export const influenceWeights = { recency: 0.28, freq: 0.26, graph: 0.18, rerank: 0.14, dream: 0.14 } as const
/** Days over which the recency factor decays by e. */
export const influenceRecencyDays = 7
/** Accesses at which the frequency factor saturates at 1. */
export const influenceFrequencySaturation = 20

export interface InfluenceFeatures {
  readonly recency: number
  readonly freq: number
  readonly graph: number
  readonly rerank: number
  readonly dream: number
}

const dayMs = 86_400_000
const clamp01 = (value: number) => Math.min(1, Math.max(0, value))

/** The factors of a memory last accessed (or, never accessed, stored) at `lastMillis`, as of `nowMillis`. */
export const influenceFeatures = (input: {
  readonly nowMillis: number
  readonly lastMillis: number
  readonly accesses: number
  readonly centrality: number
  readonly meanScore: number | null
  readonly dream: number
}): InfluenceFeatures => ({
  recency: Math.exp(-Math.max(0, (input.nowMillis - input.lastMillis) / dayMs) / influenceRecencyDays),
  freq: clamp01(input.accesses / influenceFrequencySaturation),
  graph: input.centrality,
  rerank: clamp01(input.meanScore ?? 0),
  dream: clamp01(input.dream)
})

export const influenceScore = (features: InfluenceFeatures) =>
  influenceWeights.recency * features.recency + influenceWeights.freq * features.freq +
  influenceWeights.graph * features.graph + influenceWeights.rerank * features.rerank +
  influenceWeights.dream * features.dream
