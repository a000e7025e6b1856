/** REST handler for internet research, over the `InternetResearch` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { InternetResearch } from "../../research/InternetResearch.ts"
import { EngramApi } from "../api/Api.ts"

export const ResearchHandlers = HttpApiBuilder.group(
  EngramApi,
  "research",
  Effect.fn(function*(handlers) {
    const research = yield* InternetResearch
    return handlers.handleAll({
      research: ({ params, payload }) => research.research(params.bank_id, payload)
    })
  })
)
