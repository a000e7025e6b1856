/** Influence analytics as clients see it: the leaderboard, its 7×24 heatmap, the daily trend and its anomalies. */
import { Schema } from "effect"

export const influenceEntityTypes = ["all", "memory", "chunk", "mental_model"] as const
export type InfluenceEntityType = typeof influenceEntityTypes[number]

export const InfluenceQuery = {
  window_days: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 90 })).annotate({
      description: "days of access telemetry read, 1-90 (default 14)"
    })
  ),
  top_k: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })).annotate({
      description: "leaderboard rows, 1-100 (default 10)"
    })
  ),
  entity_type: Schema.optionalKey(Schema.Literals(influenceEntityTypes).annotate({ description: "default all" }))
}

export const InfluenceContribution = Schema.Struct({
  recency: Schema.Number,
  freq: Schema.Number,
  graph: Schema.Number,
  rerank: Schema.Number,
  dream: Schema.Number
}).annotate({ identifier: "InfluenceContribution" })

export const InfluenceRow = Schema.Struct({
  id: Schema.String,
  type: Schema.String.annotate({ description: "the memory's fact type, `chunk` or `mental_model`" }),
  text: Schema.String,
  access_count: Schema.Int.annotate({ description: "reads that returned it within the window" }),
  influence_score: Schema.Number,
  contribution: InfluenceContribution.annotate({ description: "each factor's weighted share of the score" }),
  last_accessed_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "InfluenceRow" })

export const InfluenceHeatmapPoint = Schema.Struct({
  weekday: Schema.Int.annotate({ description: "Monday 0 … Sunday 6 (UTC)" }),
  hour_utc: Schema.Int,
  count: Schema.Int,
  score: Schema.Number
}).annotate({ identifier: "InfluenceHeatmapPoint" })

export const InfluenceTrendPoint = Schema.Struct({
  index: Schema.Int,
  day: Schema.String,
  raw: Schema.Number,
  ewma: Schema.Number,
  lower: Schema.Number,
  upper: Schema.Number
}).annotate({ identifier: "InfluenceTrendPoint" })

export const InfluenceAnomaly = Schema.Struct({
  index: Schema.Int,
  day: Schema.String,
  score: Schema.Number,
  zscore: Schema.Number,
  iqr: Schema.Boolean
}).annotate({ identifier: "InfluenceAnomaly" })

export const BrainInfluenceResponse = Schema.Struct({
  bank_id: Schema.String,
  window_days: Schema.Int,
  entity_type: Schema.String,
  leaderboard: Schema.Array(InfluenceRow),
  heatmap: Schema.Array(InfluenceHeatmapPoint),
  trend: Schema.Array(InfluenceTrendPoint),
  anomalies: Schema.Array(InfluenceAnomaly),
  summary: Schema.Struct({
    entity_count: Schema.Int,
    access_events: Schema.Int,
    dream_runs: Schema.Int,
    avg_dream_quality: Schema.Number,
    top_influence: Schema.Number,
    graph_metric: Schema.String
  })
}).annotate({ identifier: "BrainInfluenceResponse" })
export type BrainInfluenceResponse = typeof BrainInfluenceResponse.Type
