/**
 * Retention: the `retention_sweep` task enforces a bank's policy (`src/domain/Retention.ts`) with the expiry sweep's
 * discipline — bounded slices, each one transaction under the bank's write lock, released between slices so a retain
 * or another bank's work gets in, each slice audited in its own transaction with counts only. First memories older
 * than their fact type's maximum age go (oldest first), then, while the bank holds more facts than `max_memories`,
 * the least influential (`EvictionOrder.ts`). Each evicted memory goes with everything derived from it, by forget's
 * own path (`deleteEverythingDerived`: observations released and rebuilt, mental models citing it emptied and
 * refreshed, dream evidence, anomalies, access history, dataset sets, orphaned chunks and documents), and the kept
 * `.brain` file is written again once the sweep is done; each slice queues the recompute of the trajectories it drops
 * (one waiting operation takes every slice's entities). A process killed mid-sweep loses at most an uncommitted slice; the operation is recovered and re-runs
 * on what is left (it is idempotent). Nothing polls: a retain or a policy change has the bank checked (a burst once,
 * after 5 s), and the scheduler sleeps until the oldest memory under an age limit comes due.
 */
import { Clock, Context, Effect, Layer, Option, Queue } from "effect"
import { SqlClient } from "effect/sql"
import { BankBrains } from "../../brain/BankBrains.ts"
import { BankActors } from "../../bank/BankActors.ts"
import { BankSettingsChanges } from "../../bank/BankSettingsChanges.ts"
import { BankStore } from "../../bank/BankStore.ts"
import { ClusterNode } from "../../cluster/ClusterNode.ts"
import { supervisedSingleton } from "../../cluster/SupervisedSingleton.ts"
import { BankEvents } from "../../events/BankEvents.ts"
import { decodeRetentionSettings, hasRetentionLimits, type RetentionSettings } from "../../domain/Retention.ts"
import { MentalModels } from "../../mentalmodels/MentalModels.ts"
import { OperationStore } from "../../bank/OperationStore.ts"
import { TaskRegistry } from "../../bank/TaskRegistry.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { addRemoved, noneRemoved } from "./DerivedDeletion.ts"
import { countedFactTypes, leastInfluential } from "./EvictionOrder.ts"
import { sweepSlice } from "./ExpirySweep.ts"
import { makeKeptBrainFile } from "./KeptBrainFile.ts"
import { makeSweepSlice } from "./SweepSlice.ts"

export const retentionSweepTask = "retention_sweep"

const dayMillis = 86_400_000

const ageCutoff = (now: number, maxDays: number) => new Date(now - maxDays * dayMillis)

