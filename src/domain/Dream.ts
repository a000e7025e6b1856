/**
 * Dreams as clients send and receive them: the bank's `dream` settings (validated by schema, so an unknown enum
 * value or an out-of-range number is a 400 naming the field), the trigger, outcome and review bodies, and the run
 * and statistics responses. Element shapes the spec leaves open follow the reference behaviour.
 */
import { Schema } from "effect"

const opt = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))
const int = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const unit = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))

export const DreamTriggerMode = Schema.Literals(["event", "cron", "hybrid"])
export const DreamExperience = Schema.Literals(["hybrid", "structured", "narrative"])
export const PredictionHorizonPolicy = Schema.Literals(["near", "mixed", "far"])
export const DistillationMode = Schema.Literals(["off", "summary", "fragments"])
export const DreamPreset = Schema.Literals(["balanced_org", "lean_local", "risk_guard", "exec_strategy"])
export type DreamPreset = typeof DreamPreset.Type

export const ValueFocusUpdate = Schema.Struct({
  money: opt(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 3 }))),
  time: opt(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 3 }))),
  happiness: opt(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 3 })))
})

/** The `dream` object of a bank update; every key optional, `null` and absent leave the bank's value unchanged. */
export const DreamSettingsUpdate = Schema.Struct({
  enabled: opt(Schema.Boolean),
  trance_enabled: opt(Schema.Boolean),
  trigger_mode: opt(DreamTriggerMode),
  cron_interval_minutes: opt(int(5, 1440)),
  cooldown_minutes: opt(int(5, 1440)),
  top_k: opt(int(1, 8)),
  max_input_tokens: opt(int(128, 4000)),
  max_output_tokens: opt(int(160, 1600)),
  model_preference: opt(Schema.String.check(Schema.isMaxLength(64))),
  dream_experience: opt(DreamExperience),
  prediction_horizon: opt(PredictionHorizonPolicy),
  auto_write_posture: opt(Schema.String.check(Schema.isMaxLength(64))),
  promotion_gate: opt(Schema.String.check(Schema.isMaxLength(64))),
  worker_prompt: opt(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4000))),
  write_distilled_summary: opt(Schema.Boolean),
  distillation_mode: opt(DistillationMode),
  distillation_max_fragments: opt(int(1, 10)),
  quality_threshold: opt(unit),
  min_recall_results: opt(int(1, 8)),
  novelty_threshold: opt(unit),
  validation_lookback_days: opt(int(7, 365)),
  max_pending_predictions: opt(int(1, 200)),
  max_artifact_bytes: opt(int(4000, 120000)),
  language_tone: opt(Schema.String.check(Schema.isMaxLength(64))),
  enforce_layman: opt(Schema.Boolean),
  value_focus: opt(ValueFocusUpdate),
  prompt_template_version: opt(Schema.String.check(Schema.isMaxLength(64))),
  preset: opt(DreamPreset)
}).annotate({ identifier: "DreamSettingsUpdate" })
export type DreamSettingsUpdate = typeof DreamSettingsUpdate.Type

export const DreamRunType = Schema.Literals(["dream", "trance"])
export type DreamRunType = typeof DreamRunType.Type
export const DreamTriggerSource = Schema.Literals(["manual", "event", "cron"])
export type DreamTriggerSource = typeof DreamTriggerSource.Type

export const DreamTriggerRequest = Schema.Struct({
  trigger_source: Schema.optionalKey(DreamTriggerSource),
  run_type: Schema.optionalKey(DreamRunType)
}).annotate({ identifier: "DreamTriggerRequest" })

export const PredictionOutcomeRequest = Schema.Struct({
  status: Schema.Literals(["confirmed", "contradicted", "request_more_evidence"]),
  note: opt(Schema.String.check(Schema.isMaxLength(4000))),
  evidence_ids: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String).check(Schema.isMaxLength(200))))
}).annotate({ identifier: "PredictionOutcomeRequest" })
export type PredictionOutcomeRequest = typeof PredictionOutcomeRequest.Type

