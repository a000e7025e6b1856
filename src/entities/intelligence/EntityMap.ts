/**
 * The deterministic half of entity intelligence: who and what the bank knows about (entities by mentions, with
 * their category, circle, current state and forecast from their trajectory, and latest facts), how they relate
 * (entities named in the same facts), and the open anomalies that touch them. The result is both the offline
 * report's source and the language model's only input, so a model can say nothing the bank does not hold.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { liveAt } from "../../memory/forgetting/Expiry.ts"
import { categorize, type Category, type Circle, circleOf } from "./EntityCategories.ts"

export const mapVersion = "entity-map-v1"
const maxEntities = 2000
const maxRelationships = 160
const previewChars = 180

export interface MapEntity {
  readonly id: string
  readonly name: string
  readonly category: Category
  readonly circle: Circle
  readonly mentions: number
  readonly first_seen: string | null
  readonly last_seen: string | null
  readonly state?: string
  readonly anomaly_score?: number
  readonly forecast?: string
  readonly recent?: ReadonlyArray<string>
}

export interface MapRelationship {
  readonly a: string
  readonly a_category: Category
  readonly b: string
  readonly b_category: Category
  readonly count: number
  readonly last: string | null
}

export interface MapAnomaly {
  readonly type: string
  readonly severity: number
  readonly description: string
  readonly entities: ReadonlyArray<string>
}

export interface EntityContext {
  readonly source_entity_count: number
  readonly included_entity_count: number
  readonly omitted_entity_count: number
  readonly map_version: string
  readonly compaction?: string
  readonly digital_person_map: {
    readonly category_counts: Record<string, number>
    readonly circles: Record<string, ReadonlyArray<string>>
    readonly strong_relationships: ReadonlyArray<MapRelationship>
    readonly cross_circle_relationships: ReadonlyArray<MapRelationship>
  }
  readonly entities: ReadonlyArray<MapEntity>
  readonly open_anomalies: ReadonlyArray<MapAnomaly>
}

const day = (date: Date | null) => (date === null ? null : date.toISOString().slice(0, 10))

const topForecast = (distribution: Record<string, number> | null) =>
  distribution === null
    ? undefined
    : Object.entries(distribution).sort((a, b) => b[1] - a[1]).slice(0, 2)
      .map(([state, p]) => `${state}:${p.toFixed(2)}`).join(",")

export const loadEntityMap = Effect.fn("EntityMap.load")(function*(bankId: string) {
  const sql = yield* SqlClient.SqlClient
  const [total] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM entities WHERE bank_id = ${bankId}`
  const rows = yield* sql<{
    id: string
    canonicalName: string
    entityType: string | null
    mentionCount: number
    firstSeen: Date | null
    lastSeen: Date | null
    currentState: string | null
    anomalyScore: number | null
    forecastDistribution: Record<string, number> | null
  }>`SELECT e.id, e.canonical_name, e.entity_type, e.mention_count, e.first_seen, e.last_seen,
      t.current_state, t.anomaly_score, t.forecast_distribution
    FROM entities e LEFT JOIN entity_trajectories t ON t.bank_id = e.bank_id AND t.entity_id = e.id
    WHERE e.bank_id = ${bankId}
    ORDER BY e.mention_count DESC, e.last_seen DESC NULLS LAST, e.canonical_name, e.id
    LIMIT ${maxEntities}`
  const ids = rows.map((row) => row.id)
  // The two newest facts per entity, read in one statement for the entities shown.
  const recent = ids.length === 0 ? [] : yield* sql<{ entityId: string; text: string }>`
    SELECT entity_id, text FROM (
      SELECT ue.entity_id, left(u.text, ${previewChars}) AS text,
        row_number() OVER (PARTITION BY ue.entity_id ORDER BY coalesce(u.occurred_start, u.mentioned_at, u.created_at) DESC, u.seq DESC) AS n
      FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
      WHERE u.bank_id = ${bankId} AND u.fact_type IN ('world', 'experience') AND ${liveAt(sql, "u", new Date())}
        AND ue.entity_id IN ${sql.in(ids.slice(0, 200))}
    ) ranked WHERE n <= 2 ORDER BY entity_id, n`
  const pairs = yield* sql<{ a: string; b: string; count: number; last: Date | null }>`
    SELECT x.entity_id AS a, y.entity_id AS b, count(*)::int AS count,
      max(coalesce(u.occurred_start, u.mentioned_at, u.created_at)) AS last
    FROM unit_entities x JOIN unit_entities y ON y.unit_id = x.unit_id AND x.entity_id < y.entity_id
    JOIN memory_units u ON u.id = x.unit_id
    WHERE u.bank_id = ${bankId} AND u.fact_type IN ('world', 'experience') AND ${liveAt(sql, "u", new Date())}
    GROUP BY x.entity_id, y.entity_id
    ORDER BY count(*) DESC, max(coalesce(u.occurred_start, u.mentioned_at, u.created_at)) DESC, x.entity_id, y.entity_id
    LIMIT ${maxRelationships}`
  const anomalyTable = yield* sql<{ present: boolean }>`SELECT to_regclass('anomaly_events') IS NOT NULL AS present`
  const anomalies = anomalyTable[0]?.present === true
    ? yield* sql<{ anomalyType: string; severity: number; description: string; entityIds: Array<string> }>`
      SELECT anomaly_type, severity, description, entity_ids FROM anomaly_events
      WHERE bank_id = ${bankId} AND status = 'open' ORDER BY severity DESC, detected_at DESC LIMIT 40`
    : []
  return buildContext(
    total?.count ?? 0,
    rows.map((row) => ({
      id: row.id,
      name: row.canonicalName.slice(0, 120),
      entityType: row.entityType,
      mentions: row.mentionCount,
      firstSeen: row.firstSeen,
      lastSeen: row.lastSeen,
      state: row.currentState,
      anomalyScore: row.anomalyScore,
      forecast: topForecast(row.forecastDistribution),
      recent: recent.filter((fact) => fact.entityId === row.id).map((fact) => fact.text)
    })),
    pairs,
    anomalies
  )
})

interface EntityInput {
  readonly id: string
  readonly name: string
  readonly entityType: string | null
  readonly mentions: number
  readonly firstSeen: Date | null
  readonly lastSeen: Date | null
  readonly state: string | null
  readonly anomalyScore: number | null
  readonly forecast: string | undefined
  readonly recent: ReadonlyArray<string>
}

export const buildContext = (
  sourceCount: number,
  inputs: ReadonlyArray<EntityInput>,
  pairs: ReadonlyArray<{ a: string; b: string; count: number; last: Date | null }>,
  anomalies: ReadonlyArray<
    { anomalyType: string; severity: number; description: string; entityIds: ReadonlyArray<string> }
  >
): EntityContext => {
  const entities: Array<MapEntity> = inputs.map((input) => {
    const category = categorize(input.name, input.entityType)
    return {
      id: input.id,
      name: input.name,
      category,
      circle: circleOf(category, input.mentions),
      mentions: input.mentions,
      first_seen: day(input.firstSeen),
      last_seen: day(input.lastSeen),
      ...(input.state === null ? {} : { state: input.state }),
      ...(input.anomalyScore === null ? {} : { anomaly_score: Number(input.anomalyScore.toFixed(3)) }),
      ...(input.forecast === undefined ? {} : { forecast: input.forecast }),
      ...(input.recent.length === 0 ? {} : { recent: input.recent })
    }
  })
  const byId = new Map(entities.map((entity) => [entity.id, entity]))
  const relationships: Array<MapRelationship> = pairs.flatMap((pair) => {
    const a = byId.get(pair.a)
    const b = byId.get(pair.b)
    return a === undefined || b === undefined
      ? []
      : [{
        a: a.name,
        a_category: a.category,
        b: b.name,
        b_category: b.category,
        count: pair.count,
        last: day(pair.last)
      }]
  })
  const categoryCounts: Record<string, number> = {}
  const circles: Record<string, Array<string>> = {}
  for (const entity of entities) {
    categoryCounts[entity.category] = (categoryCounts[entity.category] ?? 0) + 1
    const members = circles[entity.circle] ?? (circles[entity.circle] = [])
    if (members.length < 10) members.push(entity.name)
  }
  return {
    source_entity_count: sourceCount,
    included_entity_count: entities.length,
    omitted_entity_count: Math.max(0, sourceCount - entities.length),
    map_version: mapVersion,
    digital_person_map: {
      category_counts: categoryCounts,
      circles,
      strong_relationships: relationships.slice(0, 40),
      cross_circle_relationships: relationships.filter((r) => r.a_category !== r.b_category).slice(0, 24)
    },
    entities,
    open_anomalies: anomalies.map((anomaly) => ({
      type: anomaly.anomalyType,
      severity: Number(anomaly.severity.toFixed(3)),
      description: anomaly.description.slice(0, 300),
      entities: anomaly.entityIds.flatMap((id) => byId.get(id)?.name ?? [])
    }))
  }
}

/** Rough token count of the context as the model sees it (compact JSON, ~4 characters a token). */
const tokensOf = (context: EntityContext) => Math.ceil(JSON.stringify(context).length / 4)

