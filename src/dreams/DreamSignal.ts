/**
 * The dream component of influence: which memories recent dream runs leaned on, and how much. A memory earns the
 * quality score of each usable run (success or duplicate) that used it as evidence, plus the confidence of each
 * prediction it supports — doubled once that prediction was confirmed, nothing once it was contradicted. Weights
 * are scaled so the strongest memory has 1. Reads only.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const dreamSignalByMemory = (bankId: string, since: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ memoryId: string; weight: number }>`
      SELECT memory_id, sum(weight)::float8 AS weight FROM (
        SELECT unnest(r.evidence_ids) AS memory_id, r.quality_score AS weight FROM dream_runs r
        WHERE r.bank_id = ${bankId} AND r.created_at >= ${since} AND r.status IN ('success', 'duplicate_low_novelty')
        UNION ALL
        SELECT unnest(p.supporting_evidence_ids) AS memory_id,
          p.confidence * CASE p.status WHEN 'confirmed' THEN 2 WHEN 'contradicted' THEN 0 ELSE 1 END AS weight
        FROM dream_predictions p
        WHERE p.bank_id = ${bankId} AND p.created_at >= ${since}
      ) used GROUP BY memory_id`.pipe(Effect.orDie)
    const highest = rows.reduce((max, row) => Math.max(max, Number(row.weight)), 0)
    return new Map(
      rows.filter((row) => Number(row.weight) > 0).map((
        row
      ) => [row.memoryId, Number((Number(row.weight) / highest).toFixed(4))])
    ) as ReadonlyMap<string, number>
  })
