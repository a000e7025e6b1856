/**
 * How consolidation work is queued, for everything that asks for it (retain, the consolidate routes, bank
 * settings): a durable `consolidate` or `regenerate_observations` operation, reusing one that is still waiting
 * rather than queueing another — a waiting consolidation will see every fact stored before it runs. Built from
 * the operation store and the actors directly so the bank layer, which sits below `Operations`, can use it too.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../../bank/BankActors.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import type { BankSettings } from "../../domain/Bank.ts"
import { OperationStore } from "../../bank/OperationStore.ts"

export const consolidateTask = "consolidate"
export const regenerateTask = "regenerate_observations"
export type ConsolidationTask = typeof consolidateTask | typeof regenerateTask

/** Why consolidation was asked for; recorded in the operation's payload and in the completion event. */
export type ConsolidationTrigger = "retain" | "delete" | "manual" | "admin" | "reset" | "settings"

/** Runs the service queues by itself; they are skipped when observations are off (an explicit request is not). */
export const isAutomatic = (trigger: string) => trigger === "retain" || trigger === "delete"

export interface ConsolidationRequest {
  readonly operationId: string
  readonly deduplicated: boolean
}

/** The bank's own choice, else the server's (`SERVICE_API_ENABLE_OBSERVATIONS`). */
export const observationsEnabled = (settings: Pick<BankSettings, "enableObservations">, serverDefault: boolean) =>
  settings.enableObservations ?? serverDefault

/**
 * Whether the runs the service queues by itself (after retain, after deletions) consolidate: observations on and
 * the bank's `enable_auto_consolidation` not turned off. An explicit request consolidates either way.
 */
export const autoConsolidates = (
  settings: Pick<BankSettings, "enableObservations" | "pipelineSettings">,
  serverDefault: boolean
) => observationsEnabled(settings, serverDefault) && settings.pipelineSettings.enableAutoConsolidation !== false

/**
 * What a settings change means for observations: new rules (observations mission), a new bank mission or a new
 * disposition regenerate them; turning observations on consolidates the backlog.
 */
export const settingsConsequence = (
  before: BankSettings,
  after: BankSettings,
  serverDefault: boolean
): ConsolidationTask | null => {
  if (!observationsEnabled(after, serverDefault)) return null
  const rulesChanged = before.observationsMission !== after.observationsMission ||
    before.reflectMission !== after.reflectMission ||
    before.disposition.skepticism !== after.disposition.skepticism ||
    before.disposition.literalism !== after.disposition.literalism ||
    before.disposition.empathy !== after.disposition.empathy
  if (rulesChanged) return regenerateTask
  return observationsEnabled(before, serverDefault) ? null : consolidateTask
}

export const makeConsolidationRequests = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* OperationStore
  const actors = yield* BankActors
  const config = yield* EngramConfig

  /**
   * Queues the task without waking the actor, so it can run inside the caller's transaction: the request then
   * commits with the writes that called for it, or not at all. A waiting operation of the same task is reused in
   * one statement (it cannot start between the look and the reuse); an explicit request takes it over, so a run
   * queued automatically, which is skipped when observations are off, still runs when someone asked for it.
   */
  const enqueue = Effect.fn("ConsolidationRequests.enqueue")(function*(
    bankId: string,
    task: ConsolidationTask,
    trigger: ConsolidationTrigger
  ) {
    const reused = yield* sql<{ id: string }>`UPDATE operations
      SET payload = CASE WHEN ${isAutomatic(trigger)} THEN payload
                         ELSE jsonb_set(coalesce(payload, '{}'::jsonb), '{trigger}', to_jsonb(${trigger}::text)) END,
          updated_at = now()
      WHERE id = (SELECT id FROM operations
                  WHERE bank_id = ${bankId} AND task_type = ${task} AND status = 'pending' AND parent_id IS NULL
                  ORDER BY created_at LIMIT 1)
        AND status = 'pending'
      RETURNING id`.pipe(Effect.orDie)
    const operationId = reused[0]?.id ?? (yield* store.create({ bankId, taskType: task, payload: { trigger } })).id
    return { operationId, deduplicated: reused.length > 0 } satisfies ConsolidationRequest
  })

  const request = Effect.fn("ConsolidationRequests.request")(function*(
    bankId: string,
    task: ConsolidationTask,
    trigger: ConsolidationTrigger
  ) {
    const queued = yield* enqueue(bankId, task, trigger)
    yield* actors.wake(bankId)
    return queued
  })

  /**
   * What a bank's settings change queues, if anything and if the bank holds facts. Run it in the transaction
   * that saves the settings (a crash cannot keep the new rules and lose the regeneration), then `wake`.
   */
  const enqueueAfterSettingsChange = Effect.fn("ConsolidationRequests.afterSettingsChange")(function*(
    bankId: string,
    before: BankSettings,
    after: BankSettings
  ) {
    const task = settingsConsequence(before, after, config.enableObservations)
    if (task === null) return false
    const facts = yield* sql`SELECT 1 FROM memory_units
      WHERE bank_id = ${bankId} AND fact_type IN ('world', 'experience') LIMIT 1`.pipe(Effect.orDie)
    if (facts.length === 0) return false
    yield* enqueue(bankId, task, "settings")
    return true
  })

  return { enqueue, request, enqueueAfterSettingsChange, wake: actors.wake }
})
