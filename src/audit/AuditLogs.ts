/**
 * The `audit_logs` table: one row per mutating request on a bank (written by `http/AuditTrail` and the MCP tool
 * calls), read by the audit routes. A row says who, what and when; it never holds a request body, a response body
 * or a key. A write that fails is logged as an error, never dropped silently, and never fails the request it
 * describes (that request has already happened).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { AuditStatsPeriod } from "../domain/AuditLog.ts"
import { makeCoalesced } from "../storage/Coalesced.ts"

export interface NewAuditEntry {
  readonly bankId: string
  readonly action: string
  /** `system`: work the service did by itself (the expiry sweep), with `actor` `system`. */
  readonly transport: "http" | "mcp" | "system"
  readonly method: string
  readonly route: string
  readonly status: number
  /** `key:<sha-256 prefix>` or `anonymous`: never the key itself. */
  readonly actor: string
  readonly startedAt: Date
  readonly endedAt: Date
}

const AuditRow = Schema.Struct({
  id: Schema.String,
  bankId: Schema.String,
  action: Schema.String,
  transport: Schema.String,
  method: Schema.String,
  route: Schema.String,
  status: Schema.Number,
  actor: Schema.String,
  startedAt: Schema.Date,
  endedAt: Schema.Date
})
export type AuditRecord = typeof AuditRow.Type

export interface AuditFilter {
  readonly action?: string | undefined
  readonly transport?: string | undefined
  /** Inclusive. */
  readonly from?: Date | undefined
  /** Exclusive. */
  readonly until?: Date | undefined
  readonly limit: number
  readonly offset: number
}

/** Each period's bucket width and length, as the Hindsight client's stats chart expects them. */
export const periods: Record<AuditStatsPeriod, { readonly trunc: "hour" | "day"; readonly buckets: number }> = {
  "1d": { trunc: "hour", buckets: 24 },
  "7d": { trunc: "day", buckets: 7 },
  "30d": { trunc: "day", buckets: 30 }
}

export interface AuditStats {
  readonly start: Date
  readonly buckets: ReadonlyArray<
    { readonly time: Date; readonly actions: Record<string, number>; readonly total: number }
  >
}

const bucketWidth = { hour: 3_600_000, day: 86_400_000 } as const

/** The UTC start of the bucket holding `time`. */
const truncate = (time: number, trunc: "hour" | "day") => Math.floor(time / bucketWidth[trunc]) * bucketWidth[trunc]

