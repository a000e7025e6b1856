/**
 * LLM traces as clients see them: one item per request to a language model, the paged list, and the
 * statistics buckets. Prompt and answer copies are bounded by `TRACE_TEXT_LIMIT` so a trace row never grows
 * with the size of a document.
 */
import { Schema } from "effect"
import { LlmPurpose } from "../models/Llm.ts"

export const LlmTraceStatus = Schema.Literals(["success", "error"])
export type LlmTraceStatus = typeof LlmTraceStatus.Type

export const StatsTrunc = Schema.Literals(["minute", "hour", "day"])
export type StatsTrunc = typeof StatsTrunc.Type

/** The windows Hindsight clients ask for, with their length and bucket width. */
export const TracePeriod = Schema.Literals(["1d", "7d", "30d"])
export type TracePeriod = typeof TracePeriod.Type
export const tracePeriods: Record<TracePeriod, { readonly hours: number; readonly trunc: StatsTrunc }> = {
  "1d": { hours: 24, trunc: "hour" },
  "7d": { hours: 168, trunc: "day" },
  "30d": { hours: 720, trunc: "day" }
}

/** How many characters of the prompt, and of the answer, a trace keeps (plus a short omission marker). */
export const TRACE_TEXT_LIMIT = 16_000

/**
 * Keeps the first three quarters and the last quarter of `limit` characters around a marker that says how
 * many were left out (the end of a prompt is usually the part that varies). NUL characters, which PostgreSQL
 * text cannot hold, are dropped.
 */
export const truncateForTrace = (text: string, limit = TRACE_TEXT_LIMIT): string => {
  const clean = text.includes("\u0000") ? text.replaceAll("\u0000", "") : text
  if (clean.length <= limit) return clean
  const head = Math.floor(limit * 0.75)
  const tail = limit - head
  return `${clean.slice(0, head)}\n…[${clean.length - limit} characters omitted]…\n${clean.slice(clean.length - tail)}`
}

export const LlmTraceItem = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.String,
  operation_id: Schema.NullOr(Schema.String),
  purpose: LlmPurpose,
  scope: Schema.String.annotate({ description: "what the call was for, e.g. `retain.extract_facts`" }),
  provider: Schema.String,
  model: Schema.String,
  status: LlmTraceStatus,
  error: Schema.NullOr(Schema.String),
  error_reason: Schema.NullOr(Schema.String).annotate({
    description: "for errors: timeout, rate_limited, provider, invalid_output, interrupted or defect"
  }),
  attempt: Schema.Int.annotate({ description: "1 for the first request of a call, 2+ for its retries" }),
  duration_ms: Schema.Int,
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  total_tokens: Schema.Int,
  input: Schema.String.annotate({ description: `the prompt, up to ${TRACE_TEXT_LIMIT} characters` }),
  output: Schema.NullOr(Schema.String).annotate({ description: `the answer, up to ${TRACE_TEXT_LIMIT} characters` }),
  created_at: Schema.String,
  // The same request under the names Hindsight clients read.
  operation: Schema.NullOr(Schema.String).annotate({ description: "the purpose (retain, reflect, consolidation, …)" }),
  trace_id: Schema.NullOr(Schema.String).annotate({ description: "the operation the call belongs to, if any" }),
  span_id: Schema.String.annotate({ description: "this request's id" }),
  parent_span_id: Schema.NullOr(Schema.String),
  started_at: Schema.String,
  ended_at: Schema.String,
  cached_tokens: Schema.NullOr(Schema.Int).annotate({ description: "not measured: null" }),
  llm_info: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "provider, model and attempt" }),
  metadata: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "LlmTraceItem" })
export type LlmTraceItem = typeof LlmTraceItem.Type

export const LlmTraceListResponse = Schema.Struct({
  bank_id: Schema.String,
  items: Schema.Array(LlmTraceItem),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "LlmTraceListResponse" })

export const LlmTraceStatsBucket = Schema.Struct({
  time: Schema.String.annotate({ description: "start of the bucket (UTC)" }),
  total: Schema.Int,
  statuses: Schema.Struct({ success: Schema.Int, error: Schema.Int }),
  tokens: Schema.Struct({
    input: Schema.Number,
    output: Schema.Number,
    cached: Schema.Number.annotate({ description: "prompt tokens served from a provider cache; not measured yet, 0" }),
    total: Schema.Number
  }),
  duration_ms: Schema.Struct({ avg: Schema.Number, p50: Schema.Number, p95: Schema.Number, max: Schema.Number })
}).annotate({ identifier: "LlmTraceStatsBucket" })
export type LlmTraceStatsBucket = typeof LlmTraceStatsBucket.Type

export const LlmTraceStatsResponse = Schema.Struct({
  bank_id: Schema.String,
  period: Schema.String.annotate({ description: "the window covered, e.g. `24h`" }),
  trunc: StatsTrunc,
  start: Schema.String.annotate({ description: "start of the window (UTC)" }),
  items: Schema.Array(LlmTraceStatsBucket),
  buckets: Schema.Array(LlmTraceStatsBucket).annotate({
    description: "the same as items, as Hindsight clients read it"
  })
}).annotate({ identifier: "LlmTraceStatsResponse" })
