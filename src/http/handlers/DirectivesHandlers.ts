/** REST handlers for directives, over the `Directives` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Directives } from "../../directives/Directives.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

export const DirectivesHandlers = HttpApiBuilder.group(
  EngramApi,
  "directives",
  Effect.fn(function*(handlers) {
    const directives = yield* Directives
    return handlers.handleAll({
      list: Effect.fn(function*({ params, query }) {
        const { limit, offset } = paging(query)
        const tags = query.tags === undefined ? undefined : typeof query.tags === "string" ? [query.tags] : query.tags
        const page = yield* directives.list(params.bank_id, {
          tags,
          tagsMatch: query.tags_match,
          activeOnly: query.active_only ?? true,
          limit,
          offset
        })
        return { items: page.items, total: page.total, limit, offset }
      }),
      create: ({ params, payload }) => directives.create(params.bank_id, payload),
      get: ({ params }) => directives.get(params.bank_id, params.directive_id),
      update: ({ params, payload }) => directives.update(params.bank_id, params.directive_id, payload),
      delete: ({ params }) => directives.remove(params.bank_id, params.directive_id)
    })
  })
)
