/** Version and feature flags, the health and readiness checks (database), liveness, and the Prometheus scrape. */
import { Clock, Effect, Metric } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { PrometheusMetrics } from "effect/observability"
import { BankActors } from "../../bank/BankActors.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { ClusterNode } from "../../cluster/ClusterNode.ts"
import { clusterHealth, updateClusterGauges } from "../../cluster/ClusterReport.ts"
import { ServiceUnavailable } from "../../domain/Errors.ts"
import { OperationStore } from "../../bank/OperationStore.ts"
import { DatabaseHealth } from "../../storage/DatabaseHealth.ts"
import { EngramApi } from "../api/Api.ts"
import type { Features } from "../api/MonitoringApi.ts"
import { presetNames } from "../../presets/BankPresets.ts"

export const apiVersion = "0.1.0"

/** What this build serves with its default settings; `/version` turns off what the settings switch off. */
export const features: Features = {
  observations: true,
  timeline_v2: true,
  mcp: true,
  worker: true,
  bank_config_api: true,
  file_upload_api: true,
  brain_runtime: true,
  sub_routine: true,
  brain_import_export: true,
  bank_llm_health: true,
  document_export_api: true,
  document_import_api: true,
  audit_log: true,
  llm_trace: true,
  // Retained text is kept with its document (reprocessDocument and original_text read it back).
  store_document_text: true
}

const operationsGauge = Metric.gauge("engram_operations", { description: "Operations by task type and status" })
const actorsGauge = Metric.gauge("engram_bank_actors", { description: "Bank actors currently running" })

export const MonitoringHandlers = HttpApiBuilder.group(
  EngramApi,
  "monitoring",
  Effect.fn(function*(handlers) {
    const database = yield* DatabaseHealth
    const operations = yield* OperationStore
    const actors = yield* BankActors
    const config = yield* EngramConfig
    const cluster = yield* ClusterNode

    const startedAt = yield* Clock.currentTimeMillis
    // Answered within a few milliseconds whatever the database is doing (see DatabaseHealth).
    const readiness = Effect.gen(function*() {
      const state = yield* database.check
      if (state._tag === "down") {
        return yield* new ServiceUnavailable({ detail: `database unavailable: ${state.reason}` })
      }
      const node = yield* clusterHealth(cluster).pipe(
        Effect.catchCause(() =>
          Effect.fail(new ServiceUnavailable({ detail: "cluster unavailable: its health could not be read" }))
        )
      )
      return { status: "healthy" as const, database: state._tag, ...node }
    })

    return handlers.handleAll({
      // The MCP endpoint is served unless SERVICE_API_MCP_ENABLED=false removed its routes.
      version: () =>
        Effect.succeed({
          api_version: apiVersion,
          version: apiVersion,
          features: {
            ...features,
            mcp: config.mcpEnabled,
            sub_routine: config.brain.enabled,
            brain_runtime: config.brain.enabled,
            brain_import_export: config.brain.enabled && config.brain.importExportEnabled
          },
          bank_presets: presetNames
        }),
      health: () => readiness,
      ready: () => readiness,
      live: () =>
        Effect.map(Clock.currentTimeMillis, (now) => ({
          status: "alive" as const,
          version: apiVersion,
          uptime_seconds: Math.max(0, Math.round((now - startedAt) / 1000))
        })),
      metrics: () =>
        Effect.gen(function*() {
          const counts = yield* operations.countByTypeAndStatus
          for (const row of counts) {
            yield* Metric.update(
              Metric.withAttributes(operationsGauge, { task_type: row.taskType, status: row.status }),
              row.count
            )
          }
          yield* Metric.update(actorsGauge, yield* actors.activeCount)
          yield* updateClusterGauges(cluster)
          return yield* PrometheusMetrics.format()
        })
    })
  })
)
