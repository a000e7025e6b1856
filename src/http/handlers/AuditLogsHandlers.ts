/** REST handlers for audit logs over `AuditLogs`: entries shown without bodies or keys, and the stats buckets. */
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AuditLogs, periods } from "../../audit/AuditLogs.ts"
import { Banks } from "../../bank/Banks.ts"
import { dateFilter, toAuditEntry } from "../../audit/AuditViews.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

export const AuditLogsHandlers = HttpApiBuilder.group(
  EngramApi,
  "audit",
  Effect.fn(function*(handlers) {
    const audit = yield* AuditLogs
    const banks = yield* Banks
    return handlers.handleAll({
      listAuditLogs: Effect.fn(function*({ params, query }) {
        yield* banks.get(params.bank_id)
        const { limit, offset } = paging(query)
        const page = yield* audit.list(params.bank_id, {
          action: query.action,
          transport: query.transport,
          from: yield* dateFilter(query.start_date, "start_date"),
          until: yield* dateFilter(query.end_date, "end_date"),
          limit,
          offset
        })
        return { bank_id: params.bank_id, total: page.total, limit, offset, items: page.items.map(toAuditEntry) }
      }),
      auditLogStats: Effect.fn(function*({ params, query }) {
        yield* banks.get(params.bank_id)
        const period = query.period ?? "1d"
        const stats = yield* audit.stats(params.bank_id, {
          period,
          action: query.action,
          now: yield* Clock.currentTimeMillis
        })
        return {
          bank_id: params.bank_id,
          period,
          trunc: periods[period].trunc,
          start: stats.start.toISOString(),
          buckets: stats.buckets.map((bucket) => ({ ...bucket, time: bucket.time.toISOString() }))
        }
      })
    })
  })
)
