/**
 * The one HTTP server: the REST API (with OpenAPI at /openapi.json and a docs page at /docs), the MCP tool endpoint
 * (/mcp), the JSON error layer and request metrics. It listens on SERVICE_API_HOST:SERVICE_API_PORT.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ByteSize, Duration, Effect, Layer, Scope } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpRouter } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { createHeldServer } from "./HeldServer.ts"
import { EngramApi } from "../../src/http/api/Api.ts"
import { BanksHandlers } from "../../src/http/handlers/BanksHandlers.ts"
import { ConsolidationHandlers } from "../../src/http/handlers/ConsolidationHandlers.ts"
import { DocumentsHandlers, EntitiesHandlers, TagsHandlers } from "../../src/http/handlers/DocumentsHandlers.ts"
import { MemoriesHandlers } from "../../src/http/handlers/MemoriesHandlers.ts"
import { ApiKeyAuthLive, RequestValidationLive } from "../../src/http/handlers/Middleware.ts"
import { MonitoringHandlers } from "../../src/http/handlers/MonitoringHandlers.ts"
import { OperationsHandlers } from "../../src/http/handlers/OperationsHandlers.ts"
import { TracesHandlers } from "../../src/http/handlers/TracesHandlers.ts"
import { WebhooksHandlers } from "../../src/http/handlers/WebhooksHandlers.ts"
import { GraphHandlers } from "../../src/http/handlers/GraphHandlers.ts"
import { ReflectHandlers } from "../../src/http/handlers/ReflectHandlers.ts"
import { DirectivesHandlers } from "../../src/http/handlers/DirectivesHandlers.ts"
import { MentalModelsHandlers } from "../../src/http/handlers/MentalModelsHandlers.ts"
import { ResearchHandlers } from "../../src/http/handlers/ResearchHandlers.ts"
import { AnomalyHandlers } from "../../src/http/handlers/AnomalyHandlers.ts"
import { DreamsHandlers } from "../../src/http/handlers/DreamsHandlers.ts"
import { DatasetsHandlers } from "../../src/http/handlers/DatasetsHandlers.ts"
import { SubRoutineHandlers } from "../../src/http/handlers/SubRoutineHandlers.ts"
import { InfluenceHandlers } from "../../src/http/handlers/InfluenceHandlers.ts"
import { BrainHandlers } from "../../src/http/handlers/BrainHandlers.ts"
import { CodebasesHandlers } from "../../src/http/handlers/CodebasesHandlers.ts"
import { ReposHandlers } from "../../src/http/handlers/ReposHandlers.ts"
import { KnowledgeBaseHandlers } from "../../src/http/handlers/KnowledgeBaseHandlers.ts"
import { DocumentOpsHandlers } from "../../src/http/handlers/DocumentOpsHandlers.ts"
import { MemoryOpsHandlers } from "../../src/http/handlers/MemoryOpsHandlers.ts"
import { ForgetHandlers } from "../../src/http/handlers/ForgetHandlers.ts"
import { BankTemplatesHandlers } from "../../src/http/handlers/BankTemplatesHandlers.ts"
import { BankSetupHandlers } from "../../src/http/handlers/BankSetupHandlers.ts"
import { AuditLogsHandlers } from "../../src/http/handlers/AuditLogsHandlers.ts"
import { auditTrailMiddleware, makeOperationNames } from "../../src/http/AuditTrail.ts"
import { foregroundMiddleware } from "../../src/http/ForegroundMiddleware.ts"
import { jsonErrorsMiddleware } from "../../src/http/JsonErrors.ts"
import { authFirstMiddleware } from "../../src/http/AuthFirst.ts"
import { browserGuardMiddleware } from "../../src/http/BrowserGuard.ts"
import { multipartLimitsMiddleware } from "../../src/http/MultipartLimits.ts"
import { requestLanesMiddleware } from "../../src/http/RequestLanes.ts"
import { apiPaths, makeRouteTemplates } from "../../src/http/RouteTemplates.ts"
import { textHygieneMiddleware } from "../../src/http/TextHygiene.ts"
import { McpLive, mcpRouteTemplates } from "./McpLive.ts"
import { UiLive } from "./UiLive.ts"

const ApiRoutes = HttpApiBuilder.layer(EngramApi, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([
    BanksHandlers,
    OperationsHandlers,
    MonitoringHandlers,
    MemoriesHandlers,
    DocumentsHandlers,
    EntitiesHandlers,
    TagsHandlers,
    TracesHandlers,
    WebhooksHandlers,
    GraphHandlers,
    ReflectHandlers,
    DirectivesHandlers,
    MentalModelsHandlers,
    ResearchHandlers,
    ConsolidationHandlers,
    AnomalyHandlers,
    DreamsHandlers,
    DatasetsHandlers,
    SubRoutineHandlers,
    InfluenceHandlers,
    BrainHandlers,
    CodebasesHandlers,
    ReposHandlers,
    KnowledgeBaseHandlers,
    DocumentOpsHandlers,
    MemoryOpsHandlers,
    ForgetHandlers,
    BankTemplatesHandlers,
    BankSetupHandlers,
    AuditLogsHandlers
  ]),
  Layer.provide([RequestValidationLive, ApiKeyAuthLive])
)

/**
 * The Scalar docs page, built by the first GET /docs: the page's 3 MB script, read when the Scalar layer is built,
 * held 6 MB of heap and 6 MB outside it (15-25 MiB of resident memory) in every server, most of which are never
 * asked for it. Built once, in the server's scope.
 */