export class AuditLogs extends Context.Service<AuditLogs, {
  /** Stores one entry when its bank exists (a deleted bank's trail goes with it); never fails. */
  readonly record: (entry: NewAuditEntry) => Effect.Effect<void>
  /** Newest first. */
  readonly list: (bankId: string, filter: AuditFilter) => Effect.Effect<{
    readonly items: ReadonlyArray<AuditRecord>
    readonly total: number
  }>
  /** Every bucket of the period up to now, oldest first, empty ones included (a chart needs the gaps). */
  readonly stats: (
    bankId: string,
    options: { readonly period: AuditStatsPeriod; readonly action?: string | undefined; readonly now: number }
  ) => Effect.Effect<AuditStats>
}>()("engram/audit/AuditLogs") {
  static readonly layer = Layer.effect(
    AuditLogs,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      // Every mutating request writes a row before it answers: concurrent ones share a statement (`Coalesced`).
      // INSERT … SELECT: a request that failed before its bank existed (or deleted it) leaves no row, instead of
      // a foreign-key error.
      const insert = yield* makeCoalesced({
        name: "AuditLogs.record",
        maxBatch: 500,
        batch: (entries: ReadonlyArray<NewAuditEntry>) => {
          const rows = entries.map((entry) => ({ ...entry, id: crypto.randomUUID() }))
          return sql`INSERT INTO audit_logs (id, bank_id, action, transport, method, route, status, actor, started_at,
              ended_at)
            SELECT x.id, x."bankId", x.action, x.transport, x.method, x.route, x.status, x.actor, x."startedAt",
              x."endedAt"
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(id text, "bankId" text, action text,
              transport text, method text, route text, status int, actor text, "startedAt" timestamptz,
              "endedAt" timestamptz)
            WHERE EXISTS (SELECT 1 FROM banks WHERE bank_id = x."bankId")`.pipe(Effect.as(entries.map(() => undefined)))
        }
      })

      const record = (entry: NewAuditEntry) =>
        insert(entry).pipe(
          Effect.catchCause((cause) =>
            Effect.logError(`audit entry lost: ${entry.transport} ${entry.action} on bank '${entry.bankId}'`, cause)
          ),
          Effect.uninterruptible,
          Effect.withSpan("AuditLogs.record")
        )

      const whereOf = (bankId: string, filter: Omit<AuditFilter, "limit" | "offset">) =>
        sql.and([
          sql`bank_id = ${bankId}`,
          ...(filter.action === undefined ? [] : [sql`action = ${filter.action}`]),
          ...(filter.transport === undefined ? [] : [sql`transport = ${filter.transport}`]),
          ...(filter.from === undefined ? [] : [sql`started_at >= ${filter.from}`]),
          ...(filter.until === undefined ? [] : [sql`started_at < ${filter.until}`])
        ])

      const ListRequest = Schema.Struct({
        bankId: Schema.String,
        action: Schema.optional(Schema.String),
        transport: Schema.optional(Schema.String),
        from: Schema.optional(Schema.Date),
        until: Schema.optional(Schema.Date),
        limit: Schema.Number,
        offset: Schema.Number
      })

      const findPage = SqlSchema.findAll({
        Request: ListRequest,
        Result: AuditRow,
        execute: ({ bankId, limit, offset, ...filter }) =>
          sql`SELECT * FROM audit_logs WHERE ${whereOf(bankId, filter)} ORDER BY started_at DESC, id DESC
            LIMIT ${limit} OFFSET ${offset}`
      })

      const countAll = SqlSchema.findOne({
        Request: ListRequest,
        Result: Schema.Struct({ count: Schema.Number }),
        execute: ({ bankId, limit: _limit, offset: _offset, ...filter }) =>
          sql`SELECT count(*)::int AS count FROM audit_logs WHERE ${whereOf(bankId, filter)}`
      })

      const list = Effect.fn("AuditLogs.list")(function*(bankId: string, filter: AuditFilter) {
        const request = { bankId, ...filter }
        const [items, count] = yield* Effect.all([findPage(request), countAll(request)]).pipe(Effect.orDie)
        return { items, total: count.count }
      })

      const findCounts = SqlSchema.findAll({
        Request: Schema.Struct({
          bankId: Schema.String,
          trunc: Schema.String,
          start: Schema.Date,
          action: Schema.optional(Schema.String)
        }),
        Result: Schema.Struct({ bucket: Schema.Date, action: Schema.String, count: Schema.Number }),
        execute: ({ action, bankId, start, trunc }) =>
          sql`SELECT date_trunc(${trunc}::text, started_at, 'UTC') AS bucket, action, count(*)::int AS count
            FROM audit_logs
            WHERE ${whereOf(bankId, { action, from: start })}
            GROUP BY 1, 2`
      })

      const stats = Effect.fn("AuditLogs.stats")(function*(
        bankId: string,
        options: { readonly period: AuditStatsPeriod; readonly action?: string | undefined; readonly now: number }
      ) {
        const { buckets: count, trunc } = periods[options.period]
        const width = bucketWidth[trunc]
        const start = truncate(options.now, trunc) - (count - 1) * width
        const rows = yield* findCounts({ bankId, trunc, start: new Date(start), action: options.action }).pipe(
          Effect.orDie
        )
        const buckets = Array.from({ length: count }, (_, index) => ({
          time: new Date(start + index * width),
          actions: {} as Record<string, number>,
          total: 0
        }))
        for (const row of rows) {
          const bucket = buckets[Math.round((row.bucket.getTime() - start) / width)]
          if (bucket === undefined) continue
          bucket.actions[row.action] = (bucket.actions[row.action] ?? 0) + row.count
          bucket.total += row.count
        }
        return { start: new Date(start), buckets }
      })

      return AuditLogs.of({ record, list, stats })
    })
  )
}
