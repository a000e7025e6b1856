/** REST handlers for dreams: thin translations between the HTTP contract and the `Dreams` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Dreams } from "../../dreams/Dreams.ts"
import { EngramApi } from "../api/Api.ts"

export const DreamsHandlers = HttpApiBuilder.group(
  EngramApi,
  "dreams",
  Effect.fn(function*(handlers) {
    const dreams = yield* Dreams

    return handlers.handleAll({
      trigger: ({ params, payload }) =>
        dreams.trigger(params.bank_id, payload?.trigger_source ?? "manual", payload?.run_type ?? "dream"),
      list: ({ params, query }) => Effect.map(dreams.list(params.bank_id, query.limit ?? 20), (items) => ({ items })),
      stats: ({ params }) => dreams.stats(params.bank_id),
      outcome: ({ params, payload }) => dreams.recordOutcome(params.bank_id, params.prediction_id, payload),
      review: ({ params, payload }) => dreams.review(params.bank_id, params.proposal_id, payload)
    })
  })
)
