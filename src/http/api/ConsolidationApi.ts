/** Consolidation routes: consolidate a bank or a tenant schema, observation history, and resetting observations. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId, DeleteResponse } from "../../domain/Bank.ts"
import {
  ConsolidationResponse,
  MemoryHistoryResponse,
  RecoverConsolidationResponse,
  ResetObservationsResponse,
  SchemaConsolidationResponse,
  TenantSchema
} from "../../domain/Consolidation.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"

const bank = { bank_id: BankId }

/**
 * Hindsight's optional consolidate body. A consolidation here always takes every fact waiting in the bank, which
 * includes those of the scopes named, so the scopes are validated and need no narrowing.
 */
const ConsolidateRequest = Schema.Struct({
  observation_scopes: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Array(Schema.String))))
}).annotate({ identifier: "ConsolidateRequest" })
const memory = { bank_id: BankId, memory_id: Schema.String }

export class ConsolidationApi extends HttpApiGroup.make("consolidation")
  .add(
    HttpApiEndpoint.post("consolidate", "/v1/default/banks/:bank_id/consolidate", {
      params: bank,
      // The body is optional: a bare POST (as the spec's clients send) consolidates the bank.
      payload: [ConsolidateRequest, Schema.Null],
      success: ConsolidationResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Queue a consolidation of the bank's new and changed facts into observations (a `consolidate` operation); " +
        "a consolidation already waiting is reused (`deduplicated: true`)."
    ),
    HttpApiEndpoint.post("recover", "/v1/default/banks/:bank_id/consolidation/recover", {
      params: bank,
      success: RecoverConsolidationResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Queue again the work of a consolidation that failed and that no later run completed; `retried_count` is " +
        "how many facts it will consolidate (0 when nothing failed). Observations are kept."
    ),
    HttpApiEndpoint.post("consolidateSchema", "/v1/admin/consolidate/:schema", {
      params: { schema: TenantSchema },
      success: SchemaConsolidationResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Queue a consolidation of every bank of the tenant schema this instance serves."),
    HttpApiEndpoint.get("history", "/v1/default/banks/:bank_id/memories/:memory_id/history", {
      params: memory,
      success: MemoryHistoryResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "An observation's history (every create, update and merge) with its source facts resolved to text; for a " +
        "fact, the observations that rest on it."
    ),
    HttpApiEndpoint.delete("resetMemoryObservations", "/v1/default/banks/:bank_id/memories/:memory_id/observations", {
      params: memory,
      success: ResetObservationsResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Delete the observations resting on this fact; the fact is kept, reset for re-consolidation, and a " +
        "consolidation is queued."
    ),
    HttpApiEndpoint.delete("clearObservations", "/v1/default/banks/:bank_id/observations", {
      params: bank,
      success: DeleteResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Delete every observation of the bank; its facts wait for the next consolidation to build them again."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Consolidation", description: "Observations consolidated from facts" }))
{}
