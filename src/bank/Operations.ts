/**
 * The operations API shared by the REST handlers, the MCP tools and in-process callers: submit work to a
 * bank's actor, read status, details and results, cancel and retry.
 */
import { Context, Effect, Layer, Option } from "effect"
import { BankActors } from "./BankActors.ts"
import { Conflict, NotFound } from "../domain/Errors.ts"
import type { OperationDetail, OperationStatus } from "../domain/Operation.ts"
import type { ListFilter, NewOperation, OperationRecord } from "./OperationStore.ts"
import { OperationStore } from "./OperationStore.ts"
import { TaskRegistry } from "./TaskRegistry.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"

export const toListEntry = (operation: OperationRecord) => ({
  id: operation.id,
  task_type: operation.taskType,
  items_count: operation.itemsCount,
  document_id: operation.documentId,
  created_at: operation.createdAt.toISOString(),
  status: operation.status,
  error_message: operation.errorMessage
})

export class Operations extends Context.Service<Operations, {
  /** Stores the operation (the acknowledgement point: from here on it is never lost) and wakes the actor. */
  readonly submit: (operation: NewOperation) => Effect.Effect<OperationRecord>
  readonly list: (bankId: string, filter: ListFilter) => Effect.Effect<{
    readonly items: ReadonlyArray<OperationRecord>
    readonly total: number
  }>
  /** The operation with its sub-batches; an unknown id answers status `not_found`, as the spec asks. */
  readonly detail: (bankId: string, id: string) => Effect.Effect<typeof OperationDetail.Type>
  readonly result: (bankId: string, id: string) => Effect.Effect<OperationRecord, NotFound>
  readonly cancel: (bankId: string, id: string) => Effect.Effect<OperationStatus, NotFound | Conflict>
  readonly retry: (bankId: string, id: string) => Effect.Effect<OperationStatus, NotFound | Conflict>
  /** Deletes a finished operation's record; one still pending or running is refused (cancel it first). */
  readonly remove: (bankId: string, id: string) => Effect.Effect<void, NotFound | Conflict>
}>()("engram/bank/Operations") {
  static readonly layer = Layer.effect(
    Operations,
    Effect.gen(function*() {
      const store = yield* OperationStore
      const actors = yield* BankActors
      const registry = yield* TaskRegistry

      const submit = Effect.fn("Operations.submit")(function*(operation: NewOperation) {
        const created = yield* store.create(operation)
        yield* actors.wake(operation.bankId)
        return created
      })

      const detail = Effect.fn("Operations.detail")(function*(bankId: string, id: string) {
        const found = yield* store.find(bankId, id)
        if (Option.isNone(found)) return notFoundDetail(bankId, id)
        const operation = found.value
        const children = yield* store.children(operation.id)
        return {
          operation_id: operation.id,
          bank_id: operation.bankId,
          status: operation.status,
          task_type: operation.taskType,
          items_count: operation.itemsCount,
          document_id: operation.documentId,
          error_message: operation.errorMessage,
          attempts: operation.attempts,
          parent_operation_id: operation.parentId,
          child_operations: children.map((child) => ({
            operation_id: child.id,
            status: child.status,
            sub_batch_index: child.subBatchIndex,
            items_count: child.itemsCount,
            error_message: child.errorMessage
          })),
          stage: operation.stage ?? null,
          progress: withSnapshot(progressOf(operation.stageProgress) ?? batchProgress(children), {
            stage: operation.stage ?? (children.length > 0 ? "processing_batch" : operation.status),
            at: operation.updatedAt.toISOString()
          }),
          result_metadata: operation.status === "completed" ? resultObject(operation.result) : null,
          created_at: iso(operation.createdAt),
          updated_at: iso(operation.updatedAt),
          started_at: iso(operation.startedAt),
          completed_at: iso(operation.completedAt)
        }
      })

      const result = Effect.fn("Operations.result")(function*(bankId: string, id: string) {
        const found = yield* store.find(bankId, id)
        if (Option.isNone(found)) return yield* NotFound.of("operation", id)
        return found.value
      })

      const cancel = Effect.fn("Operations.cancel")(function*(bankId: string, id: string) {
        const outcome = yield* store.cancel(bankId, id)
        if (Option.isNone(outcome)) return yield* NotFound.of("operation", id)
        if (!outcome.value.cancelled) {
          return yield* new Conflict({
            detail: `operation '${id}' is already ${outcome.value.status} and cannot be cancelled`
          })
        }
        yield* actors.interrupt(id)
        // Once the handler is stopped, the task type undoes what was prepared for it (e.g. a pending snapshot).
        const cancelled = yield* store.find(bankId, id)
        if (Option.isSome(cancelled)) {
          const undo = yield* registry.cancelHandler(cancelled.value.taskType)
          if (undo !== undefined) yield* undo(cancelled.value)
        }
        return outcome.value.status
      })

      const retry = Effect.fn("Operations.retry")(function*(bankId: string, id: string) {
        const status = yield* store.retry(bankId, id)
        if (Option.isNone(status)) return yield* NotFound.of("operation", id)
        if (status.value !== "pending") {
          return yield* new Conflict({
            detail: `operation '${id}' is ${status.value}; only failed or cancelled operations can be retried`
          })
        }
        yield* actors.wake(bankId)
        return status.value
      })

      const remove = Effect.fn("Operations.remove")(function*(bankId: string, id: string) {
        const outcome = yield* store.remove(bankId, id)
        if (Option.isNone(outcome)) return yield* NotFound.of("operation", id)
        if (outcome.value.deleted) return
        if (outcome.value.parentId !== null) {
          return yield* new Conflict({
            detail:
              `operation '${id}' is a sub-batch of operation '${outcome.value.parentId}'; delete that operation instead`
          })
        }
        return yield* new Conflict({
          detail:
            `operation '${id}' is ${outcome.value.status}; only completed, failed or cancelled operations can be ` +
            "deleted (cancel it first)"
        })
      })

      return Operations.of({ submit, list: store.list, detail, result, cancel, retry, remove })
    })
  )
}