/** Fits the context into the budget: first fact previews go, then forecasts, then the least-mentioned entities. */
export const fitToBudget = (context: EntityContext, maxTokens: number, minEntities: number): EntityContext => {
  if (tokensOf(context) <= maxTokens) return context
  const noRecent = {
    ...context,
    compaction: "dropped_recent_fact_previews",
    entities: context.entities.map(({ recent: _, ...e }) => e)
  }
  if (tokensOf(noRecent) <= maxTokens) return noRecent
  const noForecast = {
    ...noRecent,
    compaction: "dropped_recent_fact_previews_and_forecasts",
    entities: noRecent.entities.map(({ forecast: _, ...e }) => e)
  }
  if (tokensOf(noForecast) <= maxTokens) return noForecast
  const entities = [...noForecast.entities]
  const perEntity = Math.max(1, Math.ceil(tokensOf(noForecast) / Math.max(1, entities.length)))
  const over = tokensOf(noForecast) - maxTokens
  entities.splice(Math.max(minEntities, entities.length - Math.ceil(over / perEntity)))
  return {
    ...noForecast,
    compaction: "truncated_lowest_signal_entities",
    included_entity_count: entities.length,
    omitted_entity_count: noForecast.source_entity_count - entities.length,
    entities
  }
}

/** Stable over key order: the same bank state always hashes the same. */
export const snapshotHash = (context: EntityContext) => {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : typeof value === "object" && value !== null
      ? Object.fromEntries(
        Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])
      )
      : value
  return createHash("sha256").update(JSON.stringify(canonical(context))).digest("hex").slice(0, 32)
}
