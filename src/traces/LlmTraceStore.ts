/**
 * The `llm_requests` table: every request to a language model, written by the `Llm` implementation and read
 * by the trace routes and by whoever totals an operation's token usage. Recording is best effort by design: a
 * trace that cannot be written is logged and dropped, it never fails the model call it describes.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { LlmPurpose, LlmUsage } from "../models/Llm.ts"
import { LlmPurpose as PurposeSchema } from "../models/Llm.ts"
import type { LlmTraceStatsBucket, StatsTrunc } from "./LlmTrace.ts"
import { LlmTraceStatus, truncateForTrace } from "./LlmTrace.ts"

export interface NewLlmTrace {
  readonly bankId: string
  readonly operationId: string | undefined
  readonly purpose: LlmPurpose
  readonly scope: string
  readonly provider: string
  readonly model: string
  readonly status: LlmTraceStatus
  readonly errorReason: string | undefined
  /** Must already be safe to show (no key, no full prompt): `LlmError.message`. */
  readonly errorMessage: string | undefined
  readonly attempt: number
  readonly durationMs: number
  readonly usage: LlmUsage
  /** Stored through `truncateForTrace`. */
  readonly input: string
  readonly output: string | undefined
  readonly createdAt: Date
}

const TraceRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  operationId: Schema.NullOr(Schema.String),
  purpose: PurposeSchema,
  scope: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  status: LlmTraceStatus,
  errorReason: Schema.NullOr(Schema.String),
  errorMessage: Schema.NullOr(Schema.String),
  attempt: Schema.Number,
  durationMs: Schema.Number,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  totalTokens: Schema.Number,
  inputText: Schema.String,
  outputText: Schema.NullOr(Schema.String),
  createdAt: Schema.Date
})
export type LlmTraceRecord = typeof TraceRow.Type

const BucketRow = Schema.Struct({
  bucket: Schema.Date,
  total: Schema.Number,
  success: Schema.Number,
  errors: Schema.Number,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  totalTokens: Schema.Number,
  avgDurationMs: Schema.Number,
  p50DurationMs: Schema.Number,
  p95DurationMs: Schema.Number,
  maxDurationMs: Schema.Number
})

const UsageRow = Schema.Struct({
  calls: Schema.Number,
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  totalTokens: Schema.Number
})

export interface TraceFilter {
  readonly scope?: string | undefined
  readonly status?: LlmTraceStatus | undefined
  readonly operationId?: string | undefined
  readonly purpose?: LlmPurpose | undefined
  readonly limit: number
  readonly offset: number
}

