/**
 * The queries consolidation reads with: facts waiting for consolidation (in retain order), facts by id, the
 * observations of one scope by grouping key, those related to a batch of facts (by meaning or shared entities),
 * and the nearest observations to a text in a scope. Similarity is ranked exactly (`ORDER BY similarity DESC`
 * keeps the planner off the bank-wide HNSW index, which would drop observations that facts outnumber).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { param } from "../../storage/VectorParam.ts"
import type { ConsolidationFact, StoredObservation } from "./ConsolidationFact.ts"
import type { Scope } from "./ObservationScopes.ts"
import type { MemoryRecords } from "../../brain/records/MemoryRecords.ts"

/** The vector space a bank's memories are embedded in: only vectors of the same model are compared. */
export interface VectorSpace {
  readonly model: string
  readonly dimensions: number
}

interface FactRow {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly tags: ReadonlyArray<string> | null
  readonly observationScopes: unknown
  readonly mentionedAt: Date | null
  readonly occurredStart: Date | null
  readonly seq: number
  readonly entities: ReadonlyArray<{ readonly id: string; readonly name: string; readonly type: string | null }> | null
}

interface ObservationRow {
  readonly id: string
  readonly text: string
  readonly tags: ReadonlyArray<string> | null
  readonly sourceFactIds: ReadonlyArray<string> | null
  readonly consolidationKey: string | null
  readonly observationVersion: number | null
}

const toFact = (row: FactRow): ConsolidationFact => ({
  id: row.id,
  text: row.text,
  factType: row.factType,
  tags: row.tags ?? [],
  observationScopes: row.observationScopes,
  mentionedAt: row.mentionedAt,
  occurredStart: row.occurredStart,
  seq: Number(row.seq),
  entities: row.entities ?? []
})

export const toObservation = (row: ObservationRow): StoredObservation => ({
  id: row.id,
  text: row.text,
  tags: row.tags ?? [],
  sourceFactIds: row.sourceFactIds ?? [],
  key: row.consolidationKey,
  version: row.observationVersion ?? 1
})

/** A text array parameter; an empty one is spelled out because the driver cannot type `[]`. */
export const textArray = (sql: SqlClient.SqlClient, values: ReadonlyArray<string>) =>
  values.length === 0 ? sql`'{}'::text[]` : sql`${[...values]}::text[]`

const factColumns = (sql: SqlClient.SqlClient) =>
  sql`
  u.id, u.text, u.fact_type, u.tags, u.observation_scopes, u.mentioned_at, u.occurred_start, u.seq::float8 AS seq,
  coalesce((SELECT jsonb_agg(jsonb_build_object('id', e.id, 'name', e.canonical_name, 'type', e.entity_type)
              ORDER BY e.canonical_name)
            FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id WHERE ue.unit_id = u.id), '[]'::jsonb) AS entities`

const observationColumns = (sql: SqlClient.SqlClient) =>
  sql`o.id, o.text, o.tags, o.source_fact_ids, o.consolidation_key, o.observation_version`

/** World and experience facts not yet consolidated, oldest first. */
export const pendingFacts = Effect.fn("ObservationReads.pendingFacts")(function*(bankId: string, limit: number) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<FactRow>`SELECT ${factColumns(sql)} FROM memory_units u
    WHERE u.bank_id = ${bankId} AND u.consolidated_at IS NULL AND u.fact_type IN ('world', 'experience')
    ORDER BY u.seq LIMIT ${limit}`
  return rows.map(toFact)
})

export const factsByIds = Effect.fn("ObservationReads.factsByIds")(
  function*(bankId: string, ids: ReadonlyArray<string>) {
    const sql = yield* SqlClient.SqlClient
    if (ids.length === 0) return [] as Array<ConsolidationFact>
    const rows = yield* sql<FactRow>`SELECT ${factColumns(sql)} FROM memory_units u
    WHERE u.bank_id = ${bankId} AND u.id IN ${sql.in([...ids])} AND u.fact_type IN ('world', 'experience')
    ORDER BY u.seq`
    return rows.map(toFact)
  }
)

const inScope = (sql: SqlClient.SqlClient, bankId: string, scope: Scope) =>
  sql`o.bank_id = ${bankId} AND o.fact_type = 'observation' AND o.tags = ${textArray(sql, scope)}`

export const observationsByKeys = Effect.fn("ObservationReads.observationsByKeys")(function*(
  bankId: string,
  scope: Scope,
  keys: ReadonlyArray<string>
) {
  const sql = yield* SqlClient.SqlClient
  if (keys.length === 0) return [] as Array<StoredObservation>
  const rows = yield* sql<ObservationRow>`SELECT ${observationColumns(sql)} FROM memory_units o
    WHERE ${inScope(sql, bankId, scope)} AND o.consolidation_key IN ${sql.in([...keys])}`
  return rows.map(toObservation)
})

export const observationsByIds = Effect.fn("ObservationReads.observationsByIds")(function*(
  bankId: string,
  ids: ReadonlyArray<string>
) {
  const sql = yield* SqlClient.SqlClient
  if (ids.length === 0) return [] as Array<StoredObservation>
  const rows = yield* sql<ObservationRow>`SELECT ${observationColumns(sql)} FROM memory_units o
    WHERE o.bank_id = ${bankId} AND o.fact_type = 'observation' AND o.id IN ${sql.in([...ids])}`
  return rows.map(toObservation)
})

/**
 * The observations of a scope a batch of facts may touch: each fact's closest ones by meaning, then those about
 * the same entities (most recently changed first), at most `limit`.
 */
