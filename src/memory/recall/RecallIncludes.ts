/**
 * The optional parts of a recall response, each within its own token budget: the entities of the results with
 * their observations, the chunks the results came from, and the source facts of observation results.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { RecallResult } from "../../domain/Recall.ts"
import { toUnitView, type UnitRow } from "../UnitRow.ts"
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

/** An entity the results name and one of the bank's observations about it (none: `text` null). */
export interface EntityObservationRow {
  readonly id: string
  readonly canonicalName: string
  readonly text: string | null
  readonly mentionedAt: Date | null
}

/** What the include reads per entity name: the entity and its latest observations. */
export type EntityObservationReader = (
  names: ReadonlyArray<string>
) => Effect.Effect<ReadonlyArray<EntityObservationRow>>

/** At most this many observations are read for all the entities of one recall together. */
export const entityObservationLimit = 200

/**
 * Observations are read from the bank's observations (an index range), not from every fact that mentions the
 * entities: a popular entity is mentioned by thousands of facts.
 */
export const entityObservationsInSql = (bankId: string, names: ReadonlyArray<string>, now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<EntityObservationRow>`
      WITH picked AS (SELECT id, canonical_name FROM entities WHERE bank_id = ${bankId} AND canonical_name IN ${
      sql.in(names)
    })
      SELECT p.id, p.canonical_name, o.text, o.mentioned_at FROM picked p LEFT JOIN (
        SELECT ue.entity_id, u.text, coalesce(u.mentioned_at, u.created_at) AS mentioned_at
        FROM memory_units u JOIN unit_entities ue ON ue.unit_id = u.id
        WHERE u.bank_id = ${bankId} AND u.fact_type = 'observation' AND ue.entity_id IN (SELECT id FROM picked)
          AND (u.expires_at IS NULL OR u.expires_at > ${now})
        ORDER BY coalesce(u.mentioned_at, u.created_at) DESC
        LIMIT ${entityObservationLimit}) o ON o.entity_id = p.id
      ORDER BY o.mentioned_at DESC NULLS LAST`
  })

/**
 * The entities the results mention, most mentioned first (then by name), each with the bank's latest
 * observations about it, within `maxTokens`. Mentions are counted from the names the results already carry
 * (a name is unique in its bank), so one read finds the entities and their observations.
 */
export const includeEntities = Effect.fn("Recall.includeEntities")(function*(
  read: EntityObservationReader,
  results: ReadonlyArray<RecallResult>,
  maxTokens: number
) {
  const mentions = new Map<string, number>()
  for (const result of results) {
    for (const name of result.entities ?? []) mentions.set(name, (mentions.get(name) ?? 0) + 1)
  }
  if (mentions.size === 0) return {}
  const names = [...mentions.keys()].sort((x, y) => mentions.get(y)! - mentions.get(x)! || (x < y ? -1 : x > y ? 1 : 0))
  const rows = yield* read(names)
  const byName = new Map<string, { id: string; observations: Array<{ text: string; mentionedAt: Date | null }> }>()
  for (const row of rows) {
    const entry = byName.get(row.canonicalName) ?? { id: row.id, observations: [] }
    byName.set(row.canonicalName, entry)
    if (row.text !== null) entry.observations.push({ text: row.text, mentionedAt: row.mentionedAt })
  }
  const out: Record<
    string,
    { canonical_name: string; entity_id: string; observations: Array<{ text: string; mentioned_at: string | null }> }
  > = {}
  let used = 0
  for (const name of names) {
    const entity = byName.get(name)
    if (entity === undefined) continue
    const nameCost = countTokens(name) + 2
    if (used + nameCost > maxTokens) break
    used += nameCost
    const entry = {
      canonical_name: name,
      entity_id: entity.id,
      observations: [] as Array<{ text: string; mentioned_at: string | null }>
    }
    for (const observation of entity.observations) {
      const cost = countTokens(observation.text)
      if (used + cost > maxTokens) break
      used += cost
      entry.observations.push({ text: observation.text, mentioned_at: iso(observation.mentionedAt) })
    }
    out[name] = entry
  }
  return out
})

export interface ChunkRow {
  readonly id: string
  readonly chunkIndex: number
  readonly text: string
}

/** Chunks by id (any order; unknown ids are left out). */
export type ChunkReader = (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ChunkRow>>

export const chunksInSql = (ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<ChunkRow>`SELECT id, chunk_index, text FROM chunks WHERE id IN ${sql.in(ids)}`
  })

export const includeChunks = Effect.fn("Recall.includeChunks")(function*(
  read: ChunkReader,
  results: ReadonlyArray<RecallResult>,
  maxTokens: number
) {
  const ids = [...new Set(results.map((result) => result.chunk_id).filter((id): id is string => id !== null))]
  if (ids.length === 0) return {}
  const rows = yield* read(ids)
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
  if (ids.length === 0) return { facts: {}, truncated: false }
  const rows = yield* select(ids).pipe(Effect.orDie)
  const byId = new Map(rows.map((row) => [row.id, toUnitView(row)]))
  const chosen: Array<string> = []
  for (const list of perObservation) {
    const facts = list.map((id) => byId.get(id)).filter((fact) => fact !== undefined)
    chosen.push(
      ...withinTokens(facts, (fact) => countTokens(fact.text), options.maxTokensPerObservation).map((f) => f.id)
    )
  }
  const unique = [...new Set(chosen)].map((id) => byId.get(id)!)
  const kept = withinTokens(unique, (fact) => countTokens(fact.text), options.maxTokens)
  return {
    facts: Object.fromEntries(kept.map((fact) => [fact.id, toRecallResult(fact)])),
    // A budget left out a fact that exists; ids of facts deleted since are missing without being cut.
    truncated: kept.length < byId.size
  }
})

export const toRecallResult = (
  view: ReturnType<typeof toUnitView>,
  score?: number,
  scores?: RecallResult["scores"]
): RecallResult => ({
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
  ...(score === undefined ? {} : { score }),
  ...(scores === undefined ? {} : { scores }),
  ...(view.superseded_by ? { superseded_by: view.superseded_by } : {})
})
