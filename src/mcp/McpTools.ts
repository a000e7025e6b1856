/**
 * The MCP tool table: the 29 tools of the spec, the 8 knowledge-base tools and the 0.9 client's update_memory and
 * list_document_chunks, built over the engine's services and compiled into the multi-bank catalog (all 39) and the
 * single-bank catalog (36, without list_banks, create_bank and get_bank_stats). Built once with the application;
 * requests only look tools up. SERVICE_API_CODEBASE_MCP_TOOLS=true adds the codebase tools.
 */
import { Context, Effect, Layer } from "effect"
import { EngramConfig } from "../config/EngramConfig.ts"
import { makeToolCatalog, type ToolCatalog } from "./ToolCatalog.ts"
import { codebaseTools } from "./tools/CodebaseTools.ts"
import { bankTools } from "./tools/BankTools.ts"
import { documentTools } from "./tools/DocumentTools.ts"
import { knowledgeBaseTools } from "./tools/KnowledgeBaseTools.ts"
import { memoryTools } from "./tools/MemoryTools.ts"
import { mentalModelTools } from "./tools/MentalModelTools.ts"

export class McpTools extends Context.Service<McpTools, {
  readonly multiBank: ToolCatalog
  readonly singleBank: ToolCatalog
}>()("engram/mcp/McpTools") {
  static readonly layer = Layer.effect(
    McpTools,
    Effect.gen(function*() {
      const groups = yield* Effect.all([memoryTools, mentalModelTools, documentTools, bankTools, knowledgeBaseTools])
      // The codebase tools come on top only when asked for (SERVICE_API_CODEBASE_MCP_TOOLS).
      const extra = (yield* EngramConfig).codebases.mcpTools ? yield* codebaseTools : []
      const tools = [...groups.flat(), ...extra]
      return McpTools.of({ multiBank: makeToolCatalog(tools, "multi"), singleBank: makeToolCatalog(tools, "single") })
    })
  )
}
