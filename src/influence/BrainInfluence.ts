/**
 * Influence analytics: which memories, chunks and mental models shape the bank's answers. Each candidate — what
 * reads returned within the window, plus the memories most central in the bank's graph — is scored from five
 * factors: recency of its last access, how often reads returned it, its PageRank in the bank's graph snapshot, the
 * mean rerank score recalls gave it, and how much the window's dream runs drew on it (see DreamSignal). Beside the leaderboard: accesses on
 * a 7×24 weekday/hour heatmap and a daily trend with its EWMA, band and anomalies. Reads only; it never writes.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankBrains } from "../brain/BankBrains.ts"
import { Banks } from "../bank/Banks.ts"
import type { BrainInfluenceResponse, InfluenceEntityType } from "../domain/BrainInfluence.ts"
import type { NotFound } from "../domain/Errors.ts"
import { AccessTelemetry } from "../activity/AccessTelemetry.ts"
import { type Centrality, pageRank } from "./GraphCentrality.ts"
import { type DreamSignal, dreamSignal } from "./DreamSignal.ts"
import { anomalies, bands, ewma } from "./InfluenceSeries.ts"
import { influenceFrequencySaturation, influenceRecencyDays, influenceWeights } from "./InfluenceScore.ts"

const noDreams: DreamSignal = { byItem: new Map(), runs: 0, averageQuality: 0 }

const weights = influenceWeights
const recencyDays = influenceRecencyDays
const frequencySaturation = influenceFrequencySaturation
/** Memories taken from the top of the graph ranking as candidates, beside the ones reads returned. */
const centralCandidates = 50
const accessedCandidates = 500
const textLength = 180
const dayMs = 86_400_000

export interface InfluenceOptions {
  readonly windowDays: number
  readonly topK: number
  readonly entityType: InfluenceEntityType
}

interface AccessedRow {
  readonly itemType: string
  readonly itemId: string
  readonly accesses: number
  readonly lastAccessedAt: Date
  readonly meanScore: number | null
}

interface ItemRow {
  readonly id: string
  readonly type: string
  readonly text: string
  readonly createdAt: Date
}

const clamp01 = (value: number) => Math.min(1, Math.max(0, value))
const round = (value: number) => Number(value.toFixed(6))