export class LlmTraceStore extends Context.Service<LlmTraceStore, {
  /** Writes one trace; never fails (a write error is logged). */
  readonly record: (trace: NewLlmTrace) => Effect.Effect<void>
  /** Newest first. */
  readonly list: (bankId: string, filter: TraceFilter) => Effect.Effect<{
    readonly items: ReadonlyArray<LlmTraceRecord>
    readonly total: number
  }>
  /** Buckets of `trunc` (UTC) over the last `periodHours`, oldest first; empty buckets are left out. */
  readonly stats: (
    bankId: string,
    options: { readonly periodHours: number; readonly trunc: StatsTrunc }
  ) => Effect.Effect<
    ReadonlyArray<LlmTraceStatsBucket>
  >
  /** Tokens spent by every recorded request of a background operation, retries and failures included. */
  readonly usageForOperation: (operationId: string) => Effect.Effect<LlmUsage & { readonly calls: number }>
}>()("engram/traces/LlmTraceStore") {
  static readonly layer = Layer.effect(
    LlmTraceStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const record = Effect.fn("LlmTraceStore.record")(
        function*(trace: NewLlmTrace) {
          yield* sql`INSERT INTO llm_requests ${
            sql.insert({
              id: crypto.randomUUID(),
              bankId: trace.bankId,
              operationId: trace.operationId ?? null,
              purpose: trace.purpose,
              scope: trace.scope,
              provider: trace.provider,
              model: trace.model,
              status: trace.status,
              errorReason: trace.errorReason ?? null,
              errorMessage: trace.errorMessage ?? null,
              attempt: trace.attempt,
              durationMs: Math.max(0, Math.round(trace.durationMs)),
              inputTokens: trace.usage.inputTokens,
              outputTokens: trace.usage.outputTokens,
              totalTokens: trace.usage.totalTokens,
              inputText: truncateForTrace(trace.input),
              outputText: trace.output === undefined ? null : truncateForTrace(trace.output),
              createdAt: trace.createdAt
            })
          }`
        },
        Effect.catchCause((cause) => Effect.logWarning("could not record an LLM trace", cause)),
        Effect.uninterruptible
      )

      const whereOf = (bankId: string, filter: Omit<TraceFilter, "limit" | "offset">) =>
        sql.and([
          sql`bank_id = ${bankId}`,
          ...(filter.scope === undefined ? [] : [sql`scope = ${filter.scope}`]),
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.operationId === undefined ? [] : [sql`operation_id = ${filter.operationId}`]),
          ...(filter.purpose === undefined ? [] : [sql`purpose = ${filter.purpose}`])
        ])

      const ListRequest = Schema.Struct({
        bankId: Schema.String,
        scope: Schema.optional(Schema.String),
        status: Schema.optional(LlmTraceStatus),
        operationId: Schema.optional(Schema.String),
        purpose: Schema.optional(PurposeSchema),
        limit: Schema.Number,
        offset: Schema.Number
      })

      const findPage = SqlSchema.findAll({
        Request: ListRequest,
        Result: TraceRow,
        execute: ({ bankId, limit, offset, ...filter }) =>
          sql`SELECT * FROM llm_requests WHERE ${whereOf(bankId, filter)} ORDER BY created_at DESC, id DESC
            LIMIT ${limit} OFFSET ${offset}`
      })

      const countAll = SqlSchema.findOne({
        Request: ListRequest,
        Result: Schema.Struct({ count: Schema.Number }),
        execute: ({ bankId, limit: _limit, offset: _offset, ...filter }) =>
          sql`SELECT count(*)::int AS count FROM llm_requests WHERE ${whereOf(bankId, filter)}`
      })

      const list = Effect.fn("LlmTraceStore.list")(function*(bankId: string, filter: TraceFilter) {
        const request = { bankId, ...filter }
        const [items, count] = yield* Effect.all([findPage(request), countAll(request)]).pipe(Effect.orDie)
        return { items, total: count.count }
      })

      const findBuckets = SqlSchema.findAll({
        Request: Schema.Struct({ bankId: Schema.String, periodHours: Schema.Number, trunc: Schema.String }),
        Result: BucketRow,
        execute: ({ bankId, periodHours, trunc }) =>
          sql`
            SELECT date_trunc(${trunc}::text, created_at, 'UTC') AS bucket,
              count(*)::int AS total,
              count(*) FILTER (WHERE status = 'success')::int AS success,
              count(*) FILTER (WHERE status = 'error')::int AS errors,
              sum(input_tokens)::float8 AS input_tokens,
              sum(output_tokens)::float8 AS output_tokens,
              sum(total_tokens)::float8 AS total_tokens,
              avg(duration_ms)::float8 AS avg_duration_ms,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_duration_ms,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_duration_ms,
              max(duration_ms)::float8 AS max_duration_ms
            FROM llm_requests
            WHERE bank_id = ${bankId} AND created_at >= now() - make_interval(hours => ${periodHours}::int)
            GROUP BY 1 ORDER BY 1`
      })

      const stats = Effect.fn("LlmTraceStore.stats")(
        function*(bankId: string, options: { readonly periodHours: number; readonly trunc: StatsTrunc }) {
          const rows = yield* findBuckets({ bankId, ...options }).pipe(Effect.orDie)
          return rows.map((row): LlmTraceStatsBucket => ({
            time: row.bucket.toISOString(),
            total: row.total,
            statuses: { success: row.success, error: row.errors },
            tokens: { input: row.inputTokens, output: row.outputTokens, cached: 0, total: row.totalTokens },
            duration_ms: {
              avg: Math.round(row.avgDurationMs * 10) / 10,
              p50: row.p50DurationMs,
              p95: row.p95DurationMs,
              max: row.maxDurationMs
            }
          }))
        }
      )

      const findUsage = SqlSchema.findOne({
        Request: Schema.String,
        Result: UsageRow,
        execute: (operationId) =>
          sql`SELECT count(*)::int AS calls,
              coalesce(sum(input_tokens), 0)::float8 AS input_tokens,
              coalesce(sum(output_tokens), 0)::float8 AS output_tokens,
              coalesce(sum(total_tokens), 0)::float8 AS total_tokens
            FROM llm_requests WHERE operation_id = ${operationId}`
      })

      const usageForOperation = Effect.fn("LlmTraceStore.usageForOperation")(function*(operationId: string) {
        return yield* findUsage(operationId).pipe(Effect.orDie)
      })

      return LlmTraceStore.of({ record, list, stats, usageForOperation })
    })
  )
}
