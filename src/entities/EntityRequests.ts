/**
 * How trajectory and entity-intelligence work is queued: a durable operation, reusing one that is still waiting
 * for the same thing (same task type and dedupe key) rather than queueing another — a waiting recompute will see
 * every fact stored before it runs. Built on the operation store and the actors, like consolidation's requests.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../bank/BankActors.ts"
import { OperationStore } from "../bank/OperationStore.ts"

export const trajectoryTask = "entity_trajectory_recompute"
export const intelligenceTask = "entity_intelligence_recompute"

export interface QueuedRecompute {
  readonly operationId: string
  readonly status: string
  readonly deduplicated: boolean
}

export const makeEntityRequests = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* OperationStore
  const actors = yield* BankActors

  /** Only pending operations are reused: a running one may already have read the facts this request is about. */
  const request = Effect.fn("EntityRequests.request")(function*(
    bankId: string,
    taskType: string,
    dedupeKey: string,
    payload: Record<string, unknown>
  ) {
    const waiting = yield* sql<{ id: string }>`SELECT id FROM operations
      WHERE bank_id = ${bankId} AND task_type = ${taskType} AND status = 'pending' AND parent_id IS NULL
        AND payload->>'dedupe_key' = ${dedupeKey}
      ORDER BY created_at LIMIT 1`.pipe(Effect.orDie)
    const operationId = waiting[0]?.id ??
      (yield* store.create({ bankId, taskType, payload: { ...payload, dedupe_key: dedupeKey } })).id
    yield* actors.wake(bankId)
    return { operationId, status: "pending", deduplicated: waiting.length > 0 } satisfies QueuedRecompute
  })

  /** Whether work of the task type is waiting or running for the bank (automatic triggers then stay quiet). */
  const inFlight = Effect.fn("EntityRequests.inFlight")(function*(bankId: string, taskType: string) {
    const rows = yield* sql`SELECT 1 FROM operations WHERE bank_id = ${bankId} AND task_type = ${taskType}
      AND status IN ('pending', 'running') AND parent_id IS NULL LIMIT 1`.pipe(Effect.orDie)
    return rows.length > 0
  })

  return { request, inFlight }
})
