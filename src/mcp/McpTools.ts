/**
 * The MCP tool table: the 29 tools of the spec plus the template and audit tools, built over the engine's services,
 * compiled into the multi-bank catalog (all 32) and the single-bank catalog (29, without list_banks, create_bank and
 * get_bank_stats). Built once with the application; requests only look tools up. SERVICE_API_CODEBASE_MCP_TOOLS=true adds the codebase tools.
 */
import { Context, Effect, Layer } from "effect"
import { EngramConfig } from "../config/EngramConfig.ts"
import { makeToolCatalog, type ToolCatalog } from "./ToolCatalog.ts"
import { codebaseTools } from "./tools/CodebaseTools.ts"
import { bankTools } from "./tools/BankTools.ts"
import { documentTools } from "./tools/DocumentTools.ts"
import { memoryTools } from "./tools/MemoryTools.ts"
import { mentalModelTools } from "./tools/MentalModelTools.ts"
import { templateTools } from "./tools/TemplateTools.ts"
import { auditedTools } from "./AuditedTools.ts"

export class McpTools extends Context.Service<McpTools, {
  readonly multiBank: ToolCatalog
  readonly singleBank: ToolCatalog
}>()("engram/mcp/McpTools") {
  static readonly layer = Layer.effect(
    McpTools,
    Effect.gen(function*() {
      const groups = yield* Effect.all([memoryTools, mentalModelTools, documentTools, bankTools, templateTools])
      // The codebase tools come on top only when asked for (SERVICE_API_CODEBASE_MCP_TOOLS).
      const extra = (yield* EngramConfig).codebases.mcpTools ? yield* codebaseTools : []
      // Calls that may change a bank are written to its audit log, as REST writes are.
      const tools = yield* auditedTools([...groups.flat(), ...extra])
      return McpTools.of({ multiBank: makeToolCatalog(tools, "multi"), singleBank: makeToolCatalog(tools, "single") })
    })
  )
}
