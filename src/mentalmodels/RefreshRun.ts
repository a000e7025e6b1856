/**
 * What a mental-model refresh computes, without writing anything: the content a refresh would store, how it got
 * there (mode, fallback, facts, tool and model calls) and its trace. The `refresh_mental_model` task saves the
 * result (MentalModelRefresh.ts); the dry run only shows it (DryRunRefresh.ts), so the two can never disagree.
 * A delta runs in full when there is nothing to edit yet, when the source query changed since the content was
 * written, or when no language model is configured (the offline reflect synthesis is regenerated instead).
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { ReflectResponse, ReflectToolCall } from "../domain/Reflect.ts"
import type { RefreshMode } from "../domain/MentalModel.ts"
import { Llm, type LlmUsage, usageJson, zeroUsage } from "../models/Llm.ts"
import { Recall } from "../memory/recall/Recall.ts"
import { TaskFailure } from "../bank/TaskRegistry.ts"
import { Reflect } from "../reflect/Reflect.ts"
import { editByDelta } from "./DeltaEdit.ts"
import type { MentalModelRecord } from "./MentalModelStore.ts"
import { modelTagScope, type NewFact, newFactsSince } from "./NewFacts.ts"

/** Hindsight's names for why a requested delta ran in full. */
export type FallbackCode = "no_baseline_content" | "source_query_changed"

export type RefreshOutcomeKind =
  | "content_written"
  | "content_preserved_no_new_facts"
  | "refresh_failed_empty_candidate"
  | "refresh_failed_delta_not_applied"

export interface RefreshPlan {
  readonly requestedMode: RefreshMode
  readonly mode: RefreshMode
  /** The sentence the history shows; null when the requested mode ran. */
  readonly fallbackReason: string | null
  readonly fallbackCode: FallbackCode | null
  /** When the run started, in database time: what a refresh stores as `last_refreshed_at`. */
  readonly startedAt: Date
  /** The lower bound of what a delta reads (the last refresh); null in full mode. */
  readonly createdAfter: Date | null
  /** Raw reflect synthesis (full), or the language model's edited document before any safeguard (delta). */
  readonly candidateContent: string
  /** What a refresh stores. */
  readonly content: string
  readonly reflectResponse: Record<string, unknown> | null
  readonly facts: ReadonlyArray<NewFact>
  readonly changes: ReadonlyArray<string>
  readonly usage: LlmUsage
  readonly outcome: RefreshOutcomeKind
  readonly toolCalls: ReadonlyArray<ReflectToolCall>
  readonly llmCalls: ReadonlyArray<{ readonly scope: string; readonly duration_ms: number }>
  readonly retrieved: Record<string, number>
  readonly used: Record<string, number>
  readonly warnings: ReadonlyArray<string>
  readonly durationMs: number
}

