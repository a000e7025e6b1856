/** `engram operations list|watch|cancel|retry`: a bank's background work. */
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { OperationListEntry } from "../../domain/Operation.ts"
import { bankPath, EngramClient, withClient } from "../EngramClient.ts"
import { emit, renderTable, shorten } from "../Output.ts"
import { progressFlag, watchOperations } from "../Progress.ts"
import { bankIdArgument } from "./Banks.ts"

const operationIdArgument = Argument.String("operation-id").pipe(Argument.withDescription("the operation's id"))

const list = Command.make("list", {
  bankId: bankIdArgument,
  status: Flag.Literals("status", ["pending", "running", "completed", "failed", "cancelled"]).pipe(
    Flag.withDescription("only operations in this status"),
    Flag.optional
  ),
  taskType: Flag.String("type").pipe(Flag.withDescription("only this task type (e.g. batch_retain)"), Flag.optional),
  limit: Flag.Int("limit").pipe(Flag.withDescription("at most this many (1–1000)"), Flag.withDefault(50))
}, ({ bankId, limit, status, taskType }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("GET", bankPath(bankId, "operations"), {
      query: { limit, status: Option.getOrUndefined(status), task_type: Option.getOrUndefined(taskType) }
    })
    yield* emit(body, () =>
      `${body.total} operations; worker ${
        body.worker.active ? "active" : "idle"
      }, circuit ${body.worker.circuit_state}\n` +
      renderTable(
        ["operation_id", "task_type", "status", "items", "created_at", "error"],
        body.operations.map((operation: typeof OperationListEntry.Encoded) => [
          operation.id,
          operation.task_type,
          operation.status,
          operation.items_count,
          operation.created_at,
          operation.error_message === null ? null : shorten(operation.error_message, 60)
        ])
      ))
  }))).pipe(Command.withDescription("List a bank's operations, newest first"))

const watch = Command.make("watch", {
  bankId: bankIdArgument,
  operationId: operationIdArgument,
  progress: progressFlag
}, ({ bankId, operationId, progress }) =>
  withClient(Effect.gen(function*() {
    const [detail] = yield* watchOperations(bankId, [operationId], { label: operationId, mode: progress })
    yield* emit(detail, () => `operation ${operationId} ${detail?.status}`)
  }))).pipe(Command.withDescription("Follow an operation until it settles; exit 1 if it failed or was cancelled"))

const cancel = Command.make(
  "cancel",
  { bankId: bankIdArgument, operationId: operationIdArgument },
  ({ bankId, operationId }) =>
    withClient(Effect.gen(function*() {
      const client = yield* EngramClient
      const body = yield* client.json("DELETE", bankPath(bankId, "operations", operationId))
      yield* emit(body, () => `operation ${operationId} ${body.status}`)
    }))
).pipe(Command.withDescription("Cancel a pending or running operation (409, exit 3, when it has already finished)"))

const retry = Command.make("retry", {
  bankId: bankIdArgument,
  operationId: operationIdArgument,
  wait: Flag.Boolean("wait").pipe(
    Flag.withDescription("follow the retried operation until it settles"),
    Flag.withDefault(false)
  ),
  progress: progressFlag
}, ({ bankId, operationId, progress, wait }) =>
  withClient(Effect.gen(function*() {
    const client = yield* EngramClient
    const body = yield* client.json("POST", bankPath(bankId, "operations", operationId, "retry"))
    if (!wait) return yield* emit(body, () => `operation ${operationId} ${body.status} again`)
    const [detail] = yield* watchOperations(bankId, [operationId], { label: operationId, mode: progress })
    yield* emit(detail, () => `operation ${operationId} ${detail?.status}`)
  }))).pipe(Command.withDescription("Run a failed or cancelled operation again"))

export const operationsCommand = Command.make("operations").pipe(
  Command.withDescription("List, follow, cancel and retry a bank's background operations"),
  Command.withSubcommands([list, watch, cancel, retry])
)
