/** Mental model routes: list, create, get, update, delete, refresh history, refresh, clear and dry-run refresh. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId, DeleteResponse } from "../../domain/Bank.ts"
import { Conflict, NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import {
  CreateMentalModelRequest,
  CreateMentalModelResponse,
  ListTagsMatch,
  MentalModelDryRunRefreshResult,
  MentalModelHistoryResponse,
  MentalModelListResponse,
  MentalModelResponse,
  UpdateMentalModelRequest
} from "../../domain/MentalModel.ts"
import { OperationAccepted } from "../../domain/Operation.ts"
import { Limit, Offset } from "./MemoriesApi.ts"

const bank = { bank_id: BankId }
/** Path ids are looked up, not validated: an id that breaks the rule simply does not exist (404). */
const model = { bank_id: BankId, mental_model_id: Schema.String }

export class MentalModelsApi extends HttpApiGroup.make("mentalModels")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/mental-models", {
      params: bank,
      query: {
        // `?tags=a&tags=b` arrives as a list, `?tags=a` as one string.
        tags: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)])),
        tags_match: Schema.optionalKey(ListTagsMatch),
        limit: Schema.optionalKey(Limit),
        offset: Schema.optionalKey(Offset)
      },
      success: MentalModelListResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "List mental models. `tags_match`: `any` shares a tag, `all` has every tag, `exact` has exactly these tags."
    ),
    HttpApiEndpoint.post("create", "/v1/default/banks/:bank_id/mental-models", {
      params: bank,
      payload: CreateMentalModelRequest,
      success: CreateMentalModelResponse,
      error: [NotFound, Conflict, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Create a mental model; its content is generated in the background by reflect on `source_query` " +
        "(a `refresh_mental_model` operation)."
    ),
    HttpApiEndpoint.get("get", "/v1/default/banks/:bank_id/mental-models/:mental_model_id", {
      params: model,
      success: MentalModelResponse,
      error: NotFound
    }),
    HttpApiEndpoint.patch("update", "/v1/default/banks/:bank_id/mental-models/:mental_model_id", {
      params: model,
      payload: UpdateMentalModelRequest,
      success: MentalModelResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Update fields; the content is regenerated on the next refresh (a delta refresh runs in full when the " +
        "source query changed)."
    ),
    HttpApiEndpoint.delete("delete", "/v1/default/banks/:bank_id/mental-models/:mental_model_id", {
      params: model,
      success: DeleteResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("history", "/v1/default/banks/:bank_id/mental-models/:mental_model_id/history", {
      params: model,
      success: MentalModelHistoryResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Refresh history, most recent first: full and delta refreshes with both versions."
    ),
    HttpApiEndpoint.post("refresh", "/v1/default/banks/:bank_id/mental-models/:mental_model_id/refresh", {
      params: model,
      success: OperationAccepted,
      error: NotFound
    }).annotate(OpenApi.Description, "Queue a refresh in the model's trigger mode (`full` or `delta`)."),
    HttpApiEndpoint.post("clear", "/v1/default/banks/:bank_id/mental-models/:mental_model_id/clear", {
      params: model,
      success: MentalModelResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Empty the model's content so the next refresh is a full re-synthesis (a delta model that drifted starts " +
        "clean); its name, query, tags, trigger and history stay."
    ),
    HttpApiEndpoint.post("dryRunRefresh", "/v1/default/banks/:bank_id/mental-models/:mental_model_id/dry-run-refresh", {
      params: model,
      success: MentalModelDryRunRefreshResult,
      error: [NotFound, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "What a refresh would do now — mode and why, outcome, the scope and window it reads, facts, the content it " +
        "would store and a unified diff from the current one, its trace — computed by the refresh pipeline with " +
        "nothing written (the model, its history and the bank stay as they are). Costs what a refresh costs."
    )
  )
  .annotateMerge(OpenApi.annotations({
    title: "Mental models",
    description: "Saved reflect answers to standing questions, kept up to date"
  }))
{}
