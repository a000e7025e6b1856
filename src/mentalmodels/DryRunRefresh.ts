/**
 * The dry-run refresh as clients read it: the refresh pipeline's result (RefreshRun.ts) beside the model's current
 * content, with the scope and window it read, the diff, and the trace. Builds a view only; nothing is written.
 */
import type { MentalModelDryRunRefreshResult } from "../domain/MentalModel.ts"
import type { MentalModelRecord } from "./MentalModelStore.ts"
import { modelTagScope } from "./NewFacts.ts"
import { type RefreshPlan, refreshTrace } from "./RefreshRun.ts"
import { unifiedDiff } from "./UnifiedDiff.ts"

const basedOnOf = (reflectResponse: Record<string, unknown> | null) => {
  const basedOn = reflectResponse?.["based_on"]
  if (typeof basedOn !== "object" || basedOn === null) return {}
  return Object.fromEntries(
    Object.entries(basedOn).filter(([, value]) => Array.isArray(value)) as Array<
      [string, Array<Record<string, unknown>>]
    >
  )
}

export const toDryRunResult = (
  model: MentalModelRecord,
  plan: RefreshPlan,
  recordedAt: Date
): MentalModelDryRunRefreshResult => {
  const scope = modelTagScope(model)
  const trace = refreshTrace(plan, recordedAt)
  return {
    mental_model_id: model.id,
    name: model.name,
    requested_mode: plan.requestedMode,
    effective_mode: plan.mode,
    mode_fallback_reason: plan.fallbackCode,
    outcome: plan.outcome,
    would_persist: plan.outcome === "content_written",
    scope: {
      tags: scope.tags,
      tags_match: scope.tagsMatch,
      tag_groups: null,
      fact_types: null,
      exclude_mental_models: false,
      exclude_mental_model_ids: [model.id]
    },
    window: {
      created_after: plan.createdAfter?.toISOString() ?? null,
      created_before: plan.startedAt.toISOString(),
      // What a real refresh would store as last_refreshed_at: when it started, so a memory written while it ran
      // still counts as new for the next delta.
      watermark: plan.startedAt.toISOString()
    },
    facts: { retrieved: plan.retrieved, used: plan.used },
    based_on: basedOnOf(plan.reflectResponse),
    current_content: model.content,
    candidate_content: plan.candidateContent,
    preview_content: plan.content,
    diff: unifiedDiff(model.content, plan.content),
    delta_operations: trace.delta_operations,
    structured_output: plan.reflectResponse?.["structured_output"] ?? null,
    trace,
    usage: trace.usage,
    duration_ms: plan.durationMs,
    warnings: [...plan.warnings]
  }
}
