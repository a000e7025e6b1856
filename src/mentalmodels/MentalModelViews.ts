/** Stored mental models and refreshes as the API shows them (snake_case, ISO times). */
import type { MentalModelHistoryEntry, MentalModelResponse } from "../domain/MentalModel.ts"
import type { MentalModelRecord, RefreshRecord } from "./MentalModelStore.ts"

export const toMentalModelResponse = (model: MentalModelRecord): MentalModelResponse => ({
  id: model.id,
  bank_id: model.bankId,
  name: model.name,
  source_query: model.sourceQuery,
  content: model.content,
  tags: model.tags,
  max_tokens: model.maxTokens,
  trigger: {
    mode: model.triggerMode,
    refresh_after_consolidation: model.refreshAfterConsolidation,
    keep_trace: model.keepTrace,
    response_schema: model.responseSchema
  },
  last_refreshed_at: model.lastRefreshedAt?.toISOString() ?? null,
  created_at: model.createdAt.toISOString(),
  updated_at: model.updatedAt.toISOString(),
  reflect_response: model.reflectResponse
})

export const toHistoryEntry = (refresh: RefreshRecord): MentalModelHistoryEntry => ({
  id: refresh.id,
  operation_id: refresh.operationId,
  mode: refresh.mode,
  requested_mode: refresh.requestedMode,
  fallback_reason: refresh.fallbackReason,
  reason: refresh.reason,
  changed: refresh.changed,
  source_query: refresh.sourceQuery,
  previous_content: refresh.previousContent,
  content: refresh.content,
  new_fact_ids: refresh.newFactIds,
  changes: refresh.changes,
  changed_at: refresh.createdAt.toISOString()
})

/** What a refresh operation reports as its result. */
export const refreshResult = (refresh: RefreshRecord) => ({
  mental_model_id: refresh.mentalModelId,
  mode: refresh.mode,
  requested_mode: refresh.requestedMode,
  fallback_reason: refresh.fallbackReason,
  changed: refresh.changed,
  new_facts: refresh.newFactIds.length,
  changes: refresh.changes
})
