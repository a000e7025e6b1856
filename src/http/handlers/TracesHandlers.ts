/** REST handlers for LLM traces over `LlmTraceStore`. */
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Banks } from "../../bank/Banks.ts"
import { tracePeriods } from "../../traces/LlmTrace.ts"
import type { LlmTraceRecord } from "../../traces/LlmTraceStore.ts"
import { LlmTraceStore } from "../../traces/LlmTraceStore.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

const toItem = (trace: LlmTraceRecord) => ({
  id: trace.id,
  bank_id: trace.bankId,
  operation_id: trace.operationId,
  purpose: trace.purpose,
  scope: trace.scope,
  provider: trace.provider,
  model: trace.model,
  status: trace.status,
  error: trace.errorMessage,
  error_reason: trace.errorReason,
  attempt: trace.attempt,
  duration_ms: trace.durationMs,
  input_tokens: trace.inputTokens,
  output_tokens: trace.outputTokens,
  total_tokens: trace.totalTokens,
  input: trace.inputText,
  output: trace.outputText,
  created_at: trace.createdAt.toISOString(),
  operation: trace.purpose,
  trace_id: trace.operationId,
  span_id: trace.id,
  parent_span_id: null,
  // A trace is written with the time its request started.
  started_at: trace.createdAt.toISOString(),
  ended_at: new Date(trace.createdAt.getTime() + trace.durationMs).toISOString(),
  cached_tokens: null,
  llm_info: { provider: trace.provider, model: trace.model, attempt: trace.attempt },
  metadata: trace.errorReason === null ? {} : { error_reason: trace.errorReason }
})

export const TracesHandlers = HttpApiBuilder.group(
  EngramApi,
  "traces",
  Effect.fn(function*(handlers) {
    const traces = yield* LlmTraceStore
    const banks = yield* Banks

    return handlers.handleAll({
      list: Effect.fn(function*({ params, query }) {
        yield* banks.get(params.bank_id)
        const { limit, offset } = paging(query)
        const page = yield* traces.list(params.bank_id, {
          scope: query.scope,
          status: query.status,
          operationId: query.operation_id ?? query.trace_id,
          purpose: query.purpose ?? query.operation,
          limit,
          offset
        })
        return { bank_id: params.bank_id, items: page.items.map(toItem), total: page.total, limit, offset }
      }),
      stats: Effect.fn(function*({ params, query }) {
        yield* banks.get(params.bank_id)
        const named = query.period === undefined ? undefined : tracePeriods[query.period]
        const periodHours = query.period_hours ?? named?.hours ?? 24
        const trunc = query.trunc ?? named?.trunc ?? "hour"
        const items = yield* traces.stats(params.bank_id, { periodHours, trunc })
        const now = yield* Clock.currentTimeMillis
        return {
          bank_id: params.bank_id,
          period: query.period_hours === undefined && query.period !== undefined ? query.period : `${periodHours}h`,
          trunc,
          start: new Date(now - periodHours * 3_600_000).toISOString(),
          items,
          buckets: items
        }
      })
    })
  })
)
