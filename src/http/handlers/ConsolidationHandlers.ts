/** REST handlers for consolidation: thin translations between the HTTP contract and the `Consolidation` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Consolidation } from "../../memory/consolidation/Consolidation.ts"
import { EngramApi } from "../api/Api.ts"

export const ConsolidationHandlers = HttpApiBuilder.group(
  EngramApi,
  "consolidation",
  Effect.fn(function*(handlers) {
    const consolidation = yield* Consolidation

    return handlers.handleAll({
      consolidate: ({ params }) =>
        Effect.map(consolidation.request(params.bank_id, "manual"), (queued) => ({
          operation_id: queued.operationId,
          deduplicated: queued.deduplicated,
          status: "pending"
        })),
      recover: ({ params }) =>
        Effect.map(consolidation.recover(params.bank_id), (recovered) => ({ retried_count: recovered.retriedCount })),
      consolidateSchema: ({ params }) =>
        Effect.map(consolidation.requestSchema(params.schema), (queued) => ({
          schema: params.schema,
          total_banks: queued.length,
          banks: queued.map((entry) => ({
            bank_id: entry.bankId,
            operation_id: entry.operationId,
            deduplicated: entry.deduplicated
          }))
        })),
      history: ({ params }) => consolidation.history(params.bank_id, params.memory_id),
      resetMemoryObservations: ({ params }) =>
        Effect.map(consolidation.resetMemory(params.bank_id, params.memory_id), (reset) => ({
          success: true,
          message: `deleted ${reset.deleted} observation(s) resting on memory '${params.memory_id}'; ` +
            "it will be consolidated again",
          deleted_count: reset.deleted,
          operation_id: reset.operationId
        })),
      clearObservations: ({ params }) =>
        Effect.map(consolidation.clearObservations(params.bank_id), (deleted) => ({
          success: true,
          message: `deleted ${deleted} observations; their facts wait for the next consolidation`,
          deleted_count: deleted
        }))
    })
  })
)
