/** LLM trace routes: the paged list of a bank's language-model requests and their statistics over time. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { NotFound } from "../../domain/Errors.ts"
import { LlmPurpose } from "../../models/Llm.ts"
import {
  LlmTraceListResponse,
  LlmTraceStatsResponse,
  LlmTraceStatus,
  StatsTrunc,
  TracePeriod
} from "../../traces/LlmTrace.ts"

export class TracesApi extends HttpApiGroup.make("traces")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/llm-requests", {
      params: { bank_id: BankId },
      query: {
        scope: Schema.optionalKey(Schema.String),
        status: Schema.optionalKey(LlmTraceStatus),
        operation_id: Schema.optionalKey(Schema.String),
        purpose: Schema.optionalKey(LlmPurpose),
        // Hindsight clients' names of the same two filters.
        operation: Schema.optionalKey(LlmPurpose.annotate({ description: "the same as purpose" })),
        trace_id: Schema.optionalKey(Schema.String.annotate({ description: "the same as operation_id" })),
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 500 }))),
        offset: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
      },
      success: LlmTraceListResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Newest first; `limit` defaults to 100."),
    HttpApiEndpoint.get("stats", "/v1/default/banks/:bank_id/llm-requests/stats", {
      params: { bank_id: BankId },
      query: {
        period_hours: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 2160 }))),
        period: Schema.optionalKey(
          TracePeriod.annotate({ description: "Hindsight's window: 1d (hourly), 7d or 30d (daily)" })
        ),
        trunc: Schema.optionalKey(StatsTrunc)
      },
      success: LlmTraceStatsResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Buckets of `trunc` (default hour) over the last `period_hours` (default 24), or over `period`."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "LLM traces", description: "Every request to a language model" }))
{}
