/**
 * Read-only aggregates of a bank for dashboards: memories ingested over a period in fixed buckets by fact type,
 * the entity co-occurrence graph (entities named by the same fact), and the bank's observation scopes (the
 * distinct tag sets observations were consolidated under) with their sizes.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { NotFound } from "../domain/Errors.ts"
import type { TimeseriesField, TimeseriesPeriod } from "../domain/MemoryOps.ts"
import { liveAt } from "./forgetting/Expiry.ts"

type Trunc = "minute" | "hour" | "day"

/** Each period as its bucket size and count: always fully padded, the last bucket holding now. */
const periods: Record<TimeseriesPeriod, { readonly trunc: Trunc; readonly count: number }> = {
  "1h": { trunc: "minute", count: 60 },
  "12h": { trunc: "hour", count: 12 },
  "1d": { trunc: "hour", count: 24 },
  "7d": { trunc: "day", count: 7 },
  "30d": { trunc: "day", count: 30 },
  "90d": { trunc: "day", count: 90 }
}
const stepMs: Record<Trunc, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 }

export interface Timeseries {
  readonly bank_id: string
  readonly period: TimeseriesPeriod
  readonly trunc: Trunc
  readonly time_field: TimeseriesField
  readonly buckets: ReadonlyArray<{ time: string; world: number; experience: number; observation: number }>
}

export interface EntityGraph {
  readonly nodes: ReadonlyArray<{ id: string; label: string; entity_type: string | null; mention_count: number }>
  readonly edges: ReadonlyArray<{ source: string; target: string; cooccurrence_count: number }>
  readonly total_entities: number
  readonly total_edges: number
  readonly limit: number
}

export class BankInsights extends Context.Service<BankInsights, {
  readonly timeseries: (
    bankId: string,
    period: TimeseriesPeriod,
    field: TimeseriesField
  ) => Effect.Effect<Timeseries, NotFound>
  readonly entityGraph: (
    bankId: string,
    options: { readonly limit: number; readonly minCount: number }
  ) => Effect.Effect<EntityGraph, NotFound>
  readonly observationScopes: (
    bankId: string
  ) => Effect.Effect<{ readonly scopes: ReadonlyArray<{ tags: ReadonlyArray<string>; count: number }> }, NotFound>
}>()("engram/memory/BankInsights") {
  static readonly layer = Layer.effect(
    BankInsights,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks

      const timeseries = Effect.fn("BankInsights.timeseries")(function*(
        bankId: string,
        period: TimeseriesPeriod,
        field: TimeseriesField
      ) {
        yield* banks.get(bankId)
        const { trunc, count } = periods[period]
        const step = stepMs[trunc]
        const now = yield* Clock.currentTimeMillis
        // Buckets are aligned to UTC minutes, hours or days (epoch multiples of the step).
        const last = Math.floor(now / step) * step
        const first = last - (count - 1) * step
        // Event-time fields fall back to the ingest time for rows that have none.
        const at = sql`coalesce(${sql(field)}, created_at)`
        const rows = yield* sql<{ bucket: number; factType: string; n: number }>`
          SELECT floor(extract(epoch FROM (${at} - ${new Date(first)}::timestamptz)) * 1000 / ${step})::int AS bucket,
            fact_type, count(*)::int AS n
          FROM memory_units
          WHERE bank_id = ${bankId} AND ${at} >= ${new Date(first)}::timestamptz
            AND ${at} < ${new Date(last + step)}::timestamptz
            AND fact_type IN ('world', 'experience', 'observation')
          GROUP BY 1, 2`.pipe(Effect.orDie)
        const buckets = Array.from({ length: count }, (_, index) => ({
          time: new Date(first + index * step).toISOString(),
          world: 0,
          experience: 0,
          observation: 0
        }))
        for (const row of rows) {
          const bucket = buckets[row.bucket]
          if (bucket !== undefined) bucket[row.factType as "world" | "experience" | "observation"] += row.n
        }
        return { bank_id: bankId, period, trunc, time_field: field, buckets }
      })

      const entityGraph = Effect.fn("BankInsights.entityGraph")(function*(
        bankId: string,
        options: { readonly limit: number; readonly minCount: number }
      ) {
        yield* banks.get(bankId)
        // Pairs of entities named by the same fact (observations restate facts, so they would double every pair).
        const pairs = sql`
          SELECT a.entity_id AS source, b.entity_id AS target, count(*)::int AS cooccurrence_count
          FROM memory_units u
          JOIN unit_entities a ON a.unit_id = u.id
          JOIN unit_entities b ON b.unit_id = u.id AND a.entity_id < b.entity_id
          WHERE u.bank_id = ${bankId} AND u.fact_type IN ('world', 'experience') AND ${liveAt(sql, "u", new Date())}
          GROUP BY a.entity_id, b.entity_id
          HAVING count(*) >= ${options.minCount}`
        const [edges, totals] = yield* Effect.all([
          sql<{ source: string; target: string; cooccurrenceCount: number }>`
            SELECT * FROM (${pairs}) p ORDER BY p.cooccurrence_count DESC, p.source, p.target LIMIT ${options.limit}`,
          sql<{ edges: number; entities: number }>`
            SELECT (SELECT count(*)::int FROM (${pairs}) p) AS edges,
              (SELECT count(*)::int FROM entities WHERE bank_id = ${bankId}) AS entities`
        ]).pipe(Effect.orDie)
        const ids = [...new Set(edges.flatMap((edge) => [edge.source, edge.target]))]
        const nodes = ids.length === 0 ? [] : yield* sql<{
          id: string
          canonicalName: string
          entityType: string | null
          mentionCount: number
        }>`SELECT id, canonical_name, entity_type, mention_count FROM entities
          WHERE bank_id = ${bankId} AND id IN ${sql.in(ids)}
          ORDER BY mention_count DESC, canonical_name`.pipe(Effect.orDie)
        return {
          nodes: nodes.map((node) => ({
            id: node.id,
            label: node.canonicalName,
            entity_type: node.entityType,
            mention_count: node.mentionCount
          })),
          edges: edges.map((edge) => ({
            source: edge.source,
            target: edge.target,
            cooccurrence_count: edge.cooccurrenceCount
          })),
          total_entities: totals[0]?.entities ?? 0,
          total_edges: totals[0]?.edges ?? 0,
          limit: options.limit
        }
      })

      const observationScopes = Effect.fn("BankInsights.observationScopes")(function*(bankId: string) {
        yield* banks.get(bankId)
        const rows = yield* sql<{ tags: ReadonlyArray<string> | null; n: number }>`
          SELECT tags, count(*)::int AS n FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type = 'observation' GROUP BY tags`.pipe(Effect.orDie)
        // Tag order is normalised, so [a, b] and [b, a] are one scope.
        const merged = new Map<string, { tags: Array<string>; count: number }>()
        for (const row of rows) {
          const tags = [...new Set(row.tags ?? [])].sort()
          const key = JSON.stringify(tags)
          const scope = merged.get(key) ?? { tags, count: 0 }
          scope.count += row.n
          merged.set(key, scope)
        }
        const scopes = [...merged.values()].sort((a, b) =>
          b.count - a.count || JSON.stringify(a.tags).localeCompare(JSON.stringify(b.tags))
        )
        return { scopes }
      })

      return BankInsights.of({ timeseries, entityGraph, observationScopes })
    })
  )
}
