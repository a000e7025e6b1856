/** REST handlers for background operations, over the `Operations` service and the bank's actor status. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BankActors } from "../../bank/BankActors.ts"
import { Banks } from "../../bank/Banks.ts"
import { Operations, toListEntry } from "../../bank/Operations.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

export const OperationsHandlers = HttpApiBuilder.group(
  EngramApi,
  "operations",
  Effect.fn(function*(handlers) {
    const operations = yield* Operations
    const actors = yield* BankActors
    const banks = yield* Banks

    return handlers.handleAll({
      list: Effect.fn(function*({ params, query }) {
        yield* banks.get(params.bank_id)
        const { limit, offset } = paging(query)
        const [page, worker] = yield* Effect.all([
          operations.list(params.bank_id, {
            status: query.status === "processing" ? "running" : query.status,
            taskType: query.task_type ?? query.type,
            limit,
            offset
          }),
          actors.status(params.bank_id)
        ])
        return {
          bank_id: params.bank_id,
          operations: page.items.map(toListEntry),
          total: page.total,
          limit,
          offset,
          worker: {
            active: worker.active,
            current_operation_id: worker.currentOperationId,
            circuit_state: worker.circuit,
            circuit_open: worker.circuit === "open",
            circuit_retry_after_ms: worker.retryAfterMs
          }
        }
      }),
      get: ({ params }) => operations.detail(params.bank_id, params.operation_id),
      result: ({ params }) =>
        Effect.map(operations.result(params.bank_id, params.operation_id), (operation) => ({
          operation_id: operation.id,
          status: operation.status,
          result: operation.result,
          error_message: operation.errorMessage
        })),
      cancel: ({ params }) =>
        Effect.map(operations.cancel(params.bank_id, params.operation_id), (status) => ({
          success: true,
          message: `operation '${params.operation_id}' cancelled`,
          operation_id: params.operation_id,
          status
        })),
      remove: ({ params }) =>
        Effect.as(operations.remove(params.bank_id, params.operation_id), {
          success: true,
          message: `operation '${params.operation_id}' deleted`,
          operation_id: params.operation_id
        }),
      retry: ({ params }) =>
        Effect.map(operations.retry(params.bank_id, params.operation_id), (status) => ({
          success: true,
          message: `operation '${params.operation_id}' queued again`,
          operation_id: params.operation_id,
          status
        }))
    })
  })
)
