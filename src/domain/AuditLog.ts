/**
 * Audit log entries as clients read them: one per mutating request on a bank, saying who (a fingerprint of the API
 * key, never the key), what (method, route template, operation, status) and when. Request and response bodies are
 * never kept. Field names follow the published Hindsight client.
 */
import { Schema } from "effect"

export const AuditTransport = Schema.Literals(["http", "mcp"])
export type AuditTransport = typeof AuditTransport.Type

export const AuditLogEntry = Schema.Struct({
  id: Schema.String,
  action: Schema.String.annotate({ description: "the operation, e.g. 'memories.retain' or an MCP tool's name" }),
  transport: Schema.String,
  bank_id: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.String),
  ended_at: Schema.NullOr(Schema.String),
  duration_ms: Schema.NullOr(Schema.Number),
  request: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "method and route template (never the body)"
  }),
  response: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "HTTP status (never the body)"
  }),
  metadata: Schema.Record(Schema.String, Schema.Unknown).annotate({
    description: "`actor`: 'key:' and the first 12 hex digits of the key's SHA-256, or 'anonymous' when the " +
      "server needs no key"
  })
}).annotate({ identifier: "AuditLogEntry" })
export type AuditLogEntry = typeof AuditLogEntry.Type

export const AuditLogListResponse = Schema.Struct({
  bank_id: Schema.String,
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int,
  items: Schema.Array(AuditLogEntry)
}).annotate({ identifier: "AuditLogListResponse" })

export const AuditStatsPeriod = Schema.Literals(["1d", "7d", "30d"])
export type AuditStatsPeriod = typeof AuditStatsPeriod.Type

export const AuditLogStatsBucket = Schema.Struct({
  time: Schema.String,
  actions: Schema.Record(Schema.String, Schema.Int),
  total: Schema.Int
}).annotate({ identifier: "AuditLogStatsBucket" })

export const AuditLogStatsResponse = Schema.Struct({
  bank_id: Schema.String,
  period: AuditStatsPeriod,
  trunc: Schema.Literals(["hour", "day"]),
  start: Schema.String,
  buckets: Schema.Array(AuditLogStatsBucket)
}).annotate({ identifier: "AuditLogStatsResponse" })
