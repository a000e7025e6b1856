/** Background operation routes: list, detail, result, cancel, retry and deleting a finished one's record. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { Conflict, NotFound } from "../../domain/Errors.ts"
import {
  CancelResponse,
  DeleteOperationResponse,
  OperationDetail,
  OperationListResponse,
  OperationResultResponse,
  OperationStatus,
  RetryResponse
} from "../../domain/Operation.ts"

const operation = { bank_id: BankId, operation_id: Schema.String }

export class OperationsApi extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/operations", {
      params: { bank_id: BankId },
      query: {
        // `processing` is what Hindsight clients call `running`; `type` is their name for `task_type`.
        status: Schema.optionalKey(Schema.Union([OperationStatus, Schema.Literal("processing")])),
        task_type: Schema.optionalKey(Schema.String),
        type: Schema.optionalKey(Schema.String),
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
        offset: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
      },
      success: OperationListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("get", "/v1/default/banks/:bank_id/operations/:operation_id", {
      params: operation,
      success: OperationDetail
    }),
    HttpApiEndpoint.get("result", "/v1/default/banks/:bank_id/operations/:operation_id/result", {
      params: operation,
      success: OperationResultResponse,
      error: NotFound
    }),
    HttpApiEndpoint.delete("cancel", "/v1/default/banks/:bank_id/operations/:operation_id", {
      params: operation,
      success: CancelResponse,
      error: [NotFound, Conflict]
    }),
    HttpApiEndpoint.post("retry", "/v1/default/banks/:bank_id/operations/:operation_id/retry", {
      params: operation,
      success: RetryResponse,
      error: [NotFound, Conflict]
    }),
    HttpApiEndpoint.delete("remove", "/v1/default/banks/:bank_id/operations/:operation_id/delete", {
      params: operation,
      success: DeleteOperationResponse,
      error: [NotFound, Conflict]
    }).annotate(
      OpenApi.Description,
      "Delete a completed, failed or cancelled operation's record (with its sub-batches); a pending or running one " +
        "is refused with 409 (cancel it first)."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Operations", description: "Background operations" }))
{}