/** A task's JSON result when it is an object (the shape clients read as `result_metadata`). */
const resultObject = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : null

/** The `{done, total}` a task recorded with its stage, when it recorded one. */
const progressOf = (value: unknown): { done: number; total: number } | null => {
  const progress = value as { done?: unknown; total?: unknown } | null | undefined
  return typeof progress?.done === "number" && typeof progress.total === "number"
    ? { done: progress.done, total: progress.total }
    : null
}

/**
 * The progress with what Hindsight clients require of it: the stage it was taken in, when, and `processed` (the
 * same count as `done`).
 */
const withSnapshot = (
  progress: { readonly done: number; readonly total: number } | null,
  snapshot: { readonly stage: string; readonly at: string }
) => progress === null ? null : { ...progress, processed: progress.done, ...snapshot }

/** A batch that records no progress of its own has done the items of its completed sub-batches. */
const batchProgress = (
  children: ReadonlyArray<{ readonly status: string; readonly itemsCount: number }>
): { done: number; total: number } | null =>
  children.length === 0 ? null : {
    done: children.reduce((sum, child) => sum + (child.status === "completed" ? child.itemsCount : 0), 0),
    total: children.reduce((sum, child) => sum + child.itemsCount, 0)
  }

const notFoundDetail = (bankId: string, id: string): typeof OperationDetail.Type => ({
  operation_id: id,
  bank_id: bankId,
  status: "not_found",
  task_type: null,
  items_count: 0,
  document_id: null,
  error_message: null,
  attempts: 0,
  parent_operation_id: null,
  child_operations: [],
  created_at: null,
  updated_at: null,
  started_at: null,
  completed_at: null
})
