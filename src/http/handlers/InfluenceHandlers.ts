/** REST handler for influence analytics: defaults applied here, the work in `BrainInfluence`. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BrainInfluence } from "../../influence/BrainInfluence.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { EngramApi } from "../api/Api.ts"
import { brainEnabled } from "./SubRoutineHandlers.ts"

export const InfluenceHandlers = HttpApiBuilder.group(
  EngramApi,
  "brainInfluence",
  Effect.fn(function*(handlers) {
    const influence = yield* BrainInfluence
    const config = yield* EngramConfig
    const gate = brainEnabled.pipe(Effect.provideService(EngramConfig, config))

    return handlers.handleAll({
      influence: ({ params, query }) =>
        gate.pipe(Effect.andThen(influence.analytics(params.bank_id, {
          windowDays: query.window_days ?? 14,
          topK: query.top_k ?? 10,
          entityType: query.entity_type ?? "all"
        })))
    })
  })
)
