/**
 * The table of background task types. Features register a handler for their task type when their layer is
 * built (retain registers `batch_retain`, consolidation registers `consolidate`, ...); the engine that runs
 * operations knows nothing about any of them.
 */
import { Context, Data, Effect, Layer } from "effect"
import type { OperationRecord } from "./OperationStore.ts"

/** A task failure. `retryable` failures are retried with backoff before the operation is marked failed. */
export class TaskFailure extends Data.TaggedError("TaskFailure")<{
  readonly message: string
  readonly retryable: boolean
}> {}

/** Runs one operation and returns its JSON result. Must be idempotent: a crash re-runs it from the start. */
export type TaskHandler = (operation: OperationRecord) => Effect.Effect<unknown, TaskFailure>

/**
 * Undoes what the submitter of a task prepared for it (a pending snapshot, staged bytes), once its operation is
 * cancelled: the handler may never have run, or was interrupted half way.
 */
export type CancelHandler = (operation: OperationRecord) => Effect.Effect<void>

export class TaskRegistry extends Context.Service<TaskRegistry, {
  readonly register: (taskType: string, handler: TaskHandler) => Effect.Effect<void>
  readonly get: (taskType: string) => Effect.Effect<TaskHandler | undefined>
  readonly taskTypes: Effect.Effect<ReadonlyArray<string>>
  readonly onCancel: (taskType: string, handler: CancelHandler) => Effect.Effect<void>
  readonly cancelHandler: (taskType: string) => Effect.Effect<CancelHandler | undefined>
}>()("engram/bank/TaskRegistry") {
  static readonly layer = Layer.sync(TaskRegistry, () => {
    const handlers = new Map<string, TaskHandler>()
    const cancelHandlers = new Map<string, CancelHandler>()
    return TaskRegistry.of({
      register: (taskType, handler) => Effect.sync(() => void handlers.set(taskType, handler)),
      get: (taskType) => Effect.sync(() => handlers.get(taskType)),
      taskTypes: Effect.sync(() => [...handlers.keys()]),
      onCancel: (taskType, handler) => Effect.sync(() => void cancelHandlers.set(taskType, handler)),
      cancelHandler: (taskType) => Effect.sync(() => cancelHandlers.get(taskType))
    })
  })

  /** A layer that registers one handler built from the services it needs. */
  static readonly handler = <E, R>(taskType: string, make: Effect.Effect<TaskHandler, E, R>) =>
    Layer.effectDiscard(
      Effect.gen(function*() {
        const registry = yield* TaskRegistry
        yield* registry.register(taskType, yield* make)
      })
    )
}
