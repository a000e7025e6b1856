/**
 * Retention: the `retention_sweep` task enforces a bank's policy (`src/domain/Retention.ts`) with the expiry sweep's
 * discipline — bounded slices, each one transaction under the bank's write lock, released between slices so a retain
 * or another bank's work gets in, each slice audited in its own transaction with counts only. First memories older
 * than their fact type's maximum age go (oldest first), then, while the bank holds more facts than `max_memories`,
 * the least influential (`EvictionOrder.ts`). Each evicted memory goes with its derived state (`deleteWithDerived`:
 * observations released and rebuilt from the surviving facts) and the mental models citing it are emptied and
 * refreshed. A process killed mid-sweep loses at most an uncommitted slice; the operation is recovered and re-runs
 * on what is left (it is idempotent). The scheduler looks for banks with something due; a config change asks at once.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { AuditLogs } from "../../audit/AuditLogs.ts"
import { BankBrains } from "../../brain/BankBrains.ts"
import { BankActors } from "../../bank/BankActors.ts"
import { BankLocks } from "../../bank/BankLocks.ts"
import { BankStore } from "../../bank/BankStore.ts"
import { supervisedSingleton } from "../../cluster/SupervisedSingleton.ts"
import { decodeRetentionSettings, hasRetentionLimits, type RetentionSettings } from "../../domain/Retention.ts"
import { MentalModels } from "../../mentalmodels/MentalModels.ts"
import { OperationStore } from "../../operations/OperationStore.ts"
import { TaskRegistry } from "../../operations/TaskRegistry.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { deleteWithDerived } from "./DerivedDeletion.ts"
import { countedFactTypes, leastInfluential } from "./EvictionOrder.ts"
import { sweepSlice } from "./ExpirySweep.ts"
import { emptyModelsCiting } from "./StaleModels.ts"

export const retentionSweepTask = "retention_sweep"

/** How often the scheduler looks for banks whose memories have aged past their limit or outgrown their count. */
const checkEveryMillis = 60_000
const dayMillis = 86_400_000

const ageCutoff = (now: number, maxDays: number) => new Date(now - maxDays * dayMillis)

export const RetentionSweepTask = TaskRegistry.handler(retentionSweepTask, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const locks = yield* BankLocks
  const store = yield* BankStore
  const graph = yield* GraphRecall
  const audit = yield* AuditLogs
  const models = yield* MentalModels
  const brains = yield* BankBrains
  const consolidation = yield* makeConsolidationRequests

  /** One slice: the chosen ids (re-read inside the lock by `pick`), deleted with their derived state and audited. */
  const slice = (bankId: string, reason: string, pick: Effect.Effect<ReadonlyArray<string>, unknown, SqlClient.SqlClient>) =>
    locks.withWriteLock(bankId)(Effect.gen(function*() {
      const startedAt = new Date(yield* Clock.currentTimeMillis)
      const ids = yield* pick
      const deleted = yield* deleteWithDerived(consolidation, bankId, ids)
      const emptied = yield* emptyModelsCiting(bankId, deleted.memories)
      if (deleted.memories.length > 0) {
        yield* audit.record({
          bankId,
          action: "memories.retention_sweep",
          transport: "system",
          method: "SWEEP",
          route: `memories evicted by retention (${reason}): ${deleted.memories.length}`,
          status: 200,
          actor: "system",
          startedAt,
          endedAt: new Date(yield* Clock.currentTimeMillis)
        })
      }
      return { picked: ids.length, deleted, emptied }
    }).pipe(sql.withTransaction, Effect.orDie, Effect.provideService(SqlClient.SqlClient, sql)))

  return (operation) =>
    Effect.gen(function*() {
      const bankId = operation.bankId
      const bank = yield* store.find(bankId)
      if (Option.isNone(bank)) return { memories_deleted: 0, by_reason: {} }
      const policy = bank.value.retentionSettings
      const byReason: Record<string, number> = {}
      let observations = 0
      let wake = false
      const staleModels = new Set<string>()

      const drain = (reason: string, pick: Effect.Effect<ReadonlyArray<string>, unknown, SqlClient.SqlClient>) =>
        Effect.gen(function*() {
          while (true) {
            const { picked, deleted, emptied } = yield* slice(bankId, reason, pick)
            byReason[reason] = (byReason[reason] ?? 0) + deleted.memories.length
            observations += deleted.observationsReleased
            wake ||= deleted.consolidationQueued
            for (const id of emptied) staleModels.add(id)
            if (deleted.memories.length > 0) yield* graph.changed(bankId)
            if (picked < sweepSlice || deleted.memories.length === 0) break
            // Other fibers (requests, other banks) run between slices.
            yield* Effect.yieldNow
          }
        })

      for (const [factType, maxDays] of Object.entries(policy.max_age_days ?? {})) {
        const cutoff = ageCutoff(yield* Clock.currentTimeMillis, maxDays)
        yield* drain(`max_age_days.${factType}`, sql<{ id: string }>`SELECT id FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type = ${factType} AND created_at < ${cutoff}
          ORDER BY created_at, id LIMIT ${sweepSlice}`.pipe(Effect.map((rows) => rows.map((row) => row.id))))
      }

      if (policy.max_memories !== undefined) {
        const max = policy.max_memories
        // Ranked once, before the first slice; each slice re-checks the count, so facts retained meanwhile only
        // ever make it evict fewer of the ranked ones, never one that the count does not call for.
        const ranked = yield* leastInfluential(bankId, (yield* countFacts(bankId)) - max)
        let next = 0
        yield* drain("max_memories", Effect.gen(function*() {
          const excess = (yield* countFacts(bankId)) - max
          const take = ranked.slice(next, next + Math.min(sweepSlice, Math.max(0, excess)))
          next += take.length
          return take
        }))
      }

      if (wake) yield* consolidation.wake(bankId)
      yield* Effect.forEach(staleModels, (id) => Effect.ignore(models.refresh(bankId, id)), { discard: true })
      const total = Object.values(byReason).reduce((sum, n) => sum + n, 0)
      return {
        memories_deleted: total,
        by_reason: byReason,
        observations_released: observations,
        mental_models_marked_stale: staleModels.size
      }
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(BankBrains, brains))

  function countFacts(bankId: string) {
    return sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
      WHERE bank_id = ${bankId} AND fact_type IN ${sql.in([...countedFactTypes])}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0]?.n ?? 0)
    )
  }
}))

