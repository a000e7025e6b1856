/**
 * The mental-model API shared by REST, MCP and in-process callers: create (which queues the first generation),
 * read, list, update, delete, refresh, history, clear and dry-run refresh. Content is never generated here: every
 * generation runs as a `refresh_mental_model` operation (see MentalModelRefresh.ts), so an acknowledged create or
 * refresh survives a crash; a dry run computes the same refresh and writes nothing.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../bank/BankActors.ts"
import { Banks } from "../bank/Banks.ts"
import { AccessTelemetry } from "../activity/AccessTelemetry.ts"
import { Conflict, NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import type {
  CreateMentalModelRequest,
  ListTagsMatch,
  MentalModelDryRunRefreshResult,
  MentalModelHistoryEntry,
  MentalModelResponse,
  MentalModelTrigger,
  MentalModelTriggerInput,
  RefreshReason,
  UpdateMentalModelRequest
} from "../domain/MentalModel.ts"
import { defaultMentalModelMaxTokens, defaultTrigger } from "../domain/MentalModel.ts"
import { OperationStore } from "../bank/OperationStore.ts"
import { responseValidator } from "../reflect/StructuredOutput.ts"
import { toDryRunResult } from "./DryRunRefresh.ts"
import { makeRefreshRun } from "./RefreshRun.ts"
import { MentalModelStore } from "./MentalModelStore.ts"
import { toHistoryEntry, toMentalModelResponse } from "./MentalModelViews.ts"
import { type RefreshPayload, refreshTaskType } from "./RefreshTask.ts"

export { type RefreshPayload, refreshTaskType } from "./RefreshTask.ts"

/** Absent keys keep what is stored; `response_schema: null` removes the schema. */
const mergeTrigger = (
  base: MentalModelTrigger,
  input: MentalModelTriggerInput | null | undefined
): MentalModelTrigger => ({
  mode: input?.mode ?? base.mode,
  refresh_after_consolidation: input?.refresh_after_consolidation ?? base.refresh_after_consolidation,
  keep_trace: input?.keep_trace ?? base.keep_trace,
  response_schema: input?.response_schema === undefined ? base.response_schema : input.response_schema
})

/** A response_schema that cannot be enforced is refused when it is set, not at the first refresh. */
const checkResponseSchema = (input: MentalModelTriggerInput | null | undefined) => {
  const schema = input?.response_schema
  if (schema === undefined || schema === null) return Effect.void
  const validator = responseValidator(schema)
  return Result.isSuccess(validator)
    ? Effect.void
    : Effect.fail(ValidationError.single("trigger.response_schema", validator.failure.errors[0]?.message ?? "unusable"))
}

/** A readable id from the name ("Team preferences" → "team-preferences"), within the id rule. */
const slugOf = (name: string) => {
  const slug = name.normalize("NFKD").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 48)
    .replace(/-+$/, "")
  return slug === "" ? "model" : slug
}

