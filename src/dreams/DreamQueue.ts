/**
 * Queuing dream work as durable operations: `dream_generation` runs de-duplicated by
 * `{bank}:{trigger_source}:{run_type}` while one is pending (an advisory lock makes the look-up and the insert one
 * step on PostgreSQL too), and the `dream_prediction_check` that settles expired predictions, one pending per bank.
 */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../bank/BankActors.ts"
import type { DreamRunType, DreamTriggerSource } from "../domain/Dream.ts"
import { OperationStore } from "../bank/OperationStore.ts"

export const dreamTask = "dream_generation"
export const predictionCheckTask = "dream_prediction_check"

export const dedupeKey = (bankId: string, source: DreamTriggerSource, runType: DreamRunType) =>
  `${bankId}:${source}:${runType}`

export const makeDreamQueue = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* OperationStore
  const actors = yield* BankActors

  /** Inside the caller's transaction: the pending operation with this key, or a new one. */
  const enqueue = (bankId: string, taskType: string, key: string, payload: Record<string, unknown>) =>
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`${taskType}:${key}`}))`
      const pending = yield* sql`SELECT id FROM operations WHERE bank_id = ${bankId} AND task_type = ${taskType}
        AND status = 'pending' AND parent_id IS NULL AND payload->>'dedupe_key' = ${key} LIMIT 1`
      const found = Option.fromNullishOr(pending[0]?.["id"] as string | undefined)
      if (Option.isSome(found)) return { operationId: found.value, deduplicated: true }
      const created = yield* store.create({ bankId, taskType, payload: { ...payload, dedupe_key: key } })
      return { operationId: created.id, deduplicated: false }
    })

  const submitDream = (bankId: string, source: DreamTriggerSource, runType: DreamRunType) =>
    enqueue(bankId, dreamTask, dedupeKey(bankId, source, runType), { trigger_source: source, run_type: runType }).pipe(
      sql.withTransaction,
      Effect.orDie,
      Effect.tap(() => actors.wake(bankId))
    )

  const submitCheck = (bankId: string) =>
    enqueue(bankId, predictionCheckTask, `${bankId}:expiry`, {}).pipe(
      sql.withTransaction,
      Effect.orDie,
      Effect.tap(() => actors.wake(bankId))
    )

  return { enqueue, submitDream, submitCheck }
})
