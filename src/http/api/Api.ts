/** The whole REST API contract. A typed client can import this file without pulling in any server code. */
import { HttpApi, OpenApi } from "effect/http-api"
import { BanksApi } from "./BanksApi.ts"
import { DocumentsApi, EntitiesApi, TagsApi } from "./DocumentsApi.ts"
import { MemoriesApi } from "./MemoriesApi.ts"
import { ApiKeyAuth, RequestValidation } from "./Middleware.ts"
import { MonitoringApi } from "./MonitoringApi.ts"
import { OperationsApi } from "./OperationsApi.ts"
import { TracesApi } from "./TracesApi.ts"

export class EngramApi extends HttpApi.make("engram")
  .add(MonitoringApi)
  .add(BanksApi)
  .add(OperationsApi)
  .add(MemoriesApi)
  .add(DocumentsApi)
  .add(EntitiesApi)
  .add(TagsApi)
  .add(TracesApi)
  .middleware(RequestValidation)
  .middleware(ApiKeyAuth)
  // Report every invalid field at once, not just the first one found.
  .annotate(HttpApi.ParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "engram",
    description: "Memory service for AI agents: banks of memories to retain, recall and reflect over."
  }))
{}
