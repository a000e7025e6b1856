/**
 * The optional parts of a recall response, each within its own token budget: the entities of the results with
 * their observations, the chunks the results came from, and the source facts of observation results.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { RecallResult } from "../../domain/Recall.ts"
import { toUnitView, type UnitRow } from "../MemoryUnits.ts"
import { countTokens } from "../retain/Tokens.ts"
import { isoOrNull as iso } from "../../domain/IsoTime.ts"


/** Takes items in order while their token cost fits; -1 means unlimited. */
export const withinTokens = <A>(items: ReadonlyArray<A>, cost: (item: A) => number, limit: number): Array<A> => {
  if (limit < 0) return [...items]
  const kept: Array<A> = []
  let used = 0
  for (const item of items) {
    const tokens = cost(item)
    if (used + tokens > limit) break
    used += tokens
    kept.push(item)
  }
  return kept
}

export const includeEntities = Effect.fn("Recall.includeEntities")(function*(
  bankId: string,
  results: ReadonlyArray<RecallResult>,
  maxTokens: number
) {
  const sql = yield* SqlClient.SqlClient
  const ids = results.map((result) => result.id)
  if (ids.length === 0) return {}
  const entities = yield* sql<{ id: string; canonicalName: string; mentions: number }>`
    SELECT e.id, e.canonical_name, count(*)::int AS mentions
    FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
    WHERE ue.unit_id IN ${sql.in(ids)} AND e.bank_id = ${bankId}
    GROUP BY e.id, e.canonical_name ORDER BY mentions DESC, e.canonical_name`
  // From the bank's observations (an index range), not from every fact that mentions the entities.
  const observations = entities.length === 0 ? [] : yield* sql<{ entityId: string; text: string; mentionedAt: Date | null }>`
    SELECT ue.entity_id, u.text, coalesce(u.mentioned_at, u.created_at) AS mentioned_at
    FROM memory_units u JOIN unit_entities ue ON ue.unit_id = u.id
    WHERE u.bank_id = ${bankId} AND u.fact_type = 'observation'
      AND ue.entity_id IN ${sql.in(entities.map((entity) => entity.id))}
    ORDER BY coalesce(u.mentioned_at, u.created_at) DESC
    LIMIT 200`
  const out: Record<string, { canonical_name: string; entity_id: string; observations: Array<{ text: string; mentioned_at: string | null }> }> = {}
  let used = 0
  for (const entity of entities) {
    const nameCost = countTokens(entity.canonicalName) + 2
    if (used + nameCost > maxTokens) break
    used += nameCost
    const entry = { canonical_name: entity.canonicalName, entity_id: entity.id, observations: [] as Array<{ text: string; mentioned_at: string | null }> }
    for (const observation of observations.filter((o) => o.entityId === entity.id)) {
      const cost = countTokens(observation.text)
      if (used + cost > maxTokens) break
      used += cost
      entry.observations.push({ text: observation.text, mentioned_at: iso(observation.mentionedAt) })
    }
    out[entity.canonicalName] = entry
  }
  return out
})

export const includeChunks = Effect.fn("Recall.includeChunks")(function*(
  results: ReadonlyArray<RecallResult>,
  maxTokens: number
) {
  const sql = yield* SqlClient.SqlClient
  const ids = [...new Set(results.map((result) => result.chunk_id).filter((id): id is string => id !== null))]
  if (ids.length === 0) return {}
  const rows = yield* sql<{ id: string; chunkIndex: number; text: string }>`
    SELECT id, chunk_index, text FROM chunks WHERE id IN ${sql.in(ids)}`
  const byId = new Map(rows.map((row) => [row.id, row]))
  const ordered = ids.map((id) => byId.get(id)).filter((row) => row !== undefined)
  return Object.fromEntries(
    withinTokens(ordered, (row) => countTokens(row.text), maxTokens)
      .map((row) => [row.id, { id: row.id, chunk_index: row.chunkIndex, text: row.text }])
  )
})

export const includeSourceFacts = Effect.fn("Recall.includeSourceFacts")(function*(
  results: ReadonlyArray<RecallResult>,
  options: { readonly maxTokens: number; readonly maxTokensPerObservation: number },
  select: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<UnitRow>, unknown>
) {
  const perObservation = results
    .filter((result) => result.type === "observation" && result.source_fact_ids !== null)
    .map((result) => result.source_fact_ids ?? [])
  const ids = [...new Set(perObservation.flat())]
  if (ids.length === 0) return {}
  const rows = yield* select(ids).pipe(Effect.orDie)
  const byId = new Map(rows.map((row) => [row.id, toUnitView(row)]))
  const chosen: Array<string> = []
  for (const list of perObservation) {
    const facts = list.map((id) => byId.get(id)).filter((fact) => fact !== undefined)
    chosen.push(...withinTokens(facts, (fact) => countTokens(fact.text), options.maxTokensPerObservation).map((f) => f.id))
  }
  const unique = [...new Set(chosen)].map((id) => byId.get(id)!)
  return Object.fromEntries(
    withinTokens(unique, (fact) => countTokens(fact.text), options.maxTokens).map((fact) => [fact.id, toRecallResult(fact)])
  )
})

export const toRecallResult = (view: ReturnType<typeof toUnitView>, score?: number): RecallResult => ({
  id: view.id,
  text: view.text,
  type: view.type,
  entities: view.entities,
  context: view.context,
  occurred_start: view.occurred_start,
  occurred_end: view.occurred_end,
  mentioned_at: view.mentioned_at,
  document_id: view.document_id,
  metadata: view.metadata,
  chunk_id: view.chunk_id,
  tags: view.tags,
  source_fact_ids: view.source_fact_ids,
  ...(score === undefined ? {} : { score })
})
