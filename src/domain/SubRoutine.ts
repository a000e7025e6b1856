/**
 * The sub-routine as clients see it: the request that queues a `sub_routine` operation (warm the bank's brain,
 * bring its activity model up to date, optionally rebuilding both), and the activity model's histogram over the
 * 24 UTC hours and its predictions for the next hours.
 */
import { Schema } from "effect"

export const subRoutineModes = ["warmup", "incremental", "full_copy"] as const
export type SubRoutineMode = typeof subRoutineModes[number]

export const HorizonHours = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 168 }))

export const SubRoutineRequest = Schema.Struct({
  mode: Schema.optionalKey(
    Schema.Literals(subRoutineModes).annotate({
      description: "warmup builds the bank's brain and activity model; incremental folds in what is new; " +
        "full_copy runs like incremental and is recorded in the result (default incremental)"
    })
  ),
  horizon_hours: Schema.optionalKey(
    HorizonHours.annotate({ description: "hours ahead to predict, 1-168 (default 24)" })
  ),
  force_rebuild: Schema.optionalKey(Schema.Boolean.annotate({
    description: "rebuild the brain and recount the activity model from the tables instead of folding in what is new"
  }))
}).annotate({ identifier: "SubRoutineRequest" })
export type SubRoutineRequest = typeof SubRoutineRequest.Type

export const PredictionPoint = Schema.Struct({
  hour_utc: Schema.Int,
  score: Schema.Number,
  at: Schema.String.annotate({ description: "the first start of this hour within the horizon (ISO 8601, UTC)" })
}).annotate({ identifier: "PredictionPoint" })

export const HistogramPoint = Schema.Struct({
  hour_utc: Schema.Int,
  score: Schema.Number
}).annotate({ identifier: "SubRoutineHistogramPoint" })

const modelFields = {
  bank_id: Schema.String,
  sample_count: Schema.Int,
  source_snapshot_id: Schema.String,
  model_signature: Schema.String.annotate({ description: "`{prediction mode}-v1`" }),
  built_at: Schema.NullOr(Schema.String).annotate({
    description: "when the stored model was built; null when it was computed for this answer"
  })
}

export const SubRoutineHistogramResponse = Schema.Struct({
  ...modelFields,
  histogram: Schema.Array(HistogramPoint)
}).annotate({ identifier: "SubRoutineHistogramResponse" })

export const SubRoutinePredictionResponse = Schema.Struct({
  ...modelFields,
  horizon_hours: Schema.Int,
  predictions: Schema.Array(PredictionPoint)
}).annotate({ identifier: "SubRoutinePredictionResponse" })