export const RetentionSweepTask = TaskRegistry.handler(
  retentionSweepTask,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* BankStore
    const graph = yield* GraphRecall
    const models = yield* MentalModels
    const brains = yield* BankBrains
    const consolidation = yield* makeConsolidationRequests
    const keptBrainFile = yield* makeKeptBrainFile
    const actors = yield* BankActors

    const sweep = yield* makeSweepSlice
    /** One slice: the chosen ids (re-read inside the lock by `pick`), deleted with their derived state and audited. */
    const slice = (
      bankId: string,
      reason: string,
      pick: Effect.Effect<ReadonlyArray<string>, unknown, SqlClient.SqlClient>
    ) =>
      sweep(bankId, {
        action: "memories.retention_sweep",
        describe: (deleted) => `memories evicted by retention (${reason}): ${deleted}`,
        pick: () => pick
      })

    return (operation) =>
      Effect.gen(function*() {
        const bankId = operation.bankId
        const bank = yield* store.find(bankId)
        if (Option.isNone(bank)) return { memories_deleted: 0, by_reason: {} }
        const policy = bank.value.retentionSettings
        const byReason: Record<string, number> = {}
        let removed = noneRemoved
        let wake = false
        const staleModels = new Set<string>()
        const trajectories = new Set<string>()

        const drain = (reason: string, pick: Effect.Effect<ReadonlyArray<string>, unknown, SqlClient.SqlClient>) =>
          Effect.gen(function*() {
            while (true) {
              const { picked, derived } = yield* slice(bankId, reason, pick)
              const deleted = derived.deletion
              byReason[reason] = (byReason[reason] ?? 0) + deleted.memories.length
              removed = addRemoved(removed, derived.removed)
              wake ||= deleted.consolidationQueued
              for (const id of derived.trajectoryEntityIds) trajectories.add(id)
              for (const id of derived.models) staleModels.add(id)
              if (deleted.memories.length > 0) yield* graph.changed(bankId)
              if (picked < sweepSlice || deleted.memories.length === 0) break
              // Other fibers (requests, other banks) run between slices.
              yield* Effect.yieldNow
            }
          })

        for (const [factType, maxDays] of Object.entries(policy.max_age_days ?? {})) {
          const cutoff = ageCutoff(yield* Clock.currentTimeMillis, maxDays)
          yield* drain(
            `max_age_days.${factType}`,
            sql<{ id: string }>`SELECT id FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type = ${factType} AND created_at < ${cutoff}
          ORDER BY created_at, id LIMIT ${sweepSlice}`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
          )
        }

        if (policy.max_memories !== undefined) {
          const max = policy.max_memories
          // Ranked once, before the first slice; each slice re-checks the count, so facts retained meanwhile only
          // ever make it evict fewer of the ranked ones, never one that the count does not call for.
          const ranked = yield* leastInfluential(bankId, (yield* countFacts(bankId)) - max)
          let next = 0
          yield* drain(
            "max_memories",
            Effect.gen(function*() {
              // Counted only as far as a slice can take: the bank's size does not set a slice's cost.
              const excess = (yield* countFacts(bankId, max + sweepSlice)) - max
              const take = ranked.slice(next, next + Math.min(sweepSlice, Math.max(0, excess)))
              next += take.length
              return take
            })
          )
        }

        if (wake) yield* consolidation.wake(bankId)
        // The trajectory recompute the slices queued runs once this sweep has let the bank's worker go.
        if (trajectories.size > 0) yield* actors.wake(bankId)
        yield* Effect.forEach(staleModels, (id) => Effect.ignore(models.refresh(bankId, id)), { discard: true })
        const total = Object.values(byReason).reduce((sum, n) => sum + n, 0)
        const brain = total > 0 ? yield* keptBrainFile(bankId) : { updated: false, file_rewritten: false }
        return {
          memories_deleted: total,
          by_reason: byReason,
          observations_released: removed.observations,
          mental_models_marked_stale: staleModels.size,
          trajectories_queued: trajectories.size,
          removed,
          brain_file_rewritten: brain.file_rewritten
        }
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(BankBrains, brains))

    /** The bank's facts, or `upTo` when it holds more (counting stops there). */
    function countFacts(bankId: string, upTo?: number) {
      const facts = sql`SELECT 1 FROM memory_units WHERE bank_id = ${bankId} AND fact_type IN ${
        sql.in([...countedFactTypes])
      }`
      return sql<{ n: number }>`SELECT count(*)::int AS n FROM (${facts}${
        upTo === undefined ? sql`` : sql` LIMIT ${upTo}`
      }) f`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]?.n ?? 0)
      )
    }
  })
)

/**
 * Decides when a bank's retention policy has something to remove. A bank passes its count limit only when it grows
 * and its age limits only as time passes, so nothing here polls: retains tell it which banks grew, and the
 * scheduler sleeps until the oldest memory under an age limit comes due (an idle server does no retention work).
 */
