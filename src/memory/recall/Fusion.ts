/**
 * Fusing strategy rankings and reranking the fused set without a model. Each strategy's scores are normalised
 * by its best score and summed with per-strategy weights (reciprocal rank is kept too: it picks the seeds for
 * spreading activation). Score fusion keeps a strong keyword match on top where rank fusion would let several
 * weak strategies outvote it. The deterministic reranker then orders the set by the fused score, how close the
 * meaning is, how much of the query it contains (`QueryCoverage`), how strong the best other candidate of its
 * episode is (`EpisodeSupport`) and, for queries that name a time, how close the memory is to it; a second pass
 * blends each score with how well its episode's best candidates score together (`EpisodeSupport.episodeAgreement`).
 * Scores end in 0–1 so a minimum-score filter means something.
 */
import { asksQuestion, asksWhen, dated, namesSubject } from "./AnswerShape.ts"
import { episodeAgreement, episodes, episodeSupport } from "./EpisodeSupport.ts"
import { queryCoverages } from "./QueryCoverage.ts"
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
  return [...fused.entries()].map(([id, entry]) => ({ id, ...entry })).sort((a, b) =>
    b.rrf - a.rrf || compareIds(a.id, b.id)
  )
}

/** The same fused set, ordered by the weighted score sum. */
export const byCombinedScore = (fused: ReadonlyArray<Fused>): Array<Fused> =>
  [...fused].sort((a, b) => b.combined - a.combined || b.rrf - a.rrf || compareIds(a.id, b.id))

export interface RerankInput {
  readonly fused: Fused
  readonly text: string
  readonly time: Date | null
  readonly factType: string
  /** The query's similarity to the memory, whichever strategy found it (the semantic score when it did). */
  readonly similarity?: number | undefined
  /** When the memory was said: candidates said close together share an episode (see `EpisodeSupport`). */
  readonly said?: Date | null | undefined
  /** The entity the memory names first (see `StateRanking.subjectOf`), if any. */
  readonly subject?: string | undefined
}

/**
 * No reranking (the bank's `enable_reranking` off): the fused order as it is, each score the fused score relative to
 * the best, so a minimum score still means something.
 */
export const fusedOrder = <T extends RerankInput>(items: ReadonlyArray<T>): Array<T & { readonly score: number }> => {
  const topCombined = Math.max(...items.map((item) => item.fused.combined), 1e-9)
  return items.map((item) => ({ ...item, score: Math.max(0, Math.min(1, item.fused.combined / topCombined)) }))
}

/** The reranker's weights: see docs/recall.md for what each is and docs/benchmarks.md for how they were measured. */
const weights = {
  fused: 0.55,
  semantic: 0.1,
  coverage: 0.3,
  episode: 0.2,
  episodeCoverage: 0.3,
  subject: 0.2
} as const
const weightSum = Object.values(weights).reduce((sum, weight) => sum + weight, 0)
/** Taken off the score of a memory that asks a question (in the weights' units). */
const questionPenalty = 0.1
/** For a question asking when, the weight of a memory being dated (see `AnswerShape.dated`). */
const datedWeight = 0.15
/**
 * The second pass: each score is blended with its episode's agreement (the mean of the episode's best
 * `agreementDepth` first-pass scores, see `EpisodeSupport.episodeAgreement`) at this weight, then divided by
 * 1 + the weight so it stays within 0–1.
 */
const agreementWeight = 0.2
const agreementDepth = 3

export const deterministicRerank = (
  query: string,
  items: ReadonlyArray<RerankInput>,
  options: {
    readonly window: { readonly start: Date; readonly end: Date } | null
    readonly preferObservations: boolean
  }
): Array<RerankInput & { readonly score: number }> => {
  const topCombined = Math.max(...items.map((item) => item.fused.combined), 1e-9)
  // One episode numbering serves both episode signals.
  const episode = episodes(items.map((item) => ({ said: item.said?.getTime() })))
  const coverage = queryCoverages(query, items.map((item) => item.text), episode)
  const support = episodeSupport(items.map((item) => item.fused.combined / topCombined), episode)
  const when = asksWhen(query)
  const sum = weightSum + (when ? datedWeight : 0)
  // Candidates share few subjects (in a conversation, its speakers): each is looked for in the query once.
  const subjects = new Map<string, boolean>()
  const named = (subject: string | undefined) => {
    if (subject === undefined) return false
    let found = subjects.get(subject)
    if (found === undefined) {
      found = namesSubject(query, subject)
      subjects.set(subject, found)
    }
    return found
  }
  const first = items.map((item, index) => {
    const fusedScore = item.fused.combined / topCombined
    const semanticScore = Math.max(0, Math.min(1, item.similarity ?? item.fused.scores.semantic ?? 0))
    // Weights measured on LoCoMo (docs/recall.md), divided by their sum so the score stays within 0–1.
    const score = (
      weights.fused * fusedScore +
      weights.semantic * semanticScore +
      weights.coverage * coverage.own[index]! +
      weights.episode * support[index]! +
      weights.episodeCoverage * coverage.episode[index]! +
      weights.subject * (named(item.subject) ? 1 : 0) +
      (when && dated(item.time, item.said) ? datedWeight : 0) -
      (asksQuestion(item.text) ? questionPenalty : 0)
    ) / sum
    return Math.max(0, Math.min(1, score))
  })
  const agreement = episodeAgreement(first, episode, agreementDepth)
  return items
    .map((item, index) => {
      let score = (first[index]! + agreementWeight * agreement[index]!) / (1 + agreementWeight)
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