/** Queues retention sweeps: for one bank when its policy changes, for every bank with something due on a timer. */
export class RetentionChecks extends Context.Service<RetentionChecks, {
  /** Queues a sweep for the bank when its policy has something to remove now and none is waiting or running. */
  readonly check: (bankId: string) => Effect.Effect<boolean>
}>()("engram/memory/forgetting/RetentionChecks") {
  static readonly layer = Layer.effect(
    RetentionChecks,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const operations = yield* OperationStore
      const actors = yield* BankActors

      const due = (bankId: string, policy: RetentionSettings, now: number) =>
        Effect.gen(function*() {
          for (const [factType, maxDays] of Object.entries(policy.max_age_days ?? {})) {
            const old = yield* sql`SELECT 1 FROM memory_units WHERE bank_id = ${bankId} AND fact_type = ${factType}
              AND created_at < ${ageCutoff(now, maxDays)} LIMIT 1`
            if (old.length > 0) return true
          }
          if (policy.max_memories === undefined) return false
          // Counting stops one past the limit: a bank far over it costs no more to check than one just over.
          const counted = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT 1 FROM memory_units
            WHERE bank_id = ${bankId} AND fact_type IN ${sql.in([...countedFactTypes])} LIMIT ${policy.max_memories + 1}) c`
          return (counted[0]?.n ?? 0) > policy.max_memories
        })

      const check = (bankId: string) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ retentionSettings: unknown }>`SELECT retention_settings FROM banks WHERE bank_id = ${bankId}`
          if (rows.length === 0) return false
          const policy = decodeRetentionSettings(rows[0]!.retentionSettings)
          if (!hasRetentionLimits(policy)) return false
          if (!(yield* due(bankId, policy, yield* Clock.currentTimeMillis))) return false
          const open = yield* sql`SELECT 1 FROM operations WHERE bank_id = ${bankId} AND task_type = ${retentionSweepTask}
            AND status IN ('pending', 'running') LIMIT 1`
          if (open.length > 0) return false
          yield* operations.create({ bankId, taskType: retentionSweepTask, payload: { trigger: "retention" } })
          yield* actors.wake(bankId)
          return true
        }).pipe(Effect.orDie, Effect.withSpan("RetentionChecks.check"))

      return RetentionChecks.of({ check })
    })
  )
}

export const RetentionScheduler = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const checks = yield* RetentionChecks

  const loop = Effect.gen(function*() {
    while (true) {
      const banks = yield* sql<{ bankId: string }>`SELECT bank_id FROM banks
        WHERE retention_settings <> '{}'::jsonb ORDER BY bank_id`.pipe(Effect.orDie)
      yield* Effect.forEach(banks, ({ bankId }) => checks.check(bankId), { discard: true })
      yield* Effect.sleep(checkEveryMillis)
    }
  })

  yield* supervisedSingleton("retention-scheduler", loop)
}))