export class RetentionChecks extends Context.Service<RetentionChecks, {
  /** Queues a sweep for the bank when its policy has something to remove now and none is waiting or running. */
  readonly check: (bankId: string) => Effect.Effect<boolean>
  /** When the bank's next memory passes an age limit (null: none will), for the scheduler's sleep. */
  readonly nextAgeDue: (bankId: string) => Effect.Effect<number | null>
  /** Banks that grew or changed their policy since the last call, and a wait for the next such change. */
  readonly changed: Effect.Effect<ReadonlySet<string>>
  readonly nextChange: (timeoutMillis: number | null) => Effect.Effect<void>
}>()("engram/memory/forgetting/RetentionChecks") {
  static readonly layer = Layer.effect(
    RetentionChecks,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const operations = yield* OperationStore
      const actors = yield* BankActors
      const events = yield* BankEvents
      const noted = new Set<string>()
      const wake = yield* Queue.sliding<void>(1)

      const policyOf = (bankId: string) =>
        sql<{ retentionSettings: unknown }>`SELECT retention_settings FROM banks WHERE bank_id = ${bankId}`.pipe(
          Effect.map((rows) => rows.length === 0 ? undefined : decodeRetentionSettings(rows[0]!.retentionSettings))
        )

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
            WHERE bank_id = ${bankId} AND fact_type IN ${sql.in([...countedFactTypes])} LIMIT ${
            policy.max_memories + 1
          }) c`
          return (counted[0]?.n ?? 0) > policy.max_memories
        })

      const check = (bankId: string) =>
        Effect.gen(function*() {
          const policy = yield* policyOf(bankId)
          if (policy === undefined || !hasRetentionLimits(policy)) return false
          if (!(yield* due(bankId, policy, yield* Clock.currentTimeMillis))) return false
          const open =
            yield* sql`SELECT 1 FROM operations WHERE bank_id = ${bankId} AND task_type = ${retentionSweepTask}
            AND status IN ('pending', 'running') LIMIT 1`
          if (open.length > 0) return false
          yield* operations.create({ bankId, taskType: retentionSweepTask, payload: { trigger: "retention" } })
          yield* actors.wake(bankId)
          return true
        }).pipe(Effect.orDie, Effect.withSpan("RetentionChecks.check"))

      const nextAgeDue = (bankId: string) =>
        Effect.gen(function*() {
          const policy = yield* policyOf(bankId)
          let next: number | null = null
          for (const [factType, maxDays] of Object.entries(policy?.max_age_days ?? {})) {
            const oldest = yield* sql<{ at: Date | null }>`SELECT min(created_at) AS at FROM memory_units
              WHERE bank_id = ${bankId} AND fact_type = ${factType}`
            const at = oldest[0]?.at
            if (at != null) next = Math.min(next ?? Infinity, new Date(at).getTime() + maxDays * dayMillis)
          }
          return next
        }).pipe(Effect.orDie)

      const note = (bankId: string) =>
        Effect.andThen(Effect.sync(() => noted.add(bankId)), Queue.offer(wake, undefined)).pipe(Effect.asVoid)

      // A policy saved by any path (the config API, MCP, a template import, the library) is checked at once, and the
      // scheduler recomputes when the next age limit comes due.
      yield* (yield* BankSettingsChanges).afterCommit(({ bankId, before, after }) =>
        hasRetentionLimits(after.retentionSettings) ||
          (before !== undefined && hasRetentionLimits(before.retentionSettings))
          ? Effect.andThen(check(bankId), note(bankId))
          : Effect.void
      )

      // A retain that added memories may take a bank past its count limit, or give an age limit an earlier due time.
      yield* events.listen((event) => {
        if (event.type !== "retain.completed" || event.data["memories_created"] === 0) return Effect.void
        if (event.bank !== undefined && !hasRetentionLimits(event.bank.retentionSettings)) return Effect.void
        return note(event.bankId)
      })

      return RetentionChecks.of({
        check,
        nextAgeDue,
        changed: Effect.sync(() => {
          const banks = new Set(noted)
          noted.clear()
          return banks
        }),
        nextChange: (timeoutMillis) => {
          const take = Effect.andThen(Queue.take(wake), Queue.clear(wake))
          return timeoutMillis === null ? Effect.asVoid(take) : Effect.asVoid(Effect.timeoutOption(take, timeoutMillis))
        }
      })
    })
  )
}

/** A burst of retains is checked once: the scheduler waits this long after a change before it looks. */
const settleMillis = 5_000
/** On a cluster a retain on another node cannot wake this one's scheduler: it looks again this often. */
const clusterResyncMillis = 60_000
/** The longest single sleep (a clock that jumps, a due time far ahead). */
const longestSleepMillis = 3_600_000

export const RetentionScheduler = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const checks = yield* RetentionChecks
  const node = yield* ClusterNode

  /** Checks the banks given (all banks with a policy when none) and returns when the next age limit comes due. */
  const pass = (only: ReadonlySet<string> | undefined) =>
    Effect.gen(function*() {
      const banks = (yield* sql<{ bankId: string }>`SELECT bank_id FROM banks
        WHERE retention_settings <> '{}'::jsonb ORDER BY bank_id`.pipe(Effect.orDie)).map((row) => row.bankId)
      let next: number | null = null
      for (const bankId of banks) {
        if (only === undefined || only.has(bankId)) yield* checks.check(bankId)
        const due = yield* checks.nextAgeDue(bankId)
        if (due !== null) next = Math.min(next ?? Infinity, due)
      }
      return next
    })

  const loop = Effect.gen(function*() {
    let next = yield* pass(undefined)
    yield* checks.changed
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const untilDue = next === null ? null : Math.min(Math.max(next - now, 0) + 5, longestSleepMillis)
      yield* checks.nextChange(
        node.role === "off" ? untilDue : Math.min(untilDue ?? clusterResyncMillis, clusterResyncMillis)
      )
      const changed = yield* checks.changed
      if (changed.size > 0) yield* Effect.sleep(settleMillis)
      const settled = new Set([...changed, ...(yield* checks.changed)])
      const ageDue = next !== null && (yield* Clock.currentTimeMillis) >= next
      // A due age limit or a cluster resync looks at every bank with a policy; a change, at the banks that changed.
      next = yield* pass(ageDue || settled.size === 0 || node.role !== "off" ? undefined : settled)
    }
  })

  yield* supervisedSingleton("retention-scheduler", loop)
}))
