/** The whole REST API contract. A typed client can import this file without pulling in any server code. */
import { HttpApi, OpenApi } from "effect/http-api"
import { BanksApi } from "./BanksApi.ts"
import { ConsolidationApi } from "./ConsolidationApi.ts"
import { DocumentsApi, EntitiesApi, TagsApi } from "./DocumentsApi.ts"
import { DocumentOpsApi } from "./DocumentOpsApi.ts"
import { MemoryOpsApi } from "./MemoryOpsApi.ts"
import { ForgetApi } from "./ForgetApi.ts"
import { MemoriesApi } from "./MemoriesApi.ts"
import { ApiKeyAuth, RequestValidation } from "./Middleware.ts"
import { MonitoringApi } from "./MonitoringApi.ts"
import { OperationsApi } from "./OperationsApi.ts"
import { TracesApi } from "./TracesApi.ts"
import { WebhooksApi } from "./WebhooksApi.ts"
import { GraphApi } from "./GraphApi.ts"
import { ReflectApi } from "./ReflectApi.ts"
import { DirectivesApi } from "./DirectivesApi.ts"
import { MentalModelsApi } from "./MentalModelsApi.ts"
import { ResearchApi } from "./ResearchApi.ts"
import { AnomalyApi } from "./AnomalyApi.ts"
import { DreamsApi } from "./DreamsApi.ts"
import { DatasetsApi } from "./DatasetsApi.ts"
import { SubRoutineApi } from "./SubRoutineApi.ts"
import { InfluenceApi } from "./InfluenceApi.ts"
import { BrainApi } from "./BrainApi.ts"
import { CodebasesApi } from "./CodebasesApi.ts"
import { ReposApi } from "./ReposApi.ts"
import { KnowledgeBaseApi } from "./KnowledgeBaseApi.ts"
import { BankTemplatesApi } from "./BankTemplatesApi.ts"
import { BankSetupApi } from "./BankSetupApi.ts"
import { AuditLogsApi } from "./AuditLogsApi.ts"

export class EngramApi extends HttpApi.make("engram")
  .add(MonitoringApi)
  .add(BanksApi)
  .add(OperationsApi)
  .add(MemoriesApi)
  .add(DocumentsApi)
  .add(EntitiesApi)
  .add(TagsApi)
  .add(TracesApi)
  .add(WebhooksApi)
  .add(GraphApi)
  .add(MentalModelsApi)
  .add(ResearchApi)
  .add(ReflectApi)
  .add(DirectivesApi)
  .add(ConsolidationApi)
  .add(AnomalyApi)
  .add(DreamsApi)
  .add(SubRoutineApi)
  .add(InfluenceApi)
  .add(BrainApi)
  .add(DatasetsApi)
  .add(CodebasesApi)
  .add(ReposApi)
  .add(KnowledgeBaseApi)
  .add(DocumentOpsApi)
  .add(MemoryOpsApi)
  .add(ForgetApi)
  .add(BankTemplatesApi)
  .add(BankSetupApi)
  .add(AuditLogsApi)
  .middleware(RequestValidation)
  .middleware(ApiKeyAuth)
  // Report every invalid field at once, not just the first one found.
  .annotate(HttpApi.ParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "engram",
    description: "Memory service for AI agents: banks of memories to retain, recall and reflect over."
  }))
{}
