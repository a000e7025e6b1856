/** REST handlers for documents, entities and tags. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { EntityIntelligence } from "../../entities/intelligence/IntelligenceService.ts"
import { EntityTrajectories } from "../../entities/trajectory/TrajectoryService.ts"
import { Documents } from "../../memory/Documents.ts"
import { Entities } from "../../memory/Entities.ts"
import { Tags } from "../../memory/Tags.ts"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

export const DocumentsHandlers = HttpApiBuilder.group(
  EngramApi,
  "documents",
  Effect.fn(function*(handlers) {
    const documents = yield* Documents
    // `branch_name` lists a memory repo branch's workspace without checking it out.
    const repos = yield* MemoryRepos
    return handlers.handleAll({
      list: Effect.fn(function*({ params, query }) {
        const page = paging(query)
        const found = yield* documents.list(yield* repos.readBank(params.bank_id, query.branch_name), {
          q: query.q,
          ...page
        })
        return { items: found.items, total: found.total, ...page }
      }),
      get: ({ params }) => documents.get(params.bank_id, params.document_id),
      delete: ({ params }) =>
        Effect.map(documents.remove(params.bank_id, params.document_id), (deleted) => ({
          success: true,
          message: `document '${params.document_id}' and its ${deleted} memories deleted`,
          deleted_count: deleted,
          document_id: params.document_id,
          memory_units_deleted: deleted
        }))
    })
  })
)

export const EntitiesHandlers = HttpApiBuilder.group(
  EngramApi,
  "entities",
  Effect.fn(function*(handlers) {
    const entities = yield* Entities
    const trajectories = yield* EntityTrajectories
    const intelligence = yield* EntityIntelligence
    const queued = (recompute: { readonly operationId: string; readonly status: string }) => ({
      operation_id: recompute.operationId,
      status: recompute.status
    })
    return handlers.handleAll({
      list: Effect.fn(function*({ params, query }) {
        const page = paging(query)
        const found = yield* entities.list(params.bank_id, page)
        return { items: found.items, total: found.total, ...page }
      }),
      get: ({ params }) => entities.detail(params.bank_id, params.entity_id),
      regenerate: ({ params }) => entities.detail(params.bank_id, params.entity_id),
      trajectory: ({ params }) => trajectories.get(params.bank_id, params.entity_id),
      recomputeTrajectory: ({ params }) =>
        Effect.map(trajectories.requestRecompute(params.bank_id, params.entity_id), queued),
      intelligence: ({ params }) => intelligence.get(params.bank_id),
      recomputeIntelligence: ({ params }) => Effect.map(intelligence.requestRecompute(params.bank_id), queued)
    })
  })
)

export const TagsHandlers = HttpApiBuilder.group(
  EngramApi,
  "tags",
  Effect.fn(function*(handlers) {
    const tags = yield* Tags
    return handlers.handleAll({
      list: Effect.fn(function*({ params, query }) {
        const page = paging(query)
        const found = yield* tags.list(params.bank_id, { q: query.q, ...page })
        return { items: found.items, total: found.total, ...page }
      })
    })
  })
)
