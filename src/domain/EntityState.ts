/** The state view of entities as clients see it: one entity's trajectory, the bank's entity intelligence, recompute. */
import { Schema } from "effect"

export const TrajectoryStep = Schema.Struct({
  unit_id: Schema.String,
  state: Schema.String,
  occurred_sort_at: Schema.String,
  fact_preview: Schema.String
}).annotate({ identifier: "TrajectoryStep" })

export const EntityTrajectoryResponse = Schema.Struct({
  entity_id: Schema.String,
  bank_id: Schema.String,
  computed_at: Schema.NullOr(Schema.String),
  state_vocabulary: Schema.Array(Schema.String),
  vocabulary_hash: Schema.String,
  transition_matrix: Schema.Array(Schema.Array(Schema.Number)).annotate({
    description: "Row i: probabilities of moving from state i to each state, in vocabulary order"
  }),
  current_state: Schema.String,
  viterbi_path: Schema.Array(TrajectoryStep),
  forecast_horizon: Schema.Int,
  forecast_distribution: Schema.Record(Schema.String, Schema.Number),
  forward_log_prob: Schema.NullOr(Schema.Number),
  anomaly_score: Schema.NullOr(Schema.Number),
  llm_model: Schema.String,
  prompt_version: Schema.String
}).annotate({ identifier: "EntityTrajectoryResponse" })
export type EntityTrajectoryResponse = typeof EntityTrajectoryResponse.Type

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

export const EntityIntelligenceResponse = Schema.Struct({
  bank_id: Schema.String,
  computed_at: Schema.NullOr(Schema.String),
  entity_count: Schema.Int,
  source_entity_count: Schema.Int,
  entity_snapshot_hash: Schema.String,
  content: Schema.String.annotate({ description: "Markdown" }),
  structured_content: JsonObject,
  entity_context: JsonObject,
  delta_metadata: JsonObject,
  llm_model: Schema.String,
  prompt_version: Schema.String
}).annotate({ identifier: "EntityIntelligenceResponse" })
export type EntityIntelligenceResponse = typeof EntityIntelligenceResponse.Type

export const RecomputeResponse = Schema.Struct({
  operation_id: Schema.String,
  status: Schema.String
}).annotate({ identifier: "RecomputeResponse" })
