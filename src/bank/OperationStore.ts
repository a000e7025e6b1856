/**
 * The operations table: the source of truth for background work. The bank actors only claim and settle rows
 * here; every status change is a single conditional UPDATE, so a cancel racing a completion cannot be undone
 * and a crash leaves each row either pending, running (re-queued at start) or settled.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { OperationStatus } from "../domain/Operation.ts"
import { OperationStatus as StatusSchema } from "../domain/Operation.ts"
import { currentTraceParent } from "./QueuedFrom.ts"

const OperationRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  taskType: Schema.String,
  status: StatusSchema,
  itemsCount: Schema.Number,
  documentId: Schema.NullOr(Schema.String),
  parentId: Schema.NullOr(Schema.String),
  subBatchIndex: Schema.NullOr(Schema.Number),
  payload: Schema.Unknown,
  result: Schema.NullOr(Schema.Unknown),
  errorMessage: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  createdAt: Schema.Date,
  updatedAt: Schema.Date,
  startedAt: Schema.NullOr(Schema.Date),
  completedAt: Schema.NullOr(Schema.Date),
  /** The span that queued the operation (see QueuedFrom), or null when tracing was off. */
  traceParent: Schema.NullOr(Schema.String),
  /** How far a long task has got (see OperationStage); absent before migration 0020. */
  stage: Schema.optionalKey(Schema.NullOr(Schema.String)),
  stageProgress: Schema.optionalKey(Schema.NullOr(Schema.Unknown))
})
export type OperationRecord = typeof OperationRow.Type

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(OperationRow))

/** Which operations may be claimed beside a first one, and how many (`TaskRegistry.RunsTogether`). */
interface Together {
  readonly admits: (operation: OperationRecord) => boolean
  readonly operations: number
  readonly items: number
}

export interface NewOperation {
  readonly bankId: string
  readonly taskType: string
  readonly payload: unknown
  readonly itemsCount?: number
  readonly documentId?: string | null
  /** Sub-batches: the parent then only tracks them and settles when the last one settles. */
  readonly children?: ReadonlyArray<{ readonly payload: unknown; readonly itemsCount: number }>
}

export interface ListFilter {
  readonly status?: OperationStatus | undefined
  readonly taskType?: string | undefined
  readonly limit: number
  readonly offset: number
}