export class BrainInfluence extends Context.Service<BrainInfluence, {
  readonly analytics: (bankId: string, options: InfluenceOptions) => Effect.Effect<BrainInfluenceResponse, NotFound>
}>()("engram/influence/BrainInfluence") {
  static readonly layer = Layer.effect(
    BrainInfluence,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const brains = yield* BankBrains
      const telemetry = yield* AccessTelemetry
      // PageRank is recomputed only when the bank's memories changed (its brain generation moved).
      const centralities = new Map<string, { readonly generation: number; readonly centrality: Centrality }>()

      const centralityOf = (bankId: string) =>
        Effect.gen(function*() {
          const generation = yield* brains.generation(bankId)
          const cached = centralities.get(bankId)
          if (cached !== undefined && cached.generation === generation) return cached.centrality
          // While the bank's breaker is open there is no graph to rank: the graph factor is 0 for every memory.
          const brain = yield* brains.available(bankId)
          if (Option.isNone(brain)) return null
          const centrality = yield* pageRank(brain.value.graph)
          centralities.set(bankId, { generation: yield* brains.generation(bankId), centrality })
          return centrality
        })

      const typeFilter = (entityType: InfluenceEntityType) =>
        entityType === "all" ? sql`TRUE` : sql`item_type = ${entityType}`

      const accessed = (bankId: string, since: Date, entityType: InfluenceEntityType) =>
        sql<AccessedRow>`
          SELECT item_type, item_id, count(DISTINCT access_id)::int AS accesses, max(accessed_at) AS last_accessed_at,
            avg(score)::float8 AS mean_score
          FROM memory_access_events
          WHERE bank_id = ${bankId} AND accessed_at >= ${since} AND ${typeFilter(entityType)}
          GROUP BY item_type, item_id
          ORDER BY accesses DESC, last_accessed_at DESC
          LIMIT ${accessedCandidates}`

      const among = (ids: ReadonlyArray<string>) => ids.length === 0 ? sql`FALSE` : sql`id IN ${sql.in(ids)}`

      const items = (
        bankId: string,
        memoryIds: ReadonlyArray<string>,
        chunkIds: ReadonlyArray<string>,
        modelIds: ReadonlyArray<string>
      ) =>
        sql<ItemRow>`
          SELECT id, fact_type AS type, text, created_at FROM memory_units
          WHERE bank_id = ${bankId} AND ${among(memoryIds)}
          UNION ALL
          SELECT id, 'chunk', text, created_at FROM chunks WHERE bank_id = ${bankId} AND ${among(chunkIds)}
          UNION ALL
          SELECT id, 'mental_model', name, created_at FROM mental_models
          WHERE bank_id = ${bankId} AND ${among(modelIds)}`

      /** One event per read (a read returning ten memories is one access), by UTC weekday and hour and by day. */
      const readTimes = (bankId: string, since: Date, entityType: InfluenceEntityType) =>
        sql<{ weekday: number; hour: number; day: string; n: number }>`
          SELECT (extract(isodow FROM at AT TIME ZONE 'UTC')::int - 1) AS weekday,
            extract(hour FROM at AT TIME ZONE 'UTC')::int AS hour,
            to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n
          FROM (SELECT min(accessed_at) AS at FROM memory_access_events
                WHERE bank_id = ${bankId} AND accessed_at >= ${since} AND ${typeFilter(entityType)}
                GROUP BY access_id) reads
          GROUP BY 1, 2, 3`

      const analytics = Effect.fn("BrainInfluence.analytics")(function*(bankId: string, options: InfluenceOptions) {
        yield* banks.get(bankId)
        // What reads just recorded is written first, so the answer includes them.
        yield* telemetry.writeBufferedOf(bankId)
        const now = yield* Clock.currentTimeMillis
        const today = Math.floor(now / dayMs) * dayMs
        const firstDay = today - (options.windowDays - 1) * dayMs
        const since = new Date(firstDay)
        const withMemories = options.entityType === "all" || options.entityType === "memory"

        const [rows, times, centrality] = yield* Effect.all([
          accessed(bankId, since, options.entityType),
          readTimes(bankId, since, options.entityType),
          withMemories ? centralityOf(bankId) : Effect.succeed(null)
        ])
        const byId = new Map(rows.map((row) => [`${row.itemType}:${row.itemId}`, row]))
        const memoryIds = new Set(rows.filter((row) => row.itemType === "memory").map((row) => row.itemId))
        for (const id of centrality?.top(centralCandidates) ?? []) memoryIds.add(id)
        const chunkIds = rows.filter((row) => row.itemType === "chunk").map((row) => row.itemId)
        const modelIds = rows.filter((row) => row.itemType === "mental_model").map((row) => row.itemId)
        // Memories dream runs leaned on are candidates too, accessed or not.
        const dreams = withMemories
          ? yield* dreamSignal(bankId, since).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          : noDreams
        for (const id of dreams.byItem.keys()) memoryIds.add(id)
        const found = yield* items(bankId, [...memoryIds], chunkIds, modelIds)

        const scored = found.flatMap((item) => {
          const kind = item.type === "chunk" || item.type === "mental_model" ? item.type : "memory"
          // Observations and opinions are memories too: `memory` means anything that is not a chunk or a model.
          if (options.entityType !== "all" && options.entityType !== kind) return []
          const access = byId.get(`${kind}:${item.id}`)
          const last = access?.lastAccessedAt ?? item.createdAt
          const ageDays = Math.max(0, (now - new Date(last).getTime()) / dayMs)
          const features = {
            recency: Math.exp(-ageDays / recencyDays),
            freq: clamp01((access?.accesses ?? 0) / frequencySaturation),
            graph: kind === "memory" && centrality !== null ? centrality.of(item.id) : 0,
            rerank: clamp01(access?.meanScore ?? 0),
            dream: clamp01(dreams.byItem.get(item.id) ?? 0)
          }
          const contribution = {
            recency: round(weights.recency * features.recency),
            freq: round(weights.freq * features.freq),
            graph: round(weights.graph * features.graph),
            rerank: round(weights.rerank * features.rerank),
            dream: round(weights.dream * features.dream)
          }
          const score = round(
            contribution.recency + contribution.freq + contribution.graph + contribution.rerank +
              contribution.dream
          )
          return [{
            id: item.id,
            type: item.type,
            text: item.text.slice(0, textLength),
            access_count: access?.accesses ?? 0,
            influence_score: score,
            contribution,
            last_accessed_at: access === undefined ? null : new Date(access.lastAccessedAt).toISOString()
          }]
        })
        scored.sort((a, b) =>
          b.influence_score - a.influence_score || b.access_count - a.access_count ||
          a.id.localeCompare(b.id)
        )
        const leaderboard = scored.slice(0, options.topK)

        const cells = new Map<string, number>()
        const perDay = new Map<string, number>()
        let accessEvents = 0
        for (const row of times) {
          cells.set(`${row.weekday}:${row.hour}`, (cells.get(`${row.weekday}:${row.hour}`) ?? 0) + row.n)
          perDay.set(row.day, (perDay.get(row.day) ?? 0) + row.n)
          accessEvents += row.n
        }
        const busiestCell = Math.max(0, ...cells.values())
        const heatmap = Array.from({ length: 7 * 24 }, (_, cell) => {
          const weekday = Math.floor(cell / 24)
          const hour = cell % 24
          const count = cells.get(`${weekday}:${hour}`) ?? 0
          return { weekday, hour_utc: hour, count, score: busiestCell === 0 ? 0 : round(count / busiestCell) }
        })

        const days = Array.from(
          { length: options.windowDays },
          (_, i) => new Date(firstDay + i * dayMs).toISOString().slice(0, 10)
        )
        const counts = days.map((day) => perDay.get(day) ?? 0)
        const busiestDay = Math.max(0, ...counts)
        const raw = counts.map((count) => busiestDay === 0 ? 0 : count / busiestDay)
        const smoothed = ewma(raw)
        const band = bands(smoothed)
        const trend = days.map((day, index) => ({
          index,
          day,
          raw: round(raw[index]!),
          ewma: round(smoothed[index]!),
          lower: round(band[index]!.lower),
          upper: round(band[index]!.upper)
        }))
        const unusual = anomalies(raw).map((found) => ({
          index: found.index,
          day: days[found.index]!,
          score: round(raw[found.index]!),
          zscore: found.zscore,
          iqr: found.iqr
        }))

        return {
          bank_id: bankId,
          window_days: options.windowDays,
          entity_type: options.entityType,
          leaderboard,
          heatmap,
          trend,
          anomalies: unusual,
          summary: {
            entity_count: scored.length,
            access_events: accessEvents,
            dream_runs: dreams.runs,
            avg_dream_quality: dreams.averageQuality,
            top_influence: leaderboard[0]?.influence_score ?? 0,
            graph_metric: "pagerank"
          }
        } satisfies BrainInfluenceResponse
      }, (effect) => effect.pipe(Effect.catchTag("SqlError", Effect.die)))

      return BrainInfluence.of({ analytics })
    })
  )
}
