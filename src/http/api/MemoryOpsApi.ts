/**
 * Memory routes of the 0.9 client beyond retain/recall/list: curate one memory (edit, invalidate, restore), a
 * dry-run extraction that stores nothing, the ingestion time series, the entity co-occurrence graph and the
 * bank's observation scopes.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { Conflict, NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import {
  CuratedMemory,
  DryRunExtractRequest,
  DryRunExtractResult,
  EntityGraphResponse,
  MemoriesTimeseries,
  ObservationScopesResponse,
  TimeseriesField,
  TimeseriesPeriod,
  UpdateMemoryRequest
} from "../../domain/MemoryOps.ts"

const bank = { bank_id: BankId }

export class MemoryOpsApi extends HttpApiGroup.make("memoryOps")
  .add(
    HttpApiEndpoint.patch("update", "/v1/default/banks/:bank_id/memories/:memory_id", {
      params: { bank_id: BankId, memory_id: Schema.String },
      payload: UpdateMemoryRequest,
      success: CuratedMemory,
      error: [NotFound, ValidationError, Conflict, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Curate a world or experience fact: edit its text (re-embedded, relinked), context, occurred dates (\"\" " +
        "clears), fact type or entities (taken literally); `state: invalidated` moves it out of recall, " +
        "consolidation and the graph into the archive (with `reason`), `state: valid` restores it. Its " +
        "observations are rebuilt either way."
    ),
    HttpApiEndpoint.post("dryRunExtract", "/v1/default/banks/:bank_id/memories/dry-run-extract", {
      params: bank,
      payload: DryRunExtractRequest,
      success: DryRunExtractResult,
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "The facts retain would extract from `content` with the bank's settings (each overridable in the body); " +
        "nothing is stored."
    ),
    HttpApiEndpoint.get("timeseries", "/v1/default/banks/:bank_id/stats/memories-timeseries", {
      params: bank,
      query: {
        period: Schema.optionalKey(TimeseriesPeriod.annotate({ description: "default 7d" })),
        time_field: Schema.optionalKey(TimeseriesField.annotate({ description: "default created_at" }))
      },
      success: MemoriesTimeseries,
      error: [NotFound, ValidationError]
    }).annotate(OpenApi.Description, "Memories per time bucket and fact type over the period, fully padded."),
    HttpApiEndpoint.get("entityGraph", "/v1/default/banks/:bank_id/entities/graph", {
      params: bank,
      query: {
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10000 }))),
        min_count: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
      },
      success: EntityGraphResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Entities (nodes) and how many facts name each pair together (edges), strongest pairs first."
    ),
    HttpApiEndpoint.get("observationScopes", "/v1/default/banks/:bank_id/observations/scopes", {
      params: bank,
      success: ObservationScopesResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The distinct tag sets observations live under (`[]` is the untagged scope), most populous first."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Memory operations" }))
{}
