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

/**
 * Operations of one task type that a bank's actor may run at once: the ones queued right after the first, while each
 * is admitted, up to a count and a number of items. Retains register it so that queued retains share transactions
 * (their writes meet in the group commit); every operation still runs, settles and fails on its own.
 */
export interface RunsTogether {
  readonly admits: (operation: OperationRecord) => boolean
  readonly operations: number
  readonly items: number
}

export class TaskRegistry extends Context.Service<TaskRegistry, {
  readonly register: (
    taskType: string,
    handler: TaskHandler,
    options?: { readonly runsTogether?: RunsTogether }
  ) => Effect.Effect<void>
  readonly get: (taskType: string) => Effect.Effect<TaskHandler | undefined>
  /** How operations of the type may run together; undefined when they run one at a time. */
  readonly runsTogether: (taskType: string) => Effect.Effect<RunsTogether | undefined>
  readonly taskTypes: Effect.Effect<ReadonlyArray<string>>
  readonly onCancel: (taskType: string, handler: CancelHandler) => Effect.Effect<void>
  readonly cancelHandler: (taskType: string) => Effect.Effect<CancelHandler | undefined>
}>()("engram/bank/TaskRegistry") {
  static readonly layer = Layer.sync(TaskRegistry, () => {
    const handlers = new Map<string, TaskHandler>()
    const cancelHandlers = new Map<string, CancelHandler>()
    const together = new Map<string, RunsTogether>()
    return TaskRegistry.of({
      register: (taskType, handler, options) =>
        Effect.sync(() => {
          handlers.set(taskType, handler)
          if (options?.runsTogether === undefined) together.delete(taskType)
          else together.set(taskType, options.runsTogether)
        }),
      get: (taskType) => Effect.sync(() => handlers.get(taskType)),
      runsTogether: (taskType) => Effect.sync(() => together.get(taskType)),
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