export class OperationStore extends Context.Service<OperationStore, {
  readonly create: (operation: NewOperation) => Effect.Effect<OperationRecord>
  readonly find: (bankId: string, id: string) => Effect.Effect<Option.Option<OperationRecord>>
  readonly list: (bankId: string, filter: ListFilter) => Effect.Effect<{
    readonly items: ReadonlyArray<OperationRecord>
    readonly total: number
  }>
  readonly children: (parentId: string) => Effect.Effect<ReadonlyArray<OperationRecord>>
  /** Atomically moves the oldest runnable pending operation of the bank to running. */
  readonly claimNext: (bankId: string) => Effect.Effect<Option.Option<OperationRecord>>
  /**
   * After `claimNext` took `first`: moves to running the operations queued right behind it that may run beside it
   * (same task type, admitted by `together`), stopping at the first that may not, so nothing jumps the queue.
   */
  readonly claimFollowing: (first: OperationRecord, together: Together) => Effect.Effect<
    ReadonlyArray<OperationRecord>
  >
  readonly complete: (id: string, result: unknown) => Effect.Effect<boolean>
  readonly fail: (id: string, message: string) => Effect.Effect<boolean>
  /** Gives a claimed operation back to the queue (shutdown, open circuit) without counting an attempt. */
  readonly release: (id: string) => Effect.Effect<void>
  /** Cancels a pending or running operation (and its sub-batches); `cancelled` tells whether it changed. */
  readonly cancel: (bankId: string, id: string) => Effect.Effect<
    Option.Option<{ readonly status: OperationStatus; readonly cancelled: boolean }>
  >
  readonly retry: (bankId: string, id: string) => Effect.Effect<Option.Option<OperationStatus>>
  /**
   * Deletes a finished (completed, failed, cancelled) top-level operation with its sub-batches, in one conditional
   * statement so an operation that starts meanwhile is never deleted. None when there is no such operation.
   */
  readonly remove: (bankId: string, id: string) => Effect.Effect<
    Option.Option<{ readonly deleted: boolean; readonly status: OperationStatus; readonly parentId: string | null }>
  >
  /** At start: operations left running by a process that died go back to pending. Returns their banks. */
  readonly recoverInterrupted: Effect.Effect<ReadonlyArray<string>>
  readonly banksWithPendingWork: Effect.Effect<ReadonlyArray<string>>
  readonly countByTypeAndStatus: Effect.Effect<ReadonlyArray<{ taskType: string; status: string; count: number }>>
}>()("engram/bank/OperationStore") {
  static readonly layer = Layer.effect(
    OperationStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(decodeRows), Effect.orDie)
      const first = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        rows(query).pipe(Effect.map((found) => Option.fromNullishOr(found[0])))

      const create = Effect.fn("OperationStore.create")(function*(operation: NewOperation) {
        const id = crypto.randomUUID()
        const children = operation.children ?? []
        const traceParent = yield* currentTraceParent
        const insert = (row: Record<string, unknown>) =>
          rows(sql`INSERT INTO operations ${sql.insert(row)} RETURNING *`)
        const parent = yield* insert({
          id,
          bankId: operation.bankId,
          taskType: operation.taskType,
          status: "pending",
          itemsCount: operation.itemsCount ?? 0,
          documentId: operation.documentId ?? null,
          payload: JSON.stringify(operation.payload ?? {}),
          traceParent
        }).pipe(
          Effect.tap(() =>
            Effect.forEach(children, (child, index) =>
              insert({
                id: crypto.randomUUID(),
                bankId: operation.bankId,
                taskType: operation.taskType,
                status: "pending",
                itemsCount: child.itemsCount,
                documentId: operation.documentId ?? null,
                parentId: id,
                subBatchIndex: index,
                payload: JSON.stringify(child.payload ?? {}),
                traceParent
              }), { discard: true })
          ),
          sql.withTransaction,
          Effect.orDie
        )
        return parent[0]!
      })

      /** A parent settles from its children: failed if any failed, cancelled if all were, else completed. */
      const settleParent = (parentId: string | null) =>
        parentId === null ? Effect.void : sql`
          UPDATE operations p SET
            status = CASE
              WHEN c.failed > 0 THEN 'failed'
              WHEN c.cancelled = c.total THEN 'cancelled'
              ELSE 'completed' END,
            error_message = CASE WHEN c.failed > 0 THEN c.failed || ' of ' || c.total || ' sub-batches failed: ' || c.first_error END,
            result = jsonb_build_object('sub_batches', c.total, 'failed', c.failed, 'cancelled', c.cancelled),
            completed_at = now(), updated_at = now()
          FROM (SELECT count(*) AS total,
                  count(*) FILTER (WHERE status = 'failed') AS failed,
                  count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
                  count(*) FILTER (WHERE status IN ('pending', 'running')) AS open,
                  min(error_message) AS first_error
                FROM operations WHERE parent_id = ${parentId}) c
          WHERE p.id = ${parentId} AND c.open = 0 AND p.status IN ('pending', 'running')`.pipe(
          Effect.asVoid,
          Effect.orDie
        )

      const markParentRunning = (parentId: string | null) =>
        parentId === null ? Effect.void : sql`
          UPDATE operations SET status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
          WHERE id = ${parentId} AND status = 'pending'`.pipe(Effect.asVoid, Effect.orDie)

      const settle = (id: string, status: "completed" | "failed", result: unknown, message: string | null) =>
        rows(sql`
          UPDATE operations SET status = ${status}, result = ${result === null ? null : JSON.stringify(result)},
            error_message = ${message}, completed_at = now(), updated_at = now()
          WHERE id = ${id} AND status = 'running' RETURNING *`).pipe(
          Effect.tap((settled) => settled[0] ? settleParent(settled[0].parentId) : Effect.void),
          Effect.map((settled) => settled.length > 0)
        )

      const claimNext = Effect.fn("OperationStore.claimNext")(function*(bankId: string) {
        const claimed = yield* first(sql`
          UPDATE operations SET status = 'running', attempts = attempts + 1,
            started_at = now(), updated_at = now()
          WHERE id = (
            SELECT o.id FROM operations o
            WHERE o.bank_id = ${bankId} AND o.status = 'pending'
              AND NOT EXISTS (SELECT 1 FROM operations c WHERE c.parent_id = o.id)
            ORDER BY o.created_at, o.sub_batch_index NULLS FIRST
            LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING *`)
        if (Option.isSome(claimed)) yield* markParentRunning(claimed.value.parentId)
        return claimed
      })

      const claimFollowing = Effect.fn("OperationStore.claimFollowing")(function*(
        first: OperationRecord,
        together: Together
      ) {
        if (together.operations <= 1) return []
        const queued = yield* rows(sql`
          SELECT o.* FROM operations o
          WHERE o.bank_id = ${first.bankId} AND o.status = 'pending'
            AND NOT EXISTS (SELECT 1 FROM operations c WHERE c.parent_id = o.id)
          ORDER BY o.created_at, o.sub_batch_index NULLS FIRST
          LIMIT ${together.operations - 1}`)
        const taken: Array<string> = []
        let items = first.itemsCount
        for (const operation of queued) {
          items += operation.itemsCount
          if (operation.taskType !== first.taskType || !together.admits(operation) || items > together.items) break
          taken.push(operation.id)
        }
        if (taken.length === 0) return []
        // Claimed by another node meanwhile: not pending any more, so not taken here.
        const claimed = yield* rows(sql`
          UPDATE operations SET status = 'running', attempts = attempts + 1, started_at = now(), updated_at = now()
          WHERE id IN ${sql.in(taken)} AND status = 'pending'
          RETURNING *`)
        const parents = new Set(claimed.map((operation) => operation.parentId))
        yield* Effect.forEach(parents, markParentRunning, { discard: true })
        return claimed
      })

      const cancel = Effect.fn("OperationStore.cancel")(function*(bankId: string, id: string) {
        const current = yield* first(sql`SELECT * FROM operations WHERE bank_id = ${bankId} AND id = ${id}`)
        if (Option.isNone(current)) return Option.none()
        const cancelled = yield* rows(sql`
          UPDATE operations SET status = 'cancelled', completed_at = now(), updated_at = now()
          WHERE bank_id = ${bankId} AND (id = ${id} OR parent_id = ${id}) AND status IN ('pending', 'running')
          RETURNING *`)
        yield* settleParent(current.value.parentId)
        const mine = cancelled.find((row) => row.id === id)
        return Option.some({ status: mine ? mine.status : current.value.status, cancelled: mine !== undefined })
      })

      const retry = Effect.fn("OperationStore.retry")(function*(bankId: string, id: string) {
        const current = yield* first(sql`SELECT * FROM operations WHERE bank_id = ${bankId} AND id = ${id}`)
        if (Option.isNone(current)) return Option.none()
        if (current.value.status !== "failed" && current.value.status !== "cancelled") {
          return Option.some(current.value.status)
        }
        // A batch retries only the sub-batches that did not complete.
        yield* sql`
          UPDATE operations SET status = 'pending', error_message = NULL, result = NULL, completed_at = NULL,
            updated_at = now()
          WHERE bank_id = ${bankId} AND (id = ${id} OR (parent_id = ${id} AND status IN ('failed', 'cancelled')))
        `.pipe(Effect.orDie)
        yield* sql`UPDATE operations SET status = 'running', completed_at = NULL, updated_at = now()
          WHERE id = ${current.value.parentId ?? ""} AND status IN ('failed', 'cancelled')`.pipe(Effect.orDie)
        return Option.some<OperationStatus>("pending")
      })

      const remove = Effect.fn("OperationStore.remove")(function*(bankId: string, id: string) {
        const current = yield* first(sql`SELECT * FROM operations WHERE bank_id = ${bankId} AND id = ${id}`)
        if (Option.isNone(current)) return Option.none()
        const deleted = current.value.parentId !== null ? [] : yield* sql`
          DELETE FROM operations
          WHERE bank_id = ${bankId} AND id = ${id} AND parent_id IS NULL AND status IN ('completed', 'failed', 'cancelled')
          RETURNING id`.pipe(Effect.orDie)
        return Option.some({
          deleted: deleted.length > 0,
          status: current.value.status,
          parentId: current.value.parentId
        })
      })

      const list = Effect.fn("OperationStore.list")(function*(bankId: string, filter: ListFilter) {
        const where = sql.and([
          sql`bank_id = ${bankId}`,
          sql`parent_id IS NULL`,
          ...(filter.status ? [sql`status = ${filter.status}`] : []),
          ...(filter.taskType ? [sql`task_type = ${filter.taskType}`] : [])
        ])
        const [items, total] = yield* Effect.all([
          rows(sql`SELECT * FROM operations WHERE ${where} ORDER BY created_at DESC, id
            LIMIT ${filter.limit} OFFSET ${filter.offset}`),
          sql`SELECT count(*)::int AS count FROM operations WHERE ${where}`.pipe(Effect.orDie)
        ])
        return { items, total: Number(total[0]?.["count"] ?? 0) }
      })

      return OperationStore.of({
        remove,
        create,
        find: (bankId, id) => first(sql`SELECT * FROM operations WHERE bank_id = ${bankId} AND id = ${id}`),
        list,
        children: (parentId) =>
          rows(sql`SELECT * FROM operations WHERE parent_id = ${parentId} ORDER BY sub_batch_index`),
        claimNext,
        claimFollowing,
        complete: (id, result) => settle(id, "completed", result, null),
        fail: (id, message) => settle(id, "failed", null, message),
        release: (id) =>
          sql`UPDATE operations SET status = 'pending', attempts = greatest(attempts - 1, 0), updated_at = now()
            WHERE id = ${id} AND status = 'running'`.pipe(Effect.asVoid, Effect.orDie),
        cancel,
        retry,
        recoverInterrupted: sql`
          UPDATE operations o SET status = 'pending', updated_at = now()
          WHERE status = 'running' AND NOT EXISTS (SELECT 1 FROM operations c WHERE c.parent_id = o.id)
          RETURNING bank_id`.pipe(
          Effect.orDie,
          Effect.map((found) => [...new Set(found.map((row) => String(row["bankId"])))])
        ),
        banksWithPendingWork: sql`SELECT DISTINCT bank_id FROM operations WHERE status = 'pending'`.pipe(
          Effect.orDie,
          Effect.map((found) => found.map((row) => String(row["bankId"])))
        ),
        countByTypeAndStatus: sql`SELECT task_type, status, count(*)::int AS count FROM operations
          GROUP BY task_type, status`.pipe(
          Effect.orDie,
          Effect.map((found) =>
            found.map((row) => ({
              taskType: String(row["taskType"]),
              status: String(row["status"]),
              count: Number(row["count"])
            }))
          )
        )
      })
    })
  )
}
