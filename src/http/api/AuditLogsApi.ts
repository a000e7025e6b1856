/** Audit log routes: a bank's mutating requests, newest first, and their counts over time. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AuditLogListResponse, AuditLogStatsResponse, AuditStatsPeriod } from "../../domain/AuditLog.ts"
import { BankId } from "../../domain/Bank.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import { Limit, Offset } from "./MemoriesApi.ts"

const bank = { bank_id: BankId }

export class AuditLogsApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("listAuditLogs", "/v1/default/banks/:bank_id/audit-logs", {
      params: bank,
      query: {
        action: Schema.optionalKey(Schema.String.annotate({ description: "operation, e.g. 'memories.retain'" })),
        transport: Schema.optionalKey(Schema.String.annotate({ description: "http or mcp" })),
        start_date: Schema.optionalKey(Schema.String.annotate({ description: "ISO 8601 date-time, inclusive" })),
        end_date: Schema.optionalKey(Schema.String.annotate({ description: "ISO 8601 date-time, exclusive" })),
        limit: Schema.optionalKey(Limit),
        offset: Schema.optionalKey(Offset)
      },
      success: AuditLogListResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Every mutating request (POST, PUT, PATCH, DELETE) on the bank, newest first: who (a fingerprint of the API " +
        "key, never the key), what (method, route, operation, status) and when; never a body. `limit` defaults to 100."
    ),
    HttpApiEndpoint.get("auditLogStats", "/v1/default/banks/:bank_id/audit-logs/stats", {
      params: bank,
      query: {
        action: Schema.optionalKey(Schema.String),
        period: Schema.optionalKey(
          AuditStatsPeriod.annotate({ description: "1d (hourly buckets), 7d or 30d (daily); default 1d" })
        )
      },
      success: AuditLogStatsResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Counts of audited requests per action in every bucket of the period (UTC).")
  )
  .annotateMerge(OpenApi.annotations({ title: "Audit logs", description: "Who changed the bank, and when" }))
{}
