/**
 * MCP tools for a bank's setup and history: export and import its template (the same `BankTemplates` calls as the
 * REST routes, with the same validation) and read its audit log.
 */
import { Effect, Schema } from "effect"
import { AuditLogs } from "../../audit/AuditLogs.ts"
import { dateFilter, toAuditEntry } from "../../audit/AuditViews.ts"
import { Banks } from "../../bank/Banks.ts"
import { BankTemplates } from "../../bank/BankTemplates.ts"
import { BankTemplateManifest } from "../../domain/BankTemplate.ts"
import { Limit, Offset } from "../../http/api/MemoriesApi.ts"
import { defineTool, described, optional, withDefault } from "../McpTool.ts"

export const templateTools = Effect.gen(function*() {
  const templates = yield* BankTemplates
  const audit = yield* AuditLogs
  const banks = yield* Banks

  return [
    defineTool({
      name: "export_bank_template",
      title: "Export the bank's template",
      description: "Export the bank's setup as a template manifest: its configuration overrides, directives and " +
        "mental models (not its memories). Pass the manifest to import_bank_template to give another bank the same setup.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => templates.exportTemplate(bankId)
    }),
    defineTool({
      name: "import_bank_template",
      title: "Import a template into the bank",
      description:
        "Apply a template manifest (from export_bank_template) to the bank, creating it if needed: settings " +
        "become the bank's overrides, directives are updated by name and mental models by id, or created. All or " +
        "nothing: a bad field is reported and nothing changes. Use dry_run to check a manifest first.",
      fields: {
        manifest: described(
          BankTemplateManifest,
          "The template manifest: {version: '1', bank?, directives?, mental_models?}."
        ),
        dry_run: withDefault(
          Schema.Boolean,
          false,
          "Check the manifest and report what would change, without changing anything."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { dry_run, manifest }) => templates.importTemplate(bankId, manifest, { dryRun: dry_run })
    }),
    defineTool({
      name: "list_audit_logs",
      title: "Read the bank's audit log",
      description: "List the requests that changed the bank (REST writes and MCP tool calls), newest first: the " +
        "action, when, the status and who made it (a fingerprint of the API key, never the key).",
      fields: {
        action: optional(Schema.String, "Only this action, e.g. 'memories.retain' or 'retain'."),
        transport: optional(Schema.Literals(["http", "mcp"]), "Only requests that came over REST (http) or MCP."),
        start_date: optional(Schema.String, "Only from this ISO 8601 date-time (inclusive)."),
        end_date: optional(Schema.String, "Only before this ISO 8601 date-time (exclusive)."),
        limit: withDefault(Limit, 50, "How many entries to return (1-1000)."),
        offset: withDefault(Offset, 0, "How many of the newest entries to skip.")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: Effect.fn(function*(bankId, args) {
        yield* banks.get(bankId)
        const page = yield* audit.list(bankId, {
          action: args.action,
          transport: args.transport,
          from: yield* dateFilter(args.start_date, "start_date", "body"),
          until: yield* dateFilter(args.end_date, "end_date", "body"),
          limit: args.limit,
          offset: args.offset
        })
        return {
          bank_id: bankId,
          total: page.total,
          limit: args.limit,
          offset: args.offset,
          items: page.items.map(toAuditEntry)
        }
      })
    })
  ]
})
