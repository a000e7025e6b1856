/**
 * Sub-routine routes: queue a `sub_routine` operation (warm the bank's brain, update its activity model), and read
 * the activity model as a 24-hour histogram and as predictions for the next hours.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { ConsolidationResponse } from "../../domain/Consolidation.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import {
  HorizonHours,
  SubRoutineHistogramResponse,
  SubRoutinePredictionResponse,
  SubRoutineRequest
} from "../../domain/SubRoutine.ts"

const bank = { bank_id: BankId }

export class SubRoutineApi extends HttpApiGroup.make("subRoutine")
  .add(
    HttpApiEndpoint.post("run", "/v1/default/banks/:bank_id/sub-routine", {
      params: bank,
      // The body is optional: a bare POST runs an incremental sub-routine with a 24-hour horizon.
      payload: [SubRoutineRequest, Schema.Null],
      success: ConsolidationResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Queue a `sub_routine` operation: build the bank's brain (graph snapshot and keyword index) and bring its " +
        "activity model up to date, then predict the next `horizon_hours`; the operation's result carries the " +
        "build and the predictions. `force_rebuild` drops the brain and recounts the model from the tables. An " +
        "identical request still waiting is reused (`deduplicated: true`)."
    ),
    HttpApiEndpoint.get("histogram", "/v1/default/banks/:bank_id/sub-routine/histogram", {
      params: bank,
      success: SubRoutineHistogramResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The bank's activity by UTC hour (24 buckets, shares summing to 1) from its reads and the times of its " +
        "facts, under the prediction mode SERVICE_API_BRAIN_PREDICTION_MODE."
    ),
    HttpApiEndpoint.get("predictions", "/v1/default/banks/:bank_id/sub-routine/predictions", {
      params: bank,
      query: { horizon_hours: Schema.optionalKey(HorizonHours.annotate({ description: "1-168, default 24" })) },
      success: SubRoutinePredictionResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "The hours of the next `horizon_hours` from now, each with its share of the activity expected in that " +
        "window (an hour that comes twice in the window counts twice), highest first."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Sub-routine", description: "Brain warm-up and activity prediction" }))
{}
