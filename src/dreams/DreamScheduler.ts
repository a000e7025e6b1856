/**
 * The durable trance schedule and the automatic prediction expiry check. `dream_schedules` holds, per bank with
 * trance enabled, when its next scheduled run is due. A due run is queued in the same transaction that moves the
 * due time forward, so a process killed at any point queues it exactly once: before the commit nothing happened
 * and the run is still due after restart; after it the operation is stored and the actors recover it. Between due
 * times the scheduler sleeps until the earliest one (or until a bank's settings or predictions change): an idle
 * server does no work here.
 */
import { Clock, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../bank/BankActors.ts"
import { BankStore } from "../bank/BankStore.ts"
import { ClusterNode } from "../cluster/ClusterNode.ts"
import { supervisedSingleton } from "../cluster/SupervisedSingleton.ts"
import type { DreamSettings } from "./DreamConfig.ts"
import { effectiveDreamSettings } from "./DreamConfig.ts"
import { dedupeKey, dreamTask, makeDreamQueue, predictionCheckTask } from "./DreamQueue.ts"
import { BankSettingsChanges } from "../bank/BankSettingsChanges.ts"
import { DreamWakeups } from "./DreamWakeups.ts"

/** Long sleeps are cut into days so that a clock change cannot leave the scheduler asleep past a due time for long. */
const longestSleepMillis = 86_400_000
/**
 * On a cluster the scheduler runs on one runner, and a bank's settings change on another node notifies that node's
 * wake-up channel, not this one: every bank's schedule is re-read this often instead.
 */
const clusterResyncMillis = 60_000

export const tranceEligible = (settings: DreamSettings) =>
  settings.enabled && settings.trance_enabled && settings.trigger_mode !== "event"

export const DreamScheduler = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const bankStore = yield* BankStore
  const actors = yield* BankActors
  const wakeups = yield* DreamWakeups
  // A bank whose settings changed (trance on or off, another interval) is read again.
  yield* (yield* BankSettingsChanges).afterCommit(({ bankId }) => wakeups.notify(bankId))
  const queue = yield* makeDreamQueue
  const node = yield* ClusterNode
  const clustered = node.role !== "off"

  /** Brings the bank's schedule row in line with its settings. */
  const syncBank = (bankId: string, now: Date) =>
    Effect.gen(function*() {
      const bank = yield* bankStore.find(bankId)
      const settings = Option.map(bank, (found) => effectiveDreamSettings(found.dreamSettings))
      if (Option.isNone(settings) || !tranceEligible(settings.value)) {
        yield* sql`DELETE FROM dream_schedules WHERE bank_id = ${bankId}`
        return
      }
      const interval = settings.value.cron_interval_minutes
      // First due time: one interval after the last scheduled run, or now when there was none. A shorter interval
      // than before pulls an existing due time in.
      yield* sql`
        INSERT INTO dream_schedules (bank_id, next_due_at)
        SELECT ${bankId}, coalesce(max(created_at) + make_interval(mins => ${interval}), ${now})
        FROM dream_runs WHERE bank_id = ${bankId} AND trigger_source = 'cron'
        ON CONFLICT (bank_id) DO UPDATE SET
          next_due_at = least(dream_schedules.next_due_at, ${now}::timestamptz + make_interval(mins => ${interval})),
          updated_at = now()`
    }).pipe(Effect.orDie)

  const syncAll = (now: Date) =>
    Effect.gen(function*() {
      const rows = yield* sql<{ bankId: string }>`
        SELECT bank_id FROM banks WHERE dream_settings->>'trance_enabled' = 'true'
        UNION SELECT bank_id FROM dream_schedules`.pipe(Effect.orDie)
      yield* Effect.forEach(rows, (row) => syncBank(row.bankId, now), { discard: true })
    })

  /** Queues each due trance run and moves its due time on, atomically. */
  const fireDue = (now: Date) =>
    Effect.gen(function*() {
      const due = yield* sql<{ bankId: string }>`SELECT bank_id FROM dream_schedules WHERE next_due_at <= ${now}`
        .pipe(Effect.orDie)
      for (const { bankId } of due) {
        const bank = yield* bankStore.find(bankId)
        const settings = Option.map(bank, (found) => effectiveDreamSettings(found.dreamSettings))
        if (Option.isNone(settings) || !tranceEligible(settings.value)) {
          yield* syncBank(bankId, now)
          continue
        }
        const interval = settings.value.cron_interval_minutes
        const queued = yield* Effect.gen(function*() {
          const moved = yield* sql`UPDATE dream_schedules
            SET next_due_at = ${now}::timestamptz + make_interval(mins => ${interval}), updated_at = now()
            WHERE bank_id = ${bankId} AND next_due_at <= ${now} RETURNING bank_id`
          if (moved.length === 0) return false
          // Like the reference: no scheduled run while a dream run of the bank is waiting or running.
          const busy = yield* sql`SELECT 1 FROM operations WHERE bank_id = ${bankId} AND task_type = ${dreamTask}
            AND status IN ('pending', 'running') LIMIT 1`
          if (busy.length > 0) return false
          yield* queue.enqueue(bankId, dreamTask, dedupeKey(bankId, "cron", "trance"), {
            trigger_source: "cron",
            run_type: "trance"
          })
          return true
        }).pipe(sql.withTransaction, Effect.orDie)
        if (queued) {
          yield* Effect.logInfo("queued a scheduled trance run", { bankId })
          yield* actors.wake(bankId)
        }
      }
    })

  /** Banks with an expired open prediction and no check waiting or running get one. */
  const checkExpired = (now: Date) =>
    Effect.gen(function*() {
      const banks = yield* sql<{ bankId: string }>`
        SELECT DISTINCT p.bank_id FROM dream_predictions p
        WHERE p.status IN ('pending', 'unresolved') AND p.expires_at <= ${now}
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.bank_id = p.bank_id AND o.task_type = ${predictionCheckTask}
            AND o.status IN ('pending', 'running'))`.pipe(Effect.orDie)
      yield* Effect.forEach(banks, ({ bankId }) => queue.submitCheck(bankId), { discard: true })
    })

  /** The earliest future moment something becomes due; null when nothing ever will. */
  const nextDue = (now: Date) =>
    sql<{ at: Date | null }>`
      SELECT least(
        (SELECT min(next_due_at) FROM dream_schedules WHERE next_due_at > ${now}),
        (SELECT min(expires_at) FROM dream_predictions WHERE status IN ('pending', 'unresolved') AND expires_at > ${now})
      ) AS at`.pipe(Effect.orDie, Effect.map((rows) => rows[0]?.at ?? null))

  const loop = Effect.gen(function*() {
    let synced = yield* Clock.currentTimeMillis
    yield* syncAll(new Date(synced))
    while (true) {
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* fireDue(now)
      yield* checkExpired(now)
      const next = yield* nextDue(now)
      const due = next === null ? null : Math.min(Math.max(next.getTime() - now.getTime(), 0) + 5, longestSleepMillis)
      const wait = clustered ? Math.min(due ?? clusterResyncMillis, clusterResyncMillis) : due
      const woken = yield* wakeups.next(wait)
      const at = yield* Clock.currentTimeMillis
      if (woken.length > 0) {
        yield* Effect.forEach(new Set(woken), (bankId) => syncBank(bankId, new Date(at)), { discard: true })
      } else if (clustered && at - synced >= clusterResyncMillis) {
        synced = at
        yield* syncAll(new Date(at))
      }
    }
  })

  // A failure of one pass (the database briefly away) is logged and the loop starts again after a pause. On a
  // cluster only one runner schedules (a singleton), so a run falls due once however many nodes there are.
  yield* supervisedSingleton("dream-scheduler", loop)
}))
