/** REST handlers for memory curation, dry-run extraction, the ingestion time series, entity graph and scopes. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BankInsights } from "../../memory/BankInsights.ts"
import { MemoryCuration } from "../../memory/curation/MemoryCuration.ts"
import { DryRunExtract } from "../../memory/retain/DryRunExtract.ts"
import { EngramApi } from "../api/Api.ts"

export const MemoryOpsHandlers = HttpApiBuilder.group(
  EngramApi,
  "memoryOps",
  Effect.fn(function*(handlers) {
    const curation = yield* MemoryCuration
    const dryRun = yield* DryRunExtract
    const insights = yield* BankInsights
    return handlers.handleAll({
      update: ({ params, payload }) => curation.update(params.bank_id, params.memory_id, payload),
      dryRunExtract: ({ params, payload }) => dryRun.run(params.bank_id, payload),
      timeseries: ({ params, query }) =>
        insights.timeseries(params.bank_id, query.period ?? "7d", query.time_field ?? "created_at"),
      entityGraph: ({ params, query }) =>
        insights.entityGraph(params.bank_id, { limit: query.limit ?? 1000, minCount: query.min_count ?? 1 }),
      observationScopes: ({ params }) => insights.observationScopes(params.bank_id)
    })
  })
)
