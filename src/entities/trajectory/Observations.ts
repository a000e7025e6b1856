/**
 * What a trajectory is computed from: the entity's facts (world and experience; observations are summaries of
 * those facts and would count them twice) that carry an embedding of the bank's current model, in time order.
 * Also the fingerprint that tells whether a stored trajectory is stale. Reads only.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { liveAt } from "../../memory/forgetting/Expiry.ts"

export interface TrajectoryObservation {
  readonly unitId: string
  readonly text: string
  readonly factType: string
  readonly sortAt: Date
  readonly embedding: Float32Array
}

/** The facts a trajectory rests on: how many and the newest retain position; a change of either makes it stale. */
export interface FactFingerprint {
  readonly factCount: number
  readonly lastSeq: number
}

export interface VectorSpace {
  readonly model: string
  readonly dimensions: number
}

const factTypes = ["world", "experience"]

/**
 * The newest `maxFacts` facts, oldest first: the current state is what a trajectory is most asked about, so a
 * long history is cut at its old end.
 */
export const loadObservations = Effect.fn("Trajectory.loadObservations")(function*(
  bankId: string,
  entityId: string,
  space: VectorSpace,
  maxFacts: number
) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{
    id: string
    text: string
    factType: string
    sortAt: Date
    embedding: Float32Array
  }>`SELECT u.id, left(u.text, 8000) AS text, u.fact_type, coalesce(u.occurred_start, u.mentioned_at, u.created_at) AS sort_at,
      u.embedding
    FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
    WHERE ue.entity_id = ${entityId} AND u.bank_id = ${bankId} AND u.fact_type IN ${sql.in(factTypes)}
      AND u.embedding IS NOT NULL AND u.embedding_model = ${space.model} AND vector_dims(u.embedding) = ${space.dimensions}
      AND ${liveAt(sql, "u", new Date())}
    ORDER BY coalesce(u.occurred_start, u.mentioned_at, u.created_at) DESC, u.seq DESC
    LIMIT ${maxFacts}`
  return rows.toReversed().map((row): TrajectoryObservation => ({
    unitId: row.id,
    text: row.text,
    factType: row.factType,
    sortAt: row.sortAt,
    embedding: row.embedding
  }))
})

export const fingerprintOf = Effect.fn("Trajectory.fingerprint")(
  function*(bankId: string, entityId: string, space: VectorSpace) {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ factCount: number; lastSeq: string | null }>`
    SELECT count(*)::int AS fact_count, max(u.seq)::text AS last_seq
    FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
    WHERE ue.entity_id = ${entityId} AND u.bank_id = ${bankId} AND u.fact_type IN ${sql.in(factTypes)}
      AND u.embedding IS NOT NULL AND u.embedding_model = ${space.model} AND vector_dims(u.embedding) = ${space.dimensions}
      AND ${liveAt(sql, "u", new Date())}`
    return { factCount: rows[0]?.factCount ?? 0, lastSeq: Number(rows[0]?.lastSeq ?? 0) } satisfies FactFingerprint
  }
)

/**
 * Entities with at least `minFacts` facts whose trajectory is missing or was computed from other facts than they
 * have now, most mentioned first. After a retain this is exactly the set the retain touched (plus any a crash
 * left behind), without the retain having to say which.
 */
export const staleEntities = Effect.fn("Trajectory.staleEntities")(function*(
  bankId: string,
  space: VectorSpace,
  minFacts: number,
  limit: number
) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ entityId: string }>`
    WITH facts AS (
      SELECT ue.entity_id, count(*)::int AS fact_count, max(u.seq) AS last_seq
      FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
      WHERE u.bank_id = ${bankId} AND u.fact_type IN ${sql.in(factTypes)} AND u.embedding IS NOT NULL
        AND u.embedding_model = ${space.model} AND vector_dims(u.embedding) = ${space.dimensions}
        AND ${liveAt(sql, "u", new Date())}
      GROUP BY ue.entity_id
      HAVING count(*) >= ${minFacts})
    SELECT f.entity_id FROM facts f
    JOIN entities e ON e.id = f.entity_id
    LEFT JOIN entity_trajectories t ON t.bank_id = ${bankId} AND t.entity_id = f.entity_id
    WHERE t.entity_id IS NULL OR t.fact_count <> f.fact_count OR t.last_seq <> f.last_seq
    ORDER BY e.mention_count DESC, f.entity_id
    LIMIT ${limit}`
  return rows.map((row) => row.entityId)
})