const DocsRoute = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const scope = yield* Effect.scope
  const docs = yield* Effect.cached(
    HttpRouter.toHttpEffect(HttpApiScalar.layer(EngramApi, { path: "/docs" })).pipe(Scope.provide(scope))
  )
  yield* router.add("GET", "/docs", Effect.flatten(docs))
}))

const paths = apiPaths(EngramApi)
const routeOf = makeRouteTemplates({ ...paths, ...mcpRouteTemplates })

/**
 * Request spans are named `METHOD /route/{template}` (the OpenTelemetry HTTP convention), never by a concrete
 * path: ids in paths would make every request its own span name. Only read when trace export is on.
 */
const RequestSpanNames = Layer.succeed(HttpMiddleware.SpanNameGenerator, (request) => {
  const route = routeOf(request.method, request.url)
  return route === "unmatched" ? request.method : `${request.method} ${route}`
})

export const Routes = Layer.mergeAll(
  ApiRoutes,
  DocsRoute,
  McpLive,
  UiLive,
  // First of all: every request waits its turn in its bank's lane of the service's scheduler, the probes first.
  requestLanesMiddleware,
  // Then the audit trail records the status the client gets, refusals of the middleware below included.
  auditTrailMiddleware(routeOf, makeOperationNames(paths)),
  jsonErrorsMiddleware(routeOf),
  // Before anything reads a body: what a browser page may not do, then the key (global middleware run in the order
  // they are listed here).
  browserGuardMiddleware,
  authFirstMiddleware,
  multipartLimitsMiddleware(routeOf),
  textHygieneMiddleware(routeOf),
  foregroundMiddleware
)

/**
 * Serves the routes on the configured address (port 0 picks a free one; read it from `HttpServer.address`).
 * Request bodies above SERVICE_API_MAX_REQUEST_BYTES are refused with 413. A request that arrives between `listen` and the
 * routes being ready waits for them (./HeldServer.ts).
 */
export const HttpServerLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* EngramConfig
    return HttpRouter.serve(Routes, { disableListenLog: true, disableLogger: true }).pipe(
      Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(config.maxRequestBytes))),
      Layer.provide(RequestSpanNames),
      Layer.provideMerge(
        NodeHttpServer.layer(() => createHeldServer(undefined, Duration.toMillis(config.keepAliveTimeout)), {
          port: config.port,
          host: config.host
        })
      )
    )
  })
)
