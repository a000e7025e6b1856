/**
 * The evidence a dream run reasons from, gathered deterministically: recall (facts and observations) and the
 * bank's mental models, graph intelligence's state surface (changed, contradictory and stale subjects, and its
 * contradiction events), open contradictions found at write time, earlier runs and prediction outcomes, and the
 * bank's maturity tier. Reads only; every source that fails or is empty leaves its part empty.
 */
import { Effect } from "effect"
import type { Anomalies } from "../memory/anomaly/Anomalies.ts"
import type { GraphIntelligence } from "../memory/GraphIntelligence.ts"
import type { Recall } from "../memory/recall/Recall.ts"
import type { MentalModels } from "../mentalmodels/MentalModels.ts"
import type { DreamSettings } from "./DreamConfig.ts"
import type { History } from "./DreamTypes.ts"

export interface EvidenceItem {
  readonly id: string
  readonly type: string
  readonly text: string
  /** When it happened, else when it was said (epoch ms); null when unknown. */
  readonly at: number | null
  readonly entities: ReadonlyArray<string>
}

export interface GraphSignal {
  readonly title: string
  readonly status: string
  readonly reason: string
  readonly evidenceIds: ReadonlyArray<string>
  readonly lastChangedAt: string | null
}

export interface Contradiction {
  readonly summary: string
  readonly unitIds: ReadonlyArray<string>
}

export type MaturityTier = "sparse" | "emerging" | "mature"

export interface DreamEvidence {
  readonly items: ReadonlyArray<EvidenceItem>
  readonly recurringEntities: ReadonlyArray<readonly [string, number]>
  readonly recurringThemes: ReadonlyArray<readonly [string, number]>
  readonly graph: ReadonlyArray<GraphSignal>
  readonly contradictions: ReadonlyArray<Contradiction>
  readonly history: History
  readonly maturity: MaturityTier
  readonly maturityReason: string
  readonly recency: Record<"last_24h" | "last_7d" | "last_30d" | "older" | "unknown", number>
  readonly now: number
}

export const evidenceQuery = "Which patterns, likely next steps and practical what-if insights are emerging?"

const dayMillis = 86_400_000
const stopThemes = new Set([
  "about",
  "after",
  "again",
  "also",
  "because",
  "before",
  "being",
  "could",
  "their",
  "there",
  "these",
  "those",
  "which",
  "while",
  "would",
  "should",
  "where",
  "really",
  "think",
  "thing",
  "things",
  "going",
  "other",
  "every",
  "still",
  "first",
  "great",
  "right",
  "doing"
])

const maturityReasons: Record<MaturityTier, string> = {
  sparse: "Sparse bank: the run maps what is uncertain more than it forecasts.",
  emerging: "Emerging bank: enough recurring evidence exists for near-term forecasts.",
  mature: "Mature bank: a validated prediction history supports forecasts over several horizons."
}

const countedTop = (counts: Map<string, number>, minimum: number, take: number) =>
  [...counts.entries()]
    .filter(([, count]) => count >= minimum)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, take)

const timeOf = (result: { occurred_start: string | null; mentioned_at: string | null }) => {
  const text = result.occurred_start ?? result.mentioned_at
  const parsed = text === null ? NaN : Date.parse(text)
  return Number.isNaN(parsed) ? null : parsed
}

export const recencyOf = (items: ReadonlyArray<EvidenceItem>, now: number) => {
  const recency = { last_24h: 0, last_7d: 0, last_30d: 0, older: 0, unknown: 0 }
  for (const item of items) {
    if (item.at === null) recency.unknown++
    else {
      const age = (now - item.at) / dayMillis
      if (age <= 1) recency.last_24h++
      else if (age <= 7) recency.last_7d++
      else if (age <= 30) recency.last_30d++
      else recency.older++
    }
  }
  return recency
}

export interface EvidenceSources {
  readonly recall: Recall["Service"]
  readonly graph: GraphIntelligence["Service"]
  readonly anomalies: Anomalies["Service"]
  readonly mentalModels: MentalModels["Service"]
}

