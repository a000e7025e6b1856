/**
 * How trajectory and entity-intelligence work is queued, by every path that asks for it (a manual request, a retain,
 * a removal, a sweep slice): a durable operation, reusing one that is still waiting for the same thing (same task type
 * and dedupe key) rather than queueing another — a waiting run reads the facts when it starts, so it serves every
 * request made before then. `queue` writes in the caller's transaction and does not wake the bank (a caller inside a
 * transaction wakes it after the commit); `request` queues and wakes.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../bank/BankActors.ts"
import { OperationStore } from "../bank/OperationStore.ts"

export const trajectoryTask = "entity_trajectory_recompute"
export const intelligenceTask = "entity_intelligence_recompute"

/**
 * The dedupe key of the trajectory recomputes that removals (deletes, forget, replace, invalidation, the sweeps) and
 * restores queue: one waiting run per bank takes every such request's entities, whichever path made it.
 */
export const changedFactsKey = "facts-changed"

export interface QueuedRecompute {
  readonly operationId: string
  readonly status: string
  readonly deduplicated: boolean
}

export interface EntityWork {
  readonly taskType: string
  readonly dedupeKey: string
  /** Stored with the operation (its `dedupe_key` and `entity_ids` are set here). */
  readonly payload: Record<string, unknown>
  /**
   * The entities the work is about, added to the set of a waiting operation with the same key (which then grows);
   * absent for work that chooses its own entities when it runs (the stale ones, or the whole bank).
   */
  readonly entityIds?: Iterable<string>
}

export const makeEntityRequests = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* OperationStore
  const actors = yield* BankActors

  const waiting = (bankId: string, work: EntityWork) =>
    sql`SELECT id FROM operations
      WHERE bank_id = ${bankId} AND task_type = ${work.taskType} AND status = 'pending' AND parent_id IS NULL
        AND payload->>'dedupe_key' = ${work.dedupeKey}
      ORDER BY created_at LIMIT 1`

  /**
   * The entities added to the waiting operation's, in one statement that re-checks it is still pending: a run that
   * claimed it first (it may already have read its entity list) is left alone and a new operation is queued, and two
   * callers adding at once each add to the set the other left (what is new is computed from the row it updates).
   * Only the ids not in the set yet are appended: a sweep's slices add to a set that can reach thousands of entities
   * (re-sorting the whole set each time cost about four times as much at 5,000).
   */
  const addTo = (bankId: string, work: EntityWork, entityIds: ReadonlyArray<string>) => {
    const added = sql`(SELECT coalesce(jsonb_agg(x), '[]'::jsonb) FROM unnest(${entityIds}::text[]) x
      WHERE NOT coalesce(o.payload->'entity_ids' ? x, false))`
    return sql<{ id: string }>`UPDATE operations o SET payload = jsonb_set(o.payload, '{entity_ids}',
        CASE WHEN jsonb_typeof(o.payload->'entity_ids') = 'array' THEN o.payload->'entity_ids' ELSE '[]'::jsonb END
          || ${added}),
        items_count = o.items_count + jsonb_array_length(${added}), updated_at = now()
      WHERE o.id = (${waiting(bankId, work)}) AND o.status = 'pending' RETURNING o.id`
  }

  /**
   * Queues the work, or reuses a waiting operation with the same key (adding the entities to its set), in the
   * caller's transaction; wakes nothing. Only pending operations are reused: a running one may already have read the
   * facts this request is about.
   */
  const queue = Effect.fn("EntityRequests.queue")(function*(bankId: string, work: EntityWork) {
    const entityIds = work.entityIds === undefined ? undefined : [...new Set(work.entityIds)].sort()
    const reused = yield* (entityIds === undefined ? waiting(bankId, work) : addTo(bankId, work, entityIds)).pipe(
      Effect.orDie
    )
    const found = reused[0]?.["id"]
    if (typeof found === "string") {
      return { operationId: found, status: "pending", deduplicated: true } satisfies QueuedRecompute
    }
    const created = yield* store.create({
      bankId,
      taskType: work.taskType,
      payload: {
        ...work.payload,
        ...(entityIds === undefined ? {} : { entity_ids: entityIds }),
        dedupe_key: work.dedupeKey
      },
      ...(entityIds === undefined ? {} : { itemsCount: entityIds.length })
    })
    return { operationId: created.id, status: "pending", deduplicated: false } satisfies QueuedRecompute
  })

  /** Queues the work (or finds it waiting) and wakes the bank: for callers outside a transaction. */
  const request = Effect.fn("EntityRequests.request")(function*(bankId: string, work: EntityWork) {
    const queued = yield* queue(bankId, work)
    yield* actors.wake(bankId)
    return queued
  })

  /**
   * The trajectories of these entities computed again because facts they run through changed (removed, or restored):
   * queued in the caller's transaction under `changedFactsKey`, so one waiting run takes them all. False when there is
   * none to queue; the caller wakes the bank after its commit.
   */
  const queueTrajectories = (bankId: string, entityIds: Iterable<string>, trigger: string) =>
    Effect.suspend(() => {
      const ids = [...entityIds]
      if (ids.length === 0) return Effect.succeed(false)
      return queue(bankId, {
        taskType: trajectoryTask,
        dedupeKey: changedFactsKey,
        payload: { trigger },
        entityIds: ids
      })
        .pipe(Effect.as(true))
    })

  /** Whether work of the task type is waiting or running for the bank (automatic triggers then stay quiet). */
  const inFlight = Effect.fn("EntityRequests.inFlight")(function*(bankId: string, taskType: string) {
    const rows = yield* sql`SELECT 1 FROM operations WHERE bank_id = ${bankId} AND task_type = ${taskType}
      AND status IN ('pending', 'running') AND parent_id IS NULL LIMIT 1`.pipe(Effect.orDie)
    return rows.length > 0
  })

  return { queue, request, queueTrajectories, inFlight }
})
