/**
 * The `refresh_mental_model` task: regenerates a model's content by reflect on its source query (`full`), or has
 * the language model edit it where facts learned since the last refresh contradict it (`delta`). A delta runs in
 * full when there is nothing to edit yet, when the source query changed since the content was written, or when
 * no language model is configured (the offline reflect synthesis is regenerated instead). Idempotent: a re-run of
 * an operation that already saved its refresh returns that refresh.
 */
import { Effect, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { ReflectResponse } from "../domain/Reflect.ts"
import { RefreshReason } from "../domain/MentalModel.ts"
import type { RefreshMode } from "../domain/MentalModel.ts"
import { Llm, type LlmUsage } from "../models/Llm.ts"
import { Recall } from "../memory/recall/Recall.ts"
import { TaskFailure, TaskRegistry } from "../operations/TaskRegistry.ts"
import { Reflect } from "../reflect/Reflect.ts"
import { editByDelta } from "./DeltaEdit.ts"
import { refreshTaskType } from "./MentalModels.ts"
import type { MentalModelRecord } from "./MentalModelStore.ts"
import { MentalModelStore } from "./MentalModelStore.ts"
import { refreshResult } from "./MentalModelViews.ts"
import { modelTagScope, type NewFact, newFactsSince } from "./NewFacts.ts"

const Payload = Schema.Struct({ mental_model_id: Schema.String, reason: RefreshReason })
const decodePayload = Schema.decodeUnknownEffect(Payload)

const zeroUsage: LlmUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

/** Why a requested delta must run in full, or undefined when a delta can run. */
const deltaFallback = (model: MentalModelRecord, llmAvailable: boolean): string | undefined => {
  if (model.lastRefreshedAt === null || model.content.trim() === "") return "the model has no content yet"
  if (model.contentQuery !== model.sourceQuery) return "the source query changed since the last refresh"
  if (!llmAvailable) return "delta edits need a language model; the offline synthesis was regenerated"
  return undefined
}

/** The previous reflect payload with the delta's text and the new facts it weighed added to `based_on`. */
const deltaReflectResponse = (
  previous: Record<string, unknown> | null,
  content: string,
  facts: ReadonlyArray<NewFact>
): Record<string, unknown> => {
  const basedOn = previous?.["based_on"] as { memories?: Array<unknown> } | null | undefined
  const added = facts.map((fact) => ({
    id: fact.id,
    text: fact.text,
    type: fact.type,
    context: null,
    occurred_start: fact.occurredStart?.toISOString() ?? null,
    occurred_end: null
  }))
  return {
    ...previous,
    text: content,
    based_on: basedOn === null || basedOn === undefined
      ? { memories: added, mental_models: [], directives: [] }
      : { ...basedOn, memories: [...(basedOn.memories ?? []), ...added] }
  }
}

const usageOf = (usage: LlmUsage) => ({
  input_tokens: usage.inputTokens,
  output_tokens: usage.outputTokens,
  total_tokens: usage.totalTokens
})

export const MentalModelRefreshTask = TaskRegistry.handler(
  refreshTaskType,
  Effect.gen(function*() {
    const store = yield* MentalModelStore
    const reflect = yield* Reflect
    const llm = yield* Llm
    const sql = yield* SqlClient.SqlClient
    const recall = yield* Recall

    const regenerate = (model: MentalModelRecord, operationId: string) => {
      const scope = modelTagScope(model)
      return reflect.reflect(model.bankId, {
        query: model.sourceQuery,
        // Mental models are curated answers read again and again: worth a wider search than a one-off reflect.
        budget: "mid",
        max_tokens: model.maxTokens,
        include: { facts: {} },
        tags: scope.tags,
        tags_match: scope.tagsMatch
      }, { operationId, excludeMentalModels: [model.id], formOpinion: false }).pipe(
        Effect.mapError((error) =>
          new TaskFailure({
            message: `reflect failed while refreshing the mental model: ${error.detail}`,
            retryable: error._tag === "ServiceUnavailable"
          })
        )
      )
    }

    return (operation) =>
      Effect.gen(function*() {
        const payload = yield* decodePayload(operation.payload).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the stored refresh payload is invalid", retryable: false }))
        )
        const done = yield* store.refreshOf(operation.id)
        if (Option.isSome(done)) return refreshResult(done.value)
        const found = yield* store.find(operation.bankId, payload.mental_model_id)
        if (Option.isNone(found)) return { mental_model_id: payload.mental_model_id, skipped: "the mental model was deleted" }
        const model = found.value
        const startedAt = yield* store.databaseNow
        const requested: RefreshMode = model.triggerMode
        const fallback = requested === "delta" ? deltaFallback(model, llm.available("reflect")) : undefined
        const mode: RefreshMode = requested === "delta" && fallback === undefined ? "delta" : "full"

        let content: string
        let reflectResponse: Record<string, unknown> | null
        let facts: ReadonlyArray<NewFact> = []
        let changes: ReadonlyArray<string> = []
        let usage = zeroUsage
        if (mode === "full") {
          const answer: ReflectResponse = yield* regenerate(model, operation.id)
          content = answer.text.trim()
          reflectResponse = { ...answer }
          usage = {
            inputTokens: answer.usage.input_tokens,
            outputTokens: answer.usage.output_tokens,
            totalTokens: answer.usage.total_tokens
          }
        } else {
          facts = yield* newFactsSince(model, model.lastRefreshedAt!).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.provideService(Recall, recall)
          )
          if (facts.length === 0) {
            content = model.content
            reflectResponse = model.reflectResponse
          } else {
            const edited = yield* editByDelta({
              bankId: model.bankId,
              operationId: operation.id,
              sourceQuery: model.sourceQuery,
              content: model.content,
              facts,
              maxTokens: model.maxTokens
            }).pipe(
              Effect.provideService(Llm, llm),
              Effect.mapError((error) =>
                new TaskFailure({
                  message: `the language model failed during a delta refresh: ${error.message}`,
                  retryable: error.retryable
                })
              )
            )
            // An empty document is never a sensible edit of a non-empty one: keep what was there.
            content = edited.content === "" ? model.content : edited.content
            changes = edited.content === "" ? [] : edited.changes
            reflectResponse = deltaReflectResponse(model.reflectResponse, content, facts)
            usage = edited.usage
          }
        }

        const saved = yield* store.saveRefresh(model.bankId, model.id, {
          operationId: operation.id,
          startedAt,
          mode,
          requestedMode: requested,
          fallbackReason: fallback ?? null,
          reason: payload.reason,
          sourceQuery: model.sourceQuery,
          previousContent: model.lastRefreshedAt === null ? null : model.content,
          content,
          reflectResponse,
          newFactIds: facts.map((fact) => fact.id),
          changes
        })
        if (Option.isNone(saved)) return { mental_model_id: model.id, skipped: "the mental model was deleted" }
        return { ...refreshResult(saved.value), usage: usageOf(usage) }
      })
  })
)
