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
import { OperationStore } from "../../operations/OperationStore.ts"

export const consolidateTask = "consolidate"
export const regenerateTask = "regenerate_observations"
export type ConsolidationTask = typeof consolidateTask | typeof regenerateTask

/** Why consolidation was asked for; recorded in the operation's payload and in the completion event. */
export type ConsolidationTrigger = "retain" | "manual" | "admin" | "reset" | "settings"

export interface ConsolidationRequest {
  readonly operationId: string
  readonly deduplicated: boolean
}

/** The bank's own choice, else the server's (`SERVICE_API_ENABLE_OBSERVATIONS`). */
export const observationsEnabled = (settings: Pick<BankSettings, "enableObservations">, serverDefault: boolean) =>
  settings.enableObservations ?? serverDefault

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

  const request = Effect.fn("ConsolidationRequests.request")(function*(
    bankId: string,
    task: ConsolidationTask,
    trigger: ConsolidationTrigger
  ) {
    const waiting = yield* sql<{ id: string }>`SELECT id FROM operations
      WHERE bank_id = ${bankId} AND task_type = ${task} AND status = 'pending' AND parent_id IS NULL
      ORDER BY created_at LIMIT 1`.pipe(Effect.orDie)
    const reused = waiting[0]
    const operationId = reused?.id ?? (yield* store.create({ bankId, taskType: task, payload: { trigger } })).id
    yield* actors.wake(bankId)
    return { operationId, deduplicated: reused !== undefined } satisfies ConsolidationRequest
  })

  /** Called after a bank's settings were saved: queues what the change requires, if the bank holds facts. */
  const afterSettingsChange = Effect.fn("ConsolidationRequests.afterSettingsChange")(function*(
    bankId: string,
    before: BankSettings,
    after: BankSettings
  ) {
    const task = settingsConsequence(before, after, config.enableObservations)
    if (task === null) return
    const facts = yield* sql`SELECT 1 FROM memory_units
      WHERE bank_id = ${bankId} AND fact_type IN ('world', 'experience') LIMIT 1`.pipe(Effect.orDie)
    if (facts.length > 0) yield* request(bankId, task, "settings")
  })

  return { request, afterSettingsChange }
})