export const gatherEvidence = Effect.fn("Dreams.gatherEvidence")(function*(
  sources: EvidenceSources,
  bankId: string,
  settings: DreamSettings,
  history: History,
  now: number
) {
  const recalled = yield* sources.recall.recall(bankId, {
    query: evidenceQuery,
    budget: "low",
    max_tokens: settings.max_input_tokens,
    types: ["world", "experience", "observation"]
  }).pipe(Effect.map((response) => response.results), Effect.orElseSucceed(() => []))
  const facts: Array<EvidenceItem> = recalled.slice(0, settings.top_k).map((result) => ({
    id: result.id,
    type: result.type ?? "world",
    text: result.text,
    at: timeOf(result),
    entities: result.entities ?? []
  }))
  // Mental models are the bank's own summaries: at most two, as extra evidence beside the recalled facts.
  const models = yield* sources.mentalModels.list(bankId, { tags: [], tagsMatch: "any", limit: 2, offset: 0 }).pipe(
    Effect.orElseSucceed(() => [])
  )
  const modelItems: Array<EvidenceItem> = models
    .filter((model) => model.content.trim() !== "")
    .map((model) => ({
      id: model.id,
      type: "mental_model",
      text: `${model.name}: ${model.content.slice(0, 400)}`,
      at: null,
      entities: []
    }))
  const items = [...facts, ...modelItems]

  const entityCounts = new Map<string, number>()
  const themeCounts = new Map<string, number>()
  for (const item of facts) {
    for (const entity of new Set(item.entities)) entityCounts.set(entity, (entityCounts.get(entity) ?? 0) + 1)
    const tokens = new Set(item.text.toLowerCase().match(/[a-z][a-z'-]+/g) ?? [])
    for (const token of tokens) {
      if (token.length > 4 && !stopThemes.has(token)) themeCounts.set(token, (themeCounts.get(token) ?? 0) + 1)
    }
  }

  const surface = yield* sources.graph.intelligence(bankId, {
    tagsMatch: "any",
    confidenceMin: 0.55,
    nodeKind: "all",
    windowDays: 90
  }, 12).pipe(Effect.option)
  const graph: Array<GraphSignal> = surface._tag === "Some"
    ? surface.value.nodes.slice(0, 6).map((node) => ({
      title: node.title,
      status: node.status,
      reason: node.status_reason,
      evidenceIds: node.evidence_ids.slice(0, 6),
      lastChangedAt: node.last_changed_at
    }))
    : []
  const graphContradictions: Array<Contradiction> = surface._tag === "Some"
    ? surface.value.change_events.filter((event) => event.change_type === "contradiction").slice(0, 3)
      .map((event) => ({ summary: event.summary, unitIds: event.evidence_ids }))
    : []
  const open = yield* sources.anomalies.intelligence(bankId, {
    limit: 5,
    status: "open",
    anomaly_types: ["contradiction"]
  })
    .pipe(Effect.map((found) => found.events), Effect.orElseSucceed(() => []))
  const seen = new Set(graphContradictions.map((c) => [...c.unitIds].sort().join("|")))
  const contradictions = [
    ...graphContradictions,
    ...open.map((event) => ({ summary: event.description, unitIds: event.unit_ids }))
      .filter((c) => !seen.has([...c.unitIds].sort().join("|")))
  ].slice(0, 5)

  const recurringEntities = countedTop(entityCounts, 1, 5)
  const score = items.length + 2 * [...entityCounts.values()].filter((count) => count > 1).length +
    4 * history.confirmed - contradictions.length
  const maturity: MaturityTier = score >= 16 ? "mature" : score >= 7 ? "emerging" : "sparse"
  return {
    items,
    recurringEntities,
    // A theme that is only an entity's name says nothing the entity does not.
    recurringThemes: countedTop(
      new Map([...themeCounts].filter(([theme]) =>
        !entityCounts.has(theme) &&
        ![...entityCounts.keys()].some((name) => name.toLowerCase() === theme)
      )),
      2,
      5
    ),
    graph,
    contradictions,
    history,
    maturity,
    maturityReason: maturityReasons[maturity],
    recency: recencyOf(items, now),
    now
  } satisfies DreamEvidence
})

/** The run's `evidence_basis` as clients see it. */
export const evidenceBasis = (evidence: DreamEvidence) => ({
  evidence_count: evidence.items.length,
  recall_memory_ids: evidence.items.map((item) => item.id),
  recurring_entities: evidence.recurringEntities.map(([name, count]) => ({ name, count })),
  recurring_themes: evidence.recurringThemes.map(([theme, count]) => ({ theme, count })),
  contradictions: evidence.contradictions.map((c) => c.summary),
  graph_signals: evidence.graph.slice(0, 4).map((signal) => signal.reason),
  recency_distribution: evidence.recency,
  unresolved_prediction_backlog: evidence.history.unresolved,
  maturity_reason: evidence.maturityReason
})
