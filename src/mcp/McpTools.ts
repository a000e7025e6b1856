/**
 * The MCP tool table: the 29 tools of the spec, the 8 knowledge-base tools, the 0.9 client's update_memory and
 * list_document_chunks and the 3 template and audit tools, built over the engine's services and compiled into the
 * multi-bank catalog (all 42) and the single-bank catalog (39, without list_banks, create_bank and get_bank_stats).
 * Built once with the application; requests only look tools up. SERVICE_API_CODEBASE_MCP_TOOLS=true adds the
 * codebase tools, SERVICE_API_MCP_TOOL_FAMILIES the feature families it names (dreams, repos, datasets, graph,
 * anomalies, entities, brain, forgetting) — to both catalogs.
 */
import { Context, Effect, Layer } from "effect"
import { EngramConfig } from "../config/EngramConfig.ts"
import type { McpTool } from "./McpTool.ts"
import type { McpToolFamily } from "./McpToolFamilies.ts"
import { makeToolCatalog, type ToolCatalog } from "./ToolCatalog.ts"
import { anomalyTools } from "./tools/AnomalyTools.ts"
import { bankTools } from "./tools/BankTools.ts"
import { brainTools } from "./tools/BrainTools.ts"
import { codebaseTools } from "./tools/CodebaseTools.ts"
import { datasetTools } from "./tools/DatasetTools.ts"
import { documentTools } from "./tools/DocumentTools.ts"
import { knowledgeBaseTools } from "./tools/KnowledgeBaseTools.ts"
import { dreamTools } from "./tools/DreamTools.ts"
import { entityTools } from "./tools/EntityTools.ts"
import { graphTools } from "./tools/GraphTools.ts"
import { memoryTools } from "./tools/MemoryTools.ts"
import { mentalModelTools } from "./tools/MentalModelTools.ts"
import { templateTools } from "./tools/TemplateTools.ts"
import { auditedTools } from "./AuditedTools.ts"
import { repoTools } from "./tools/RepoTools.ts"
import { forgetTools } from "./tools/ForgetTools.ts"

const families = {
  dreams: dreamTools,
  repos: repoTools,
  datasets: datasetTools,
  graph: graphTools,
  anomalies: anomalyTools,
  entities: entityTools,
  brain: brainTools,
  forgetting: forgetTools
} as const

/** The services any family's tools are built over. */
type FamilyServices = Effect.Services<typeof families[McpToolFamily]>

export class McpTools extends Context.Service<McpTools, {
  readonly multiBank: ToolCatalog
  readonly singleBank: ToolCatalog
}>()("engram/mcp/McpTools") {
  static readonly layer = Layer.effect(
    McpTools,
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const groups = yield* Effect.all([
        memoryTools,
        mentalModelTools,
        documentTools,
        bankTools,
        knowledgeBaseTools,
        templateTools
      ])
      // Beyond these only when asked for: the codebase tools, then the named feature families.
      const extra = config.codebases.mcpTools ? yield* codebaseTools : []
      const featured = yield* Effect.forEach(
        config.mcpToolFamilies,
        (family): Effect.Effect<ReadonlyArray<McpTool>, never, FamilyServices> => families[family]
      )
      // Calls that may change a bank are written to its audit log, as REST writes are.
      const tools = yield* auditedTools([...groups.flat(), ...extra, ...featured.flat()])
      return McpTools.of({ multiBank: makeToolCatalog(tools, "multi"), singleBank: makeToolCatalog(tools, "single") })
    })
  )
}
