/** Background operations as clients see them: statuses, list entries, details with child operations, results. */
import { Schema } from "effect"

export const OperationStatus = Schema.Literals(["pending", "running", "completed", "failed", "cancelled"])
export type OperationStatus = typeof OperationStatus.Type

export const ChildOperation = Schema.Struct({
  operation_id: Schema.String,
  status: OperationStatus,
  sub_batch_index: Schema.NullOr(Schema.Int),
  items_count: Schema.Int,
  error_message: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ChildOperation" })

export const OperationListEntry = Schema.Struct({
  id: Schema.String,
  task_type: Schema.String,
  items_count: Schema.Int,
  document_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  status: OperationStatus,
  error_message: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OperationListEntry" })

export const WorkerStatus = Schema.Struct({
  active: Schema.Boolean.annotate({ description: "whether the bank's actor is running (it passivates when idle)" }),
  current_operation_id: Schema.NullOr(Schema.String),
  circuit_state: Schema.Literals(["closed", "open", "half_open"]),
  circuit_open: Schema.Boolean,
  circuit_retry_after_ms: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "WorkerStatus" })

export const OperationListResponse = Schema.Struct({
  bank_id: Schema.String,
  operations: Schema.Array(OperationListEntry),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  worker: WorkerStatus
}).annotate({ identifier: "OperationListResponse" })

export const OperationDetail = Schema.Struct({
  operation_id: Schema.String,
  bank_id: Schema.String,
  status: Schema.Literals(["pending", "running", "completed", "failed", "cancelled", "not_found"]),
  task_type: Schema.NullOr(Schema.String),
  items_count: Schema.Int,
  document_id: Schema.NullOr(Schema.String),
  error_message: Schema.NullOr(Schema.String),
  attempts: Schema.Int,
  parent_operation_id: Schema.NullOr(Schema.String),
  child_operations: Schema.Array(ChildOperation),
  stage: Schema.optionalKey(
    Schema.NullOr(Schema.String).annotate({ description: "the stage a long task has reached" })
  ),
  progress: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    done: Schema.Number,
    total: Schema.Number,
    processed: Schema.Number.annotate({ description: "the same as done, as Hindsight clients read it" }),
    stage: Schema.String.annotate({ description: "the stage the progress was taken in" }),
    at: Schema.String.annotate({ description: "when the operation last changed" })
  }))),
  result_metadata: Schema.optionalKey(
    Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
      description: "what a completed operation reported (e.g. an export's download_url); null before it completed"
    })
  ),
  created_at: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OperationDetail" })

export const OperationResultResponse = Schema.Struct({
  operation_id: Schema.String,
  status: OperationStatus,
  result: Schema.NullOr(Schema.Unknown),
  error_message: Schema.NullOr(Schema.String)
}).annotate({ identifier: "OperationResultResponse" })

export const OperationAccepted = Schema.Struct({
  operation_id: Schema.String,
  status: OperationStatus
}).annotate({ identifier: "OperationAccepted" })

/** A retry accepted: the operation is pending again (with the success and message Hindsight clients read). */
export const RetryResponse = Schema.Struct({
  success: Schema.Boolean,
  message: Schema.String,
  operation_id: Schema.String,
  status: OperationStatus
}).annotate({ identifier: "RetryResponse" })

export const CancelResponse = Schema.Struct({
  success: Schema.Boolean,
  message: Schema.String,
  operation_id: Schema.String,
  status: OperationStatus
}).annotate({ identifier: "CancelResponse" })

export const DeleteOperationResponse = Schema.Struct({
  success: Schema.Boolean,
  message: Schema.String,
  operation_id: Schema.String
}).annotate({ identifier: "DeleteOperationResponse" })
