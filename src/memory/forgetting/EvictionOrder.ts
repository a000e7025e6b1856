/**
 * Which facts a bank over its `max_memories` loses first: the least influential, scored exactly as the influence
 * leaderboard scores memories (`src/influence/InfluenceScore.ts`: recency of last access or of storing, how often
 * reads returned it, its PageRank in the brain's graph, its mean rerank score, how much dreams drew on it). Ties go
 * to the oldest, then the smallest id, so the order is total and a re-run evicts the same memories. Reads only.
 */
import { Clock, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankBrains } from "../../brain/BankBrains.ts"
import { dreamSignalByMemory } from "../../dreams/DreamSignal.ts"
import { pageRank } from "../../influence/GraphCentrality.ts"
import { influenceFeatures, influenceScore } from "../../influence/InfluenceScore.ts"

/** The fact types `max_memories` counts: observations are derived from facts and go with them. */
export const countedFactTypes = ["world", "experience", "opinion"] as const

/** Reads older than this no longer count towards a memory's influence (the leaderboard's widest window). */
const accessWindowDays = 30

interface FactRow {
  readonly id: string
  readonly createdAt: Date
  readonly accesses: number | null
  readonly lastAccessedAt: Date | null
  readonly meanScore: number | null
}

/** The `excess` least influential facts of the bank, least influential first. */
export const leastInfluential = Effect.fn("Retention.leastInfluential")(function*(bankId: string, excess: number) {
  const sql = yield* SqlClient.SqlClient
  const brains = yield* BankBrains
  if (excess <= 0) return []
  const now = yield* Clock.currentTimeMillis
  const since = new Date(now - accessWindowDays * 86_400_000)
  const facts = yield* sql<FactRow>`
    SELECT u.id, u.created_at, a.accesses, a.last_accessed_at, a.mean_score
    FROM memory_units u
    LEFT JOIN (
      SELECT item_id, count(DISTINCT access_id)::int AS accesses, max(accessed_at) AS last_accessed_at,
        avg(score)::float8 AS mean_score
      FROM memory_access_events
      WHERE bank_id = ${bankId} AND item_type = 'memory' AND accessed_at >= ${since}
      GROUP BY item_id
    ) a ON a.item_id = u.id
    WHERE u.bank_id = ${bankId} AND u.fact_type IN ${sql.in([...countedFactTypes])}`.pipe(Effect.orDie)
  // Without a brain (its breaker open) the graph factor is 0 for every memory, as on the leaderboard.
  const brain = yield* brains.available(bankId)
  const centrality = Option.isSome(brain) ? yield* pageRank(brain.value.graph) : null
  const dreams = yield* dreamSignalByMemory(bankId, since).pipe(Effect.orDie)
  const scored = facts.map((fact) => ({
    id: fact.id,
    storedAt: new Date(fact.createdAt).getTime(),
    score: influenceScore(influenceFeatures({
      nowMillis: now,
      lastMillis: new Date(fact.lastAccessedAt ?? fact.createdAt).getTime(),
      accesses: fact.accesses ?? 0,
      centrality: centrality?.of(fact.id) ?? 0,
      meanScore: fact.meanScore,
      dream: dreams.get(fact.id) ?? 0
    }))
  }))
  scored.sort((a, b) => a.score - b.score || a.storedAt - b.storedAt || a.id.localeCompare(b.id))
  return scored.slice(0, excess).map((fact) => fact.id)
})