export class MentalModels extends Context.Service<MentalModels, {
  readonly create: (
    bankId: string,
    request: CreateMentalModelRequest
  ) => Effect.Effect<
    { readonly mentalModelId: string; readonly operationId: string },
    NotFound | Conflict | ValidationError
  >
  readonly get: (bankId: string, id: string) => Effect.Effect<MentalModelResponse, NotFound>
  readonly list: (bankId: string, filter: {
    readonly tags: ReadonlyArray<string>
    readonly tagsMatch: ListTagsMatch
    readonly limit: number
    readonly offset: number
  }) => Effect.Effect<ReadonlyArray<MentalModelResponse>, NotFound>
  readonly update: (
    bankId: string,
    id: string,
    request: UpdateMentalModelRequest
  ) => Effect.Effect<MentalModelResponse, NotFound | ValidationError>
  readonly remove: (bankId: string, id: string) => Effect.Effect<void, NotFound>
  readonly history: (bankId: string, id: string) => Effect.Effect<ReadonlyArray<MentalModelHistoryEntry>, NotFound>
  /** Queues a refresh in the model's trigger mode. */
  readonly refresh: (bankId: string, id: string) => Effect.Effect<{ readonly operationId: string }, NotFound>
  /**
   * Queues a refresh of every model with `refresh_after_consolidation`, skipping models that already have one
   * waiting (a burst of consolidations then costs one refresh, not one each). Returns the queued operation ids.
   */
  readonly refreshAfterConsolidation: (bankId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Empties the content so the next refresh is a full one; the definition (query, tags, trigger) stays. */
  readonly clear: (bankId: string, id: string) => Effect.Effect<MentalModelResponse, NotFound>
  /** What a refresh would produce now, by the same pipeline, writing nothing. */
  readonly dryRunRefresh: (
    bankId: string,
    id: string
  ) => Effect.Effect<MentalModelDryRunRefreshResult, NotFound | ServiceUnavailable>
}>()("engram/mentalmodels/MentalModels") {
  static readonly layer = Layer.effect(
    MentalModels,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* MentalModelStore
      const operations = yield* OperationStore
      const actors = yield* BankActors
      const banks = yield* Banks
      const telemetry = yield* AccessTelemetry
      const refreshRun = yield* makeRefreshRun

      const found = Effect.fn("MentalModels.found")(function*(bankId: string, id: string) {
        yield* banks.get(bankId)
        const model = yield* store.find(bankId, id)
        if (Option.isNone(model)) return yield* NotFound.of("mental model", id)
        return model.value
      })

      const queueRefresh = (bankId: string, id: string, reason: RefreshReason) =>
        operations.create({
          bankId,
          taskType: refreshTaskType,
          payload: { mental_model_id: id, reason } satisfies RefreshPayload,
          itemsCount: 1
        })

      const create = Effect.fn("MentalModels.create")(function*(bankId: string, request: CreateMentalModelRequest) {
        yield* checkResponseSchema(request.trigger)
        yield* banks.get(bankId)
        const model = {
          bankId,
          name: request.name.trim(),
          sourceQuery: request.source_query.trim(),
          tags: [...new Set(request.tags ?? [])],
          maxTokens: request.max_tokens ?? defaultMentalModelMaxTokens,
          trigger: mergeTrigger(defaultTrigger, request.trigger)
        }
        // The model and its first generation are stored together: a model never exists without the operation
        // that fills it. The actor is woken only after the commit, so it cannot miss the new row.
        const created = yield* Effect.gen(function*() {
          const chosen = request.id ?? null
          let id: string | undefined
          if (chosen !== null) {
            if (!(yield* store.insert({ ...model, id: chosen }))) {
              return yield* new Conflict({ detail: `mental model '${chosen}' already exists in bank '${bankId}'` })
            }
            id = chosen
          } else {
            const base = slugOf(model.name)
            for (let attempt = 1; id === undefined; attempt++) {
              const candidate = attempt === 1
                ? base
                : attempt <= 20
                ? `${base}-${attempt}`
                : `${base}-${crypto.randomUUID().slice(0, 8)}`
              if (yield* store.insert({ ...model, id: candidate })) id = candidate
            }
          }
          const operation = yield* queueRefresh(bankId, id, "created")
          return { mentalModelId: id, operationId: operation.id }
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
        yield* actors.wake(bankId)
        return created
      })

      const update = Effect.fn("MentalModels.update")(function*(
        bankId: string,
        id: string,
        request: UpdateMentalModelRequest
      ) {
        yield* checkResponseSchema(request.trigger)
        const current = yield* found(bankId, id)
        const updated = yield* store.update(bankId, id, {
          name: request.name?.trim() ?? undefined,
          sourceQuery: request.source_query?.trim() ?? undefined,
          tags: request.tags === null || request.tags === undefined ? undefined : [...new Set(request.tags)],
          maxTokens: request.max_tokens ?? undefined,
          trigger: request.trigger === null || request.trigger === undefined
            ? undefined
            : mergeTrigger({
              mode: current.triggerMode,
              refresh_after_consolidation: current.refreshAfterConsolidation,
              keep_trace: current.keepTrace,
              response_schema: current.responseSchema
            }, request.trigger)
        })
        if (Option.isNone(updated)) return yield* NotFound.of("mental model", id)
        return toMentalModelResponse(updated.value)
      })

      const refresh = Effect.fn("MentalModels.refresh")(function*(bankId: string, id: string) {
        yield* found(bankId, id)
        const operation = yield* queueRefresh(bankId, id, "manual")
        yield* actors.wake(bankId)
        return { operationId: operation.id }
      })

      const refreshAfterConsolidation = Effect.fn("MentalModels.refreshAfterConsolidation")(function*(bankId: string) {
        const models = yield* store.refreshedAfterConsolidation(bankId)
        if (models.length === 0) return []
        const waiting = yield* sql<{ modelId: string }>`
          SELECT DISTINCT payload->>'mental_model_id' AS model_id FROM operations
          WHERE bank_id = ${bankId} AND task_type = ${refreshTaskType} AND status = 'pending'`.pipe(Effect.orDie)
        const alreadyQueued = new Set(waiting.map((row) => row.modelId))
        const queued = yield* Effect.forEach(
          models.filter((model) => !alreadyQueued.has(model.id)),
          (model) => queueRefresh(bankId, model.id, "consolidation").pipe(Effect.map((operation) => operation.id))
        )
        if (queued.length > 0) yield* actors.wake(bankId)
        return queued
      })

      const clear = Effect.fn("MentalModels.clear")(function*(bankId: string, id: string) {
        yield* found(bankId, id)
        const cleared = yield* store.clear(bankId, id)
        if (Option.isNone(cleared)) return yield* NotFound.of("mental model", id)
        return toMentalModelResponse(cleared.value)
      })

      const dryRunRefresh = Effect.fn("MentalModels.dryRunRefresh")(function*(bankId: string, id: string) {
        const model = yield* found(bankId, id)
        const plan = yield* refreshRun(model, { operationId: undefined, withTrace: true }).pipe(
          Effect.mapError((failure) => new ServiceUnavailable({ detail: failure.message }))
        )
        return toDryRunResult(model, plan, yield* store.databaseNow)
      })

      return MentalModels.of({
        clear,
        dryRunRefresh,
        create,
        get: (bankId, id) =>
          found(bankId, id).pipe(
            Effect.tap(() => telemetry.record(bankId, [{ type: "mental_model", id, score: null }], "mental_model")),
            Effect.map(toMentalModelResponse)
          ),
        list: (bankId, filter) =>
          banks.get(bankId).pipe(
            Effect.andThen(store.list(bankId, filter)),
            Effect.map((models) => models.map(toMentalModelResponse))
          ),
        update,
        remove: (bankId, id) =>
          banks.get(bankId).pipe(
            Effect.andThen(store.remove(bankId, id)),
            Effect.flatMap((removed) => removed ? Effect.void : Effect.fail(NotFound.of("mental model", id)))
          ),
        history: (bankId, id) =>
          found(bankId, id).pipe(
            Effect.andThen(store.history(bankId, id)),
            Effect.map((rows) => rows.map(toHistoryEntry))
          ),
        refresh,
        refreshAfterConsolidation
      })
    })
  )
}