export const ProposalReviewRequest = Schema.Struct({
  action: Schema.Literals(["approve", "reject", "request_more_evidence"]),
  note: opt(Schema.String.check(Schema.isMaxLength(4000)))
}).annotate({ identifier: "ProposalReviewRequest" })
export type ProposalReviewRequest = typeof ProposalReviewRequest.Type

const Json = Schema.Record(Schema.String, Schema.Unknown)
const JsonArray = Schema.Array(Schema.Unknown)

export const DreamPredictionView = Schema.Struct({
  id: Schema.String,
  run_id: Schema.String,
  title: Schema.String,
  description: Schema.String,
  target_ref: Schema.NullOr(Schema.String),
  target_kind: Schema.String,
  horizon: Schema.String,
  confidence: Schema.Number,
  success_criteria: Schema.Array(Schema.String),
  expiration_window_days: Schema.Int,
  expires_at: Schema.String,
  status: Schema.String,
  supporting_evidence_ids: Schema.Array(Schema.String),
  validation_notes: Schema.NullOr(Schema.String),
  resolved_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotate({ identifier: "DreamPrediction" })

export const DreamProposalView = Schema.Struct({
  id: Schema.String,
  run_id: Schema.String,
  proposal_type: Schema.String,
  title: Schema.String,
  content: Schema.String,
  confidence: Schema.Number,
  tags: Schema.Array(Schema.String),
  supporting_evidence_ids: Schema.Array(Schema.String),
  rationale: Schema.NullOr(Schema.String),
  review_status: Schema.String,
  approval_metadata: Json,
  reviewed_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotate({ identifier: "DreamProposal" })

export const PredictionOutcomeView = Schema.Struct({
  id: Schema.String,
  prediction_id: Schema.String,
  status: Schema.String,
  note: Schema.NullOr(Schema.String),
  evidence_ids: Schema.Array(Schema.String),
  recorded_by: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "DreamPredictionOutcome" })

export const PredictionOutcomeResponse = Schema.Struct({
  prediction: DreamPredictionView,
  outcome: PredictionOutcomeView
}).annotate({ identifier: "PredictionOutcomeResponse" })

export const DreamRunResponse = Schema.Struct({
  run_id: Schema.String,
  bank_id: Schema.String,
  status: Schema.String,
  run_type: DreamRunType,
  trigger_source: DreamTriggerSource,
  created_at: Schema.String,
  updated_at: Schema.NullOr(Schema.String),
  narrative_html: Schema.NullOr(Schema.String),
  summary: Schema.NullOr(Schema.String),
  evidence_basis: Json,
  signals: Json,
  predictions: Schema.Array(DreamPredictionView),
  growth_hypotheses: JsonArray,
  promotion_proposals: Schema.Array(DreamProposalView),
  validation_outcomes: JsonArray,
  confidence: Json,
  novelty_score: Schema.Number,
  maturity_tier: Schema.String,
  quality_score: Schema.Number,
  failure_reason: Schema.NullOr(Schema.String),
  legacy_run: Schema.Boolean,
  source_artifact_id: Schema.NullOr(Schema.String),
  generator: Schema.String.annotate({ description: "`llm` or `deterministic` (no model, or its answer unusable)" })
}).annotate({ identifier: "DreamRunResponse" })
export type DreamRunResponse = typeof DreamRunResponse.Type

export const DreamListResponse = Schema.Struct({ items: Schema.Array(DreamRunResponse) })
  .annotate({ identifier: "DreamListResponse" })

export const DreamStatsResponse = Schema.Struct({
  bank_id: Schema.String,
  total_runs: Schema.Int,
  last_run_at: Schema.NullOr(Schema.String),
  avg_quality: Schema.Number,
  avg_tokens: Schema.Number,
  avg_output_tokens: Schema.Number,
  distillation_pass_rate: Schema.Number,
  distilled_count: Schema.Int,
  duplicate_suppression_count: Schema.Int,
  prediction_confirmation_rate: Schema.Number,
  unresolved_prediction_backlog: Schema.Int,
  avg_novelty: Schema.Number,
  failed_run_count: Schema.Int,
  validation_rate: Schema.Number
}).annotate({ identifier: "DreamStatsResponse" })
