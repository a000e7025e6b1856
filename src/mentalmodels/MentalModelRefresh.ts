/**
 * The `refresh_mental_model` task: runs the refresh (RefreshRun.ts) and saves what it produced — the content, the
 * reflect payload (with the run's trace when the trigger keeps it) and a history row — in one transaction.
 * Idempotent: a re-run of an operation that already saved its refresh returns that refresh.
 */
import { Effect, Option, Schema } from "effect"
import { RefreshReason } from "../domain/MentalModel.ts"
import { usageJson } from "../models/Llm.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import { refreshTaskType } from "./MentalModels.ts"
import { MentalModelStore } from "./MentalModelStore.ts"
import { refreshResult } from "./MentalModelViews.ts"
import { makeRefreshRun, refreshTrace } from "./RefreshRun.ts"

const Payload = Schema.Struct({ mental_model_id: Schema.String, reason: RefreshReason })
const decodePayload = Schema.decodeUnknownEffect(Payload)

const withoutTrace = ({ trace: _trace, ...rest }: Record<string, unknown>) => rest

export const MentalModelRefreshTask = TaskRegistry.handler(
  refreshTaskType,
  Effect.gen(function*() {
    const store = yield* MentalModelStore
    const run = yield* makeRefreshRun

    return (operation) =>
      Effect.gen(function*() {
        const payload = yield* decodePayload(operation.payload).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the stored refresh payload is invalid", retryable: false }))
        )
        const done = yield* store.refreshOf(operation.id)
        if (Option.isSome(done)) return refreshResult(done.value)
        const found = yield* store.find(operation.bankId, payload.mental_model_id)
        if (Option.isNone(found)) {
          return { mental_model_id: payload.mental_model_id, skipped: "the mental model was deleted" }
        }
        const model = found.value
        const plan = yield* run(model, { operationId: operation.id, withTrace: model.keepTrace })
        // Only the latest refresh's trace is kept: it rides on the reflect payload the next refresh replaces.
        const untraced = plan.reflectResponse === null ? null : withoutTrace(plan.reflectResponse)
        const reflectResponse = model.keepTrace && untraced !== null
          ? { ...untraced, trace: refreshTrace(plan, yield* store.databaseNow) }
          : untraced

        const saved = yield* store.saveRefresh(model.bankId, model.id, {
          operationId: operation.id,
          startedAt: plan.startedAt,
          mode: plan.mode,
          requestedMode: plan.requestedMode,
          fallbackReason: plan.fallbackReason,
          reason: payload.reason,
          sourceQuery: model.sourceQuery,
          previousContent: model.lastRefreshedAt === null ? null : model.content,
          content: plan.content,
          reflectResponse,
          newFactIds: plan.facts.map((fact) => fact.id),
          changes: plan.changes
        })
        if (Option.isNone(saved)) return { mental_model_id: model.id, skipped: "the mental model was deleted" }
        return { ...refreshResult(saved.value), usage: usageJson(plan.usage) }
      })
  })
)
