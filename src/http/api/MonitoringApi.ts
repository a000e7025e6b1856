/**
 * Service-level routes: version and feature flags, health and readiness (check the database), liveness (does not)
 * and Prometheus metrics.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ServiceUnavailable } from "../../domain/Errors.ts"

export const Features = Schema.Struct({
  observations: Schema.Boolean,
  timeline_v2: Schema.Boolean,
  mcp: Schema.Boolean,
  worker: Schema.Boolean,
  bank_config_api: Schema.Boolean,
  file_upload_api: Schema.Boolean,
  brain_runtime: Schema.Boolean,
  sub_routine: Schema.Boolean,
  brain_import_export: Schema.Boolean,
  bank_llm_health: Schema.Boolean,
  document_export_api: Schema.Boolean,
  document_import_api: Schema.Boolean,
  audit_log: Schema.Boolean,
  llm_trace: Schema.Boolean,
  store_document_text: Schema.Boolean
})
export type Features = typeof Features.Type

export const VersionResponse = Schema.Struct({
  api_version: Schema.String,
  version: Schema.String,
  features: Features,
  bank_presets: Schema.Array(Schema.String).annotate({
    description: "values `bank_preset` accepts on bank create/update"
  })
}).annotate({ identifier: "VersionResponse" })

/** Present only when the node runs in a cluster (SERVICE_API_CLUSTER_MODE=runner|client). */
export const ClusterHealth = Schema.Struct({
  role: Schema.Literals(["runner", "client"]),
  shards_owned: Schema.Number
}).annotate({ identifier: "ClusterHealth" })

export const HealthResponse = Schema.Struct({
  status: Schema.Literal("healthy"),
  database: Schema.String,
  cluster: Schema.optionalKey(ClusterHealth)
}).annotate({ identifier: "HealthResponse" })

/** The liveness probe: the process answers; no database access, so a slow database never restarts the pod. */
export const LivenessResponse = Schema.Struct({
  status: Schema.Literal("alive"),
  version: Schema.String,
  uptime_seconds: Schema.Number
}).annotate({ identifier: "LivenessResponse" })

export class MonitoringApi extends HttpApiGroup.make("monitoring", { topLevel: true })
  .add(
    HttpApiEndpoint.get("version", "/version", { success: VersionResponse }),
    HttpApiEndpoint.get("health", "/health", { success: HealthResponse, error: ServiceUnavailable }),
    HttpApiEndpoint.get("ready", "/health/ready", { success: HealthResponse, error: ServiceUnavailable })
      .annotate(
        OpenApi.Description,
        "Readiness: the same check as /health (the database is reachable), 503 otherwise."
      ),
    HttpApiEndpoint.get("live", "/health/live", { success: LivenessResponse })
      .annotate(
        OpenApi.Description,
        "Liveness: answers whenever the process can serve a request; touches no database."
      ),
    HttpApiEndpoint.get("metrics", "/metrics", {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain; version=0.0.4" }))
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Monitoring", description: "Version, health and metrics" }))
{}