/** Why a requested delta must run in full, or undefined when a delta can run. */
const deltaFallback = (model: MentalModelRecord, llmAvailable: boolean) => {
  if (model.lastRefreshedAt === null || model.content.trim() === "") {
    return { reason: "the model has no content yet", code: "no_baseline_content" as const }
  }
  if (model.contentQuery !== model.sourceQuery) {
    return { reason: "the source query changed since the last refresh", code: "source_query_changed" as const }
  }
  if (!llmAvailable) {
    return { reason: "delta edits need a language model; the offline synthesis was regenerated", code: null }
  }
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

const countByType = (items: ReadonlyArray<{ readonly type: string | null }>) => {
  const counts: Record<string, number> = {}
  for (const item of items) counts[item.type ?? "unknown"] = (counts[item.type ?? "unknown"] ?? 0) + 1
  return counts
}

/**
 * Builds the run from the services it reads through. `withTrace` asks reflect for its tool and model calls
 * (the dry run always does; a refresh when the model's trigger keeps its trace).
 */
export const makeRefreshRun = Effect.gen(function*() {
  const reflect = yield* Reflect
  const llm = yield* Llm
  const sql = yield* SqlClient.SqlClient
  const recall = yield* Recall

  return Effect.fn("MentalModels.refreshRun")(function*(
    model: MentalModelRecord,
    options: { readonly operationId: string | undefined; readonly withTrace: boolean }
  ) {
    const started = yield* Clock.currentTimeMillis
    const startedAt = yield* sql<{ now: Date }>`SELECT now() AS now`.pipe(
      Effect.map((rows) => new Date(rows[0]!.now)),
      Effect.orDie
    )
    const requested: RefreshMode = model.triggerMode
    const fallback = requested === "delta" ? deltaFallback(model, llm.available("reflect")) : undefined
    const mode: RefreshMode = requested === "delta" && fallback === undefined ? "delta" : "full"
    const warnings: Array<string> = fallback !== undefined && fallback.code === null ? [fallback.reason] : []

    if (mode === "full") {
      const scope = modelTagScope(model)
      const answer: ReflectResponse = yield* reflect.reflect(model.bankId, {
        query: model.sourceQuery,
        // Mental models are curated answers read again and again: worth a wider search than a one-off reflect.
        budget: "mid",
        max_tokens: model.maxTokens,
        include: { facts: {}, ...(options.withTrace ? { tool_calls: { output: true } } : {}) },
        tags: scope.tags,
        tags_match: scope.tagsMatch,
        ...(model.responseSchema === null ? {} : { response_schema: model.responseSchema })
      }, { operationId: options.operationId, excludeMentalModels: [model.id], formOpinion: false }).pipe(
        Effect.mapError((error) =>
          new TaskFailure({
            message: `reflect failed while refreshing the mental model: ${error.detail}`,
            retryable: error._tag === "ServiceUnavailable"
          })
        )
      )
      const content = answer.text.trim()
      if (model.responseSchema !== null && answer.structured_output === null) {
        warnings.push("no language model is configured: the structured output (response_schema) was not produced")
      }
      const evidence = countByType(answer.based_on?.memories ?? [])
      const { trace: _trace, ...kept } = answer
      return {
        requestedMode: requested,
        mode,
        fallbackReason: fallback?.reason ?? null,
        fallbackCode: fallback?.code ?? null,
        startedAt,
        createdAfter: null,
        candidateContent: content,
        content,
        reflectResponse: { ...kept },
        facts: [],
        changes: [],
        usage: {
          inputTokens: answer.usage.input_tokens,
          outputTokens: answer.usage.output_tokens,
          totalTokens: answer.usage.total_tokens
        },
        outcome: content === "" ? "refresh_failed_empty_candidate" : "content_written",
        toolCalls: answer.trace?.tool_calls ?? [],
        llmCalls: answer.trace?.llm_calls ?? [],
        retrieved: evidence,
        used: evidence,
        warnings,
        durationMs: (yield* Clock.currentTimeMillis) - started
      } satisfies RefreshPlan
    }

    const since = model.lastRefreshedAt!
    const facts = yield* newFactsSince(model, since).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(Recall, recall)
    )
    const retrieved = countByType(facts)
    const base = {
      requestedMode: requested,
      mode,
      fallbackReason: null,
      fallbackCode: null,
      startedAt,
      createdAfter: since,
      facts,
      toolCalls: [],
      retrieved,
      warnings
    }
    if (facts.length === 0) {
      return {
        ...base,
        candidateContent: model.content,
        content: model.content,
        reflectResponse: model.reflectResponse,
        changes: [],
        usage: zeroUsage,
        outcome: "content_preserved_no_new_facts",
        llmCalls: [],
        used: {},
        durationMs: (yield* Clock.currentTimeMillis) - started
      } satisfies RefreshPlan
    }
    const editStarted = yield* Clock.currentTimeMillis
    const edited = yield* editByDelta({
      bankId: model.bankId,
      operationId: options.operationId ?? "dry-run",
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
    const llmCalls = [{ scope: "mental_model.delta", duration_ms: (yield* Clock.currentTimeMillis) - editStarted }]
    // An empty document is never a sensible edit of a non-empty one: keep what was there.
    const applied = edited.content !== ""
    const content = applied ? edited.content : model.content
    if (model.responseSchema !== null) {
      warnings.push("a delta refresh keeps the structured output of the last full refresh (response_schema)")
    }
    return {
      ...base,
      candidateContent: edited.content,
      content,
      reflectResponse: deltaReflectResponse(model.reflectResponse, content, facts),
      changes: applied ? edited.changes : [],
      usage: edited.usage,
      outcome: applied ? "content_written" : "refresh_failed_delta_not_applied",
      llmCalls,
      used: applied && edited.changes.length > 0 ? retrieved : {},
      durationMs: (yield* Clock.currentTimeMillis) - started
    } satisfies RefreshPlan
  })
})

/** The run's trace as Hindsight's MentalModelRefreshTrace: tool outputs reduced to result counts. */
export const refreshTrace = (plan: RefreshPlan, recordedAt: Date) => ({
  recorded_at: recordedAt.toISOString(),
  effective_mode: plan.mode,
  mode_fallback_reason: plan.fallbackCode,
  outcome: plan.outcome,
  tool_calls: plan.toolCalls.map((call) => {
    const output = call.output as { memories?: ReadonlyArray<unknown>; mental_models?: ReadonlyArray<unknown> } | null
    return {
      tool: call.tool,
      input: call.input,
      output: null,
      result_count: output?.memories?.length ?? output?.mental_models?.length ?? null,
      duration_ms: call.duration_ms,
      iteration: call.iteration
    }
  }),
  llm_calls: plan.llmCalls,
  delta_operations: plan.mode === "delta"
    ? { applied: plan.changes.map((change) => ({ description: change })), skipped: [] }
    : null,
  usage: usageJson(plan.usage),
  duration_ms: plan.durationMs,
  warnings: plan.warnings
})
