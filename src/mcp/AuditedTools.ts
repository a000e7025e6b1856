/**
 * The MCP side of the audit log: every call of a tool that may change a bank (one not marked read-only) is written
 * like a REST write — transport `mcp`, the tool's name as the action, the status its outcome maps to, the caller's key
 * fingerprint — once the call has ended. Arguments and results are never kept.
 */
import { Clock, Effect, Exit, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { keyRingOf } from "../auth/KeyRing.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import type { McpTool, ToolError } from "./McpTool.ts"
import { actorOf } from "../audit/AuditActor.ts"
import { AuditLogs } from "../audit/AuditLogs.ts"

const statusOf: Record<ToolError["_tag"], number> = {
  ValidationError: 400,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  ServiceUnavailable: 503
}

/** The endpoint's route template: the multi-bank `/mcp/` or a bank's `/mcp/{bank_id}/`. */
const routeOf = (url: string | undefined) =>
  url === undefined || url.split("?")[0]!.replace(/\/+$/, "") === "/mcp" ? "/mcp/" : "/mcp/{bank_id}/"

export const auditedTools = (tools: ReadonlyArray<McpTool>) =>
  Effect.gen(function*() {
    const audit = yield* AuditLogs
    const keyRing = keyRingOf(yield* EngramConfig)
    const audited = (tool: McpTool): McpTool => ({
      ...tool,
      run: (bankId, args) =>
        Effect.gen(function*() {
          // Tool calls run in the context of the HTTP request that carried them (mcp/McpEndpoint).
          const request = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
          const actor = actorOf(keyRing, Option.getOrUndefined(request)?.headers["authorization"])
          // A bank-less tool (create_bank) names its bank in its arguments.
          const named = "bank_id" in args ? args.bank_id : undefined
          const bank = bankId !== "" ? bankId : typeof named === "string" ? named : ""
          const startedAt = yield* Clock.currentTimeMillis
          return yield* Effect.onExit(tool.run(bankId, args), (exit) =>
            actor === undefined || bank === ""
              ? Effect.void
              : Effect.flatMap(Clock.currentTimeMillis, (endedAt) =>
                audit.record({
                  bankId: bank,
                  action: tool.name,
                  transport: "mcp",
                  method: "POST",
                  route: routeOf(Option.getOrUndefined(request)?.url),
                  status: Exit.isSuccess(exit)
                    ? 200
                    : Option.match(Exit.findErrorOption(exit), {
                      onNone: () => 500,
                      onSome: (error) => statusOf[error._tag]
                    }),
                  actor,
                  startedAt: new Date(startedAt),
                  endedAt: new Date(endedAt)
                })))
        })
    })
    return tools.map((tool) => tool.hints.readOnlyHint === true ? tool : audited(tool))
  })
