/**
 * The expiry sweep: the `expiry_sweep` task deletes a bank's expired memories with everything derived from them
 * (forget's own path, `deleteEverythingDerived`; the kept `.brain` file is written again at the end), a bounded
 * slice per transaction (under the bank's write lock, released between slices so a retain or another bank's work
 * gets in), each slice audited in its own transaction without any content — only how many went. Reads already hide
 * an expired memory (`Expiry.ts`), so the sweep is about storage and derived state, never about what recall sees.
 * Each slice queues the recompute of the trajectories it drops (one waiting operation takes every slice's entities).
 * The scheduler sleeps until the earliest expiry (or until a write sets one) and queues a sweep for each bank with
 * memories due, once: a waiting or running sweep is not queued twice. A process killed mid-sweep loses at most an
 * uncommitted slice; the operation is recovered and starts over on what is left (it is idempotent).
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../../bank/BankActors.ts"
import { ClusterNode } from "../../cluster/ClusterNode.ts"
import { supervisedSingleton } from "../../cluster/SupervisedSingleton.ts"
import { OperationStore } from "../../bank/OperationStore.ts"
import { TaskRegistry } from "../../bank/TaskRegistry.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { MentalModels } from "../../mentalmodels/MentalModels.ts"
import { addRemoved, noneRemoved } from "./DerivedDeletion.ts"
import { ExpiryWakeups } from "./ExpiryWakeups.ts"
import { makeKeptBrainFile } from "./KeptBrainFile.ts"
import { makeSweepSlice } from "./SweepSlice.ts"

export const expirySweepTask = "expiry_sweep"

/** Memories per slice: one short transaction each (a few milliseconds of PGlite), then the lock is let go. */
export const sweepSlice = 200

/** Long sleeps are cut into hours, so a clock change cannot leave expired memories in storage for long. */
const longestSleepMillis = 3_600_000
/**
 * On a cluster the scheduler runs on one runner, and a write on another node wakes that node's channel, not this
 * one: it looks again at least this often. Reads hide an expired memory whatever the sweep's delay.
 */
const clusterResyncMillis = 60_000

/**
 * Deletes the bank's expired memories now, slice by slice, with everything derived from them, then does what follows
 * a deletion (consolidation woken, trajectories and mental models refreshed, the kept `.brain` file written again).
 * The `expiry_sweep` task runs it, and so does a `.brain` export, so that the file a user takes away holds no memory
 * past its expiry even when the scheduled sweep has not reached the bank yet. Idempotent, and safe beside a running
 * sweep of the same bank: each slice picks what is still there under the bank's write lock.
 */
export const makeExpirySweep = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const graph = yield* GraphRecall
  const consolidation = yield* makeConsolidationRequests
  const models = yield* MentalModels
  const keptBrainFile = yield* makeKeptBrainFile
  const actors = yield* BankActors

  const sweep = yield* makeSweepSlice
  /** One slice: the oldest expired memories, deleted with everything derived from them and audited. */
  const slice = (bankId: string) =>
    sweep(bankId, {
      action: "memories.expiry_sweep",
      describe: (deleted) => `expired memories deleted: ${deleted}`,
      pick: (startedAt) =>
        sql<{ id: string }>`SELECT id FROM memory_units
        WHERE bank_id = ${bankId} AND expires_at <= ${startedAt} ORDER BY expires_at, id LIMIT ${sweepSlice}`.pipe(
          Effect.map((rows) => rows.map((row) => row.id))
        )
    })

  /** Whether the bank holds an expired memory (the partial index `memory_units_expiring`): else nothing is touched. */
  const anyExpired = (bankId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql<{ due: boolean }>`SELECT EXISTS (SELECT 1 FROM memory_units
        WHERE expires_at <= ${new Date(now)} AND bank_id = ${bankId}) AS due`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]?.due === true)
      ))

  return Effect.fn("ExpirySweep.run")(function*(bankId: string) {
    // A bank with nothing expired is left as it is: not even the reads' buffered access events are written, so an
    // export of an unchanged bank stays byte for byte the same file.
    let more = yield* anyExpired(bankId)
    let removed = noneRemoved
    let wake = false
    const staleModels = new Set<string>()
    const trajectories = new Set<string>()
    while (more) {
      const { picked: due, derived } = yield* slice(bankId)
      removed = addRemoved(removed, derived.removed)
      for (const id of derived.trajectoryEntityIds) trajectories.add(id)
      wake ||= derived.deletion.consolidationQueued
      for (const id of derived.models) staleModels.add(id)
      if (derived.deletion.memories.length > 0) yield* graph.changed(bankId)
      more = due >= sweepSlice
      // Other fibers (requests, other banks) run between slices.
      if (more) yield* Effect.yieldNow
    }
    if (wake) yield* consolidation.wake(bankId)
    // The trajectory recompute the slices queued runs once this sweep has let the bank's worker go.
    if (trajectories.size > 0) yield* actors.wake(bankId)
    yield* Effect.forEach(staleModels, (id) => Effect.ignore(models.refresh(bankId, id)), { discard: true })
    const brain = removed.memories > 0 ? yield* keptBrainFile(bankId) : { updated: false, file_rewritten: false }
    return {
      memories_deleted: removed.memories,
      observations_released: removed.observations,
      mental_models_marked_stale: staleModels.size,
      trajectories_queued: trajectories.size,
      removed,
      brain_file_rewritten: brain.file_rewritten
    }
  })
})

export const ExpirySweepTask = TaskRegistry.handler(
  expirySweepTask,
  Effect.map(makeExpirySweep, (sweep) => (operation) => sweep(operation.bankId))
)

export const ExpiryScheduler = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* OperationStore
  const actors = yield* BankActors
  const wakeups = yield* ExpiryWakeups
  const node = yield* ClusterNode

  /** Queues a sweep for every bank holding expired memories that has none waiting or running. */
  const queueDue = (now: Date) =>
    Effect.gen(function*() {
      const banks = yield* sql<{ bankId: string }>`
        SELECT DISTINCT u.bank_id FROM memory_units u
        WHERE u.expires_at <= ${now}
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.bank_id = u.bank_id AND o.task_type = ${expirySweepTask}
            AND o.status IN ('pending', 'running'))`.pipe(Effect.orDie)
      for (const { bankId } of banks) {
        yield* store.create({ bankId, taskType: expirySweepTask, payload: { trigger: "expiry" } })
        yield* actors.wake(bankId)
      }
    })

  const nextExpiry = (now: Date) =>
    sql<{ at: Date | null }>`SELECT min(expires_at) AS at FROM memory_units WHERE expires_at > ${now}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0]?.at ?? null)
    )

  const loop = Effect.gen(function*() {
    while (true) {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* queueDue(now)
      const next = yield* nextExpiry(now)
      const due = next === null ? null : Math.min(Math.max(next.getTime() - now.getTime(), 0) + 5, longestSleepMillis)
      yield* wakeups.next(node.role === "off" ? due : Math.min(due ?? clusterResyncMillis, clusterResyncMillis))
    }
  })

  yield* supervisedSingleton("expiry-scheduler", loop)
}))