export const relatedObservations = Effect.fn("ObservationReads.relatedObservations")(function*(options: {
  readonly bankId: string
  readonly scope: Scope
  readonly factIds: ReadonlyArray<string>
  readonly entityIds: ReadonlyArray<string>
  readonly space: VectorSpace
  readonly perFact: number
  readonly limit: number
}) {
  const sql = yield* SqlClient.SqlClient
  const { bankId, scope, space } = options
  const d = sql.literal(String(Math.trunc(space.dimensions)))
  const byMeaning = options.factIds.length === 0 ? [] : yield* sql<ObservationRow & { similarity: number }>`
    SELECT DISTINCT ON (n.id) n.* FROM memory_units f
    CROSS JOIN LATERAL (
      SELECT ${observationColumns(sql)}, 1 - (o.embedding::vector(${d}) <=> f.embedding::vector(${d})) AS similarity
      FROM memory_units o
      WHERE ${inScope(sql, bankId, scope)} AND o.embedding_model = ${space.model} AND vector_dims(o.embedding) = ${d}
      ORDER BY similarity DESC LIMIT ${options.perFact}) n
    WHERE f.id IN ${sql.in([...options.factIds])} AND vector_dims(f.embedding) = ${d}
    ORDER BY n.id, n.similarity DESC`
  const ranked = [...byMeaning].sort((a, b) => b.similarity - a.similarity).map(toObservation)
  const byEntity = options.entityIds.length === 0 ? [] : yield* sql<ObservationRow>`
    SELECT ${observationColumns(sql)} FROM memory_units o
    WHERE ${inScope(sql, bankId, scope)}
      AND EXISTS (SELECT 1 FROM unit_entities ue WHERE ue.unit_id = o.id AND ue.entity_id IN ${
    sql.in([...options.entityIds])
  })
    ORDER BY o.updated_at DESC LIMIT ${options.limit}`
  const seen = new Set<string>()
  return [...ranked, ...byEntity.map(toObservation)].filter((observation) => {
    if (seen.has(observation.id)) return false
    seen.add(observation.id)
    return true
  }).slice(0, options.limit)
})

/**
 * For each query (its own scope and vector), the `limit` observations of that scope closest to it in meaning,
 * leaving out `exclude`, in one statement; by the query's index, closest first.
 */
export const nearestObservationsOfMany = Effect.fn("ObservationReads.nearestObservationsOfMany")(function*(options: {
  readonly bankId: string
  readonly queries: ReadonlyArray<{ readonly scope: Scope; readonly vector: Float32Array }>
  readonly exclude: ReadonlyArray<string>
  readonly space: VectorSpace
  readonly limit: number
}) {
  const sql = yield* SqlClient.SqlClient
  const found = options.queries.map(() => [] as Array<StoredObservation & { readonly similarity: number }>)
  if (options.queries.length === 0) return found
  const d = sql.literal(String(Math.trunc(options.space.dimensions)))
  const queries = options.queries.map((query, index) => ({ n: index, tags: query.scope, v: param(query.vector) }))
  const rows = yield* sql<ObservationRow & { n: number; similarity: number }>`
    WITH q AS MATERIALIZED (
      SELECT x.n, coalesce(x.tags, '{}') AS tags, x.v::vector(${d}) AS v
      FROM jsonb_to_recordset(${JSON.stringify(queries)}::jsonb) AS x(n int, tags text[], v text))
    SELECT q.n, near.* FROM q CROSS JOIN LATERAL (
      SELECT ${observationColumns(sql)}, 1 - (o.embedding::vector(${d}) <=> q.v) AS similarity
      FROM memory_units o
      WHERE o.bank_id = ${options.bankId} AND o.fact_type = 'observation' AND o.tags = q.tags
        AND o.embedding_model = ${options.space.model} AND vector_dims(o.embedding) = ${d}
        AND NOT (o.id = ANY(${textArray(sql, options.exclude)}))
      ORDER BY similarity DESC LIMIT ${options.limit}) near
    ORDER BY q.n, near.similarity DESC`
  for (const row of rows) found[Number(row.n)]!.push({ ...toObservation(row), similarity: Number(row.similarity) })
  return found
})

/**
 * `nearestObservationsOfMany` from the bank's brain, which holds the same vectors: each query's candidates come from
 * its records (an exact scan of the database's observations per query before: about a third of a consolidation
 * batch's time on PGlite), then one read by id gives their rows. A candidate deleted meanwhile is left out.
 */
export const nearestObservationsInBrain = Effect.fn("ObservationReads.nearestObservationsInBrain")(function*(
  records: MemoryRecords,
  options: {
    readonly bankId: string
    readonly queries: ReadonlyArray<{ readonly scope: Scope; readonly vector: Float32Array }>
    readonly exclude: ReadonlyArray<string>
    readonly limit: number
  }
) {
  const excluded = new Set(options.exclude)
  const hits = options.queries.map(({ scope, vector }) =>
    records.nearest(
      vector,
      { types: ["observation"], tags: (tags) => sameTags(tags, scope) },
      options.limit + excluded.size
    )
      .filter((hit) => !excluded.has(hit.id))
      .slice(0, options.limit)
  )
  const rows = yield* observationsByIds(options.bankId, [...new Set(hits.flat().map((hit) => hit.id))])
  const byId = new Map(rows.map((row) => [row.id, row]))
  return hits.map((found) =>
    found.flatMap((hit): Array<StoredObservation & { readonly similarity: number }> => {
      const row = byId.get(hit.id)
      return row === undefined ? [] : [{ ...row, similarity: hit.score }]
    })
  )
})

/** Whether two tag lists are equal as PostgreSQL compares arrays (`o.tags = scope`): the same tags in the same order. */
const sameTags = (tags: ReadonlyArray<string>, scope: Scope) =>
  tags.length === scope.length && tags.every((tag, index) => tag === scope[index])
