/**
 * Anomalies detected when memories are written (contradictions, inconsistencies, flaws in causal chains) and
 * the corrections applied for them: the request and response shapes of the anomaly routes.
 */
import { Schema } from "effect"

export const AnomalyStatus = Schema.Literals(["open", "acknowledged", "resolved", "suppressed"])
export type AnomalyStatus = typeof AnomalyStatus.Type

/** Every type a client may filter on; the pattern types are the reference's and are not detected here. */
export const AnomalyType = Schema.Literals([
  "contradiction",
  "temporal_inconsistency",
  "entity_inconsistency",
  "flaw_circular",
  "flaw_temporal_violation",
  "flaw_missing_step",
  "flaw_unsupported_opinion",
  "pattern_anti_pattern",
  "pattern_violation"
])
export type AnomalyType = typeof AnomalyType.Type

const Nullable = Schema.NullOr(Schema.String)
const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

export const AnomalyCorrectionResponse = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.String,
  anomaly_id: Schema.String,
  correction_type: Schema.String,
  target_unit_id: Nullable,
  before_state: JsonObject,
  after_state: JsonObject,
  confidence_delta: Schema.NullOr(Schema.Number),
  applied_at: Schema.String,
  applied_by: Schema.String
}).annotate({ identifier: "AnomalyCorrectionResponse" })
export type AnomalyCorrectionResponse = typeof AnomalyCorrectionResponse.Type

export const AnomalyEventResponse = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.String,
  anomaly_type: Schema.String,
  severity: Schema.Number,
  status: AnomalyStatus,
  unit_ids: Schema.Array(Schema.String),
  entity_ids: Schema.Array(Schema.String),
  description: Schema.String,
  metadata: JsonObject,
  detected_at: Schema.String,
  resolved_at: Nullable,
  resolved_by: Nullable,
  note: Nullable.annotate({ description: "The note given with the last acknowledge, resolve or suppress" }),
  corrections: Schema.Array(AnomalyCorrectionResponse)
}).annotate({ identifier: "AnomalyEventResponse" })
export type AnomalyEventResponse = typeof AnomalyEventResponse.Type

export const AnomalySummary = Schema.Struct({
  total_events: Schema.Int,
  open_events: Schema.Int,
  resolved_events: Schema.Int,
  avg_severity: Schema.Number,
  by_type: Schema.Record(Schema.String, Schema.Int)
}).annotate({ identifier: "AnomalySummary" })

export const AnomalyIntelligenceRequest = Schema.Struct({
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })).annotate({
      description: "How many events to return, newest first (1-200, default 50)"
    })
  ),
  status: Schema.optionalKey(Schema.NullOr(AnomalyStatus)),
  anomaly_types: Schema.optionalKey(Schema.NullOr(Schema.Array(AnomalyType))),
  min_severity: Schema.optionalKey(
    Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({
      description: "Only events at least this severe (0-1, default 0)"
    })
  )
}).annotate({ identifier: "AnomalyIntelligenceRequest" })
export type AnomalyIntelligenceRequest = typeof AnomalyIntelligenceRequest.Type

export const AnomalyIntelligenceResponse = Schema.Struct({
  summary: AnomalySummary.annotate({ description: "Over every event of the bank, whatever the filters" }),
  events: Schema.Array(AnomalyEventResponse),
  total_events_in_response: Schema.Int
}).annotate({ identifier: "AnomalyIntelligenceResponse" })
export type AnomalyIntelligenceResponse = typeof AnomalyIntelligenceResponse.Type

export const AnomalyNoteRequest = Schema.Struct({
  note: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(2000))))
}).annotate({ identifier: "AnomalyNoteRequest" })
export type AnomalyNoteRequest = typeof AnomalyNoteRequest.Type

/** What a user can do with an event, and the status each action leaves it in. */
export const anomalyActions = { acknowledge: "acknowledged", resolve: "resolved", suppress: "suppressed" } as const
export type AnomalyAction = keyof typeof anomalyActions
