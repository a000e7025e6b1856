/** Service-level routes: version and feature flags, health (checks the database) and Prometheus metrics. */
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
  brain_import_export: Schema.Boolean
})
export type Features = typeof Features.Type

export const VersionResponse = Schema.Struct({
  api_version: Schema.String,
  version: Schema.String,
  features: Features,
  bank_presets: Schema.Array(Schema.String).annotate({ description: "values `bank_preset` accepts on bank create/update" })
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

export class MonitoringApi extends HttpApiGroup.make("monitoring", { topLevel: true })
  .add(
    HttpApiEndpoint.get("version", "/version", { success: VersionResponse }),
    HttpApiEndpoint.get("health", "/health", { success: HealthResponse, error: ServiceUnavailable }),
    HttpApiEndpoint.get("metrics", "/metrics", {
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/plain; version=0.0.4" }))
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Monitoring", description: "Version, health and metrics" }))
{}
