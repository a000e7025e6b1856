/** How audit entries are shown (REST and MCP alike): no body and no key, only what the table holds. */
import { Effect } from "effect"
import { ValidationError } from "../domain/Errors.ts"
import type { AuditRecord } from "./AuditLogs.ts"

export const toAuditEntry = (entry: AuditRecord) => ({
  id: entry.id,
  action: entry.action,
  transport: entry.transport,
  bank_id: entry.bankId,
  started_at: entry.startedAt.toISOString(),
  ended_at: entry.endedAt.toISOString(),
  duration_ms: entry.endedAt.getTime() - entry.startedAt.getTime(),
  request: { method: entry.method, route: entry.route },
  response: { status: entry.status },
  metadata: { actor: entry.actor }
})

/** A date-time filter from a request, or a 400 naming the parameter. */
export const dateFilter = (value: string | undefined, field: string, location: "query" | "body" = "query") => {
  if (value === undefined) return Effect.succeed(undefined)
  const date = new Date(value)
  return Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value)
    ? Effect.fail(ValidationError.single(field, "must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z", location))
    : Effect.succeed(date)
}
