/**
 * Dream routes: trigger a run (a `dream_generation` operation), list runs, statistics, record a prediction's
 * outcome and review a promotion proposal.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { ConsolidationResponse } from "../../domain/Consolidation.ts"
import {
  DreamListResponse,
  DreamProposalView,
  DreamStatsResponse,
  DreamTriggerRequest,
  PredictionOutcomeRequest,
  PredictionOutcomeResponse,
  ProposalReviewRequest
} from "../../domain/Dream.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"

const bank = { bank_id: BankId }

const DreamListQuery = {
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })).annotate({
      description: "Newest runs to return (1-200, default 20)"
    })
  )
}

export class DreamsApi extends HttpApiGroup.make("dreams")
  .add(
    HttpApiEndpoint.post("trigger", "/v1/default/banks/:bank_id/dreams/trigger", {
      params: bank,
      // The body is optional: a bare POST is a manual dream run.
      payload: [DreamTriggerRequest, Schema.Null],
      success: ConsolidationResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Queue a dream run (`run_type` dream or trance) as a `dream_generation` operation; a run with the same " +
        "trigger source and type already waiting is reused (`deduplicated: true`). It runs only while the bank's " +
        "`dream.enabled` is true; otherwise the operation completes with `skipped: dream_disabled`."
    ),
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/dreams", {
      params: bank,
      query: DreamListQuery,
      success: DreamListResponse,
      error: [NotFound, ValidationError]
    }).annotate(OpenApi.Description, "Dream runs, newest first, with their predictions and proposals."),
    HttpApiEndpoint.get("stats", "/v1/default/banks/:bank_id/dreams/stats", {
      params: bank,
      success: DreamStatsResponse,
      error: NotFound
    }),
    HttpApiEndpoint.post("outcome", "/v1/default/banks/:bank_id/dreams/predictions/:prediction_id/outcome", {
      params: { bank_id: BankId, prediction_id: Schema.String },
      payload: PredictionOutcomeRequest,
      success: PredictionOutcomeResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Record what became of a prediction: confirmed, contradicted, or request_more_evidence (status unresolved)."
    ),
    HttpApiEndpoint.post("review", "/v1/default/banks/:bank_id/dreams/proposals/:proposal_id/review", {
      params: { bank_id: BankId, proposal_id: Schema.String },
      payload: ProposalReviewRequest,
      success: DreamProposalView,
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Review a promotion proposal. approve: a mental_model proposal becomes a mental model, any other becomes a " +
        "memory tagged `dream` and `dream_run:{run_id}`; approving an approved proposal is a 400."
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Dreams", description: "Evidence-grounded foresight runs (dreams and trance)" })
  )
{}
